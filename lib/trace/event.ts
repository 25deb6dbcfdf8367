/**
 * The only places trace events are built. Publishers call these after checking that someone listens, so
 * a count of calls here is a count of events built (the "free when nobody subscribes" tests spy on them).
 */
import type { QuitReason } from '../../machines/connection';
import type { RequestId } from '../jsonrpc/types';
import type { TraceCause, TraceEvent, TraceKind, TraceOrigin } from './types';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** The OpenTelemetry ids of a request's span (a `RequestSpan` is one), for its trace events. */
export interface SpanIds {
  readonly traceId?: string;
  readonly spanId?: string;
}

/** A message in or out of `origin` (or one it dropped, with the reason). */
export function messageTraceEvent(
  origin: TraceOrigin,
  time: number,
  kind: TraceKind,
  direction: 'in' | 'out',
  message: unknown,
  method: string | undefined,
  id: RequestId | undefined,
  reason: string | undefined,
  latencyMs: number | undefined,
  cause?: TraceCause,
  span?: SpanIds,
): TraceEvent {
  const event: Mutable<TraceEvent> = { time, connection: origin.id, role: origin.role, kind, direction };
  if (origin.upstream !== undefined) event.upstream = origin.upstream;
  const name = origin.name;
  if (name !== undefined) event.name = name;
  if (method !== undefined) event.method = method;
  if (id !== undefined) event.id = id;
  if (latencyMs !== undefined) event.latencyMs = latencyMs;
  if (message !== undefined) event.message = message;
  if (reason !== undefined) event.reason = reason;
  if (cause !== undefined) event.cause = cause;
  const traceId = span?.traceId;
  if (traceId !== undefined) {
    event.traceId = traceId;
    event.spanId = span!.spanId;
  }
  return event;
}

/** A connection's lifecycle moved from `from` to `to`; `quit` is its quit reason once it has one. */
export function connectionLifecycleEvent(
  origin: TraceOrigin,
  time: number,
  from: string,
  to: string,
  quit: QuitReason | undefined,
): TraceEvent {
  const event: Mutable<TraceEvent> = { time, connection: origin.id, role: origin.role, kind: 'lifecycle', from, to };
  if (origin.upstream !== undefined) event.upstream = origin.upstream;
  const name = origin.name;
  if (name !== undefined) event.name = name;
  if (quit) {
    event.quitKind = quit.kind;
    event.reason = quit.message;
  }
  return event;
}

/** A part of connection `origin` (`actor`: its name, as the client's `era-probe`) moved from `from` to `to`. */
export function connectionPartEvent(
  origin: TraceOrigin,
  time: number,
  actor: string,
  from: string,
  to: string,
  reason: string | undefined,
): TraceEvent {
  const event: Mutable<TraceEvent> = {
    time,
    connection: origin.id,
    role: origin.role,
    kind: 'lifecycle',
    actor,
    from,
    to,
  };
  if (origin.upstream !== undefined) event.upstream = origin.upstream;
  const name = origin.name;
  if (name !== undefined) event.name = name;
  if (reason !== undefined) event.reason = reason;
  return event;
}

/** Another actor of the runtime (an HTTP session, a hub's upstream, a child process) changed state. */
export function actorLifecycleEvent(
  time: number,
  actorId: string,
  machine: string | undefined,
  from: string,
  to: string,
  reason: string | undefined,
): TraceEvent {
  const event: Mutable<TraceEvent> = { time, connection: actorId, kind: 'lifecycle', from, to };
  if (machine !== undefined) event.actor = machine;
  if (reason !== undefined) event.reason = reason;
  return event;
}
