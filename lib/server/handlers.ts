import { isPlainObject } from '../jsonrpc/classify';
import { handlerTable, type HandlerTable } from '../core/connection';
import type { RequestContext } from '../core/request-context';
import { ErrorCode, invalidParams, McpError } from '../jsonrpc/errors';
import type { JsonObject } from '../jsonrpc/types';
import { shape } from '../protocol/shape';
import { LOGGING_LEVELS, type Implementation, type InitializeResult, type LoggingLevel } from '../protocol/types';
import { negotiateVersion } from '../protocol/versions';
import { grantsAll } from '../auth/server/scopes';
import { complete } from './completion';
import type { ListName } from './context';
import { unknownPrompt } from './prompts';
import { resourceNotFound, type ResourceCatalog } from './resources';
import { callTool, HANDSHAKE_TASK_HANDLERS } from './tasks/task-handlers';
import type { ServerHandlersHost, SessionHandlersHost } from './handler-host';

export type { ServedDefinition, ServerHandlersHost, SessionHandlersHost } from './handler-host';

type Context = RequestContext<ServerHandlersHost>;
type SessionContext = RequestContext<SessionHandlersHost>;

/**
 * The server role's request handlers, shared by every server connection. Each one finds its primitive in
 * the connection's current definition (tools, resources, prompts, completion) and delegates to it.
 */

function initialize(context: SessionContext, params: JsonObject | undefined): InitializeResult {
  const { protocolVersion, capabilities, clientInfo } = params ?? {};
  if (typeof protocolVersion !== 'string') throw invalidParams('initialize needs a string "protocolVersion"');
  if (!isPlainObject(capabilities)) throw invalidParams('initialize needs a "capabilities" object');
  if (!isPlainObject(clientInfo) || typeof clientInfo.name !== 'string' || typeof clientInfo.version !== 'string') {
    throw invalidParams('initialize needs "clientInfo" with a string "name" and "version"');
  }
  const connection = context.connection;
  const version = negotiateVersion(protocolVersion, connection.definition.protocolVersions);
  return connection.acceptInitialize(version, capabilities, clientInfo as unknown as Implementation);
}

const tools = {
  'tools/list': (context: Context, params: JsonObject | undefined) =>
    pageOf(context, params, 'tools', context.connection.definition.tools, (tools, ...page) => tools.list(...page)),
  'tools/call': callTool,
};

const resources = {
  'resources/list': (context: Context, params: JsonObject | undefined) =>
    pageOf(context, params, 'resources', context.connection.definition.resources, (catalog, ...page) =>
      catalog.list(...page),
    ),
  'resources/templates/list': (context: Context, params: JsonObject | undefined) =>
    pageOf(context, params, 'resourceTemplates', context.connection.definition.resources, (catalog, ...page) =>
      catalog.listTemplates(...page),
    ),
  'resources/read': (context: Context, params: JsonObject | undefined) => {
    const catalog = context.connection.definition.resources;
    if (!catalog) throw resourceNotFound(params?.uri);
    return catalog.read(params, context);
  },
  /** The `resources/search` extension (see `RESOURCE_SEARCH_EXTENSION`): -32601 unless the server enables it. */
  'resources/search': (context: Context, params: JsonObject | undefined) => {
    const search = context.connection.definition.searchResources;
    if (!search) throw new McpError(ErrorCode.MethodNotFound, 'Method not found: resources/search');
    const query = params?.query;
    if (typeof query !== 'string') throw invalidParams('resources/search needs a string "query"');
    const version = context.protocolVersion!;
    const granted = grantedScopes(context);
    const catalog = context.connection.definition.resources;
    const respond = (found: readonly object[]) => ({
      resources: (granted ? found.filter((item) => mayRead(granted, catalog, item)) : found).map((item) =>
        shape('Resource', item, version),
      ),
    });
    const output = search(query, context);
    return Array.isArray(output) ? respond(output) : (output as Promise<readonly object[]>).then(respond);
  },
};

const prompts = {
  'prompts/list': (context: Context, params: JsonObject | undefined) =>
    pageOf(context, params, 'prompts', context.connection.definition.prompts, (prompts, ...page) =>
      prompts.list(...page),
    ),
  'prompts/get': (context: Context, params: JsonObject | undefined) => {
    const catalog = context.connection.definition.prompts;
    if (!catalog) throw unknownPrompt(params?.name);
    return catalog.render(params, context);
  },
};

const completion = {
  'completion/complete': (context: Context, params: JsonObject | undefined) => {
    const definition = context.connection.definition;
    return complete(params, context, definition.prompts, definition.resources);
  },
};

/** The handshake era's session methods: subscriptions held by the session, and its log level. */
const session = {
  'resources/subscribe': (context: SessionContext, params: JsonObject | undefined) => {
    context.connection.subscriptions.subscribe(context.connection, uriOf(params));
    return {};
  },
  'resources/unsubscribe': (context: SessionContext, params: JsonObject | undefined) => {
    context.connection.subscriptions.unsubscribe(context.connection, uriOf(params));
    return {};
  },
  'logging/setLevel': (context: SessionContext, params: JsonObject | undefined) => {
    const level = params?.level;
    if (!LOGGING_LEVELS.includes(level as LoggingLevel)) {
      throw invalidParams(`logging/setLevel needs "level" to be one of ${LOGGING_LEVELS.join(', ')}`);
    }
    context.connection.setLogLevel(level as LoggingLevel);
    return {};
  },
};

/** The handlers both eras share: the primitives. */
export const SHARED_HANDLERS: HandlerTable<ServerHandlersHost> = handlerTable<ServerHandlersHost>({
  ...tools,
  ...resources,
  ...prompts,
  ...completion,
});

/** A handshake-era session's handlers: the shared ones, the handshake and the session's own methods. */
export const SESSION_HANDLERS: HandlerTable<SessionHandlersHost> = handlerTable<SessionHandlersHost>({
  initialize,
  ping: () => ({}),
  ...SHARED_HANDLERS,
  ...session,
  ...HANDSHAKE_TASK_HANDLERS,
});

type PageRequest = [cursor: unknown, version: string, pageSize: number, granted: readonly string[] | undefined];

/**
 * A page of one of the current definition's lists. A later definition may have dropped a whole list:
 * that answers an empty list, not a failure.
 */
function pageOf<C>(
  context: Context,
  params: JsonObject | undefined,
  key: ListName,
  catalog: C | undefined,
  list: (catalog: C, ...page: PageRequest) => object,
): object {
  context.connection.listed(key);
  if (!catalog) return { [key]: [] };
  const { pageSize } = context.connection.definition;
  return list(catalog, params?.cursor, context.protocolVersion!, pageSize, grantedScopes(context));
}

/**
 * The caller's scopes when its server lists only what they grant (`hideUnauthorized`); undefined (list
 * everything) otherwise, or when the request has no principal (a transport without authentication).
 */
function grantedScopes(context: Context): readonly string[] | undefined {
  return context.connection.definition.hideUnauthorized ? context.auth?.scopes : undefined;
}

/** Whether a found resource's scopes (its own or its template's, when the catalog serves it) are all granted. */
function mayRead(granted: readonly string[], catalog: ResourceCatalog | undefined, item: object): boolean {
  const uri = (item as { uri?: unknown }).uri;
  return typeof uri !== 'string' || grantsAll(granted, catalog?.scopesOf(uri));
}

function uriOf(params: JsonObject | undefined): string {
  const uri = params?.uri;
  if (typeof uri !== 'string') throw invalidParams('needs a string "uri"');
  return uri;
}
