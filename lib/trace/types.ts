/** The one event type of the trace tap: message hops and lifecycle changes, from any connection or actor. */
import type { QuitReason } from '../../machines/connection';
import type { RequestId } from '../jsonrpc/types';

export type TraceKind =
  | 'request'
  | 'notification'
  | 'result'
  | 'error'
  | 'batch'
  | 'invalid'
  /** A message that was dropped on purpose: a late response, an unknown progress token, a suppressed reply. */
  | 'ignored'
  | 'lifecycle';

/** One thing that happened on a connection (a message in or out, a lifecycle change) or to another actor. */
export interface TraceEvent {
  /** Milliseconds since the epoch, from the connection's clock (the runtime's for other actors). */
  readonly time: number;
  /**
   * The connection's id; for the lifecycle of another actor of the runtime, that actor's id. A stateless
   * request a server answers without a connection (over HTTP) is an origin of its own: `x1`, `x2`, ….
   */
  readonly connection: string;
  /** Absent for actors that are not connections. */
  readonly role?: 'client' | 'server';
  /** The upstream server this connection reaches (set by a hub through `ConnectionOptions.upstream`). */
  readonly upstream?: string;
  readonly kind: TraceKind;
  /** Absent for lifecycle events. */
  readonly direction?: 'in' | 'out';
  readonly method?: string;
  readonly id?: RequestId;
  /** For responses (either direction): time since the request was seen. */
  readonly latencyMs?: number;
  /** The message itself, by reference (after redaction, if the runtime redacts): treat it as read-only. */
  readonly message?: unknown;
  /** Lifecycle: the state left and the state entered. */
  readonly from?: string;
  readonly to?: string;
  /**
   * Lifecycle of an actor that is not a connection: its machine's id (`upstream`, `httpSession`, ...); with a
   * `role`, a part of the connection that is not its lifecycle (the client's `era-probe`).
   */
  readonly actor?: string;
  /** Lifecycle of a connection that is closing or closed: the kind of its quit reason. */
  readonly quitKind?: QuitReason['kind'];
  /** Why a message was ignored, or why the lifecycle changed (the quit reason's message). */
  readonly reason?: string;
  /** A stable name a person reads for the connection or actor (a hub's upstream name, the CLI's target). */
  readonly name?: string;
  /** The request this event's request was made for, when it was made for one (see `TraceCause`). */
  readonly cause?: TraceCause;
  /**
   * The OpenTelemetry trace and span of this event's request, when the runtime has an instrumentation: on an
   * outbound request and the answer it gets, and on the answer to an inbound request (the inbound request's own
   * event comes before its span starts; its `_meta.traceparent` names its parent).
   */
  readonly traceId?: string;
  readonly spanId?: string;
}

/**
 * Why a request exists: the request it was made for. `forwarded`: a hub's upstream request for a downstream
 * one; `serves`: a request to the peer made while handling `id` (a server's sampling or elicitation during a
 * call); `round`: an `input_required` retry of the call whose first request is `id`; `retry`: the one retry
 * after a -32022 of the call whose first request is `id` (a reconnection sends nothing again: the requests in
 * flight fail).
 */
export interface TraceCause {
  readonly connection: string;
  readonly id: RequestId;
  readonly kind: 'forwarded' | 'serves' | 'round' | 'retry';
}

/** Who a connection's trace events name. A connection is one. */
export interface TraceOrigin {
  readonly id: string;
  readonly role: 'client' | 'server';
  readonly upstream: string | undefined;
  /** A name a person reads, when it has one (see `TraceEvent.name`). */
  readonly name?: string | undefined;
}
