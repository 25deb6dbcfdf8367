/**
 * Reads a recorded NDJSON trace (`--trace-file`) as a stream of `TraceEvent`s. Tolerant, since a trace is
 * often read while, or after, something went wrong: a last line cut short (the process died mid-write) is
 * noted, not an error; a line that is not a trace event is skipped and counted; a line too long to be one
 * is dropped without being kept. Memory stays bounded by one line, whatever the file's size.
 */
import type { TraceEvent, TraceKind } from '../types';

/** What the reader saw besides the events it yielded. */
export interface TraceReadStats {
  lines: number;
  events: number;
  /** Lines that are not trace events (blank lines aside). */
  skipped: number;
  /** The first few skipped lines: their number (from 1) and why. */
  readonly skippedSamples: { line: number; why: string }[];
  /** The last line had no newline and was not a whole event: the trace was cut short while written. */
  truncatedLastLine: boolean;
}

/** Longer lines are dropped (a trace line holds one message: 64 MiB is far beyond any). */
export const DEFAULT_MAX_LINE_CHARS = 64 * 1024 * 1024;
const MAX_SAMPLES = 10;

const KINDS: ReadonlySet<TraceKind> = new Set<TraceKind>([
  'request',
  'notification',
  'result',
  'error',
  'batch',
  'invalid',
  'ignored',
  'lifecycle',
]);

export function emptyReadStats(): TraceReadStats {
  return { lines: 0, events: 0, skipped: 0, skippedSamples: [], truncatedLastLine: false };
}

/** Why `value` is not a trace event, or undefined when it is one. */
export function notATraceEvent(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const event = value as Record<string, unknown>;
  if (typeof event.time !== 'number' || !Number.isFinite(event.time)) return 'no numeric "time"';
  if (typeof event.connection !== 'string') return 'no "connection"';
  if (!KINDS.has(event.kind as TraceKind)) return `unknown "kind" ${JSON.stringify(event.kind)?.slice(0, 40)}`;
  if (event.direction !== undefined && event.direction !== 'in' && event.direction !== 'out') {
    return 'a "direction" other than in or out';
  }
  if (event.id !== undefined && event.id !== null && typeof event.id !== 'string' && typeof event.id !== 'number') {
    return 'an "id" that is neither a string nor a number';
  }
  if (event.method !== undefined && typeof event.method !== 'string') return 'a "method" that is not a string';
  return undefined;
}

/**
 * The events of an NDJSON trace, from its chunks (a file stream, a fetch body, strings). `stats` is filled
 * as the reading goes; read it once the iteration ends.
 */
export async function* readTraceEvents(
  chunks: AsyncIterable<Uint8Array | string>,
  stats: TraceReadStats = emptyReadStats(),
  maxLineChars = DEFAULT_MAX_LINE_CHARS,
): AsyncGenerator<TraceEvent> {
  const decoder = new TextDecoder();
  let pending = '';
  let overlong = false;
  for await (const chunk of chunks) {
    const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', start)) {
      const piece = text.slice(start, newline);
      start = newline + 1;
      if (overlong || pending.length + piece.length > maxLineChars) {
        overlong = false;
        pending = '';
        skip(stats, ++stats.lines, `longer than ${maxLineChars} characters`);
        continue;
      }
      const line = pending + piece;
      pending = '';
      const event = parseLine(line, ++stats.lines, stats);
      if (event) yield event;
    }
    const rest = text.slice(start);
    if (overlong || pending.length + rest.length > maxLineChars) {
      overlong = true;
      pending = '';
    } else pending += rest;
  }
  pending += decoder.decode();
  if (overlong) skip(stats, ++stats.lines, `longer than ${maxLineChars} characters`);
  else if (pending.trim() !== '') {
    // A last line that is not even JSON was cut short; one that is JSON is judged as any other line.
    if (!isJson(pending)) stats.truncatedLastLine = true;
    else {
      const event = parseLine(pending, ++stats.lines, stats);
      if (event) yield event;
    }
  }
}

/** The event on `line`, or undefined (counted in `stats` when given) for a line that is not one. */
function parseLine(text: string, line: number, stats: TraceReadStats | undefined): TraceEvent | undefined {
  if (text.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    if (stats) skip(stats, line, 'not JSON');
    return undefined;
  }
  const why = notATraceEvent(value);
  if (why !== undefined) {
    if (stats) skip(stats, line, why);
    return undefined;
  }
  if (stats) stats.events++;
  return value as TraceEvent;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function skip(stats: TraceReadStats, line: number, why: string): void {
  stats.skipped++;
  if (stats.skippedSamples.length < MAX_SAMPLES) stats.skippedSamples.push({ line, why });
}
