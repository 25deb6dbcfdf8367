import { filter, finalize, map, Observable, share, type Observable as ObservableType } from 'rxjs';
import { ConnectionClosedError } from '../jsonrpc/errors';
import type { JsonRpcNotification } from '../jsonrpc/types';
import type { ResourceUpdatedParams } from '../protocol/types';

export interface SubscriptionPort {
  readonly notifications$: ObservableType<JsonRpcNotification>;
  subscribe(uri: string): Promise<unknown>;
  unsubscribe(uri: string): Promise<unknown>;
}

/**
 * Resource subscriptions as Observables, one per URI however many subscribers it has: the first
 * subscriber sends `resources/subscribe`, the last one's teardown sends `resources/unsubscribe`, and the
 * Observable's lifetime is the subscription's lifetime (it completes when the connection closes).
 */
export class ResourceSubscriptions {
  private readonly byUri = new Map<string, Observable<ResourceUpdatedParams>>();

  constructor(private readonly port: SubscriptionPort) {}

  /** Updates of `uri` and of its sub-resources (URIs that start with it). */
  updates(uri: string): Observable<ResourceUpdatedParams> {
    let shared = this.byUri.get(uri);
    if (!shared) {
      shared = new Observable<ResourceUpdatedParams>((subscriber) => {
        const inner = this.port.notifications$
          .pipe(
            filter((notification) => notification.method === 'notifications/resources/updated'),
            map((notification) => notification.params as unknown as ResourceUpdatedParams),
            filter((params) => typeof params?.uri === 'string' && params.uri.startsWith(uri)),
          )
          .subscribe(subscriber);
        let active = true;
        this.port.subscribe(uri).catch((error) => {
          active = false;
          // A connection that closed ends the subscription: that is completion, not failure.
          if (error instanceof ConnectionClosedError) subscriber.complete();
          else subscriber.error(error);
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
