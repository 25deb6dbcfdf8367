/**
 * The public HTTP API (`mcp-switchboard/transports/http`): the Streamable HTTP server and client, the legacy
 * HTTP+SSE server and client of 2024-11-05, and one listener serving both server transports (with CORS and a
 * health endpoint).
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
export type * from '../port-types';
export type { LocalErrorCode, SwitchboardError, TransportError } from '../../lib/jsonrpc/errors';
export type { ConnectionOptions } from '../../lib/core/connection';
export type { Clock } from '../../lib/core/clock';
export type { Logger } from '../../lib/core/logger';
export type { Runtime, RuntimeOptions } from '../../lib/core/runtime';
export type { ModernServer } from '../../lib/core/exchange';
export type { EraPolicy } from '../../lib/protocol/era';
export type {
  RequestInstrumentation,
  RequestOutcome,
  RequestSpan,
  TracedRequest,
} from '../../lib/trace/instrumentation';
export type { RedactionContext, Redactor } from '../../lib/trace/redact';
export type { TraceEvent, TraceKind } from '../../lib/trace/types';
export type { Progress } from '../../lib/protocol/types';
export type { QuitReason } from '../../machines/connection';
export type { AuthorizationRefusal, HttpAuthorization } from '../../lib/auth/http-authorization';
export type {
  AuthOutcome,
  AuthRefusal,
  AuthRequest,
  DpopOptions,
  IntrospectionLimits,
  IntrospectionOptions,
  JwksFetchOptions,
  Principal,
  ProtectedResourceMetadata,
  ResourceServer,
  ResourceServerOptions,
  ScopeRequirements,
  TokenRequestInfo,
  TokenVerifier,
} from '../../lib/auth/server';
export type { HttpClientSessionState } from '../../machines/http-client-session';
export type { HttpListener, HttpServerOptions } from './http-listener';
export type { ReconnectPolicy } from './client-sse-stream';
