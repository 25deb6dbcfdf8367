/**
 * The trace viewer's model: NDJSON parsed into events, one lane per connection or actor, and per row what a
 * person asks of it (the request it answers, its status and duration, the tool it calls, the row that caused it).
 * Plain data and no DOM: built once per loaded trace, in one pass over the events plus one over the rows.
 */
import type { TraceEvent } from '../types';

/** One column of the sequence view: a connection (or another actor of the runtime). */
export interface Lane {
  readonly index: number;
  readonly connection: string;
  /** What a person reads: the connection's `name`, else its id and role; a hub's upstream names its lane. */
  label: string;
  role?: 'client' | 'server';
  upstream?: string;
  name?: string;
  actor?: string;
}

export type RowStatus = 'ok' | 'error' | 'pending' | 'cancelled';

/** One event of the trace and what the viewer worked out about it. */
export interface Row {
  readonly index: number;
  readonly event: TraceEvent;
  readonly lane: number;
  /** Requests and their answers: how the request ended (`pending`: never answered in the trace). */
  status?: RowStatus;
  /** Requests and their answers: the time from the request to its answer. */
  durationMs?: number;
  /** `tools/call` requests and their answers: the tool's name. */
  tool?: string;
  /** Errors (a JSON-RPC error, or a tool result with `isError`): the code (absent for a tool error) and text. */
  error?: { readonly code?: number; readonly message: string };
  /** The row of the request this row's request was made for (`event.cause`), when the trace holds it. */
  causeRow?: number;
  /** Answers: the row of their request; requests: the row of their answer. */
  pairRow?: number;
}

export interface TraceModel {
  readonly rows: readonly Row[];
  readonly lanes: readonly Lane[];
  /** Time of the first event (rows show their time as an offset from it). */
  readonly start: number;
  /** Lines that were not a trace event (not JSON, or not an object with a time, connection and kind). */
  readonly skippedLines: number;
}

/** Parses NDJSON (`--trace-file`): one event a line, blank lines ignored, lines that are not events counted. */
export function parseTrace(text: string): { events: TraceEvent[]; skippedLines: number } {
  const events: TraceEvent[] = [];
  let skippedLines = 0;
  let from = 0;
  while (from < text.length) {
    let to = text.indexOf('\n', from);
    if (to === -1) to = text.length;
    const line = text.slice(from, to).trim();
    from = to + 1;
    if (line === '') continue;
    const event = eventOf(line);
    if (event) events.push(event);
    else skippedLines++;
  }
  return { events, skippedLines };
}

function eventOf(line: string): TraceEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const event = value as Record<string, unknown>;
  if (typeof event.time !== 'number' || typeof event.connection !== 'string' || typeof event.kind !== 'string') {
    return undefined;
  }
  return value as TraceEvent;
}

/** The key of a request on a connection: ids `1` and `"1"` are different requests. */
export function requestKey(connection: string, id: unknown): string {
  return `${connection}\u0000${typeof id}:${String(id)}`;
}

/** The model of `events` (in the order given: the order they were recorded). */
export function buildModel(events: readonly TraceEvent[], skippedLines = 0): TraceModel {
  const lanes: Lane[] = [];
  const laneOf = new Map<string, Lane>();
  const rows: Row[] = [];
  const requests = new Map<string, Row>();
  const cancelled = new Set<string>();
  for (const event of events) {
    let lane = laneOf.get(event.connection);
    if (!lane) {
      lane = { index: lanes.length, connection: event.connection, label: '' };
      lanes.push(lane);
      laneOf.set(event.connection, lane);
    }
    noteLane(lane, event);
    const row: Row = { index: rows.length, event, lane: lane.index };
    rows.push(row);
    const message = record(event.message);
    if (event.method === 'tools/call') row.tool = stringOf(record(message?.params)?.name);
    if (event.kind === 'request' && event.id !== undefined) {
      row.status = 'pending';
      requests.set(requestKey(event.connection, event.id), row);
    } else if ((event.kind === 'result' || event.kind === 'error') && event.id !== undefined) {
      answer(row, message, requests.get(requestKey(event.connection, event.id)));
    } else if (event.kind === 'invalid') {
      row.status = 'error';
      row.error = { message: event.reason ?? 'invalid frame' };
    } else if (event.method === 'notifications/cancelled') {
      const id = record(message?.params)?.requestId;
      if (id !== undefined) cancelled.add(requestKey(event.connection, id));
    }
  }
  for (const row of rows) {
    const { event } = row;
    if (event.kind === 'request' && cancelled.has(requestKey(event.connection, event.id))) {
      row.status = 'cancelled';
      if (row.pairRow !== undefined) rows[row.pairRow]!.status ??= 'cancelled';
    }
    if (event.cause) row.causeRow = requests.get(requestKey(event.cause.connection, event.cause.id))?.index;
  }
  for (const lane of lanes) lane.label = labelOf(lane);
  return { rows, lanes, start: events[0]?.time ?? 0, skippedLines };
}

/** Pairs an answer with its request: both get the status and duration, the answer the request's tool. */
function answer(row: Row, message: Record<string, unknown> | undefined, request: Row | undefined): void {
  const failure = record(message?.error);
  const result = record(message?.result);
  if (row.event.kind === 'error') {
    row.status = 'error';
    row.error = { code: numberOf(failure?.code), message: stringOf(failure?.message) ?? 'error' };
  } else if (result?.isError === true) {
    row.status = 'error';
    row.error = { message: `tool error: ${firstText(result) ?? 'isError'}` };
  } else row.status = 'ok';
  row.durationMs = row.event.latencyMs ?? (request ? row.event.time - request.event.time : undefined);
  if (!request) return;
  row.tool ??= request.tool;
  row.pairRow = request.index;
  request.pairRow = row.index;
  request.status = row.status;
  request.durationMs = row.durationMs;
  request.error = row.error;
}

/** What the lane's events say of it: the last `name` given, its role, its upstream, the actor it is. */
function noteLane(lane: Lane, event: TraceEvent): void {
  if (event.role) lane.role ??= event.role;
  if (event.upstream) lane.upstream ??= event.upstream;
  if (event.name) lane.name = event.name;
  if (event.actor) lane.actor ??= event.actor;
}

/**
 * `notes (upstream client)`: the connection's name (else its id, or its actor and id) and its role; a hub's
 * upstream connection says so (named by its upstream when it has no name of its own).
 */
function labelOf(lane: Lane): string {
  const name = lane.name ?? lane.upstream ?? `${lane.actor ? `${lane.actor} ` : ''}${lane.connection}`;
  const role = lane.upstream && lane.role ? `upstream ${lane.role}` : lane.role;
  return role ? `${name} (${role})` : name;
}

function firstText(result: Record<string, unknown>): string | undefined {
  const content = result.content;
  if (!Array.isArray(content)) return undefined;
  return stringOf(record(content[0])?.text);
}

export function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function numberOf(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}
