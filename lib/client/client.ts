import { defer, EMPTY, filter, map, Observable } from 'rxjs';
import type { QuitReason } from '../../machines/connection';
import type { RequestOptions } from '../core/correlation';
import { CapabilityNotSupportedError } from '../jsonrpc/errors';
import type { JsonObject, JsonRpcNotification } from '../jsonrpc/types';
import type {
  CallToolResult,
  CompleteParams,
  Completion,
  GetPromptResult,
  Implementation,
  ListToolsResult,
  LoggingLevel,
  LoggingMessageParams,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  ResourceUpdatedParams,
  Tool,
} from '../protocol/types';
import type { Root } from '../protocol/client-features';
import { RESOURCE_SEARCH_EXTENSION } from '../protocol/method-table';
import { listChangeOf, type ChangeableList } from '../protocol/list-changes';
import { defaultValidator, type SchemaValidator } from '../validation/json-schema';
import type { ToolArgumentsOf, ToolDefinition, ToolResultOf } from '../server/tools';
import { ClientConnection, type ClientConnectionOptions, type ClientRequestOptions } from './client-connection';
import { ListCache, type ResultCacheHints } from './list-cache';
import type { ListChangesStatus } from './list-change-stream';
import { listen as openListenStream, type ListenFilter, type ListenHost } from './listen';
import { collectPages, DEFAULT_MAX_LIST_PAGES } from './pages';
import { checkRoots } from './roots';
import { ResourceSubscriptions } from './resource-subscriptions';
import { endingWithConnection } from './stream-end';
import { ToolOutputChecks } from './tool-output';

export type { ClientRequestOptions, ConnectOptions } from './client-connection';
export type { ListChangesState, ListChangesStatus } from './list-change-stream';

export interface ClientOptions extends ClientConnectionOptions {
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

export interface PageCursor {
  readonly nextCursor?: string;
}

/**
 * An MCP client: one connection to one server, in either era (connecting, the request path and closing
 * are lib/client/client-connection.ts). `connect` picks the era and connects; then typed calls for every
 * server feature, and the generic `request`/`notify`. The calls are the same in both eras: in the
 * stateless revision list changes and resource updates arrive on `subscriptions/listen` streams, and the
 * log level travels in each request. A client connects once; with a `reconnect` policy it reconnects on its
 * own when the connection is lost (lib/client/reconnect.ts), and stays the same client throughout.
 */
export class Client extends ClientConnection {
  /** List caches, created on first use (most clients never ask for one). */
  private lists: { tools?: ListCache<Tool>; resources?: ListCache<Resource>; prompts?: ListCache<Prompt> } | undefined;
  /** Undefined with `validateToolOutput: false`. */
  private readonly outputValidator: SchemaValidator | undefined;
  /** Made by the first complete `listTools` (most clients never check a tool's output). */
  private toolOutput: ToolOutputChecks | undefined;
  private resourceSubscriptions: ResourceSubscriptions | undefined;
  private readonly maxListPages: number;
  /** List caches and `notifications$` subscribers: what keeps a stateless connection's list-change stream open. */
  private listChangeNeedCount = 0;

  constructor(info: Implementation, options: ClientOptions = {}) {
    super(info, options);
    this.outputValidator = options.validateToolOutput === false ? undefined : (options.validator ?? defaultValidator());
    this.maxListPages = options.maxListPages ?? DEFAULT_MAX_LIST_PAGES;
  }

  /**
   * The server's tools, cached and re-listed after `notifications/tools/list_changed`. A stateless-revision
   * listing is reused for its `ttlMs` at most (`ttlMs: 0`, the default of many servers: not at all).
   */
  get toolList(): ListCache<Tool> {
    return this.listCache('tools', (hints) => this.collectTools(undefined, hints));
  }

  /** The server's resources, cached like `toolList` and re-listed after `notifications/resources/list_changed`. */
  get resourceList(): ListCache<Resource> {
    return this.listCache('resources', (hints) => this.collectResources(undefined, hints));
  }

  /** The server's prompts, cached like `toolList` and re-listed after `notifications/prompts/list_changed`. */
  get promptList(): ListCache<Prompt> {
    return this.listCache('prompts', (hints) => this.collectPrompts(undefined, hints));
  }

  /**
   * Every notification from the server. In the stateless revision (2026-07-28), where list changes come on
   * a `subscriptions/listen` stream, a subscriber keeps that stream open (see `listChangeStatus`). Like every
   * stream of the client it completes on `close()` and errors with a `ConnectionClosedError` (its
   * `quitReason` says why) when the connection ends otherwise; with a `reconnect` policy it goes on across
   * reconnections and errors only when the client gives up.
   */
  override get notifications$(): Observable<JsonRpcNotification> {
    const all = this.notificationsEndingAs('The notification stream');
    return new Observable<JsonRpcNotification>((subscriber) => {
      this.needListChanges();
      const subscription = all.subscribe(subscriber);
      return () => {
        subscription.unsubscribe();
        this.releaseListChanges();
      };
    });
  }

  /** @internal Every notification, without keeping the list-change stream open (what this client's own streams read). */
  get serverNotifications$(): Observable<JsonRpcNotification> {
    return super.notifications$;
  }

  /** @internal How many things need list changes now (a stateless connection reads it once its era is known). */
  get listChangeNeeds(): number {
    return this.listChangeNeedCount;
  }

  /**
   * Whether the server's list changes reach `notifications$` and the list caches now, and how or why not.
   * In the stateless revision they come on a `subscriptions/listen` stream that opens when a list cache is
   * made or `notifications$` gets a subscriber, and closes when no subscriber is left and no cache exists;
   * a server that refuses it (it holds a bounded number of them) gives `refused` and its reason.
   */
  get listChangeStatus(): ListChangesStatus {
    return this.eraCalls.listChangesStatus;
  }

  /**
   * `subscriptions/listen` (2026-07-28): the stream's notifications, the acknowledgement first
   * (`acknowledgedFilter` reads what the server agreed to); one listen request per subscriber, cancelled on
   * unsubscribe.
   */
  listen(filter: ListenFilter): Observable<JsonRpcNotification> {
    return openListenStream(this.streamHost(), filter);
  }

  /** The stateless revision has no ping: `server/discover` is the round trip that shows the server is there. */
  ping(options?: RequestOptions): Promise<void> {
    return this.eraCalls.ping(options);
  }

  // ---- tools -------------------------------------------------------------------------------------

  /** One page of `tools/list`. */
  listToolsPage(cursor?: string, options?: ClientRequestOptions): Promise<ListToolsResult> {
    return this.call('tools/list', pageParams(cursor), options);
  }

  /** Every tool, following cursors. Remembers output schemas to check `callTool` results. */
  listTools(options?: ClientRequestOptions): Promise<Tool[]> {
    return this.collectTools(options, undefined);
  }

  /**
   * Calls a tool. A tool's own failure is a result with `isError: true`, not a rejection. When `listTools`
   * saw an `outputSchema` for the tool, `structuredContent` is checked against it. Given the tool's definition
   * (one the caller shares with the server), or its type (`callTool<typeof add>('add', …)`), the arguments and
   * `structuredContent` are typed from its schemas.
   */
  callTool(name: string, args?: JsonObject, options?: ClientRequestOptions): Promise<CallToolResult>;
  callTool<T extends ToolDefinition<any, any, any>>(
    tool: T | T['name'],
    args?: ToolArgumentsOf<T>,
    options?: ClientRequestOptions,
  ): Promise<ToolResultOf<T>>;
  callTool(
    tool: string | ToolDefinition<any, any, any>,
    givenArgs?: object,
    options?: ClientRequestOptions,
  ): Promise<CallToolResult> {
    const name = typeof tool === 'string' ? tool : tool.name;
    const args = givenArgs as JsonObject | undefined;
    const pending = this.call<CallToolResult>(
      'tools/call',
      args === undefined ? { name } : { name, arguments: args },
      options,
    );
    return this.toolOutput ? this.toolOutput.checked(name, pending) : pending;
  }

  // ---- resources ---------------------------------------------------------------------------------

  listResourcesPage(cursor?: string, options?: ClientRequestOptions): Promise<{ resources: Resource[] } & PageCursor> {
    return this.call('resources/list', pageParams(cursor), options);
  }

  listResources(options?: ClientRequestOptions): Promise<Resource[]> {
    return this.collectResources(options, undefined);
  }

  listResourceTemplatesPage(
    cursor?: string,
    options?: ClientRequestOptions,
  ): Promise<{ resourceTemplates: ResourceTemplate[] } & PageCursor> {
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
   * Changes of a resource (and its sub-resources) as an Observable: the first subscriber opens the
   * subscription, the last unsubscription ends it. In the handshake era that is `resources/subscribe` and
   * `resources/unsubscribe`; in the stateless revision a `subscriptions/listen` stream for the URI, cancelled
   * on unsubscription. It completes when the client is closed with `close()`, and errors with a
   * `ConnectionClosedError` (its `quitReason` says why) when the connection ends otherwise (the server
   * exits, the transport fails). A server that refuses the subscription errors it.
   */
  subscribeResource(uri: string): Observable<ResourceUpdatedParams> {
    this.resourceSubscriptions ??= new ResourceSubscriptions((target) => this.eraCalls.resourceUpdates(target));
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

  listPromptsPage(cursor?: string, options?: ClientRequestOptions): Promise<{ prompts: Prompt[] } & PageCursor> {
    return this.call('prompts/list', pageParams(cursor), options);
  }

  listPrompts(options?: ClientRequestOptions): Promise<Prompt[]> {
    return this.collectPrompts(options, undefined);
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
   * level is kept and sent in every later request's `_meta` (`io.modelcontextprotocol/logLevel`), and the
   * server's messages arrive on those requests' streams.
   */
  setLoggingLevel(level: LoggingLevel, options?: ClientRequestOptions): Promise<void> {
    return this.eraCalls.setLogLevel(level, options);
  }

  /** The server's log messages (`notifications/message`); it ends as `notifications$` does. */
  get logs$(): Observable<LoggingMessageParams> {
    return this.notificationsEndingAs('The log stream').pipe(
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
    return this.eraCalls.rootsChanged();
  }

  /**
   * URL-mode elicitations the server reports as completed (`notifications/elicitation/complete`); it ends as
   * `notifications$` does.
   */
  get elicitationComplete$(): Observable<{ readonly elicitationId: string }> {
    return this.notificationsEndingAs('The elicitation completion stream').pipe(
      filter((notification) => notification.method === 'notifications/elicitation/complete'),
      map((notification) => notification.params as unknown as { elicitationId: string }),
    );
  }

  // ---- internals ---------------------------------------------------------------------------------

  /** A `list_changed`, on the session or on the list-change stream of the stateless revision alike. */
  protected override onNotification(message: JsonRpcNotification): void {
    const list = listChangeOf(message.method)?.list;
    if (list === 'tools') this.toolOutput?.forget();
    if (list) this.lists?.[list]?.invalidate();
  }

  protected override onClosed(): void {
    super.onClosed();
    const reason = this.quitReason;
    for (const [name, cache] of Object.entries(this.lists ?? {})) cache.close(reason, listStreamName(name));
  }

  /** @internal Reconnected: the lists may have changed while the client was away, so the caches list them again. */
  protected override onReconnected(): void {
    this.toolOutput?.forget();
    for (const cache of Object.values(this.lists ?? {})) cache.invalidate();
  }

  /** Every tool; with `hints`, the cache hints of each page are added to it. */
  private async collectTools(options: ClientRequestOptions | undefined, hints: ResultCacheHints[] | undefined) {
    const page = (cursor: string | undefined) => this.listToolsPage(cursor, options);
    const listed = await collectPages<Tool, 'tools'>('tools/list', 'tools', page, this.maxListPages, hints);
    const tools = this.eraCalls.usableTools(listed);
    if (this.outputValidator) (this.toolOutput ??= new ToolOutputChecks(this.outputValidator)).remember(tools);
    return tools;
  }

  private collectResources(options: ClientRequestOptions | undefined, hints: ResultCacheHints[] | undefined) {
    const page = (cursor: string | undefined) => this.listResourcesPage(cursor, options);
    return collectPages<Resource, 'resources'>('resources/list', 'resources', page, this.maxListPages, hints);
  }

  private collectPrompts(options: ClientRequestOptions | undefined, hints: ResultCacheHints[] | undefined) {
    const page = (cursor: string | undefined) => this.listPromptsPage(cursor, options);
    return collectPages<Prompt, 'prompts'>('prompts/list', 'prompts', page, this.maxListPages, hints);
  }

  /**
   * The cache of list `name`. A stateless-revision listing brings its pages' cache hints (`ttlMs`,
   * `cacheScope`: see `ListCache`); a handshake-era one has none and is kept until the list changes.
   */
  private listCache<T>(
    name: ChangeableList,
    list: (hints: ResultCacheHints[] | undefined) => Promise<readonly T[]>,
  ): ListCache<T> {
    const lists = (this.lists ??= {}) as Record<ChangeableList, ListCache<T> | undefined>;
    const cached = lists[name];
    if (cached) return cached;
    // A cache lives as long as the client: it needs list changes until then.
    this.needListChanges();
    const cache = (lists[name] = new ListCache(
      () => this.eraCalls.listing(list),
      (error) => this.logger.warn(`Could not refresh the ${name} list after list_changed`, error),
      this.clock,
    ));
    if (this.state === 'closed') cache.close(this.quitReason, listStreamName(name));
    return cache;
  }

  private needListChanges(): void {
    this.listChangeNeedCount++;
    this.eraCalls.needListChanges();
  }

  private releaseListChanges(): void {
    this.listChangeNeedCount--;
    this.eraCalls.releaseListChanges();
  }

  /** Why the connection ended (the first reason given), once it has begun to end. */
  private get quitReason(): QuitReason | undefined {
    return this.actor.getSnapshot().data.quitReason;
  }

  /**
   * Every notification, for a public stream named `what`: it completes on `close()` and errors otherwise
   * (lib/client/stream-end.ts), also for a subscriber that comes after the end.
   */
  private notificationsEndingAs(what: string): Observable<JsonRpcNotification> {
    const live = defer(() => (this.state === 'closed' ? EMPTY : this.serverNotifications$));
    return endingWithConnection(live, what, () => this.quitReason);
  }

  /** This client as the host of a listen stream of its own, whose reading of notifications needs no list changes. */
  private streamHost(): ListenHost {
    return {
      notifications$: this.serverNotifications$,
      closed: this.closed,
      request: (m, p, o) => this.request(m, p, o),
      reconnected$: this.reconnected$,
    };
  }

  private call<T>(
    method: string,
    params: JsonObject | undefined,
    options: ClientRequestOptions | undefined,
  ): Promise<T> {
    return this.request(method, params, options) as Promise<unknown> as Promise<T>;
  }
}

function pageParams(cursor: string | undefined): JsonObject | undefined {
  return cursor === undefined ? undefined : { cursor };
}

/** What a list cache's `changes$` is called in the error that ends it. */
function listStreamName(list: string): string {
  return `The ${list} list stream`;
}
