/**
 * A server: one `ServerDefinition` served to any number of clients, over connections of either era
 * (`ServerConnection`) and stateless requests without one (`serveModern`, from HTTP).
 */
import type { ConnectionOptions } from '../core/connection';
import type { Transport } from '../core/transport';
import type { QuitReason } from '../../machines/connection';
import { hasCapability } from '../protocol/capabilities';
import { LIST_CHANGE_OF_LIST, LIST_CHANGES, type ChangeableList } from '../protocol/list-changes';
import { defaultLogger } from '../core/logger';
import type { ServerDefinition } from './definition';
import type { ListName } from './context';
import { SubscriptionHub } from './subscriptions';
import { InMemoryServerEventBus, LIST_CHANGED_EVENTS, type ServerEventBus } from './event-bus';
import { ListenStreams } from './listen';
import { ErrorCode, McpError } from '../jsonrpc/errors';
import { clipText } from '../jsonrpc/excerpt';
import type { ExchangeReply, ModernServer } from '../core/exchange';
import { answerError, type RunChannel } from '../core/handler-run';
import { RequestContext } from '../core/request-context';
import { systemClock, type Clock } from '../core/clock';
import type { Logger } from '../core/logger';
import { defaultRuntime, type Runtime } from '../core/runtime';
import type { EraPolicy, ModernNotificationVerdict, ModernRequestVerdict } from '../protocol/era';
import type { JsonRpcNotification, RequestId } from '../jsonrpc/types';
import type { HeaderSource } from '../protocol/header-value';
import { processKeyRing } from './request-state';
import { ModernRequest, type InputRoundSettings, type ModernHost } from './modern/modern-request';
import { ReplyChannel } from './modern/reply-channel';
import { eraPolicyOf, MODERN_HANDLERS } from './modern/handlers';
import { ServerConnection } from './server-connection';
import { ServerTasks, type TaskServingOptions } from './tasks/server-tasks';

export { ServerConnection, type ServerConnectionEvents } from './server-connection';

/** What a `Server` is given besides its definition: the options of its connections, and how it serves modern requests. */
export interface ServerOptions extends ConnectionOptions {
  /**
   * How `input_required` rounds of modern (2026-07-28) requests seal their `requestState`: the key ring
   * (default `processKeyRing()`, one random key for this process: replicas behind one address need a shared
   * ring), the state's lifetime and the round cap.
   */
  readonly inputRounds?: Partial<InputRoundSettings>;
  /** The bus `subscriptions/listen` streams hear the server's changes on (default: in memory). */
  readonly events?: ServerEventBus;
  /** Open `subscriptions/listen` streams beyond which a new one is refused (`DEFAULT_MAX_LISTEN_STREAMS`). */
  readonly maxListenStreams?: number;
  /**
   * How tool calls that run as tasks (`execution.taskSupport`) are kept: the store (default in memory;
   * `LmdbTaskStore` from `mcp-switchboard/tasks/lmdb` keeps them across restarts), poll interval, time to live.
   */
  readonly tasks?: TaskServingOptions;
}

/**
 * Serves one `ServerDefinition` to any number of clients: `connect` gives each transport its own
 * connection. `update` swaps the definition for all of them and tells ready clients which lists changed
 * (`list_changed`, coalesced: several updates in one tick send one notification per list).
 */
export class Server implements ModernServer {
  // The stateless revision's parts are made on first use: a server that only ever sees handshake-era
  // sessions (or is one of many made per client) pays nothing for them.
  private policy: EraPolicy | undefined;
  private rounds: InputRoundSettings | undefined;
  private bus: ServerEventBus | undefined;
  private streams: ListenStreams | undefined;
  private ownRuntime: Runtime | undefined;
  private current: ServerDefinition;
  private resourceSubscriptions: SubscriptionHub | undefined;
  private serverTasks: ServerTasks | undefined;
  private readonly live = new Set<ServerConnection>();
  /** Lists changed since the last announcement (created with the first change). */
  private changed: Set<ChangeableList> | undefined;

  constructor(
    definition: ServerDefinition,
    private readonly options: ServerOptions = {},
  ) {
    this.current = definition;
  }

  /** Which requests the stateless revision serves (read by the transports' classifier). */
  get eraPolicy(): EraPolicy {
    return (this.policy ??= eraPolicyOf(() => this.current));
  }

  /** How input rounds are sealed and bounded (`ServerOptions.inputRounds`, the process's key ring by default). */
  get inputRounds(): InputRoundSettings {
    const given = this.options.inputRounds;
    return (this.rounds ??= { ...given, keyRing: given?.keyRing ?? processKeyRing() });
  }

  /** Where the server's changes go: handshake-era sessions and listen streams hear the same events. */
  get events(): ServerEventBus {
    return (this.bus ??= this.options.events ?? new InMemoryServerEventBus());
  }

  /** @internal The open `subscriptions/listen` streams. */
  get listenStreams(): ListenStreams {
    return (this.streams ??= new ListenStreams(this.events, () => this.subscriptions, this.options.maxListenStreams));
  }

  get clock(): Clock {
    return this.options.clock ?? systemClock;
  }

  get logger(): Logger {
    return this.options.logger ?? defaultLogger;
  }

  /** The actor system and trace stream of this server's connections and modern exchanges (made on first use). */
  get runtime(): Runtime {
    return (this.ownRuntime ??= this.options.runtime ?? defaultRuntime());
  }

  /**
   * The server's tasks, once it serves any (a tool of its definition supports tasks): made on first use, kept
   * while the server lives (a later definition without such tools still answers for the tasks made).
   */
  get tasks(): ServerTasks | undefined {
    if (this.serverTasks === undefined && this.current.servesTasks) {
      this.serverTasks = new ServerTasks(this.options.tasks ?? {}, this.runtime, this.logger);
    }
    return this.serverTasks;
  }

  /** @internal The revisions `server/discover` names. */
  get modernVersions(): readonly string[] {
    return this.current.modernProtocolVersions;
  }

  /**
   * @internal Serves one request of the stateless revision (the transports call it for requests the
   * classifier found modern); its answer and notifications go through `reply`. `headers` are the HTTP
   * request's, checked against the called tool's `x-mcp-header` parameters.
   */
  serveModern(verdict: ModernRequestVerdict, reply: ExchangeReply, headers?: HeaderSource): void {
    const channel = new ReplyChannel(reply, this, verdict.version);
    const request = new ModernRequest(this, verdict, reply, channel.trace);
    const { id, method, params } = verdict.request;
    const trace = channel.trace;
    trace?.message('request', 'in', verdict.request, method, id);
    const startedAt = trace?.on ? this.clock.now() : 0;
    const span = trace?.startInboundSpan(this.runtime.instrumentation, verdict.request);
    const context = new RequestContext<ModernHost>(request, id, method, params, startedAt, undefined, span);
    reply.onAbort((reason) => {
      // The revision's cancel is the requester closing the stream: traced as the cancel it is.
      if (!context.done) trace?.message('notification', 'in', cancelOf(id), CANCELLED, undefined, STREAM_CLOSED);
      context.cancel(reason);
    });
    this.runModern(request, context, channel, headers);
  }

  /** @internal A stateless notification POSTed on its own: traced; nothing acts on it. */
  noteModernNotification(verdict: ModernNotificationVerdict): void {
    if (!this.runtime.traceChannel.observed) return;
    const { notification } = verdict;
    const why =
      notification.method === CANCELLED
        ? 'Ignored: in the stateless revision a request is cancelled by closing its stream'
        : 'Ignored: nothing in the stateless revision acts on this notification from a client';
    new ReplyChannel(NO_REPLY, this, verdict.version).trace?.message(
      'notification',
      'in',
      notification,
      notification.method,
      undefined,
      why,
    );
  }

  /** @internal Runs a stateless request's handler (HTTP or a duplex connection), or refuses a method it lacks. */
  runModern(
    request: ModernRequest,
    context: RequestContext<ModernHost>,
    channel: RunChannel,
    headers: HeaderSource | undefined,
  ): void {
    // The classifier already refused the methods this server does not declare (with this same policy).
    const handler = MODERN_HANDLERS[context.method];
    if (handler) request.serve(context, channel, handler, headers);
    else
      answerError(
        channel,
        context,
        new McpError(ErrorCode.MethodNotFound, `Method not found: ${clipText(context.method)}`),
      );
  }

  /** @internal `ConnectionOptions.progressReplyDelayMs`, for the requests that have no connection. */
  get progressReplyDelayMs(): number | undefined {
    return this.options.progressReplyDelayMs;
  }

  /** Resource subscriptions of every connection of this server (created with the first one). */
  get subscriptions(): SubscriptionHub {
    return (this.resourceSubscriptions ??= new SubscriptionHub(
      () => this.current.resources,
      this.options.logger ?? defaultLogger,
      this.events,
    ));
  }

  get definition(): ServerDefinition {
    return this.current;
  }

  /** Connections that have not closed yet. */
  get connectionCount(): number {
    return this.live.size;
  }

  /** Starts serving a client over `transport`. The returned connection's `closed` resolves when it ends. */
  connect(transport: Transport, options?: ConnectionOptions): ServerConnection {
    const connection = new ServerConnection(this, options ? { ...this.options, ...options } : this.options);
    this.live.add(connection);
    this.onConnection(connection);
    return connection.start(transport);
  }

  /**
   * Subclass hook: `connection` was made for a client, and reads no message before this returns (listen to
   * its `events` here to miss none of them).
   */
  protected onConnection(_connection: ServerConnection): void {}

  /**
   * Subclass hook: a modern (2026-07-28) request read one of the lists (it has no connection whose `listed`
   * event would say so).
   */
  protected onModernListed(_list: ListName): void {}

  /** @internal A modern request's list handler, before it answers. */
  listed(list: ListName): void {
    this.onModernListed(list);
  }

  update(next: ServerDefinition | ((current: ServerDefinition) => ServerDefinition)): void {
    const previous = this.current;
    this.current = typeof next === 'function' ? next(previous) : next;
    const changed = (this.changed ??= new Set());
    const before = changed.size;
    for (const { list } of LIST_CHANGES) if (this.current[list] !== previous[list]) changed.add(list);
    if (before === 0 && changed.size > 0) queueMicrotask(() => this.announceChanges());
  }

  /**
   * Tells the clients subscribed to `uri` that it changed (for resources without an `updates` stream).
   * `changedUri` names a sub-resource when it is not `uri` itself.
   */
  resourceUpdated(uri: string, changedUri = uri): void {
    this.subscriptions.publish(uri, changedUri);
  }

  /** Closes every connection. */
  async close(): Promise<QuitReason[]> {
    await this.streams?.close();
    const quits = await Promise.all([...this.live].map((connection) => connection.close()));
    await this.serverTasks?.close();
    return quits;
  }

  /** @internal */
  forget(connection: ServerConnection): void {
    this.live.delete(connection);
    this.resourceSubscriptions?.drop(connection);
  }

  private announceChanges(): void {
    const lists = [...(this.changed ?? [])];
    this.changed?.clear();
    // Nobody can be listening before the bus exists, unless one was given (other processes may be).
    const bus = this.bus ?? this.options.events;
    if (bus) for (const list of lists) bus.publish(LIST_CHANGED_EVENTS[list]);
    for (const connection of this.live) {
      if (connection.state !== 'ready') continue;
      for (const list of lists) {
        const change = LIST_CHANGE_OF_LIST[list];
        // Only lists this client was told can change: the capability is what it saw at initialize.
        if (!hasCapability(connection.capabilities, change.capability)) continue;
        connection
          .notify(change.method)
          .catch((error) => connection.logger.debug(`Could not send ${change.method}`, error));
      }
    }
  }
}

const CANCELLED = 'notifications/cancelled';
const STREAM_CLOSED = "The requester closed the request's stream: the stateless revision's cancel";

/** The cancel a closed stream means, as the notification a trace reader knows. */
function cancelOf(requestId: RequestId): JsonRpcNotification {
  return { jsonrpc: '2.0', method: CANCELLED, params: { requestId, reason: STREAM_CLOSED } };
}

/** The way back of a notification, which has none (it only names the trace's origin). */
const NO_REPLY: ExchangeReply = {
  notify: () => Promise.resolve(),
  answer: () => Promise.resolve(),
  onAbort: () => undefined,
};
