import { filter, map, type Observable } from 'rxjs';
import {
  CLOSE_TIMEOUT_MS,
  Connection,
  handlerTable,
  type ConnectionOptions,
  type HandlerTable,
  type SendOptions,
} from '../core/connection';
import type { RequestOptions } from '../core/correlation';
import type { QuitReason } from '../../machines/connection';
import type { Transport } from '../../transports/transport';
import { CapabilityNotSupportedError, UnsupportedProtocolVersionError } from '../jsonrpc/errors';
import { ProtocolViolationError } from '../jsonrpc/errors';
import type { JsonObject, JsonRpcNotification } from '../jsonrpc/types';
import { resultChecks, type ResultCheck } from '../protocol/results';
import { shape } from '../protocol/shape';
import type {
  CallToolResult,
  ClientCapabilities,
  CompleteParams,
  Completion,
  GetPromptResult,
  Implementation,
  InitializeResult,
  ListToolsResult,
  LoggingLevel,
  LoggingMessageParams,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  ResourceUpdatedParams,
  ServerCapabilities,
  Tool,
} from '../protocol/types';
import type { Root } from '../protocol/client-features';
import {
  isSupportedVersion,
  LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  type ProtocolVersion,
} from '../protocol/versions';
import { RESOURCE_SEARCH_EXTENSION } from '../server/definition';
import { defaultValidator, type SchemaValidator } from '../validation/json-schema';
import { ClientFeatures, type ClientFeatureOptions, type ClientHost } from './features';
import { ListCache } from './list-cache';
import { collectPages, DEFAULT_MAX_LIST_PAGES } from './pages';
import { checkRoots } from './roots';
import { ResourceSubscriptions } from './resource-subscriptions';
import { ToolOutputChecks } from './tool-output';

export interface ClientOptions extends ConnectionOptions, ClientFeatureOptions {
  /**
   * Extra capabilities (`experimental`, ...). `sampling`, `elicitation` and `roots` are declared by giving
   * their handlers (`sampling`, `elicitation`, `roots` options), never by this field.
   */
  readonly capabilities?: ClientCapabilities;
  /** The revision to ask for (default: the newest we support). */
  readonly protocolVersion?: ProtocolVersion;
  /** Revisions we accept in the server's answer (default: all four). */
  readonly protocolVersions?: readonly ProtocolVersion[];
  readonly validator?: SchemaValidator;
  /** Check a tool's `structuredContent` against the `outputSchema` from `listTools` (default true). */
  readonly validateToolOutput?: boolean;
  /**
   * How many pages `listTools`, `listResources`, `listResourceTemplates` and `listPrompts` follow before
   * they reject with `ProtocolViolationError` (default 10 000). A cursor the server returned before
   * rejects at once.
   */
  readonly maxListPages?: number;
}

export interface ClientRequestOptions extends SendOptions {
  /**
   * Check the result against the method's result schema for the negotiated revision (default true). Turn
   * it off only to inspect a peer's raw answer yourself (a hub keeps an upstream's valid list entries and
   * reports the broken ones).
   */
  readonly validateResult?: boolean;
}

export interface ConnectOptions {
  /** How long to wait for the initialize response (default: the connection's default timeout). */
  readonly timeout?: number;
  readonly signal?: AbortSignal;
}

interface Page {
  readonly nextCursor?: string;
}

const answerPing = () => ({});

type ListName = 'tools' | 'resources' | 'prompts';

/** Which list cache a `list_changed` notification refreshes. */
const LIST_CHANGED: Readonly<Record<string, ListName>> = {
  'notifications/tools/list_changed': 'tools',
  'notifications/resources/list_changed': 'resources',
  'notifications/prompts/list_changed': 'prompts',
};

/**
 * An MCP client: one connection to one server. `connect` performs the handshake; then typed calls for
 * every server feature, and the generic `request`/`notify`. A client connects once: to reconnect,
 * create a new one.
 */
export class Client extends Connection {
  readonly role = 'client';
  readonly capabilities: ClientCapabilities;
  /** @internal The application's sampling, elicitation and roots handlers. */
  readonly features: ClientFeatures;
  /** List caches, created on first use (most clients never ask for one). */
  private lists: { tools?: ListCache<Tool>; resources?: ListCache<Resource>; prompts?: ListCache<Prompt> } | undefined;
  private readonly requestedVersion: ProtocolVersion;
  private readonly acceptedVersions: readonly ProtocolVersion[];
  /** Undefined with `validateToolOutput: false`. */
  private readonly outputValidator: SchemaValidator | undefined;
  /** Made by the first complete `listTools` (most clients never check a tool's output). */
  private toolOutput: ToolOutputChecks | undefined;
  private resourceSubscriptions: ResourceSubscriptions | undefined;
  /** The transport `connect` attached: `close` waits for it to have closed. */
  private attached: Transport | undefined;
  private readonly maxListPages: number;
  /** The result checks of the negotiated revision, kept once ready (the revision no longer changes). */
  private readyChecks: ReadonlyMap<string, ResultCheck> | undefined;
  private requestHandlers: HandlerTable<ClientHost> | undefined;

  constructor(
    readonly info: Implementation,
    options: ClientOptions = {},
  ) {
    super('c', options);
    this.features = new ClientFeatures(options);

    this.acceptedVersions = options.protocolVersions ?? SUPPORTED_PROTOCOL_VERSIONS;
    this.requestedVersion = options.protocolVersion ?? this.acceptedVersions[0] ?? LATEST_PROTOCOL_VERSION;
    this.capabilities = this.features.capabilities(options.capabilities, this.requestedVersion);
    this.outputValidator = options.validateToolOutput === false ? undefined : (options.validator ?? defaultValidator());
    this.maxListPages = options.maxListPages ?? DEFAULT_MAX_LIST_PAGES;
  }

  /** @internal The handlers of requests from the server, made on the first one: a handshake pays for no table. */
  protected get handlers(): HandlerTable<ClientHost> {
    return (this.requestHandlers ??= handlerTable<ClientHost>({
      ping: answerPing,
      ...this.features.requestHandlers(),
    }));
  }

  /** The server's tools, cached and re-listed after `notifications/tools/list_changed`. */
  get toolList(): ListCache<Tool> {
    return this.listCache('tools', () => this.listTools());
  }

  /** The server's resources, cached and re-listed after `notifications/resources/list_changed`. */
  get resourceList(): ListCache<Resource> {
    return this.listCache('resources', () => this.listResources());
  }

  /** The server's prompts, cached and re-listed after `notifications/prompts/list_changed`. */
  get promptList(): ListCache<Prompt> {
    return this.listCache('prompts', () => this.listPrompts());
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
    this.attached = transport;
    this.transition({ type: 'initialize.start' });
    try {
      const params = {
        protocolVersion: this.requestedVersion,
        capabilities: this.capabilities as JsonObject,
        clientInfo: shape('Implementation', this.info, this.requestedVersion) as unknown as JsonObject,
      };
      const result = (await this.request('initialize', params, options)) as unknown as InitializeResult;
      const version = this.checkInitializeResult(result);
      this.announceVersion(version);
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
      await this.transportClosed();
      throw error;
    }
  }

  /**
   * Closes the connection and resolves once its transport has closed too: for a stdio server, once the
   * child process and its process group are gone. A transport that never finishes closing is given up on
   * after `CLOSE_TIMEOUT_MS` (5 s), as the connection does; the stdio shutdown ladder's defaults fit in it.
   */
  override async close(): Promise<QuitReason> {
    const closing = super.close();
    await this.transportClosed();
    return closing;
  }

  /** Waits for the attached transport's (idempotent) `close()`, at most `CLOSE_TIMEOUT_MS`. */
  private transportClosed(): Promise<void> {
    const transport = this.attached;
    if (!transport) return Promise.resolve();
    return new Promise((resolve) => {
      const giveUp = this.clock.setTimeout(resolve, CLOSE_TIMEOUT_MS);
      const done = () => {
        this.clock.clearTimeout(giveUp);
        resolve();
      };
      transport.close().then(done, done);
    });
  }

  /**
   * Results are checked against the method's result schema for the negotiated revision before a request
   * resolves (a broken one rejects with `ResultValidationError`); `validateResult: false` skips that.
   */
  protected override resultCheck(method: string, options: ClientRequestOptions | undefined): ResultCheck | undefined {
    if (options?.validateResult === false) return undefined;
    return (this.readyChecks ?? this.currentChecks()).get(method);
  }

  /** `Connection.request`, with the client's `validateResult` option in its type. */
  override request(method: string, params?: JsonObject, options?: ClientRequestOptions): Promise<JsonObject> {
    return super.request(method, params, options);
  }

  ping(options?: RequestOptions): Promise<void> {
    return this.request('ping', undefined, options).then(ignoreResult);
  }

  // ---- tools -------------------------------------------------------------------------------------

  /** One page of `tools/list`. */
  listToolsPage(cursor?: string, options?: ClientRequestOptions): Promise<ListToolsResult> {
    return this.call('tools/list', pageParams(cursor), options);
  }

  /** Every tool, following cursors. Remembers output schemas to check `callTool` results. */
  async listTools(options?: ClientRequestOptions): Promise<Tool[]> {
    const tools = await collectPages<Tool, 'tools'>(
      'tools/list',
      'tools',
      (cursor) => this.listToolsPage(cursor, options),
      this.maxListPages,
    );
    if (this.outputValidator) (this.toolOutput ??= new ToolOutputChecks(this.outputValidator)).remember(tools);
    return tools;
  }

  /**
   * Calls a tool. A tool's own failure is a result with `isError: true`, not a rejection. When `listTools`
   * saw an `outputSchema` for the tool, `structuredContent` is checked against it.
   */
  callTool(name: string, args?: JsonObject, options?: ClientRequestOptions): Promise<CallToolResult> {
    const pending = this.call<CallToolResult>(
      'tools/call',
      args === undefined ? { name } : { name, arguments: args },
      options,
    );
    return this.toolOutput ? this.toolOutput.checked(name, pending) : pending;
  }

  // ---- resources ---------------------------------------------------------------------------------

  listResourcesPage(cursor?: string, options?: ClientRequestOptions): Promise<{ resources: Resource[] } & Page> {
    return this.call('resources/list', pageParams(cursor), options);
  }

  listResources(options?: ClientRequestOptions): Promise<Resource[]> {
    return collectPages(
      'resources/list',
      'resources',
      (cursor) => this.listResourcesPage(cursor, options),
      this.maxListPages,
    );
  }

  listResourceTemplatesPage(
    cursor?: string,
    options?: ClientRequestOptions,
  ): Promise<{ resourceTemplates: ResourceTemplate[] } & Page> {
    return this.call('resources/templates/list', pageParams(cursor), options);
  }

  listResourceTemplates(options?: ClientRequestOptions): Promise<ResourceTemplate[]> {
    return collectPages(
      'resources/templates/list',
      'resourceTemplates',
      (cursor) => this.listResourceTemplatesPage(cursor, options),
      this.maxListPages,
    );
  }

  /** Reads a resource. An unknown URI rejects with `McpError` -32002 (`data.uri` names it). */
  readResource(uri: string, options?: ClientRequestOptions): Promise<ReadResourceResult> {
    return this.call('resources/read', { uri }, options);
  }

  /**
   * Changes of a resource (and its sub-resources) as an Observable: subscribing sends
   * `resources/subscribe`, the last unsubscription sends `resources/unsubscribe`. It completes when the
   * client is closed with `close()`, and errors with a `ConnectionClosedError` (its `quitReason` says why)
   * when the connection ends otherwise (the server exits, the transport fails). A server that refuses the
   * subscription errors it.
   */
  subscribeResource(uri: string): Observable<ResourceUpdatedParams> {
    this.resourceSubscriptions ??= new ResourceSubscriptions({
      notifications$: this.notifications$,
      closed: this.closed,
      subscribe: (target) => this.request('resources/subscribe', { uri: target }),
      unsubscribe: (target) => this.request('resources/unsubscribe', { uri: target }),
    });
    return this.resourceSubscriptions.updates(uri);
  }

  /** The `resources/search` extension, when the server offers it (see `RESOURCE_SEARCH_EXTENSION`). */
  searchResources(query: string, options?: ClientRequestOptions): Promise<Resource[]> {
    if (!this.serverCapabilities?.experimental?.[RESOURCE_SEARCH_EXTENSION]) {
      return Promise.reject(
        new CapabilityNotSupportedError('resources/search', 'The server does not offer the resources/search extension'),
      );
    }
    return this.call<{ resources: Resource[] }>('resources/search', { query }, options).then(
      (result) => result.resources,
    );
  }

  // ---- prompts and completion --------------------------------------------------------------------

  listPromptsPage(cursor?: string, options?: ClientRequestOptions): Promise<{ prompts: Prompt[] } & Page> {
    return this.call('prompts/list', pageParams(cursor), options);
  }

  listPrompts(options?: ClientRequestOptions): Promise<Prompt[]> {
    return collectPages(
      'prompts/list',
      'prompts',
      (cursor) => this.listPromptsPage(cursor, options),
      this.maxListPages,
    );
  }

  /** Renders a prompt. An unknown prompt or a missing required argument rejects with `McpError` -32602. */
  getPrompt(
    name: string,
    args?: Readonly<Record<string, string>>,
    options?: ClientRequestOptions,
  ): Promise<GetPromptResult> {
    return this.call('prompts/get', args === undefined ? { name } : { name, arguments: args }, options);
  }

  /** Suggestions for a prompt argument or a resource-template variable. */
  complete(params: CompleteParams, options?: ClientRequestOptions): Promise<Completion> {
    return this.call<{ completion: Completion }>('completion/complete', params as unknown as JsonObject, options).then(
      (result) => result.completion,
    );
  }

  // ---- logging -----------------------------------------------------------------------------------

  setLoggingLevel(level: LoggingLevel, options?: ClientRequestOptions): Promise<void> {
    return this.request('logging/setLevel', { level }, options).then(() => undefined);
  }

  /** The server's log messages (`notifications/message`). */
  get logs$(): Observable<LoggingMessageParams> {
    return this.notifications$.pipe(
      filter((notification) => notification.method === 'notifications/message'),
      map((notification) => notification.params as unknown as LoggingMessageParams),
    );
  }

  // ---- client features ---------------------------------------------------------------------------

  /** The roots offered to the server (a `roots` option declares them). */
  get roots(): readonly Root[] | undefined {
    return this.features.roots;
  }

  /** Changes the roots and tells a connected server (`notifications/roots/list_changed`). */
  setRoots(roots: readonly Root[]): Promise<void> {
    if (!this.features.roots) {
      return Promise.reject(
        new CapabilityNotSupportedError(
          'roots/list',
          'This client declared no roots: pass the roots option (even []) to offer them',
        ),
      );
    }
    try {
      this.features.roots = checkRoots(roots);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.state === 'ready' ? this.notify('notifications/roots/list_changed') : Promise.resolve();
  }

  /** URL-mode elicitations the server reports as completed (`notifications/elicitation/complete`). */
  get elicitationComplete$(): Observable<{ readonly elicitationId: string }> {
    return this.notifications$.pipe(
      filter((notification) => notification.method === 'notifications/elicitation/complete'),
      map((notification) => notification.params as unknown as { elicitationId: string }),
    );
  }

  // ---- internals ---------------------------------------------------------------------------------

  protected override onNotification(message: JsonRpcNotification): void {
    const list = LIST_CHANGED[message.method];
    if (list === 'tools') this.toolOutput?.forget();
    if (list) this.lists?.[list]?.invalidate();
  }

  protected override onClosed(): void {
    for (const cache of Object.values(this.lists ?? {})) cache.close();
  }

  private listCache<K extends ListName, T>(name: K, fetch: () => Promise<readonly T[]>): ListCache<T> {
    const lists = (this.lists ??= {}) as Record<ListName, ListCache<T> | undefined>;
    return (lists[name] ??= new ListCache(fetch, (error) =>
      this.logger.warn(`Could not refresh the ${name} list after list_changed`, error),
    ));
  }

  /** The result checks of the revision in force: the requested one until the server has answered. */
  private currentChecks(): ReadonlyMap<string, ResultCheck> {
    const checks = resultChecks(this.protocolVersion ?? this.requestedVersion);
    if (this.state === 'ready') this.readyChecks = checks;
    return checks;
  }

  private call<T>(
    method: string,
    params: JsonObject | undefined,
    options: ClientRequestOptions | undefined,
  ): Promise<T> {
    return this.request(method, params, options) as Promise<unknown> as Promise<T>;
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
}

function ignoreResult(): void {}

function pageParams(cursor: string | undefined): JsonObject | undefined {
  return cursor === undefined ? undefined : { cursor };
}
