import {
  Connection,
  handlerTable,
  type ConnectionOptions,
  type HandlerTable,
  type SendOptions,
} from '../core/connection';
import type { RequestOptions } from '../core/correlation';
import type { Transport } from '../../transports/transport';
import { ProtocolViolationError, ResultValidationError, UnsupportedProtocolVersionError } from '../jsonrpc/errors';
import type { JsonObject, JsonRpcNotification } from '../jsonrpc/types';
import type {
  CallToolResult,
  ClientCapabilities,
  Implementation,
  InitializeResult,
  ListToolsResult,
  ServerCapabilities,
  Tool,
} from '../protocol/types';
import {
  isSupportedVersion,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  type ProtocolVersion,
} from '../protocol/versions';
import { defaultValidator, type SchemaCheck, type SchemaValidator } from '../validation/json-schema';

export interface ClientOptions extends ConnectionOptions {
  readonly capabilities?: ClientCapabilities;
  /** The revision to ask for (default: the newest we support). */
  readonly protocolVersion?: ProtocolVersion;
  /** Revisions we accept in the server's answer (default: all four). */
  readonly protocolVersions?: readonly ProtocolVersion[];
  readonly validator?: SchemaValidator;
  /** Check a tool's `structuredContent` against the `outputSchema` from `listTools` (default true). */
  readonly validateToolOutput?: boolean;
}

export interface ConnectOptions {
  /** How long to wait for the initialize response (default: the connection's default timeout). */
  readonly timeout?: number;
  readonly signal?: AbortSignal;
}

/** Pages of a list followed at most this far: a server that keeps answering with cursors is broken. */
const MAX_PAGES = 10_000;

const CLIENT_HANDLERS: HandlerTable<Client> = handlerTable<Client>({
  ping: () => ({}),
});

/**
 * An MCP client: one connection to one server. `connect` performs the handshake; then typed calls
 * (`listTools`, `callTool`, `ping`) and the generic `request`/`notify` are available. A client connects
 * once: to reconnect, create a new one.
 */
export class Client extends Connection {
  readonly role = 'client';
  protected readonly handlers: HandlerTable<Client> = CLIENT_HANDLERS;
  readonly capabilities: ClientCapabilities;
  private readonly requestedVersion: ProtocolVersion;
  private readonly acceptedVersions: readonly ProtocolVersion[];
  private readonly validator: SchemaValidator;
  private readonly validateToolOutput: boolean;
  /** Output checks of the tools from the last complete `listTools`; dropped on `tools/list_changed`. */
  private outputChecks: Map<string, SchemaCheck> | undefined;

  constructor(
    readonly info: Implementation,
    options: ClientOptions = {},
  ) {
    super('c', options);
    this.capabilities = options.capabilities ?? {};
    this.acceptedVersions = options.protocolVersions ?? SUPPORTED_PROTOCOL_VERSIONS;
    this.requestedVersion = options.protocolVersion ?? this.acceptedVersions[0] ?? LATEST_PROTOCOL_VERSION;
    this.validator = options.validator ?? defaultValidator();
    this.validateToolOutput = options.validateToolOutput ?? true;
  }

  get serverInfo(): Implementation | undefined {
    return this.negotiated?.peerInfo as Implementation | undefined;
  }

  get serverCapabilities(): ServerCapabilities | undefined {
    return this.peerCapabilities as ServerCapabilities | undefined;
  }

  get instructions(): string | undefined {
    return this.negotiated?.instructions;
  }

  /**
   * Attaches the transport and performs the handshake: `initialize`, version check, `notifications/initialized`.
   * On failure the connection is closed (quit reason `handshake-failed`) and the error is thrown.
   */
  async connect(transport: Transport, options: ConnectOptions = {}): Promise<this> {
    this.attach(transport);
    this.transition({ type: 'initialize.start' });
    try {
      const result = (await this.request(
        'initialize',
        {
          protocolVersion: this.requestedVersion,
          capabilities: this.capabilities as JsonObject,
          clientInfo: this.info as unknown as JsonObject,
        },
        options,
      )) as unknown as InitializeResult;
      const version = this.checkInitializeResult(result);
      transport.setProtocolVersion?.(version);
      this.transition({
        type: 'initialize.done',
        protocolVersion: version,
        peerCapabilities: result.capabilities,
        peerInfo: result.serverInfo as unknown as Readonly<Record<string, unknown>>,
        ...(typeof result.instructions === 'string' && { instructions: result.instructions }),
      });
      await this.notify('notifications/initialized');
      return this;
    } catch (error) {
      const failure = error as Error;
      this.transition({
        type: 'close',
        reason: { kind: 'handshake-failed', message: failure.message, error: failure },
      });
      await this.closed;
      throw error;
    }
  }

  ping(options?: RequestOptions): Promise<void> {
    return this.request('ping', undefined, options).then(() => undefined);
  }

  /** One page of `tools/list`. */
  listToolsPage(cursor?: string, options?: SendOptions): Promise<ListToolsResult> {
    return this.request(
      'tools/list',
      cursor === undefined ? undefined : { cursor },
      options,
    ) as Promise<unknown> as Promise<ListToolsResult>;
  }

  /** Every tool, following cursors. Remembers output schemas to check `callTool` results. */
  async listTools(options?: SendOptions): Promise<Tool[]> {
    const tools: Tool[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await this.listToolsPage(cursor, options);
      if (!Array.isArray(result.tools)) throw new ProtocolViolationError('tools/list returned no "tools" array');
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (cursor === undefined) {
        this.rememberOutputSchemas(tools);
        return tools;
      }
      if (seen.has(cursor)) throw new ProtocolViolationError('tools/list returned a cursor it had returned before');
      seen.add(cursor);
    }
    throw new ProtocolViolationError(`tools/list returned more than ${MAX_PAGES} pages`);
  }

  /**
   * Calls a tool. A tool's own failure is a result with `isError: true`, not a rejection. When `listTools`
   * saw an `outputSchema` for the tool, `structuredContent` is checked against it.
   */
  callTool(name: string, args?: JsonObject, options?: SendOptions): Promise<CallToolResult> {
    const pending = this.request(
      'tools/call',
      args === undefined ? { name } : { name, arguments: args },
      options,
    ) as Promise<unknown> as Promise<CallToolResult>;
    const check = this.validateToolOutput ? this.outputChecks?.get(name) : undefined;
    return check ? pending.then((result) => checkToolOutput(name, result, check)) : pending;
  }

  protected override onNotification(message: JsonRpcNotification): void {
    if (message.method === 'notifications/tools/list_changed') this.outputChecks = undefined;
  }

  private checkInitializeResult(result: InitializeResult): ProtocolVersion {
    if (!isSupportedVersion(result?.protocolVersion, this.acceptedVersions)) {
      throw new UnsupportedProtocolVersionError(result?.protocolVersion, this.acceptedVersions);
    }
    if (typeof result.capabilities !== 'object' || result.capabilities === null) {
      throw new ProtocolViolationError('The initialize result has no "capabilities" object');
    }
    if (typeof result.serverInfo?.name !== 'string') {
      throw new ProtocolViolationError('The initialize result has no "serverInfo" with a "name"');
    }
    return result.protocolVersion as ProtocolVersion;
  }

  private rememberOutputSchemas(tools: readonly Tool[]): void {
    const checks = new Map<string, SchemaCheck>();
    for (const tool of tools) {
      if (tool.outputSchema && typeof tool.outputSchema === 'object')
        checks.set(tool.name, this.validator.compile(tool.outputSchema));
    }
    this.outputChecks = checks;
  }
}

function checkToolOutput(name: string, result: CallToolResult, check: SchemaCheck): CallToolResult {
  if (result.isError) return result;
  if (result.structuredContent === undefined) {
    throw new ResultValidationError(`Tool ${name} has an outputSchema but returned no structuredContent`);
  }
  const problems = check(result.structuredContent);
  if (problems)
    throw new ResultValidationError(
      `Tool ${name} returned structuredContent that does not match its outputSchema: ${problems.join('; ')}`,
    );
  return result;
}
