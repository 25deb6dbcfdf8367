/**
 * The server's change events, as `subscriptions/listen` streams hear them (2026-07-28). The bus carries
 * facts ("the tool list changed", "this resource changed"), never wire messages: each listen stream
 * filters and stamps them itself (lib/server/listen.ts). The server feeds it from the same places that tell
 * handshake-era sessions: the coalesced list changes of `Server.update` and every resource update the
 * `SubscriptionHub` hands out, so both eras hear the same events.
 *
 * The in-memory bus serves one process; a deployment with several replicas implements `ServerEventBus`
 * over its own pub/sub (Redis, NATS) and passes it to the server.
 */
import { Subject, type Observer, type Subscribable, type Unsubscribable } from 'rxjs';
import { LIST_CHANGES, type ListChangedKind, type ChangeableList } from '../protocol/list-changes';

/** A list's change event is named by the listen filter field that asks for it. */
export type { ListChangedKind } from '../protocol/list-changes';

export type ServerEvent =
  | { readonly kind: ListChangedKind }
  | {
      readonly kind: 'resourceUpdated';
      /** What changed: the resource, or a sub-resource of the subscribed one (what the notification names). */
      readonly uri: string;
      /** The URI subscribers asked for, when it is not `uri` itself. */
      readonly topic?: string;
    };

/**
 * Where change events are published and heard. `subscribe` follows the RxJS contract, so `from(bus)` is an
 * Observable: the observer's `next` is called as a method (listen streams pass themselves) and must not
 * throw. An implementation never completes or errors the observers of a live server.
 */
export interface ServerEventBus extends Subscribable<ServerEvent> {
  publish(event: ServerEvent): void;
  subscribe(observer: Partial<Observer<ServerEvent>>): Unsubscribable;
}

/** The bus of one process: a Subject, delivering synchronously on `publish`. */
export class InMemoryServerEventBus implements ServerEventBus {
  private readonly subject = new Subject<ServerEvent>();
  private subscribers = 0;

  /** Observers currently subscribed (for tests and status). */
  get subscriberCount(): number {
    return this.subscribers;
  }

  publish(event: ServerEvent): void {
    this.subject.next(event);
  }

  subscribe(observer: Partial<Observer<ServerEvent>>): Unsubscribable {
    const subscription = this.subject.subscribe(observer);
    this.subscribers++;
    subscription.add(() => this.subscribers--);
    return subscription;
  }
}

/** The event of each list a definition update may change (shared: publishing one allocates nothing). */
export const LIST_CHANGED_EVENTS: Readonly<Record<ChangeableList, ServerEvent>> = Object.freeze(
  Object.fromEntries(
    LIST_CHANGES.map(({ list, filterField }) => [list, Object.freeze({ kind: filterField })]),
  ) as Record<ChangeableList, ServerEvent>,
);
