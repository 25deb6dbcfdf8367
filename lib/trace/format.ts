import type { TraceEvent } from './types';

const ARROWS = { in: '<-', out: '->' } as const;

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** One readable line per trace event, for humans watching a stream (stderr, a terminal). */
export function formatTraceEvent(event: TraceEvent, options: { maxPayload?: number } = {}): string {
  const time = new Date(event.time).toISOString().slice(11, 23);
  const who = `${event.connection}`.padEnd(5);
  if (event.kind === 'lifecycle') {
    return `${time} ${who} ·· ${event.from} → ${event.to}${event.reason ? ` (${event.reason})` : ''}`;
  }
  const arrow = ARROWS[event.direction ?? 'in'];
  const what = [event.kind, event.method, event.id === undefined ? undefined : `#${event.id}`]
    .filter(Boolean)
    .join(' ');
  const latency = event.latencyMs === undefined ? '' : ` ${event.latencyMs} ms`;
  const reason = event.reason ? ` (${event.reason})` : '';
  const payload =
    event.message === undefined ? '' : ` ${clip(JSON.stringify(event.message), options.maxPayload ?? 160)}`;
  return `${time} ${who} ${arrow} ${what}${latency}${reason}${payload}`;
}
