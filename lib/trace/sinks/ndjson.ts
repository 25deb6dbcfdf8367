/** NDJSON: one JSON object per trace event and line, for files and log pipelines. */
import type { TraceEvent } from '../types';
import { lineSink, type LineWriter, type TraceSink } from './sink';

/** Errors (an undecodable frame) become `{ name, message }` instead of `{}`. */
function jsonValue(_key: string, value: unknown): unknown {
  return value instanceof Error ? { name: value.name, message: value.message } : value;
}

/** The event as one line of JSON; a message that cannot be serialized is replaced, never thrown. */
export function toNdjsonLine(event: TraceEvent): string {
  try {
    return JSON.stringify(event, jsonValue);
  } catch {
    return JSON.stringify({ ...event, message: '[unserializable]' }, jsonValue);
  }
}

export function createNdjsonTraceSink(write: LineWriter): TraceSink {
  return lineSink(write, toNdjsonLine);
}
