/**
 * The public HTTP API (`mcp-switchboard/transports/http`): the Streamable HTTP server and client, the legacy
 * HTTP+SSE server and client of 2024-11-05, and one listener serving both server transports (with CORS and a
 * health endpoint), for `node:http` or, as a fetch handler, for any runtime (`createMcpFetchHandler`, also the
 * whole of the node-free entry `mcp-switchboard/transports/fetch`).
 */
export {
  createStreamableHttpHandler,
  type ResponseMode,
  type StreamableHttpHandler,
  type StreamableHttpOptions,
} from './streamable-server';
export {
  createLegacySseHandler,
  DEFAULT_MESSAGE_PATH,
  DEFAULT_SSE_PATH,
  type LegacySseHandler,
  type LegacySseOptions,
} from './legacy-sse-server';
export {
  StreamableHttpClientTransport,
  type HttpClientEvent,
  type HttpClientOptions,
  type StreamableHttpClientOptions,
} from './streamable-client';
export { LegacySseClientTransport } from './legacy-sse-client';
export { HttpStatusError } from './client-request';
export { createMcpHttpHandler, DEFAULT_MCP_PATH, type McpHttpHandler, type McpHttpOptions } from './endpoint';
export { createMcpFetchHandler, type McpFetchHandler, type McpFetchOptions } from './fetch-handler';
export type { RequestHeaders, ServerReply, ServerRequest } from './server-port';
export type { CorsOptions } from './cors';
export { DEFAULT_HEALTH_PATH } from './health';
export type { SessionConnection, SessionServer } from './session-server';
export { MemoryEventStore, type EventStore, type MemoryEventStoreOptions, type StoredEvent } from './event-store';
export type { OriginPolicy } from './request-guard';
export { DEFAULT_HTTP_LIMITS, HTTP_LIMIT_NAMES, httpLimits, type HttpLimits } from './limits';
export { remoteAddressKey, type ClientKey } from './client-key';
export { applyHttpLimits, connectionCounts, createMcpHttpServer, type ConnectionCounts } from './http-server';
export type { HttpAuthOption } from './http-auth';

// The port and message types its public signatures name, so this subpath stands alone.
export type * from './named-types';
export type { HttpClientSessionState } from '../../machines/http-client-session';
export type { HttpListener, HttpServerOptions } from './http-listener';
export type { ReconnectPolicy } from './client-sse-stream';
