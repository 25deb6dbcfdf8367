/**
 * The trace viewer's model: NDJSON parsed into events, one lane per connection or actor, and per row what a
 * person asks of it (the request it answers, its status and duration, the tool it calls, the row that caused it).
 * Plain data and no DOM: built in one pass over the events, and grown batch by batch in the live view.
 */
import type { TraceEvent } from '../types';

/**
 * One column of the sequence view: a connection (or another actor of the runtime), or all the stateless
 * requests one server answered without a connection (each has an origin of its own, `x1`, `x2`, …: a lane each
 * would make thousands).
 */
export interface Lane {
  readonly index: number;
  /** The connection's id; for a server's stateless requests, `stateless`. */
  readonly connection: string;
  /** The lane of a server's stateless requests. */
  readonly stateless?: true;
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
  const builder = new ModelBuilder(skippedLines);
  builder.append(events);
  return builder.model;
}

/**
 * A model that grows: `append` adds events (the live view's batches) in one pass over them, without
 * revisiting the rows already built. An answer, a cancel or a cause that arrives before its request is kept
 * and applied when the request arrives, so the model is the same however the events are split into batches.
 */
export class ModelBuilder {
  private readonly rows: Row[] = [];
  private readonly lanes: Lane[] = [];
  private readonly laneOf = new Map<string, Lane>();
  private readonly requests = new Map<string, Row>();
  private readonly cancelled = new Set<string>();
  /** Rows whose cause is a request not seen yet, by that request's key. */
  private readonly awaitingCause = new Map<string, Row[]>();
  private readonly state: { rows: Row[]; lanes: Lane[]; start: number; skippedLines: number };

  constructor(skippedLines = 0) {
    this.state = { rows: this.rows, lanes: this.lanes, start: 0, skippedLines };
  }

  /** The model so far: the same object after every `append` (its arrays grow). */
  get model(): TraceModel {
    return this.state;
  }

  /** Adds `events`; resolves whether a lane was added or renamed (its header must be drawn again). */
  append(events: readonly TraceEvent[]): { lanesChanged: boolean } {
    const touched = new Set<Lane>();
    if (this.rows.length === 0 && events.length > 0) this.state.start = events[0]!.time;
    for (const event of events) {
      const lane = this.laneFor(event);
      if (notesChange(lane, event)) touched.add(lane);
      this.add(event, lane);
    }
    let lanesChanged = false;
    for (const lane of touched) {
      const label = labelOf(lane);
      if (label !== lane.label) {
        lane.label = label;
        lanesChanged = true;
      }
    }
    return { lanesChanged };
  }

  private laneFor(event: TraceEvent): Lane {
    const stateless = isStatelessOrigin(event);
    const key = stateless ? `stateless\u0000${event.name ?? ''}\u0000${event.upstream ?? ''}` : event.connection;
    let lane = this.laneOf.get(key);
    if (!lane) {
      const index = this.lanes.length;
      lane = stateless
        ? { index, connection: 'stateless', stateless: true, label: '' }
        : { index, connection: event.connection, label: '' };
      this.lanes.push(lane);
      this.laneOf.set(key, lane);
    }
    return lane;
  }

  private add(event: TraceEvent, lane: Lane): void {
    const row: Row = { index: this.rows.length, event, lane: lane.index };
    this.rows.push(row);
    const message = record(event.message);
    if (event.method === 'tools/call') row.tool = stringOf(record(message?.params)?.name);
    if (event.kind === 'request' && event.id !== undefined) this.request(row);
    else if ((event.kind === 'result' || event.kind === 'error') && event.id !== undefined) {
      const request = this.requests.get(requestKey(event.connection, event.id));
      answer(row, message, request);
      if (request && this.cancelled.has(requestKey(event.connection, event.id))) request.status = 'cancelled';
    } else if (event.kind === 'invalid') {
      row.status = 'error';
      row.error = { message: event.reason ?? 'invalid frame' };
    } else if (event.method === 'notifications/cancelled') {
      const id = record(message?.params)?.requestId;
      if (id !== undefined) this.cancel(requestKey(event.connection, id));
    }
    if (event.cause) {
      const key = requestKey(event.cause.connection, event.cause.id);
      const cause = this.requests.get(key);
      if (cause) row.causeRow = cause.index;
      else this.awaitingCause.set(key, [...(this.awaitingCause.get(key) ?? []), row]);
    }
  }

  private request(row: Row): void {
    const key = requestKey(row.event.connection, row.event.id);
    row.status = this.cancelled.has(key) ? 'cancelled' : 'pending';
    this.requests.set(key, row);
    const waiting = this.awaitingCause.get(key);
    if (!waiting) return;
    this.awaitingCause.delete(key);
    for (const caused of waiting) caused.causeRow = row.index;
  }

  private cancel(key: string): void {
    this.cancelled.add(key);
    const request = this.requests.get(key);
    if (!request) return;
    request.status = 'cancelled';
    if (request.pairRow !== undefined) this.rows[request.pairRow]!.status ??= 'cancelled';
  }
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

/**
 * Notes what the lane's events say of it (the last `name` given, its role, its upstream, the actor it is);
 * true when that may change its label.
 */
function notesChange(lane: Lane, event: TraceEvent): boolean {
  let changed = lane.label === '';
  if (event.role && lane.role === undefined) changed = Boolean((lane.role = event.role));
  if (event.upstream && lane.upstream === undefined) changed = Boolean((lane.upstream = event.upstream));
  if (event.name && lane.name !== event.name) changed = Boolean((lane.name = event.name));
  if (event.actor && lane.actor === undefined) changed = Boolean((lane.actor = event.actor));
  return changed;
}

/**
 * `notes (upstream client)`: the connection's name (else its id, or its actor and id) and its role; a hub's
 * upstream connection says so (named by its upstream when it has no name of its own).
 */
function labelOf(lane: Lane): string {
  const name = lane.name ?? lane.upstream ?? `${lane.actor ? `${lane.actor} ` : ''}${lane.connection}`;
  const role = lane.stateless
    ? `stateless ${lane.role}`
    : lane.upstream && lane.role
      ? `upstream ${lane.role}`
      : lane.role;
  return role ? `${name} (${role})` : name;
}

/** A request a server answered without a connection (over HTTP, in the stateless revision): origin `x<n>`. */
function isStatelessOrigin(event: TraceEvent): boolean {
  return event.role === 'server' && /^x\d+$/.test(event.connection);
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
