import { Connection, type ConnectionOptions, type HandlerTable } from '../core/connection';
import type { Transport } from '../../transports/transport';
import type { QuitReason } from '../../machines/connection';
import type { RequestId } from '../jsonrpc/types';
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
import type { ServerDefinition } from './definition';
import { SERVER_HANDLERS } from './handlers';

/** The server's side of one client connection. */
export class ServerConnection extends Connection {
  readonly role = 'server';
  protected readonly handlers: HandlerTable<ServerConnection> = SERVER_HANDLERS;
  /** The minimum level of `notifications/message` this client asked for (`logging/setLevel`); all levels until then. */
  logLevel: LoggingLevel | undefined;
  private declared: ServerCapabilities | undefined;

  constructor(
    readonly server: Server,
    options?: ConnectionOptions,
  ) {
    super('s', options);
  }

  /** The server's current definition (it may change while the connection lives). */
  get definition(): ServerDefinition {
    return this.server.definition;
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
    this.transition({ type: 'initialize.start' });
    this.transition({
      type: 'initialize.done',
      protocolVersion,
      peerCapabilities: capabilities,
      peerInfo: clientInfo as unknown as Readonly<Record<string, unknown>>,
    });
    return {
      protocolVersion,
      capabilities: definition.capabilities,
      serverInfo: definition.info,
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

  protected override onClosed(): void {
    this.server.forget(this);
  }
}

/**
 * Serves one `ServerDefinition` to any number of clients: `connect` gives each transport its own
 * connection. `update` swaps the definition for all of them and tells ready clients what changed
 * (`list_changed`, coalesced: several updates in one tick send one notification).
 */
export class Server {
  private current: ServerDefinition;
  private readonly live = new Set<ServerConnection>();
  private changeScheduled = false;
  private toolsChanged = false;

  constructor(
    definition: ServerDefinition,
    private readonly options: ConnectionOptions = {},
  ) {
    this.current = definition;
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
    return connection.start(transport);
  }

  update(next: ServerDefinition | ((current: ServerDefinition) => ServerDefinition)): void {
    const previous = this.current;
    this.current = typeof next === 'function' ? next(previous) : next;
    if (this.current.tools !== previous.tools) this.toolsChanged = true;
    if (this.toolsChanged && !this.changeScheduled) {
      this.changeScheduled = true;
      queueMicrotask(() => this.announceChanges());
    }
  }

  /** Closes every connection. */
  async close(): Promise<QuitReason[]> {
    return Promise.all([...this.live].map((connection) => connection.close()));
  }

  /** @internal */
  forget(connection: ServerConnection): void {
    this.live.delete(connection);
  }

  private announceChanges(): void {
    this.changeScheduled = false;
    if (!this.toolsChanged) return;
    this.toolsChanged = false;
    for (const connection of this.live) {
      if (connection.state !== 'ready' || !hasCapability(connection.capabilities, ['tools', 'listChanged'])) continue;
      connection
        .notify('notifications/tools/list_changed')
        .catch((error) => connection.logger.debug('Could not send notifications/tools/list_changed', error));
    }
  }
}
