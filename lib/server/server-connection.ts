/**
 * The server's side of one client connection: a handshake-era session (`initialize`, then the session's
 * requests), or a duplex connection whose first request carried the 2026-07-28 envelope, where every
 * request is served on its own from the same inbound requests as the handshake era's.
 */
import { Connection, type ConnectionEvents, type ConnectionOptions, type HandlerTable } from '../core/connection';
import type { EventFacade } from '../core/events';
import type { Transport } from '../core/transport';
import { ErrorCode } from '../jsonrpc/errors';
import { clipText } from '../jsonrpc/excerpt';
import type {
  JsonRpcErrorObject,
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  RequestId,
} from '../jsonrpc/types';
import { hasCapability } from '../protocol/capabilities';
import { classifyInbound, errorResponseOf, type ModernRequestVerdict } from '../protocol/era';
import { META } from '../protocol/modern';
import { resultChecks, type ResultValidator } from '../protocol/results';
import { shape } from '../protocol/shape';
import {
  LOGGING_LEVELS,
  type ClientCapabilities,
  type Implementation,
  type InitializeResult,
  type LoggingLevel,
  type ServerCapabilities,
} from '../protocol/types';
import type { ProtocolVersion } from '../protocol/versions';
import type { ListName } from './context';
import type { ServerDefinition } from './definition';
import { SESSION_HANDLERS } from './handlers';
import type { SessionHandlersHost } from './handler-host';
import { ModernRequest, type ModernHost, type ModernServing, type RequestStream } from './modern/modern-request';
import type { RequestContext } from '../core/request-context';
import type { RunChannel } from '../core/handler-run';
import type { EraPolicy } from '../protocol/era';
import type { HeaderSource } from '../protocol/header-value';
import type { SubscriptionHub } from './subscriptions';
import type { ServerTasks } from './tasks/server-tasks';

/** What a connection needs of the server that made it (`Server` is one). */
export interface ConnectionServer extends ModernServing {
  /** Which requests the stateless revision serves (the classifier's policy). */
  readonly eraPolicy: EraPolicy;
  readonly subscriptions: SubscriptionHub;
  /** Runs a stateless request's handler on the connection's inbound requests (`channel`). */
  runModern(
    request: ModernRequest,
    context: RequestContext<ModernHost>,
    channel: RunChannel,
    headers: HeaderSource | undefined,
  ): void;
  /** The connection closed. */
  forget(connection: ServerConnection): void;
}

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
  /** The requests it hosts itself are the handshake era's (a stateless request's host is its own). */
  readonly era = 'handshake';
  /** @internal The session's handlers, whose host it is (`asHost`). */
  protected readonly handlers: HandlerTable<SessionHandlersHost> = SESSION_HANDLERS;
  private level: LoggingLevel | undefined;
  private declared: ServerCapabilities | undefined;
  /** Where the notifications of stateless requests on this connection go (made with the first). */
  private requestStream: RequestStream | undefined;

  /** @internal Made by `Server.connect`. */
  constructor(
    /** @internal The server that made it. */
    readonly server: ConnectionServer,
    options?: ConnectionOptions,
  ) {
    super('s', options);
  }

  /** eventemitter3 facade: the connection's events and the server's (`ServerConnectionEvents`). */
  override get events(): EventFacade<ServerConnectionEvents> {
    return super.events as unknown as EventFacade<ServerConnectionEvents>;
  }

  /**
   * @internal The connection as its handlers' host. Not an `implements` clause: the host's members the
   * published declarations strip (`@internal`) would make that clause fail in a consumer's type check.
   */
  protected asHost(): SessionHandlersHost {
    return this;
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

  /**
   * A server's connections carry its name (`info.name`) in their traces: in a process serving several
   * servers (a hub, the demo) that is what tells their lanes apart; the client's name is in its `initialize`.
   */
  protected override get defaultName(): string {
    return this.server.definition.info.name;
  }

  /** The server's current definition (it may change while the connection lives). */
  get definition(): ServerDefinition {
    return this.server.definition;
  }

  /** The server's tasks, when it serves any. */
  get tasks(): ServerTasks | undefined {
    return this.server.tasks;
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

  /**
   * @internal Results of requests to the client (sampling, elicitation, roots, ping) are checked against their
   * method's result schema.
   */
  protected override resultCheck(method: string): ResultValidator | undefined {
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
    const declared = definition.capabilitiesAt(protocolVersion);
    this.declared = declared;
    this.announceVersion(protocolVersion);
    this.transition({
      type: 'initialize.accepted',
      protocolVersion,
      peerCapabilities: capabilities,
      peerInfo: clientInfo as unknown as Readonly<Record<string, unknown>>,
    });
    return {
      protocolVersion,
      capabilities: declared,
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

  /** A stateless request on this connection: served like any other, from the connection's inbound requests. */
  private serveModernRequest(verdict: ModernRequestVerdict): void {
    const connection = this;
    const stream = (this.requestStream ??= {
      // Method syntax: under esbuild's keepNames (tsx, which runs the bench) an arrow in a property costs a
      // defineProperty per connection.
      notify(message, relatedRequestId) {
        return connection.sendMessage(message, { relatedRequestId });
      },
    });
    const request = new ModernRequest(this.server, verdict, stream, undefined, this.id);
    const inbound = this.inbound;
    const context = inbound.admit(verdict.request, request, undefined);
    if (context) this.server.runModern(request, context, inbound, undefined);
  }

  private sendOrLog(message: JsonRpcMessage): void {
    this.sendMessage(message).catch((error) => this.logger.debug('Could not send a response', error));
  }

  protected override onNotification(message: JsonRpcNotification): void {
    const method = message.method;
    if (method === 'notifications/roots/list_changed' || method === 'notifications/initialized') {
      this.emitEvent('rootsChanged');
    }
  }

  protected override onClosed(): void {
    this.server.forget(this);
  }
}
