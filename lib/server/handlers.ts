import { handlerTable, type HandlerTable } from '../core/connection';
import { ErrorCode, McpError } from '../jsonrpc/errors';
import type { JsonObject } from '../jsonrpc/types';
import type { RequestContext } from '../core/request-context';
import { LOGGING_LEVELS, type Implementation, type InitializeResult, type LoggingLevel } from '../protocol/types';
import { negotiateVersion } from '../protocol/versions';
import type { ServerConnection } from './server';

type Context = RequestContext<ServerConnection>;

function initialize(context: Context, params: JsonObject | undefined): InitializeResult {
  const { protocolVersion, capabilities, clientInfo } = params ?? {};
  if (typeof protocolVersion !== 'string') throw invalid('initialize needs a string "protocolVersion"');
  if (!isObject(capabilities)) throw invalid('initialize needs a "capabilities" object');
  if (!isObject(clientInfo) || typeof clientInfo.name !== 'string' || typeof clientInfo.version !== 'string') {
    throw invalid('initialize needs "clientInfo" with a string "name" and "version"');
  }
  return context.connection.acceptInitialize(
    negotiateVersion(protocolVersion, context.connection.definition.protocolVersions),
    capabilities,
    clientInfo as unknown as Implementation,
  );
}

function listTools(context: Context, params: JsonObject | undefined) {
  const definition = context.connection.definition;
  // A later definition may have dropped every tool: that is an empty list, not a failure.
  return definition.tools?.list(params?.cursor, context.protocolVersion!, definition.pageSize) ?? { tools: [] };
}

function callTool(context: Context, params: JsonObject | undefined) {
  const tools = context.connection.definition.tools;
  if (!tools) throw invalid(`Unknown tool: ${String(params?.name)}`);
  return tools.call(params, context);
}

function setLevel(context: Context, params: JsonObject | undefined): JsonObject {
  const level = params?.level;
  if (!LOGGING_LEVELS.includes(level as LoggingLevel)) {
    throw invalid(`logging/setLevel needs "level" to be one of ${LOGGING_LEVELS.join(', ')}`);
  }
  context.connection.logLevel = level as LoggingLevel;
  return {};
}

const ping = (): JsonObject => ({});

/** The server role's request handlers, shared by every server connection. */
export const SERVER_HANDLERS: HandlerTable<ServerConnection> = handlerTable<ServerConnection>({
  initialize,
  ping,
  'tools/list': listTools,
  'tools/call': callTool,
  'logging/setLevel': setLevel,
});

function invalid(message: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `Invalid params: ${message}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
