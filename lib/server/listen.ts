/**
 * `subscriptions/listen` (2026-07-28): a long-lived request whose response stream carries the server's change
 * notifications. It is served like any request: the handler acknowledges the filter it honours (the first
 * notification of the stream), forwards the matching events of the server's event bus, and stays pending
 * until the requester goes away (cancel: nothing more is sent) or the server closes the stream (the
 * `{resultType: 'complete'}` result). Every notification of the stream, the acknowledgement included, names
 * the stream: `_meta["io.modelcontextprotocol/subscriptionId"]` is the listen request's id.
 */
import type { Observer, Unsubscribable } from 'rxjs';
import type { RequestContext, RequestHost } from '../core/request-context';
import { ErrorCode, invalidParams, McpError } from '../jsonrpc/errors';
import type { JsonObject, RequestId } from '../jsonrpc/types';
import { hasCapability } from '../protocol/capabilities';
import { LIST_CHANGE_OF_FILTER, LIST_CHANGES, type ListChangedKind, type ListenFilter } from '../protocol/list-changes';
import { META } from '../protocol/modern';
import type { ServerCapabilities } from '../protocol/types';
import type { ServerEvent, ServerEventBus } from './event-bus';

/** Which notifications a listen stream opts in to: the schema's name for `ListenFilter` (lib/protocol/list-changes.ts). */
export type SubscriptionFilter = ListenFilter;

/** How a listen stream ends when the server closes it (schema `SubscriptionsListenResult`). */
export interface SubscriptionsListenResult {
  readonly resultType: 'complete';
  readonly _meta: { readonly [META.subscriptionId]: RequestId };
}

/** What follows the updates of a resource while a stream wants them (`SubscriptionHub` does). */
export interface ResourceWatcher {
  /** Follows `uri`'s changes until the handle is unsubscribed; undefined when the server serves no such URI. */
  watch(uri: string): Unsubscribable | undefined;
}

/** What the listen handler uses of the connection (or modern exchange) it serves the request on. */
export interface ListenHost extends RequestHost {
  /** What the server declared: a filter is honoured only where these announce the notifications. */
  readonly capabilities: ServerCapabilities;
  /** The server's open listen streams. */
  readonly listenStreams: ListenStreams;
}

export const DEFAULT_MAX_LISTEN_STREAMS = 1024;

/**
 * Notifications one stream may have on their way (handed to its transport, not yet written out) before it
 * holds the next ones back: a client that stops reading is not buffered for without bound.
 */
export const LISTEN_SEND_WINDOW = 32;

/**
 * Distinct resource URIs a stream holds back while its client is not reading; past this, a sub-resource's
 * update is held as an update of the subscribed resource (what the client asked to hear of).
 */
export const MAX_HELD_RESOURCE_URIS = 256;

const LIST_KINDS: readonly ListChangedKind[] = LIST_CHANGES.map((change) => change.filterField);

/**
 * The open listen streams of one server: each stream follows the event bus (one subscription each), and the
 * resources it asked for are followed through `resources` while it lives. Past `maxStreams` open streams a
 * new listen is refused.
 */
export class ListenStreams {
  private readonly open = new Set<ListenStream>();

  constructor(
    readonly events: ServerEventBus,
    /** Where resource updates are followed (the server's `SubscriptionHub`, created on first use). */
    readonly resources: () => ResourceWatcher,
    readonly maxStreams = DEFAULT_MAX_LISTEN_STREAMS,
  ) {}

  /** Streams open now. */
  get size(): number {
    return this.open.size;
  }

  /** @internal The `subscriptions/listen` handler's work: see `listen`. */
  serve(context: RequestContext<ListenHost>, params: JsonObject | undefined): Promise<SubscriptionsListenResult> {
    const filter = filterOf(params);
    if (this.open.size >= this.maxStreams) {
      throw new McpError(
        ErrorCode.InternalError,
        `Too many subscriptions/listen streams are open (limit ${this.maxStreams}); close one and listen again`,
      );
    }
    const stream = new ListenStream(context, this);
    this.open.add(stream);
    try {
      return stream.start(filter, context.connection.capabilities);
    } catch (error) {
      // A resource's change stream could not be followed: the request fails, and nothing stays open.
      stream.complete();
      throw error;
    }
  }

  /**
   * Ends every open stream gracefully: each gets its `complete` result (the server is shutting down).
   * Resolves once every handler has resolved, so each answer is on its way: close the connections after it.
   */
  async close(): Promise<void> {
    await Promise.all([...this.open].map((stream) => stream.complete()));
  }

  /** @internal A stream ended. */
  forget(stream: ListenStream): void {
    this.open.delete(stream);
  }
}

/** The `subscriptions/listen` request handler (modern requests only). */
export function listen(
  context: RequestContext<ListenHost>,
  params: JsonObject | undefined,
): Promise<SubscriptionsListenResult> {
  return context.connection.listenStreams.serve(context, params);
}

/**
 * One open listen stream: the bus observer that filters and stamps the events for its request. While
 * `LISTEN_SEND_WINDOW` of its notifications are on their way (the client reads slowly, or not at all), what
 * it hears next is held back, coalesced: each list change once, each resource URI once. These notifications
 * say "read it again", so one of each tells the client all that the many would; they go out, in the order
 * first held, as the earlier ones are written.
 */
class ListenStream implements Partial<Observer<ServerEvent>> {
  /** `_meta` of everything this stream sends: the subscription id. */
  private readonly meta: { readonly [META.subscriptionId]: RequestId };
  /** The params of every list notification of this stream (they carry nothing else): made once. */
  private readonly listParams: JsonObject;
  private readonly lists = new Set<ListChangedKind>();
  /** The resource URIs this stream hears of (the subscribed URIs, not sub-resources). */
  private uris: Set<string> | undefined;
  private readonly watches: Unsubscribable[] = [];
  private events: Unsubscribable | undefined;
  /** Notifications handed to the transport whose write has not completed. */
  private sending = 0;
  /** What was held back while the window was full (created on the first hold). */
  private held: Set<ListChangedKind | ResourceUpdate> | undefined;
  private ended = false;
  private settle: ((result: SubscriptionsListenResult) => void) | undefined;
  private result: Promise<SubscriptionsListenResult> | undefined;

  constructor(
    private readonly context: RequestContext<ListenHost>,
    private readonly owner: ListenStreams,
  ) {
    this.meta = Object.freeze({ [META.subscriptionId]: context.id });
    this.listParams = Object.freeze({ _meta: this.meta }) as JsonObject;
  }

  /** Acknowledges what is honoured, then follows the bus until cancelled or completed. */
  start(filter: SubscriptionFilter, capabilities: ServerCapabilities): Promise<SubscriptionsListenResult> {
    const honoured: { -readonly [K in keyof SubscriptionFilter]: SubscriptionFilter[K] } = {};
    for (const kind of LIST_KINDS) {
      if (filter[kind] === true && hasCapability(capabilities, LIST_CHANGE_OF_FILTER[kind].capability)) {
        this.lists.add(kind);
        honoured[kind] = true;
      }
    }
    const uris = filter.resourceSubscriptions;
    if (uris?.length && hasCapability(capabilities, ['resources', 'subscribe'])) {
      const watched = this.watchAll(uris);
      if (watched.size > 0) {
        this.uris = watched;
        honoured.resourceSubscriptions = [...watched];
      }
    }
    const result = (this.result = new Promise<SubscriptionsListenResult>((resolve) => (this.settle = resolve)));
    this.send('notifications/subscriptions/acknowledged', {
      notifications: honoured as JsonObject,
      _meta: this.meta,
    });
    if (this.lists.size > 0 || this.uris) this.events = this.owner.events.subscribe(this);
    this.context.onCancel(this.cancelled);
    return result;
  }

  /** A bus event: sent (or held back while the client is behind) when this stream honours it. */
  next(event: ServerEvent): void {
    if (this.ended) return;
    if (event.kind === 'resourceUpdated') {
      const topic = event.topic ?? event.uri;
      if (!this.uris?.has(topic)) return;
      if (this.held === undefined && this.sending < LISTEN_SEND_WINDOW) return this.sendUpdate(event.uri);
      this.holdUpdate(event.uri, topic);
    } else if (this.lists.has(event.kind)) {
      if (this.held === undefined && this.sending < LISTEN_SEND_WINDOW) return this.sendListChange(event.kind);
      (this.held ??= new Set()).add(event.kind);
    }
  }

  /** The server closes the stream: it ends with its `complete` result (what this returns). */
  complete(): Promise<SubscriptionsListenResult> | undefined {
    if (this.end()) this.settle?.({ resultType: 'complete', _meta: this.meta });
    return this.result;
  }

  /** The requester went away: the stream ends as on a close (its context was cancelled, so nothing is sent). */
  private readonly cancelled = (): void => void this.complete();

  /** Stops following the bus and the resources; false when already ended. */
  private end(): boolean {
    if (this.ended) return false;
    this.ended = true;
    this.events?.unsubscribe();
    for (const watch of this.watches) watch.unsubscribe();
    this.watches.length = 0;
    this.owner.forget(this);
    return true;
  }

  /** Follows each URI the server serves (each once); returns those. */
  private watchAll(uris: readonly string[]): Set<string> {
    const watched = new Set<string>();
    const resources = this.owner.resources();
    for (const uri of uris) {
      if (watched.has(uri)) continue;
      const watch = resources.watch(uri);
      if (!watch) continue;
      watched.add(uri);
      this.watches.push(watch);
    }
    return watched;
  }

  private sendListChange(kind: ListChangedKind): void {
    this.send(LIST_CHANGE_OF_FILTER[kind].method, this.listParams);
  }

  private sendUpdate(uri: string): void {
    this.send('notifications/resources/updated', { uri, _meta: this.meta });
  }

  /** Held as itself, or as its subscribed resource once many distinct URIs are held. */
  private holdUpdate(uri: string, topic: string): void {
    const held = (this.held ??= new Set());
    const key = `${RESOURCE_KEY}${uri}` as ResourceUpdate;
    if (held.has(key)) return;
    held.add(held.size < MAX_HELD_RESOURCE_URIS ? key : (`${RESOURCE_KEY}${topic}` as ResourceUpdate));
  }

  /** Sends what was held back, while the window has room. */
  private release(): void {
    const held = this.held;
    if (held === undefined || this.ended) return;
    for (const item of held) {
      if (this.sending >= LISTEN_SEND_WINDOW) return;
      held.delete(item);
      if (item.startsWith(RESOURCE_KEY)) this.sendUpdate(item.slice(RESOURCE_KEY.length));
      else this.sendListChange(item as ListChangedKind);
    }
    this.held = undefined;
  }

  private send(method: string, params: JsonObject): void {
    try {
      const sent = this.context.notify(method, params);
      this.sending++;
      sent.then(this.written, this.sendFailed);
    } catch (error) {
      this.context.connection.logger.debug(
        `subscriptions/listen ${String(this.context.id)}: a notification was not sent`,
        error,
      );
    }
  }

  /** A notification was written (or its transport gave up on it): room for what was held back. */
  private readonly written = (): void => {
    this.sending--;
    this.release();
  };

  private readonly sendFailed = (error: unknown): void => {
    this.context.connection.logger.debug(
      `subscriptions/listen ${String(this.context.id)}: a notification was not sent`,
      error,
    );
    this.written();
  };
}

/**
 * A held resource update: the URI behind a prefix no list-change kind starts with, so that one ordered set
 * holds both kinds of notification.
 */
type ResourceUpdate = `uri:${string}`;
const RESOURCE_KEY = 'uri:';

/** The filter of a listen request; -32602 naming what is wrong when it is malformed. */
function filterOf(params: JsonObject | undefined): SubscriptionFilter {
  const filter = params?.notifications;
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) {
    throw invalidParams('subscriptions/listen needs a "notifications" object (the subscription filter)');
  }
  const fields = filter as Record<string, unknown>;
  for (const kind of LIST_KINDS) {
    if (fields[kind] !== undefined && typeof fields[kind] !== 'boolean') {
      throw invalidParams(`"notifications.${kind}" must be a boolean`);
    }
  }
  const uris = fields.resourceSubscriptions;
  if (uris !== undefined && !(Array.isArray(uris) && uris.every((uri) => typeof uri === 'string'))) {
    throw invalidParams('"notifications.resourceSubscriptions" must be an array of resource URI strings');
  }
  return filter as SubscriptionFilter;
}
