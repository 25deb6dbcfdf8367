import type { Observable } from 'rxjs';
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
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  ResourceUpdatedParams,
  Tool,
} from '../protocol/types';
import type { Root } from '../protocol/client-features';
import { RESOURCE_SEARCH_EXTENSION } from '../protocol/method-table';
import { listChangeOf } from '../protocol/list-changes';
import { defaultValidator, type SchemaValidator } from '../validation/json-schema';
import type { ToolArgumentsOf, ToolDefinition, ToolResultOf } from '../server/tools';
import type { Transport } from '../../transports/transport';
import { type ClientConnectionOptions, type ClientRequestOptions, type ConnectOptions } from './client-connection';
import { ClientLists } from './client-lists';
import { ClientStreams } from './client-streams';
import type { ListCache, ResultCacheHints } from './list-cache';
import { collectPages, DEFAULT_MAX_LIST_PAGES } from './pages';
import { checkRoots } from './roots';
import { ResourceSubscriptions } from './resource-subscriptions';
import { ToolOutputChecks } from './tool-output';
import { ClientTasks, type TaskCallOptions } from './tasks/client-tasks';
import type { TaskHandle } from './tasks/task-handle';
import type { TaskRef } from './tasks/task-ref';
import type { TaskStatusView } from './tasks/task-view';

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
export class Client extends ClientStreams {
  /** List caches, created on first use (most clients never ask for one). */
  private lists: ClientLists | undefined;
  /** Undefined with `validateToolOutput: false`. */
  private readonly outputValidator: SchemaValidator | undefined;
  /** Made by the first complete `listTools` (most clients never check a tool's output). */
  private toolOutput: ToolOutputChecks | undefined;
  private resourceSubscriptions: ResourceSubscriptions | undefined;
  private readonly maxListPages: number;
  /** The tasks followed (lib/client/tasks/), made on first use. */
  private taskCalls: ClientTasks | undefined;
  /** The listed tools' task support, by name (from the last `listTools`). */
  private taskSupport: Map<string, 'forbidden' | 'optional' | 'required'> | undefined;
  /** @internal The transport's endpoint, named in task references (`Transport.eraKey`). */
  taskEndpoint: string | undefined;

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
    return this.listCaches.cache('tools', (hints) => this.collectTools(undefined, hints));
  }

  /** The server's resources, cached like `toolList` and re-listed after `notifications/resources/list_changed`. */
  get resourceList(): ListCache<Resource> {
    return this.listCaches.cache('resources', (hints) => this.collectResources(undefined, hints));
  }

  /** The server's prompts, cached like `toolList` and re-listed after `notifications/prompts/list_changed`. */
  get promptList(): ListCache<Prompt> {
    return this.listCaches.cache('prompts', (hints) => this.collectPrompts(undefined, hints));
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

  // ---- tasks -------------------------------------------------------------------------------------

  /**
   * Calls a tool as a task, in either era (2025-11-25 `params.task`, or the 2026-07-28 tasks extension), and
   * resolves once the server made the task: the handle's `status$` follows it (polls at the server's interval,
   * and in 2025-11-25 its status notifications), `result` is the tool's result, `ref` reopens it from another
   * client (`reopenTask`); the task's input requests reach this client's handlers. A server that makes no task
   * (a tool without task support, a server without tasks) runs the call at once: the handle is already final.
   */
  callToolAsTask(name: string, args?: JsonObject, options?: TaskCallOptions): Promise<TaskHandle> {
    return this.tasks.callTool(name, args, options);
  }

  /**
   * Follows a task made earlier (by this client, or one before a restart) from its `ref`: the ref must name this
   * client's era, server and endpoint, or it is refused (`TaskRefError`) before anything is sent.
   */
  reopenTask(ref: TaskRef | string, options?: Pick<TaskCallOptions, 'pollIntervalMs'>): Promise<TaskHandle> {
    return this.tasks.reopen(ref, options);
  }

  /** The status of task `taskId` now (`tasks/get`). */
  getTask(taskId: string, options?: ClientRequestOptions): Promise<TaskStatusView> {
    return this.tasks.get(taskId, options);
  }

  /** Cancels task `taskId` (`tasks/cancel`). */
  cancelTask(taskId: string, options?: ClientRequestOptions): Promise<void> {
    return this.tasks.cancel(taskId, options);
  }

  /** The tasks the server lists for this client (`tasks/list`, 2025-11-25; `MethodRemovedError` in 2026-07-28). */
  listTasks(options?: ClientRequestOptions): Promise<TaskStatusView[]> {
    return this.tasks.list(options);
  }

  /** @internal How many tasks this client follows now. */
  get followedTasks(): number {
    return this.taskCalls?.followed ?? 0;
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

  // ---- internals ---------------------------------------------------------------------------------

  override connect(transport: Transport, options?: ConnectOptions): Promise<this> {
    this.taskEndpoint ??= transport.eraKey;
    return super.connect(transport, options);
  }

  private get tasks(): ClientTasks {
    return (this.taskCalls ??= new ClientTasks({
      client: this,
      maxListPages: this.maxListPages,
      taskSupportOf: (name) => this.taskSupport?.get(name),
      checkedResult: (name, result) =>
        this.toolOutput?.checked(name, Promise.resolve(result)) ?? Promise.resolve(result),
    }));
  }

  /** A `list_changed`, on the session or on the list-change stream of the stateless revision alike. */
  protected override onNotification(message: JsonRpcNotification): void {
    const list = listChangeOf(message.method)?.list;
    if (list === 'tools') this.toolOutput?.forget();
    if (list) this.lists?.invalidate(list);
  }

  protected override onClosed(): void {
    super.onClosed();
    this.lists?.close(this.quitReason);
  }

  /** @internal Reconnected: the lists may have changed while the client was away, so the caches list them again. */
  protected override onReconnected(): void {
    this.toolOutput?.forget();
    this.lists?.invalidateAll();
  }

  /** Every tool; with `hints`, the cache hints of each page are added to it. */
  private async collectTools(options: ClientRequestOptions | undefined, hints: ResultCacheHints[] | undefined) {
    const page = (cursor: string | undefined) => this.listToolsPage(cursor, options);
    const listed = await collectPages<Tool, 'tools'>('tools/list', 'tools', page, this.maxListPages, hints);
    const tools = this.eraCalls.usableTools(listed);
    this.taskSupport = new Map(tools.map((tool) => [tool.name, tool.execution?.taskSupport ?? 'forbidden']));
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

  /** The list caches, made on first use (most clients never ask for one). */
  private get listCaches(): ClientLists {
    return (this.lists ??= new ClientLists({
      clock: this.clock,
      logger: this.logger,
      needListChanges: () => this.needListChanges(),
      listing: (list) => this.eraCalls.listing(list),
      closedFor: () => (this.state === 'closed' ? { reason: this.quitReason } : undefined),
    }));
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
