import { filter, finalize, map, Observable, share, type Observable as ObservableType } from 'rxjs';
import type { QuitReason } from '../../machines/connection';
import { ConnectionClosedError } from '../jsonrpc/errors';
import type { JsonRpcNotification } from '../jsonrpc/types';
import type { ResourceUpdatedParams } from '../protocol/types';

export interface SubscriptionPort {
  readonly notifications$: ObservableType<JsonRpcNotification>;
  /** Resolves with the quit reason once the connection has closed. */
  readonly closed: Promise<QuitReason>;
  subscribe(uri: string): Promise<unknown>;
  unsubscribe(uri: string): Promise<unknown>;
}

/**
 * Resource subscriptions as Observables, one per URI however many subscribers it has: the first
 * subscriber sends `resources/subscribe`, the last one's teardown sends `resources/unsubscribe`.
 *
 * The Observable's lifetime is the subscription's lifetime. When the connection ends it completes if the
 * client was closed on purpose (`close()`: the owner ended it, as it ends every stream of the client),
 * and errors with a `ConnectionClosedError` carrying the quit reason otherwise (the server died or the
 * transport failed: the updates stop without anyone asking, and a subscriber must hear it to recover).
 */
export class ResourceSubscriptions {
  private readonly byUri = new Map<string, Observable<ResourceUpdatedParams>>();

  constructor(private readonly port: SubscriptionPort) {}

  /** Updates of `uri` and of its sub-resources (URIs that start with it). */
  updates(uri: string): Observable<ResourceUpdatedParams> {
    let shared = this.byUri.get(uri);
    if (!shared) {
      shared = new Observable<ResourceUpdatedParams>((subscriber) => {
        let active = true;
        const end = () => {
          active = false;
          void this.port.closed.then((reason) => {
            if (reason.kind === 'local-close') subscriber.complete();
            else subscriber.error(closedError(uri, reason));
          });
        };
        const inner = this.port.notifications$
          .pipe(
            filter((notification) => notification.method === 'notifications/resources/updated'),
            map((notification) => notification.params as unknown as ResourceUpdatedParams),
            filter((params) => typeof params?.uri === 'string' && params.uri.startsWith(uri)),
          )
          // notifications$ ends only with the connection: how the subscription ends depends on why it closed.
          .subscribe({ next: (update) => subscriber.next(update), error: end, complete: end });
        this.port.subscribe(uri).catch((error) => {
          if (error instanceof ConnectionClosedError) return end();
          active = false;
          subscriber.error(error);
        });
        return () => {
          inner.unsubscribe();
          if (active) this.port.unsubscribe(uri).catch(() => undefined);
        };
      }).pipe(
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

function closedError(uri: string, reason: QuitReason): ConnectionClosedError {
  return new ConnectionClosedError(`The subscription to ${uri} ended: the connection closed (${reason.message})`, {
    cause: reason.error,
    quitReason: reason,
  });
}
