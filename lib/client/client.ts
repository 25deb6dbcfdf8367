import { filter, map, type Observable } from 'rxjs';
import {
  CLOSE_TIMEOUT_MS,
  Connection,
  handlerTable,
  type ConnectionOptions,
  type HandlerTable,
  type SendOptions,
} from '../core/connection';
import { DEFAULT_REQUEST_TIMEOUT_MS, type RequestOptions } from '../core/correlation';
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
import { MODERN_PROTOCOL_VERSIONS, namesModernRevision, type ModernProtocolVersion } from '../protocol/modern';
import { defaultValidator, type SchemaValidator } from '../validation/json-schema';
import { defaultEraCache, type EraCache, type EraVerdict } from './era-cache';
import { DEFAULT_ERA_PROBE_TIMEOUT_MS, forcedEra, negotiateEra } from './era-negotiation';
import type { EraChoice } from './era-probe';
import { ClientFeatures, type ClientFeatureOptions, type ClientHost } from './features';
import { isLegacyLookingFailure, ModernSession, requestEnvelope } from './modern-session';
import { ListCache } from './list-cache';
import { completeInputRequired, inputAnswerer, needsInput, retryParams, type InputAnswerer } from './input-required';
import { listen as openListenStream, type ListenFilter } from './listen';
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
  /**
   * The revision to ask for (default: the newest we support). A handshake-era revision implies
   * `era: 'legacy'`; a stateless one (`'2026-07-28'`) implies `era: 'modern'`.
   */
  readonly protocolVersion?: ProtocolVersion | ModernProtocolVersion;
  /**
   * Which era to speak. `auto` (default): probe with `server/discover` over transports that name an
   * `eraKey` (stdio, Streamable HTTP), falling back to `initialize` on any legacy-looking answer; other
   * transports connect with `initialize` as before. `legacy`: `initialize` at once, no probe. `modern`:
   * the stateless revision, or fail.
   */
  readonly era?: EraChoice;
  /**
   * Where era verdicts are kept, by the transport's `eraKey` (default: one cache per process); `false`:
   * none, every connection probes.
   */
  readonly eraCache?: EraCache | false;
  /** How long a stdio server has to answer the probe before it counts as legacy, in ms (3000). */
  readonly eraProbeTimeout?: number;
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
  /** `input_required` rounds one modern call may take before it fails (default 10). */
  readonly maxInputRounds?: number;
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
  private readonly maxInputRounds: number | undefined;
  /** Answers `input_required` rounds with the registered features; made on the first round. */
  private answerer: InputAnswerer | undefined;
  /** The result checks of the negotiated revision, kept once ready (the revision no longer changes). */
  private readyChecks: ReadonlyMap<string, ResultCheck> | undefined;
  private requestHandlers: HandlerTable<ClientHost> | undefined;
  private readonly eraChoice: EraChoice;
  private readonly eraCache: EraCache | undefined;
  private readonly eraProbeTimeout: number;
  /** The connection's default request timeout: how long an HTTP server has to answer the probe. */
  private readonly requestTimeout: number;
  /** The stateless revision `protocolVersion` names, when it names one. */
  private readonly forcedModernVersion: string | undefined;
  /** Set once connected in the stateless revision: what every request then carries. */
  private modern: ModernSession | undefined;
  /** The verdict-cache key of the attached transport, when it has one. */
  private eraKey: string | undefined;

  constructor(
    readonly info: Implementation,
    options: ClientOptions = {},
  ) {
    super('c', options);
    this.features = new ClientFeatures(options);

    this.acceptedVersions = options.protocolVersions ?? SUPPORTED_PROTOCOL_VERSIONS;
    const asked = options.protocolVersion;
    this.requestedVersion =
      asked !== undefined && !namesModernRevision(asked)
        ? (asked as ProtocolVersion)
        : (this.acceptedVersions[0] ?? LATEST_PROTOCOL_VERSION);
    this.eraChoice = forcedEra(options.era, asked);
    this.eraCache = options.eraCache === false ? undefined : (options.eraCache ?? defaultEraCache());
    this.eraProbeTimeout = options.eraProbeTimeout ?? DEFAULT_ERA_PROBE_TIMEOUT_MS;
    this.requestTimeout = options.defaultTimeout ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.forcedModernVersion = asked !== undefined && namesModernRevision(asked) ? asked : undefined;
    this.capabilities = this.features.capabilities(options.capabilities, this.requestedVersion);
    this.outputValidator = options.validateToolOutput === false ? undefined : (options.validator ?? defaultValidator());
    this.maxListPages = options.maxListPages ?? DEFAULT_MAX_LIST_PAGES;
    this.maxInputRounds = options.maxInputRounds;
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
   * Connects over `transport` in the era the `era` option picks (see `ClientOptions.era`): in the stateless
   * revision once `server/discover` (or the cached verdict) said so; otherwise with the handshake:
   * `initialize`, version check, `notifications/initialized`. On failure the connection is closed (quit
   * reason `handshake-failed`) and the error is thrown.
   */
  async connect(transport: Transport, options: ConnectOptions = {}): Promise<this> {
    if (this.eraChoice !== 'legacy') {
      let verdict: EraVerdict;
      try {
        verdict = await negotiateEra(transport, {
          choice: this.eraChoice,
          cache: this.eraCache,
          ours: this.modernVersions(),
          envelope: (version) => requestEnvelope(version, this.capabilities as JsonObject, this.infoFor()),
          stdioTimeoutMs: this.eraProbeTimeout,
          timeoutMs: options.timeout ?? this.requestTimeout,
          clock: this.clock,
          logger: this.logger,
        });
      } catch (error) {
        await this.failBeforeAttach(transport, error as Error);
        throw error;
      }
      if (verdict.era === 'modern') return this.connectModern(transport, verdict);
    }
    return this.handshake(transport, options);
  }

  /** The handshake era's connect: `initialize`, version check, `notifications/initialized`. */
  private async handshake(transport: Transport, options: ConnectOptions): Promise<this> {
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

  /** Attaches a transport the probe found modern: no handshake, the discovery result is what we know. */
  private connectModern(transport: Transport, verdict: Extract<EraVerdict, { era: 'modern' }>): this {
    this.attach(transport);
    this.attached = transport;
    this.eraKey = transport.eraKey;
    this.modern = new ModernSession(
      verdict.version,
      this.modernVersions(),
      this.capabilities as JsonObject,
      this.infoFor(),
    );
    const { discover } = verdict;
    this.transition({
      type: 'era.modern',
      negotiated: {
        protocolVersion: verdict.version,
        peerCapabilities: discover.capabilities,
        peerInfo: discover.serverInfo,
        ...(discover.instructions !== undefined && { instructions: discover.instructions }),
      },
    });
    return this;
  }

  /** The probe failed: the transport is closed and the connection ends as a failed handshake. */
  private async failBeforeAttach(transport: Transport, failure: Error): Promise<void> {
    this.transition({ type: 'close', reason: { kind: 'handshake-failed', message: failure.message, error: failure } });
    await this.closed;
    await transport.close().catch(() => undefined);
  }

  /** The stateless revisions this client speaks: the one `protocolVersion` names, or all of ours. */
  private modernVersions(): readonly string[] {
    return this.forcedModernVersion ? [this.forcedModernVersion] : MODERN_PROTOCOL_VERSIONS;
  }

  /** Our `clientInfo`, shaped for the newest handshake revision (2026-07-28 kept its shape). */
  private infoFor(): JsonObject {
    return shape('Implementation', this.info, LATEST_PROTOCOL_VERSION) as unknown as JsonObject;
  }

  /** The era this client connected in, once connected. */
  get connectedEra(): 'legacy' | 'modern' | undefined {
    const state = this.state;
    return state === 'modern' ? 'modern' : state === 'ready' ? 'legacy' : undefined;
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

  /**
   * `Connection.request`, with the client's `validateResult` option in its type. In the stateless revision
   * every request carries the `_meta` envelope (and a `tools/call` its `Mcp-Param-*` headers).
   */
  override request(method: string, params?: JsonObject, options?: ClientRequestOptions): Promise<JsonObject> {
    const modern = this.modern;
    if (modern === undefined) return super.request(method, params, options);
    return this.modernRequest(modern, method, params, options).then((sent) =>
      this.completeModernResult(method, sent.params, sent.result, options),
    );
  }

  /** A request of the stateless revision: stamped, retried once on a -32022 naming another revision we speak. */
  private async modernRequest(
    modern: ModernSession,
    method: string,
    params: JsonObject | undefined,
    options: ClientRequestOptions | undefined,
  ): Promise<{ params: JsonObject; result: JsonObject }> {
    const headers = modern.headersFor(method, params);
    const sendOptions = headers === undefined ? options : { ...options, headers: { ...options?.headers, ...headers } };
    let sent = modern.stamp(params);
    let result: JsonObject;
    try {
      result = await super.request(method, sent, sendOptions);
    } catch (error) {
      const retry = modern.retryVersion(error);
      if (retry === undefined) {
        if (this.eraKey !== undefined && isLegacyLookingFailure(error)) this.eraCache?.delete(this.eraKey);
        throw error;
      }
      this.logger.debug(`${method} was refused with -32022: switching to revision ${retry} and retrying once`);
      modern.switchVersion(retry);
      sent = modern.stamp(params);
      result = await super.request(method, sent, sendOptions);
    }
    return { params: sent, result };
  }

  /**
   * A modern result as the caller gets it: an `input_required` one is answered by the registered sampling,
   * elicitation and roots handlers and the request retried (a new id each round, the server's
   * `requestState` echoed), until it completes (lib/client/input-required.ts). Other results pass as they are.
   */
  private completeModernResult(
    method: string,
    params: JsonObject,
    result: JsonObject,
    options: ClientRequestOptions | undefined,
  ): Promise<JsonObject> | JsonObject {
    if (!needsInput(result, method)) return withoutResultType(result);
    const modern = this.modern!;
    return completeInputRequired(result, {
      method,
      answer: (this.answerer ??= inputAnswerer(this.features, this)),
      retry: (sent, signal) =>
        this.modernRequest(modern, method, retryParams(params, sent), { ...options, signal }).then(
          (retried) => retried.result,
        ),
      signal: options?.signal,
      clock: this.clock,
      ...(this.maxInputRounds !== undefined && { maxRounds: this.maxInputRounds }),
    }).then(withoutResultType);
  }

  /**
   * `subscriptions/listen` (2026-07-28): the stream's notifications, the acknowledgement first
   * (`acknowledgedFilter` reads what the server agreed to); one listen request per subscriber, cancelled on
   * unsubscribe.
   */
  listen(filter: ListenFilter): Observable<JsonRpcNotification> {
    return openListenStream(this, filter);
  }

  /** The stateless revision has no ping: `server/discover` is the round trip that shows the server is there. */
  ping(options?: RequestOptions): Promise<void> {
    return this.request(this.modern ? 'server/discover' : 'ping', undefined, options).then(ignoreResult);
  }

  // ---- tools -------------------------------------------------------------------------------------

  /** One page of `tools/list`. */
  listToolsPage(cursor?: string, options?: ClientRequestOptions): Promise<ListToolsResult> {
    return this.call('tools/list', pageParams(cursor), options);
  }

  /** Every tool, following cursors. Remembers output schemas to check `callTool` results. */
  async listTools(options?: ClientRequestOptions): Promise<Tool[]> {
    let tools = await collectPages<Tool, 'tools'>(
      'tools/list',
      'tools',
      (cursor) => this.listToolsPage(cursor, options),
      this.maxListPages,
    );
    if (this.modern) {
      tools = this.modern.usableTools(tools, (tool, problem) =>
        this.logger.debug(`Tool ${JSON.stringify(tool.name)} is left out: its ${problem}`),
      );
    }
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

  /**
   * The level of the server's log messages. In the stateless revision there is no `logging/setLevel`: the
   * level is kept and sent in every later request's `_meta` (`io.modelcontextprotocol/logLevel`).
   */
  setLoggingLevel(level: LoggingLevel, options?: ClientRequestOptions): Promise<void> {
    if (this.modern) {
      this.modern.setLogLevel(level);
      return Promise.resolve();
    }
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
    const state = this.state;
    if (state === 'ready' || state === 'modern') this.readyChecks = checks;
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

/**
 * A complete result as the caller sees it in either era: `resultType: "complete"` is how the stateless
 * revision frames an answer on the wire, not part of what was answered.
 */
function withoutResultType(result: JsonObject): JsonObject {
  if (result.resultType !== 'complete') return result;
  const { resultType: _complete, ...answer } = result;
  return answer;
}
