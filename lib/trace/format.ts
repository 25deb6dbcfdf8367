/** The human-readable line of a trace event (the pretty sink and `--trace` print it). */
import { clipText, excerpt } from '../jsonrpc/excerpt';
import type { TraceEvent } from './types';

const ARROWS = { in: '<-', out: '->' } as const;

/** Bounded whatever the message: `excerpt` walks only as much of it as the line shows, without recursion. */
function payloadOf(message: unknown, max: number): string {
  return ` ${excerpt(message, max)}`;
}

/** One readable line per trace event, for humans watching a stream (stderr, a terminal). */
export function formatTraceEvent(event: TraceEvent, options: { maxPayload?: number } = {}): string {
  const time = new Date(event.time).toISOString().slice(11, 23);
  // A part of a connection (the client's era probe) is on the connection's line, named after the dots.
  const part = event.role !== undefined && event.actor !== undefined ? `${event.actor} ` : '';
  const id = event.actor === undefined || part ? event.connection : `${event.actor} ${event.connection}`;
  const who = `${id}${event.upstream === undefined ? '' : `@${event.upstream}`}`.padEnd(5);
  // Where a connection's state changes, and where a request starts (a stateless request has no lifecycle),
  // the connection is named; its other lines keep the short id, which lines up.
  const named = event.name === undefined || event.name === event.upstream ? '' : ` (${clipText(event.name, 40)})`;
  if (event.kind === 'lifecycle') {
    const why = event.reason ? ` (${event.quitKind ? `${event.quitKind}: ` : ''}${clipText(event.reason, 300)})` : '';
    return `${time} ${who} ·· ${part}${event.from} → ${event.to}${named}${why}`;
  }
  const arrow = ARROWS[event.direction ?? 'in'];
  const what = [
    event.kind,
    event.method === undefined ? undefined : clipText(event.method, 80),
    event.id === undefined ? undefined : `#${excerpt(event.id, 80)}`,
  ]
    .filter(Boolean)
    .join(' ');
  const latency = event.latencyMs === undefined ? '' : ` ${event.latencyMs} ms`;
  const cause = event.cause;
  const why = cause === undefined ? '' : ` [${cause.kind} ${cause.connection} #${excerpt(cause.id, 80)}]`;
  const reason = event.reason ? ` (${clipText(event.reason, 300)})` : '';
  const payload = event.message === undefined ? '' : payloadOf(event.message, options.maxPayload ?? 160);
  const name = event.kind === 'request' ? named : '';
  return `${time} ${who} ${arrow} ${what}${name}${why}${latency}${reason}${payload}`;
}
