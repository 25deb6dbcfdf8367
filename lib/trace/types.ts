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

/** One thing that happened on a connection: a message in or out, or a lifecycle change. */
export interface TraceEvent {
  /** Milliseconds since the epoch, from the connection's clock. */
  readonly time: number;
  readonly connection: string;
  readonly role: 'client' | 'server';
  readonly kind: TraceKind;
  /** Absent for lifecycle events. */
  readonly direction?: 'in' | 'out';
  readonly method?: string;
  readonly id?: RequestId;
  /** For responses (either direction): time since the request was seen. */
  readonly latencyMs?: number;
  /** The message itself, by reference: treat it as read-only. */
  readonly message?: unknown;
  /** Lifecycle: the state left and the state entered. */
  readonly from?: string;
  readonly to?: string;
  /** Why a message was ignored, or why the lifecycle changed. */
  readonly reason?: string;
}
