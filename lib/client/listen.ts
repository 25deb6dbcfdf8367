/**
 * `subscriptions/listen` (MCP 2026-07-28) as an Observable: the modern era's one way to hear about list
 * changes and resource updates, where the handshake era had `list_changed` notifications on the session and
 * `resources/subscribe`.
 *
 * Each subscription opens its own listen request. The stream's notifications are those whose
 * `params._meta["io.modelcontextprotocol/subscriptionId"]` is that request's JSON-RPC id, the server's
 * `notifications/subscriptions/acknowledged` first (it says which of the asked-for kinds the server honours:
 * read it with `acknowledgedFilter`). Like `Client.subscribeResource`, the Observable completes when the
 * server ends the stream with a result or the client is closed with `close()`, and errors with the server's
 * error response, or with a `ConnectionClosedError` (its `quitReason` says why) when the connection ends
 * otherwise. A client with a reconnect policy opens the stream again (a new listen request) once it has
 * reconnected, under the same subscription. Unsubscribing cancels the listen request (`notifications/cancelled`).
 */
import { Observable, type Subscription } from 'rxjs';
import { ConnectionClosedError, type ClosedConnectionReason } from '../jsonrpc/errors';
import type { JsonObject, JsonRpcNotification, RequestId } from '../jsonrpc/types';
import { LIST_CHANGES, type ListenFilter } from '../protocol/list-changes';
import { META } from '../protocol/modern';
import { ReconnectingError } from './reconnect-policy';
import { streamEndError } from './stream-end';

export type { ListenFilter } from '../protocol/list-changes';

export interface ListenRequestOptions {
  /** Aborting it cancels the listen request. */
  readonly signal: AbortSignal;
  /** 0: the stream lives as long as it is wanted. */
  readonly timeout: number;
  /** Gets the listen request's JSON-RPC id before the request is sent. */
  readonly onId: (id: RequestId) => void;
}

/** What a listen stream needs of its connection (a `Client` is one). */
export interface ListenHost {
  /** Every notification from the server; it ends with the connection. */
  readonly notifications$: Observable<JsonRpcNotification>;
  /** Resolves with why the connection ended, once it has. */
  readonly closed: Promise<ClosedConnectionReason>;
  request(method: string, params: JsonObject, options: ListenRequestOptions): Promise<JsonObject>;
  /**
   * With a reconnect policy: emits each time the client is connected again, completes when it has closed. A
   * stream lost with its connection opens again there.
   */
  readonly reconnected$?: Observable<void>;
}

export const LISTEN_ACKNOWLEDGED = 'notifications/subscriptions/acknowledged';

/** The notifications of one `subscriptions/listen` stream, opened on subscription (see the module comment). */
export function listen(host: ListenHost, filter: ListenFilter): Observable<JsonRpcNotification> {
  const params = { notifications: filterParams(filter) };
  return new Observable<JsonRpcNotification>((subscriber) => {
    let id: RequestId | undefined;
    let cancel: AbortController | undefined;
    let waiting: Subscription | undefined;
    // Subscribed before the request goes out: the acknowledgement may come before anything else.
    const inner = host.notifications$.subscribe((notification) => {
      if (id !== undefined && subscriptionIdOf(notification) === id) subscriber.next(notification);
    });
    const ended = (reason: ClosedConnectionReason, cause: Error) => {
      const error = streamEndError('The subscriptions/listen stream', reason, cause);
      if (error) subscriber.error(error);
      else subscriber.complete();
    };
    const open = () => {
      const request = (cancel = new AbortController());
      host
        .request('subscriptions/listen', params, { signal: request.signal, timeout: 0, onId: (sent) => (id = sent) })
        .then(
          () => {
            cancel = undefined;
            subscriber.complete();
          },
          (error: unknown) => {
            cancel = undefined;
            if (error instanceof ReconnectingError && host.reconnected$) {
              // The connection was lost and the client reconnects: the stream opens again once it is back.
              waiting = host.reconnected$.subscribe({
                next: () => {
                  waiting?.unsubscribe();
                  open();
                },
                complete: () => void host.closed.then((reason) => ended(reason, error)),
              });
              return;
            }
            if (!(error instanceof ConnectionClosedError)) return subscriber.error(error);
            void host.closed.then((reason) => ended(reason, error));
          },
        );
    };
    open();
    return () => {
      inner.unsubscribe();
      waiting?.unsubscribe();
      cancel?.abort();
    };
  });
}

/** The kinds the server agreed to honour, from a stream's `notifications/subscriptions/acknowledged`. */
export function acknowledgedFilter(notification: JsonRpcNotification): ListenFilter | undefined {
  if (notification.method !== LISTEN_ACKNOWLEDGED) return undefined;
  const honoured = notification.params?.notifications;
  return typeof honoured === 'object' && honoured !== null ? (honoured as ListenFilter) : undefined;
}

/** The subscription a notification belongs to, when it names one. */
export function subscriptionIdOf(notification: JsonRpcNotification): unknown {
  const meta = notification.params?._meta;
  return typeof meta === 'object' && meta !== null ? (meta as JsonObject)[META.subscriptionId] : undefined;
}

/** The wire form of a filter: only the kinds asked for. */
function filterParams(filter: ListenFilter): JsonObject {
  const params: JsonObject = {};
  for (const { filterField } of LIST_CHANGES) {
    const asked = filter[filterField];
    if (asked !== undefined) params[filterField] = asked;
  }
  const uris = filter.resourceSubscriptions;
  if (uris !== undefined) params.resourceSubscriptions = [...uris];
  return params;
}
