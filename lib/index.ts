/**
 * mcp-switchboard: the runtime-neutral entry. Node-only transports live behind subpath exports.
 */
export * from './jsonrpc';
export * from './protocol';
export { Connection, handlerTable } from './core/connection';
export type { ConnectionOptions, ConnectionEvents, HandlerTable, RequestHandler, SendOptions } from './core/connection';
export type { RequestOptions } from './core/correlation';
export { RequestContext, type Era, type InputRequestOptions, type Principal } from './core/request-context';
export type { ExchangeReply, ModernServer } from './core/exchange';
export { MODERN_PROTOCOL_VERSIONS, META, type ModernProtocolVersion } from './protocol/modern';
export { classifyInbound, type EraPolicy, type EraVerdict } from './protocol/era';
export { systemClock, type Clock } from './core/clock';
export { createStderrLogger, silentLogger, type Logger } from './core/logger';
export { EventFacade } from './core/events';
export type { TraceEvent, TraceKind } from './trace/types';
export { CONNECTION_TRANSITIONS, connectionLifecycle } from '../machines/connection';
export { Runtime, defaultRuntime, type RuntimeOptions } from './core/runtime';
export type { QuitReason, Negotiated, ConnectionState } from '../machines/connection';
export {
  defineServer,
  ServerDefinition,
  RESOURCE_SEARCH_EXTENSION,
  type ServerSpec,
  type ResourceSearch,
} from './server/definition';
export {
  ResourceCatalog,
  type ResourceDefinition,
  type ResourceTemplateDefinition,
  type ContentsInput,
  type TemplateVariables,
} from './server/resources';
export { PromptCatalog, type PromptDefinition } from './server/prompts';
export { MAX_COMPLETION_VALUES } from './server/completion';
export type { Completer, CompletionContext, ServerContext, ServerHost } from './server/context';
export type { TokenStore, AuthKey, AuthRecord, StoredClient, StoredTokens } from './auth/token-store';
export type { HttpAuthorization, AuthorizationRefusal } from './auth/http-authorization';
export { SubscriptionHub } from './server/subscriptions';
export { UriTemplate, type UriTemplateValue } from './server/uri-template';
export { defineTool, ToolCatalog, type ToolDefinition, type ToolHandler } from './server/tools';
export { Server, ServerConnection, type ServerOptions } from './server/server';
export { DEFAULT_MAX_INPUT_ROUNDS, type InputRoundSettings } from './server/modern/exchange';
export { DEFAULT_CACHE_HINT, type CacheHint, type CacheHints, type CacheScope } from './server/modern/results';
export {
  createKeyRing,
  processKeyRing,
  KeyRing,
  seal as sealRequestState,
  open as openRequestState,
  type RequestStateKey,
  type KeyRingOptions,
  type RequestStateBinding,
} from './server/request-state';
export { InMemoryServerEventBus, type ServerEventBus, type ServerEvent } from './server/event-bus';
export { ListenStreams, DEFAULT_MAX_LISTEN_STREAMS, type SubscriptionFilter } from './server/listen';
export { Client, type ClientOptions, type ClientRequestOptions, type ConnectOptions } from './client/client';
export type {
  SamplingHandler,
  SamplingOptions,
  ElicitationOptions,
  FormElicitationHandler,
  UrlElicitationHandler,
  ClientFeatureOptions,
  ClientContext,
  ClientHost,
} from './client/features';
export { ListCache } from './client/list-cache';
export {
  DEFAULT_ERA_MAX_AGE_MS,
  EraCache,
  type EraCacheOptions,
  type EraStore,
  type EraVerdict as ClientEraVerdict,
} from './client/era-cache';
export type { EraChoice } from './client/era-probe';
export { acknowledgedFilter, type ListenFilter } from './client/listen';
export { readUrlElicitations, urlElicitationRequiredData } from './client/elicitation';
export { createAjvValidator, defaultValidator, type SchemaCheck, type SchemaValidator } from './validation/json-schema';
export type { Transport, TransportSendOptions } from '../transports/transport';
export { createMemoryPair, MemoryTransport, type MemoryPairOptions } from '../transports/memory';
export { formatTraceEvent } from './trace/format';
export { TraceChannel } from './trace/channel';
export {
  createRedactor,
  redactSecrets,
  redactTraceEvent,
  REDACTED,
  SECRET_KEYS,
  secretsRedactor,
  type Redactor,
  type RedactionContext,
  type RedactionPolicy,
  type Replacement,
} from './trace/redact';
export {
  parseTraceparent,
  formatTraceparent,
  readTraceContext,
  TRACEPARENT_META_KEY,
  TRACESTATE_META_KEY,
  BAGGAGE_META_KEY,
  type TraceParent,
} from './trace/traceparent';
export type { RequestInstrumentation, RequestSpan, RequestOutcome, TracedRequest } from './trace/instrumentation';
export { observeLifecycleChanges, type LifecycleChange } from './trace/xstate-inspection';
export { createPrettyTraceSink, type PrettySinkOptions } from './trace/sinks/pretty';
export { createNdjsonTraceSink, toNdjsonLine } from './trace/sinks/ndjson';
export type { TraceSink, LineWriter } from './trace/sinks/sink';
export { fromSdkTransport, type SdkTransportLike, type SdkAdapterOptions } from '../transports/sdk-adapter';
export * from './compose';
export {
  upstreamMachine,
  DEFAULT_SUPERVISION,
  type SupervisionPolicy,
  type UpstreamState,
  type StopReason,
} from '../machines/upstream';
