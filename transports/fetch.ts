/**
 * The public web-standard HTTP entry (`mcp-switchboard/transports/fetch`): MCP over HTTP as a fetch handler,
 * `(request: Request) => Promise<Response>`, for any runtime with the fetch API. It imports no `node:` module.
 */
export { createMcpFetchHandler, type McpFetchHandler, type McpFetchOptions } from './http/fetch-handler';
export { DEFAULT_MCP_PATH, type McpHttpOptions } from './http/endpoint';
export { DEFAULT_MESSAGE_PATH, DEFAULT_SSE_PATH, type LegacySseOptions } from './http/legacy-sse-server';
export { DEFAULT_HEALTH_PATH } from './http/health';
export { MemoryEventStore, type EventStore, type MemoryEventStoreOptions, type StoredEvent } from './http/event-store';
export { DEFAULT_HTTP_LIMITS, HTTP_LIMIT_NAMES, httpLimits, type HttpLimits } from './http/limits';
export type { ResponseMode, StreamableHttpOptions } from './http/streamable-server';
export type { CorsOptions } from './http/cors';
export type { OriginPolicy } from './http/request-guard';
export type { ClientKey } from './http/client-key';
export type { HttpServerOptions } from './http/http-listener';
export type { HttpAuthOption } from './http/http-auth';
export type { SessionConnection, SessionServer } from './http/session-server';
export type { RequestHeaders, ServerReply, ServerRequest } from './http/server-port';

// The types its public signatures name, so this subpath stands alone.
export type * from './http/named-types';
