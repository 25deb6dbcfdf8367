import { defer, filter, finalize, map, Observable, share, type Observable as ObservableType } from 'rxjs';
import type { QuitReason } from '../../machines/connection';
import { CapabilityNotSupportedError, ConnectionClosedError, ErrorCode, McpError } from '../jsonrpc/errors';
import type { JsonRpcNotification } from '../jsonrpc/types';
import { hasCapability } from '../protocol/capabilities';
import type { ResourceUpdatedParams, ServerCapabilities } from '../protocol/types';
import { acknowledgedFilter, listen, type ListenHost } from './listen';
import { ReconnectingError } from './reconnect-policy';
import { streamEndError } from './stream-end';

/** What the handshake era's subscriptions need of the connection. */
export interface SubscriptionPort {
  readonly notifications$: ObservableType<JsonRpcNotification>;
  /** Resolves with the quit reason once the connection has closed. */
  readonly closed: Promise<QuitReason>;
  subscribe(uri: string): Promise<unknown>;
  unsubscribe(uri: string): Promise<unknown>;
  /** With a reconnect policy: emits each time the client is connected again; completes when it has closed. */
  readonly reconnected$?: Observable<void>;
}

/** The updates of one URI, for as long as they are subscribed to (see `ResourceSubscriptions`). */
export type UpdatesOpener = (uri: string) => Observable<ResourceUpdatedParams>;

/**
 * Resource subscriptions as Observables, one per URI however many subscribers it has: the first subscriber
 * opens the subscription (`open`: `resources/subscribe` in the handshake era, a `subscriptions/listen`
 * stream in the stateless one), the last one's teardown ends it.
 *
 * The Observable's lifetime is the subscription's lifetime. When the connection ends it completes if the
 * client was closed on purpose (`close()`: the owner ended it, as it ends every stream of the client),
 * and errors with a `ConnectionClosedError` carrying the quit reason otherwise (the server died or the
 * transport failed: the updates stop without anyone asking, and a subscriber must hear it to recover).
 * A client with a reconnect policy subscribes again once it has reconnected, and the Observable goes on:
 * it errors only when the client gives up.
 */
export class ResourceSubscriptions {
  private readonly byUri = new Map<string, Observable<ResourceUpdatedParams>>();

  /** `open` is asked when a URI gets its first subscriber (the era is known by then). */
  constructor(private readonly open: UpdatesOpener) {}

  /** Updates of `uri` and of its sub-resources. */
  updates(uri: string): Observable<ResourceUpdatedParams> {
    let shared = this.byUri.get(uri);
    if (!shared) {
      shared = defer(() => this.open(uri)).pipe(
        finalize(() => this.byUri.delete(uri)),
        share(),
      );
      this.byUri.set(uri, shared);
    }
    return shared;
  }

  /** URIs with at least one subscriber. */
  get size(): number {
    return this.byUri.size;
  }
}

/**
 * The handshake era's subscription to `uri`: `resources/subscribe` on subscription, `resources/unsubscribe`
 * on teardown, and the session's `notifications/resources/updated` for `uri` and the URIs that start with it.
 */
export function subscribedUpdates(port: SubscriptionPort, uri: string): Observable<ResourceUpdatedParams> {
  return new Observable<ResourceUpdatedParams>((subscriber) => {
    let active = true;
    const end = () => {
      active = false;
      void port.closed.then((reason) => {
        const error = streamEndError(subscriptionName(uri), reason);
        if (error) subscriber.error(error);
        else subscriber.complete();
      });
    };
    const inner = port.notifications$
      .pipe(
        filter((notification) => notification.method === 'notifications/resources/updated'),
        map((notification) => notification.params as unknown as ResourceUpdatedParams),
        filter((params) => typeof params?.uri === 'string' && params.uri.startsWith(uri)),
      )
      // notifications$ ends only with the connection: how the subscription ends depends on why it closed.
      .subscribe({ next: (update) => subscriber.next(update), error: end, complete: end });
    const subscribe = () =>
      port.subscribe(uri).catch((error) => {
        if (error instanceof ConnectionClosedError) return end();
        // Lost with its connection: the client subscribes again once it has reconnected.
        if (error instanceof ReconnectingError && port.reconnected$) return;
        active = false;
        subscriber.error(error);
      });
    // A reconnected server knows nothing of this subscription: it is made again there.
    const restore = port.reconnected$?.subscribe(() => void subscribe());
    void subscribe();
    return () => {
      inner.unsubscribe();
      restore?.unsubscribe();
      if (active) port.unsubscribe(uri).catch(() => undefined);
    };
  });
}

/**
 * The stateless era's subscription to `uri`: a `subscriptions/listen` stream asking for its updates
 * (`resourceSubscriptions: [uri]`), cancelled on teardown. It fails as `resources/subscribe` would: with a
 * `CapabilityNotSupportedError` when the server declares no `resources.subscribe`, and with `McpError`
 * -32602 (`data.uri`, as a modern server reports an unknown resource) when the server's acknowledgement
 * leaves the URI out. It ends as the listen stream does (lib/client/listen.ts): it completes on `close()`
 * or when the server ends the stream, and errors when the connection ends otherwise.
 */
export function listenedUpdates(
  host: ListenHost,
  capabilities: ServerCapabilities | undefined,
  uri: string,
): Observable<ResourceUpdatedParams> {
  if (!hasCapability(capabilities, ['resources', 'subscribe'])) {
    const refusal = new CapabilityNotSupportedError(
      'resources/subscribe',
      'The server does not declare resources.subscribe: it offers no resource subscriptions',
    );
    return new Observable((subscriber) => subscriber.error(refusal));
  }
  return new Observable<ResourceUpdatedParams>((subscriber) =>
    listen(host, { resourceSubscriptions: [uri] }).subscribe({
      next: (notification) => {
        const honoured = acknowledgedFilter(notification);
        if (honoured !== undefined) {
          if (!honoured.resourceSubscriptions?.includes(uri)) subscriber.error(notFollowed(uri));
        } else if (notification.method === 'notifications/resources/updated') {
          subscriber.next(notification.params as unknown as ResourceUpdatedParams);
        }
      },
      // The same error as the handshake era's when the connection dies: it names the resource.
      error: (error: unknown) => {
        const quit = error instanceof ConnectionClosedError ? error.quitReason : undefined;
        subscriber.error((quit && streamEndError(subscriptionName(uri), quit, error)) ?? error);
      },
      complete: () => subscriber.complete(),
    }),
  );
}

function notFollowed(uri: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `The server does not follow the resource ${uri}`, { uri });
}

function subscriptionName(uri: string): string {
  return `The subscription to ${uri}`;
}
