import type { Unsubscribable } from 'rxjs';
import type { Logger } from '../core/logger';
import type { JsonObject } from '../jsonrpc/types';
import type { ServerEventBus } from './event-bus';
import type { ResourceCatalog } from './resources';
import { peerText } from './peer-text';
import { resourceNotFound } from './resources';

/** What the hub needs of a subscribed connection: whether it is ready, a way to tell it, and where to log. */
export interface ResourceSubscriber {
  readonly state: string;
  readonly logger: Logger;
  notify(method: string, params?: JsonObject): Promise<void>;
}

interface Topic {
  readonly subscribers: Set<ResourceSubscriber>;
  /** Listen streams that want this URI (`watch`): they hear it through the event bus, not from here. */
  watchers: number;
  /** The resource's change stream, followed while anyone is subscribed or watching. */
  source: Unsubscribable | undefined;
}

/**
 * Resource subscriptions of one server. A URI's change stream is followed once for the whole server, from
 * its first subscriber (a handshake-era `resources/subscribe`, or a `subscriptions/listen` stream's `watch`) to its
 * last; `notifications/resources/updated` goes only to that URI's session subscribers, and every update is
 * also published on the server's event bus, where listen streams hear it. A connection's subscriptions end
 * with it, and nothing here keeps a closed connection.
 */
export class SubscriptionHub {
  private readonly topics = new Map<string, Topic>();
  private readonly byConnection = new Map<ResourceSubscriber, Set<string>>();

  constructor(
    private readonly resources: () => ResourceCatalog | undefined,
    private readonly logger: Logger,
    /** Where every update is published too (the server's listen streams hear it there). */
    private readonly events?: ServerEventBus,
  ) {}

  /** How many URIs have subscribers (for tests and status). */
  get size(): number {
    return this.topics.size;
  }

  /** @internal The `resources/subscribe` handler. */
  subscribe(connection: ResourceSubscriber, uri: string): void {
    const catalog = this.resources();
    if (!catalog?.find(uri)) throw resourceNotFound(uri);
    this.topicOf(uri, catalog).subscribers.add(connection);
    let uris = this.byConnection.get(connection);
    if (!uris) this.byConnection.set(connection, (uris = new Set()));
    uris.add(uri);
  }

  /** @internal The `resources/unsubscribe` handler. Idempotent: unsubscribing what is not subscribed is fine. */
  unsubscribe(connection: ResourceSubscriber, uri: string): void {
    const topic = this.topics.get(uri);
    if (topic?.subscribers.delete(connection)) this.releaseIfIdle(uri, topic);
    const uris = this.byConnection.get(connection);
    if (uris?.delete(uri) && uris.size === 0) this.byConnection.delete(connection);
  }

  /** @internal Ends every subscription of a closed connection. */
  drop(connection: ResourceSubscriber): void {
    for (const uri of this.byConnection.get(connection) ?? []) this.unsubscribe(connection, uri);
  }

  /**
   * @internal A listen stream wants the updates of `uri`: its change stream is followed until the returned
   * handle is unsubscribed (idempotent). Undefined when the server serves no such URI.
   */
  watch(uri: string): Unsubscribable | undefined {
    const catalog = this.resources();
    if (!catalog?.find(uri)) return undefined;
    const topic = this.topicOf(uri, catalog);
    topic.watchers++;
    let watching = true;
    return {
      unsubscribe: () => {
        if (!watching) return;
        watching = false;
        topic.watchers--;
        this.releaseIfIdle(uri, topic);
      },
    };
  }

  /**
   * @internal Tells the session subscribers of `topicUri` that `changedUri` (the resource or a sub-resource of
   * it) changed, and publishes the update on the event bus. Applications call `Server.resourceUpdated`.
   */
  publish(topicUri: string, changedUri = topicUri): void {
    const topic = this.topics.get(topicUri);
    if (topic) {
      for (const connection of topic.subscribers) {
        if (connection.state !== 'ready') continue;
        connection
          .notify('notifications/resources/updated', { uri: changedUri })
          .catch((error) => connection.logger.debug('Could not send notifications/resources/updated', error));
      }
    }
    this.events?.publish(
      changedUri === topicUri
        ? { kind: 'resourceUpdated', uri: changedUri }
        : { kind: 'resourceUpdated', uri: changedUri, topic: topicUri },
    );
  }

  /** The topic of `uri`, created (and its change stream followed) on first use. */
  private topicOf(uri: string, catalog: ResourceCatalog): Topic {
    let topic = this.topics.get(uri);
    if (!topic) {
      topic = { subscribers: new Set(), watchers: 0, source: undefined };
      this.topics.set(uri, topic);
      try {
        topic.source = catalog.updatesOf(uri)?.subscribe({
          next: (value) => this.publish(uri, typeof value === 'string' ? value : uri),
          error: (error) => this.logger.warn(`The change stream of ${peerText(uri)} failed`, error),
        });
      } catch (error) {
        // A template's `updates` threw: no topic is left behind for a subscription that failed.
        this.topics.delete(uri);
        throw error;
      }
    }
    return topic;
  }

  private releaseIfIdle(uri: string, topic: Topic): void {
    if (topic.subscribers.size > 0 || topic.watchers > 0 || this.topics.get(uri) !== topic) return;
    this.topics.delete(uri);
    topic.source?.unsubscribe();
  }
}
