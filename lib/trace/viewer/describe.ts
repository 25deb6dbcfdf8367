/** The words a person reads for a row: which way it goes, what it is, how it ended. Text only, no DOM. */
import type { Lane, Row, TraceModel } from './model';

/** Where a message goes, seen from its lane: `→ server` is a client's message to its server. */
export function directionText(row: Row, lane: Lane): string {
  const { direction } = row.event;
  if (direction === undefined) return '';
  const peer = lane.role === 'client' ? 'server' : lane.role === 'server' ? 'client' : 'peer';
  return direction === 'out' ? `→ ${peer}` : `← ${peer}`;
}

/** A request the server makes of the client (sampling, elicitation, roots): its own colour in the view. */
export function isServerToClient(row: Row, lane: Lane): boolean {
  if (row.event.kind !== 'request') return false;
  return (lane.role === 'server') === (row.event.direction === 'out');
}

/** The row's one line: `→ server request tools/call #1 work 3 ms ✖ -32602 Unknown tool`. */
export function rowText(row: Row, model: TraceModel): string {
  const { event } = row;
  const lane = model.lanes[row.lane]!;
  if (event.kind === 'lifecycle') {
    const why = event.reason ? ` (${event.quitKind ? `${event.quitKind}: ` : ''}${event.reason})` : '';
    return `◆ ${event.from ?? '?'} → ${event.to ?? '?'}${why}`;
  }
  const parts = [directionText(row, lane), event.kind];
  if (event.method !== undefined) parts.push(event.method);
  if (event.id !== undefined) parts.push(`#${String(event.id)}`);
  if (row.tool !== undefined) parts.push(row.tool);
  if (event.method === 'notifications/progress') parts.push(progressText(event.message));
  if (row.durationMs !== undefined && event.kind !== 'request') parts.push(`${row.durationMs} ms`);
  if (event.reason !== undefined) parts.push(`(${event.reason})`);
  return parts.filter((part) => part !== '').join(' ');
}

/** The error mark of a row: `✖ -32602 Unknown tool: missing`, or nothing. */
export function errorText(row: Row): string {
  if (!row.error) return '';
  return `✖ ${row.error.code === undefined ? '' : `${row.error.code} `}${row.error.message}`;
}

/** The causal link of a row, `↳ forwarded from downstream #3`, or nothing. */
export function causeText(row: Row, model: TraceModel): string {
  const cause = row.event.cause;
  if (!cause) return '';
  const causeRow = row.causeRow === undefined ? undefined : model.rows[row.causeRow];
  const lane = causeRow ? model.lanes[causeRow.lane] : model.lanes.find((each) => each.connection === cause.connection);
  // A lane of stateless requests holds many origins: the cause's own is named too.
  const origin = lane?.stateless ? ` ${cause.connection}` : '';
  return `↳ ${cause.kind} from ${lane?.label ?? cause.connection}${origin} #${String(cause.id)}`;
}

/** `+12.345 ms` after the trace's first event. */
export function offsetText(time: number, start: number): string {
  return `+${(time - start).toFixed(3)} ms`;
}

function progressText(message: unknown): string {
  const params = (message as { params?: { progress?: unknown; total?: unknown; message?: unknown } } | undefined)
    ?.params;
  if (!params) return '';
  const amount = params.total === undefined ? String(params.progress) : `${params.progress}/${params.total}`;
  return typeof params.message === 'string' ? `${amount} ${params.message}` : amount;
}
