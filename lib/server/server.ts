import { Connection, type ConnectionEvents, type ConnectionOptions, type HandlerTable } from '../core/connection';
import type { EventFacade } from '../core/events';
import type { Transport } from '../core/transport';
import type {
  JsonRpcErrorObject,
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  RequestId,
} from '../jsonrpc/types';
import type { QuitReason } from '../../machines/connection';
import { resultChecks, type ResultCheck } from '../protocol/results';
import { hasCapability } from '../protocol/capabilities';
import {
  LOGGING_LEVELS,
  type ClientCapabilities,
  type Implementation,
  type InitializeResult,
  type LoggingLevel,
  type ServerCapabilities,
} from '../protocol/types';
import type { ProtocolVersion } from '../protocol/versions';
import { defaultLogger } from '../core/logger';
import { shape } from '../protocol/shape';
import type { ServerDefinition } from './definition';
import type { ListName } from './context';
import { SERVER_HANDLERS, type ServerHandlersHost } from './handlers';
import { SubscriptionHub } from './subscriptions';
import { InMemoryServerEventBus, LIST_CHANGED_EVENTS, type ServerEventBus } from './event-bus';
import { ListenStreams } from './listen';
import { ConnectionClosedError, ErrorCode, McpError, RequestCancelledError } from '../jsonrpc/errors';
import { clipText, excerpt } from '../jsonrpc/excerpt';
import { classifyInbound, errorResponseOf } from '../protocol/era';
import { META } from '../protocol/modern';
import { ConnectionExchangeReply, type ReplyChannel } from './modern/connection-reply';
import type { ExchangeReply, ModernServer } from '../core/exchange';
import { systemClock, type Clock } from '../core/clock';
import type { Logger } from '../core/logger';
import { defaultRuntime, type Runtime } from '../core/runtime';
import type { EraPolicy, ModernRequestVerdict } from '../protocol/era';
import type { HeaderSource } from '../protocol/header-value';
import { processKeyRing } from './request-state';
import { ModernExchange, type InputRoundSettings } from './modern/exchange';
import { eraPolicyOf, MODERN_HANDLERS } from './modern/handlers';

/** What a server connection tells its listeners (besides `ConnectionEvents`); free while nobody listens. */
export interface ServerConnectionEvents extends ConnectionEvents {
  /** The client asked for another minimum log level (`logging/setLevel`), now in effect. */
  logLevelChanged: (level: LoggingLevel) => void;
  /** The client's roots may have changed: it finished initializing, or sent `notifications/roots/list_changed`. */
  rootsChanged: () => void;
  /** The client read one of the lists (a page of it), as it is about to be answered. */
  listed: (list: ListName) => void;
}

/** The server's side of one client connection. */
export class ServerConnection extends Connection {
  readonly role = 'server';
  /** @internal */
  protected readonly handlers: HandlerTable<ServerHandlersHost> = SERVER_HANDLERS;
  private level: LoggingLevel | undefined;
  private declared: ServerCapabilities | undefined;
  /** Modern requests in flight on this connection, by id (made with the first). */
  private modernInFlight: Map<RequestId, ConnectionExchangeReply> | undefined;
  /** Their way back (made with the first). */
  private modernChannel: ReplyChannel | undefined;

  constructor(
    readonly server: Server,
    options?: ConnectionOptions,
  ) {
    super('s', options);
  }

  /** eventemitter3 facade: the connection's events and the server's (`ServerConnectionEvents`). */
  override get events(): EventFacade<ServerConnectionEvents> {
    return super.events as unknown as EventFacade<ServerConnectionEvents>;
  }

  /** The minimum level of `notifications/message` this client asked for (`logging/setLevel`); all levels until then. */
  get logLevel(): LoggingLevel | undefined {
    return this.level;
  }

  /** @internal The `logging/setLevel` handler. */
  setLogLevel(level: LoggingLevel): void {
    this.level = level;
    this.emitEvent('logLevelChanged', level);
  }

  /** @internal The list handlers, before they answer. */
  listed(list: ListName): void {
    this.emitEvent('listed', list);
  }

  /** The server's current definition (it may change while the connection lives). */
  get definition(): ServerDefinition {
    return this.server.definition;
  }

  /** The resource subscriptions of the server's connections. */
  get subscriptions(): SubscriptionHub {
    return this.server.subscriptions;
  }

  /** The capabilities we answered `initialize` with (the definition's, until then). */
  get capabilities(): ServerCapabilities {
    return this.declared ?? this.server.definition.capabilities;
  }

  get clientInfo(): Implementation | undefined {
    return this.negotiated?.peerInfo as Implementation | undefined;
  }

  get clientCapabilities(): ClientCapabilities | undefined {
    return this.peerCapabilities as ClientCapabilities | undefined;
  }

  /** Results of requests to the client (sampling, elicitation, roots, ping) are checked against their method's result schema. */
  protected override resultCheck(method: string): ResultCheck | undefined {
    return resultChecks(this.protocolVersion).get(method);
  }

  /** @internal */
  start(transport: Transport): this {
    this.attach(transport);
    return this;
  }

  /** @internal The `initialize` handler: records the negotiation and answers it. */
  acceptInitialize(
    protocolVersion: ProtocolVersion,
    capabilities: ClientCapabilities,
    clientInfo: Implementation,
  ): InitializeResult {
    const definition = this.definition;
    this.declared = definition.capabilities;
    this.announceVersion(protocolVersion);
    this.transition({
      type: 'initialize.accepted',
      protocolVersion,
      peerCapabilities: capabilities,
      peerInfo: clientInfo as unknown as Readonly<Record<string, unknown>>,
    });
    return {
      protocolVersion,
      capabilities: definition.capabilities,
      serverInfo: shape('Implementation', definition.info, protocolVersion),
      ...(definition.instructions !== undefined && { instructions: definition.instructions }),
    };
  }

  /**
   * Sends `notifications/message` when the server declared logging and the level passes the client's
   * filter; otherwise it is dropped (the client did not ask for it).
   */
  override log(level: LoggingLevel, data: unknown, logger?: string, relatedRequestId?: RequestId): Promise<void> {
    if (!hasCapability(this.capabilities, ['logging'])) return super.log(level, data, logger);
    const minimum = this.logLevel;
    if (minimum !== undefined && LOGGING_LEVELS.indexOf(level) < LOGGING_LEVELS.indexOf(minimum))
      return Promise.resolve();
    const state = this.state;
    if (state === 'closing' || state === 'closed') return Promise.resolve();
    return this.notify(
      'notifications/message',
      { level, data, ...(logger !== undefined && { logger }) },
      relatedRequestId === undefined ? undefined : { relatedRequestId },
    );
  }

  /**
   * @internal The connection's era is its first request's (stdio has no headers): one carrying the 2026-07-28
   * envelope makes it modern, where every request is served on its own (`Server.serveModern`) and the
   * handshake-era methods do not exist; `initialize` (or any request without an envelope) keeps it in the
   * handshake era, as before. A request the classifier refuses moves nothing.
   */
  override takeRequest(message: JsonRpcRequest, inBatch: boolean): boolean {
    const state = this.state;
    if ((state !== 'uninitialized' && state !== 'modern') || inBatch) return false;
    const verdict = classifyInbound({ body: message }, this.server.eraPolicy);
    switch (verdict.era) {
      case 'modern':
        if (verdict.kind !== 'request') return false;
        // The probe itself does not decide: a client whose probe timed out (a slow start) goes on with
        // initialize, and the late discover must not have latched the connection modern meanwhile.
        if (state === 'uninitialized' && verdict.request.method !== 'server/discover') {
          this.transition({ type: 'era.modern' });
        }
        this.serveModernRequest(verdict);
        return true;
      case 'reject':
        if (verdict.reply) this.sendOrLog(errorResponseOf(verdict));
        return true;
      default:
        if (state === 'uninitialized') return false;
        this.sendOrLog({ jsonrpc: '2.0', id: message.id, error: this.eraMismatch(message) });
        return true;
    }
  }

  /** Why a modern connection refuses a request without the envelope (`initialize` included). */
  private eraMismatch(message: JsonRpcRequest): JsonRpcErrorObject {
    const supported = this.server.eraPolicy.supportedVersions;
    if (message.method === 'initialize') {
      const requested = message.params?.protocolVersion;
      return {
        code: ErrorCode.UnsupportedProtocolVersion,
        message: `Unsupported protocol version: this connection speaks ${supported.join(', ')} (stateless, no initialize)`,
        data: { supported, requested: typeof requested === 'string' ? clipText(requested) : '' },
      };
    }
    return {
      code: ErrorCode.InvalidParams,
      message: `Invalid params: this connection speaks ${supported.join(', ')}: every request needs params._meta["${META.protocolVersion}"] and the rest of the envelope`,
    };
  }

  private serveModernRequest(verdict: ModernRequestVerdict): void {
    const id = verdict.request.id;
    const inFlight = (this.modernInFlight ??= new Map());
    if (inFlight.has(id)) {
      const why = `Request id ${excerpt(id)} is already in use by a request in flight`;
      return this.sendOrLog({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidRequest, message: why } });
    }
    const method = verdict.request.method;
    const channel = (this.modernChannel ??= {
      send: (message, options, answering) => this.sendMessage(message, options, answering),
      settled: (settledId) => this.modernInFlight?.delete(settledId),
    });
    const reply = new ConnectionExchangeReply(channel, id, method, this.traced ? this.clock.now() : 0);
    inFlight.set(id, reply);
    this.server.serveModern(verdict, reply);
  }

  private sendOrLog(message: JsonRpcMessage): void {
    this.sendMessage(message).catch((error) => this.logger.debug('Could not send a response', error));
  }

  /** @internal `notifications/cancelled` for a modern request in flight on this connection. */
  override cancelOwnRequest(requestId: RequestId, reason: string | undefined): boolean {
    const reply = this.modernInFlight?.get(requestId);
    if (!reply) return false;
    reply.abort(new RequestCancelledError('a 2026-07-28 request', reason));
    return true;
  }

  protected override onNotification(message: JsonRpcNotification): void {
    const method = message.method;
    if (method === 'notifications/roots/list_changed' || method === 'notifications/initialized') {
      this.emitEvent('rootsChanged');
    }
  }

  protected override onClosed(): void {
    const inFlight = this.modernInFlight;
    if (inFlight?.size) {
      const reason = new ConnectionClosedError('Connection closed');
      for (const reply of [...inFlight.values()]) reply.abort(reason);
    }
    this.server.forget(this);
  }
}

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
}

/** The lists a client can be told have changed, with the capability that announces it. */
const LISTS = {
  tools: 'notifications/tools/list_changed',
  resources: 'notifications/resources/list_changed',
  prompts: 'notifications/prompts/list_changed',
} as const;

type ChangedList = keyof typeof LISTS;

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
  private readonly live = new Set<ServerConnection>();
  /** Lists changed since the last announcement (created with the first change). */
  private changed: Set<ChangedList> | undefined;

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

  /** Where the server's changes go: legacy sessions and listen streams hear the same events. */
  get events(): ServerEventBus {
    return (this.bus ??= this.options.events ?? new InMemoryServerEventBus());
  }

  /** The open `subscriptions/listen` streams. */
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

  /** @internal The revisions `server/discover` names. */
  get modernVersions(): readonly string[] {
    return this.current.modernProtocolVersions;
  }

  /**
   * Serves one request of the stateless revision (the transports call it for requests the classifier found
   * modern); its answer and notifications go through `reply`. `headers` are the HTTP request's, checked
   * against the called tool's `x-mcp-header` parameters.
   */
  serveModern(request: ModernRequestVerdict, reply: ExchangeReply, headers?: HeaderSource): void {
    const method = request.request.method;
    // The classifier already refused the methods this server does not declare (with this same policy).
    const handler = MODERN_HANDLERS[method];
    const exchange = new ModernExchange(this, request, reply);
    if (handler) exchange.serve(handler, headers);
    else exchange.refuse(new McpError(ErrorCode.MethodNotFound, `Method not found: ${clipText(method)}`));
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
    for (const list of Object.keys(LISTS) as ChangedList[]) {
      if (this.current[list] !== previous[list]) changed.add(list);
    }
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
    return Promise.all([...this.live].map((connection) => connection.close()));
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
        // Only lists this client was told can change: the capability is what it saw at initialize.
        if (!hasCapability(connection.capabilities, [list, 'listChanged'])) continue;
        connection
          .notify(LISTS[list])
          .catch((error) => connection.logger.debug(`Could not send ${LISTS[list]}`, error));
      }
    }
  }
}
