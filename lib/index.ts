/**
 * mcp-switchboard: the runtime-neutral entry. What a user of `Client`, `Server` and `defineServer`, the hub,
 * tracing and the errors needs, named one by one (api/mcp-switchboard.api.md is its report). Node-only
 * transports and helpers live behind subpath exports; the protocol's low-level pieces (codec, method table,
 * gate, era classifier, lifecycle machines) are in `mcp-switchboard/protocol`.
 */

// JSON-RPC messages and the two error families.
export {
  UnreadableFrame,
  type InboundFrame,
  type JsonObject,
  type JsonRpcBatch,
  type JsonRpcErrorObject,
  type JsonRpcErrorResponse,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type JsonRpcResultResponse,
  type RequestId,
} from './jsonrpc/types';
export {
  CapabilityNotSupportedError,
  ConnectionClosedError,
  ErrorCode,
  LimitExceededError,
  McpError,
  MethodRemovedError,
  NotReadyError,
  PeerError,
  ProtocolViolationError,
  RelayedError,
  RequestCancelledError,
  RequestTimeoutError,
  ResultValidationError,
  SwitchboardError,
  TransportError,
  UnsupportedProtocolVersionError,
  type ClosedConnectionReason,
  type LocalErrorCode,
} from './jsonrpc/errors';

// MCP's data types and protocol revisions.
export type {
  Annotations,
  AudioContent,
  BlobResourceContents,
  CallToolResult,
  CancelledParams,
  ClientCapabilities,
  CompleteParams,
  CompleteResult,
  Completion,
  CompletionReference,
  ContentBlock,
  EmbeddedResource,
  GetPromptResult,
  Icon,
  ImageContent,
  Implementation,
  InitializeResult,
  JsonSchema,
  ListToolsResult,
  LoggingLevel,
  LoggingMessageParams,
  MessageRole,
  Meta,
  Progress,
  ProgressParams,
  Prompt,
  PromptArgument,
  PromptMessage,
  ReadResourceResult,
  Resource,
  ResourceContents,
  ResourceLink,
  ResourceTemplate,
  ResourceUpdatedParams,
  ServerCapabilities,
  TextContent,
  TextResourceContents,
  Tool,
  ToolAnnotations,
} from './protocol/types';
export { LOGGING_LEVELS } from './protocol/types';
export type {
  BooleanSchema,
  CreateMessageParams,
  CreateMessageResult,
  Described,
  ElicitFormParams,
  ElicitParams,
  ElicitResult,
  ElicitUrlParams,
  ElicitValue,
  EnumOption,
  IncludeContext,
  LegacyTitledEnumSchema,
  ModelPreferences,
  NumberSchema,
  PrimitiveSchema,
  RequestedSchema,
  Root,
  SamplingContent,
  SamplingMessage,
  SamplingTool,
  StringFormat,
  StringSchema,
  TitledMultiSelectEnumSchema,
  TitledSingleSelectEnumSchema,
  ToolChoice,
  ToolResultContent,
  ToolUseContent,
  UntitledMultiSelectEnumSchema,
  UntitledSingleSelectEnumSchema,
} from './protocol/client-features';
export { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, type ProtocolVersion } from './protocol/versions';
export { MODERN_PROTOCOL_VERSIONS, type ModernProtocolVersion } from './protocol/modern';
export { RESOURCE_SEARCH_EXTENSION } from './protocol/method-table';
export type { ListChangedKind, ListenFilter } from './protocol/list-changes';
export type { Role } from './protocol/methods';
export type { EraPolicy } from './protocol/era';
export type { ItemKind, ItemScopes } from './protocol/method-targets';

// A connection, its lifecycle and the runtime it runs on.
export {
  Connection,
  handlerTable,
  type ConnectionEvents,
  type ConnectionOptions,
  type HandlerTable,
  type RequestHandler,
  type SendOptions,
} from './core/connection';
export type { RequestOptions } from './core/correlation';
export {
  RequestContext,
  type Era,
  type InputRequestOptions,
  type Principal,
  type RequestHost,
} from './core/request-context';
export { systemClock, type Clock } from './core/clock';
export {
  createStderrLogger,
  silentLogger,
  type Level as LoggerLevel,
  type Logger,
  type StderrLoggerOptions,
} from './core/logger';
export { EventFacade, type Listener as EventFacadeListener } from './core/events';
export type { ModernServer } from './core/exchange';
export { Runtime, defaultRuntime, type RuntimeOptions } from './core/runtime';
export type { ConnectionState, Negotiated, QuitReason } from '../machines/connection';
export type { Transport, TransportSendOptions } from '../transports/transport';

// The server.
export {
  defineServer,
  ServerDefinition,
  type ResourceSearch,
  type ServerSpec,
  type TypedServerSpec,
} from './server/definition';
export {
  defineTool,
  toolSchemaProblem,
  ToolCatalog,
  type DefinedTool,
  type ToolArgumentsOf,
  type ToolDefinition,
  type ToolHandler,
  type ToolResult,
  type ToolResultOf,
  type ToolReturn,
  type ToolReturnFor,
  type ToolSpec,
  type TypedCallToolResult,
} from './server/tools';
export {
  ResourceCatalog,
  type ContentsInput,
  type ContentsItem,
  type ResourceDefinition,
  type ResourceMatch,
  type ResourceTemplateDefinition,
  type TemplateVariables,
} from './server/resources';
export {
  definePrompt,
  PromptCatalog,
  type ListedPromptArguments,
  type PromptArgumentsOf,
  type PromptDefinition,
  type PromptReturn,
  type PromptSpec,
} from './server/prompts';
export { MAX_COMPLETION_VALUES } from './server/completion';
export type {
  Completer,
  CompletionContext,
  ListName,
  ServerContext,
  ServerHost,
  ServerRequestHost,
  ServerSessionHost,
  StatelessRequestHost,
} from './server/context';
export { Server, ServerConnection, type ServerConnectionEvents, type ServerOptions } from './server/server';

// Tasks: tool calls that outlive their request and its connection (the 2025-11-25 form and the 2026-07-28
// extension). The durable store, `LmdbTaskStore`, is Node only: `mcp-switchboard/tasks/lmdb`.
export { continueAsTask, TaskCreated } from './server/tasks/continuation';
export type { ServerTasks, TaskServingOptions } from './server/tasks/server-tasks';
export type { TaskService } from './server/tasks/task-service';
export type { CallOutcome } from './server/tools';
export { MemoryTaskStore } from './tasks/memory-task-store';
export {
  DEFAULT_MAX_TASKS_PER_OWNER,
  TaskExistsError,
  TaskLimitError,
  TaskNotFoundError,
  TaskStoreError,
  TaskTransitionError,
  type TaskListOptions,
  type TaskPage,
  type TaskStore,
  type TaskStoreOptions,
} from './tasks/task-store';
export { DEFAULT_TASK_TTL_MS, MAX_TASK_TTL_MS } from './tasks/task-runner';
export { TASKS_EXTENSION_ID } from './tasks/task-wire';
export { ANONYMOUS_TASK_OWNER, type TaskChange, type TaskError, type TaskOwner, type TaskRecord } from './tasks/types';
export type { Page } from './server/listing';
export { SubscriptionHub } from './server/subscriptions';
export { UriTemplate, type UriTemplateValue } from './server/uri-template';
export {
  DEFAULT_MAX_INPUT_ROUNDS as DEFAULT_MAX_SERVER_INPUT_ROUNDS,
  type InputRoundSettings,
} from './server/modern/modern-request';
export {
  DEFAULT_CACHE_HINT,
  type CacheableName,
  type CacheHint,
  type CacheHints,
  type CacheScope,
} from './server/modern/results';
export {
  createKeyRing,
  processKeyRing,
  KeyRing,
  type KeyRingOptions,
  type RequestStateBinding,
  type RequestStateKey,
} from './server/request-state';
export { InMemoryServerEventBus, type ServerEvent, type ServerEventBus } from './server/event-bus';
export { DEFAULT_MAX_LISTEN_STREAMS, type SubscriptionFilter } from './server/listen';
export {
  codeGenerationAllowed,
  createAjvValidator,
  defaultValidator,
  jsonSchemaProblem,
  type CacheOptions,
  type SchemaCheck,
  type SchemaValidator,
} from './validation/json-schema';
export { createInterpretingValidator } from './validation/interpreting-validator';
export type {
  IsSchemaType,
  IsUntypedSchema,
  ObjectSchemaLiteral,
  SchemaInput,
  SchemaInputValue,
  SchemaOutput,
  SchemaSlot,
} from './validation/schema-input';
export type { StandardJSONSchemaV1, StandardSchemaV1, StandardSchemaWithJson } from './validation/standard-schema';

// The client.
export {
  Client,
  type ClientOptions,
  type ClientRequestOptions,
  type ConnectOptions,
  type PageCursor,
} from './client/client';
export type { ClientConnection, ClientConnectionEvents, ClientConnectionOptions } from './client/client-connection';
export {
  DEFAULT_RECONNECT,
  ReconnectingError,
  type ReconnectOptions,
  type ReconnectPolicy,
} from './client/reconnect-policy';
export type { ReconnectEvents, ReconnectingEvent, ReconnectedEvent, ReconnectFailedEvent } from './client/reconnect';
export type { ListChangesState, ListChangesStatus } from './client/list-change-stream';
export type { ListChangesChoice } from './client/modern-client';
export type {
  ClientContext,
  ClientFeatureOptions,
  ClientHost,
  ElicitationOptions,
  FormElicitationHandler,
  SamplingHandler,
  SamplingOptions,
  UrlElicitationHandler,
} from './client/features';
export { ListCache, type HintedList, type ResultCacheHints } from './client/list-cache';
export {
  DEFAULT_ERA_MAX_AGE_MS,
  EraCache,
  type EraCacheOptions,
  type EraStore,
  type EraVerdict as EraProbeVerdict,
} from './client/era-cache';
export type { DeprecatedEraName, EraChoice, EraOption } from './client/era-choice';
export type { DiscoverInfo } from './client/era-probe';
export { ERA_STORE_FORMAT, ERA_STORE_VERSION, type EraStoreDocument, type StoredEra } from './client/era-verdict';
export { acknowledgedFilter } from './client/listen';
export { readUrlElicitations, urlElicitationRequiredData } from './client/elicitation';
export {
  DEFAULT_MAX_INPUT_ROUNDS as DEFAULT_MAX_CLIENT_INPUT_ROUNDS,
  InputRequestError,
} from './client/input-required';
export type { ClientStreams } from './client/client-streams';
export type { TaskCallOptions } from './client/tasks/client-tasks';
export { TaskCancelledError, TaskHandle } from './client/tasks/task-handle';
export { TASK_REF_VERSION, TaskRefError, type TaskRef } from './client/tasks/task-ref';
export type { TaskStatus, TaskStatusView } from './client/tasks/task-view';

// Authorization as the server and the client see it (the OAuth parts are in `mcp-switchboard/auth`).
export type { AuthorizationRefusal, HttpAuthorization } from './auth/http-authorization';
export type { AuthKey, AuthRecord, StoredClient, StoredTokens, TokenStore } from './auth/token-store';
export type { ScopeRequirements } from './auth/server/scopes';

// The two runtime-neutral transports (also at `mcp-switchboard/transports/memory` and `.../sdk-adapter`).
export { createMemoryPair, type MemoryPairOptions, type MemoryTransport } from '../transports/memory';
export {
  fromSdkTransport,
  type SdkAdapterOptions,
  type SdkTransportLike,
  type SdkTransportSendOptions,
} from '../transports/sdk-adapter';

// Tracing.
export type { TraceCause, TraceEvent, TraceKind } from './trace/types';
export { formatTraceEvent } from './trace/format';
export { TraceChannel } from './trace/channel';
export {
  createRedactor,
  redactSecrets,
  redactTraceEvent,
  REDACTED,
  SECRET_KEYS,
  secretsRedactor,
  type RedactionContext,
  type RedactionPolicy,
  type Redactor,
  type Replacement,
} from './trace/redact';
export {
  BAGGAGE_META_KEY,
  formatTraceparent,
  parseTraceparent,
  readTraceContext,
  TRACEPARENT_META_KEY,
  TRACESTATE_META_KEY,
  type TraceParent,
} from './trace/traceparent';
export type * from './trace/instrumentation-types';
export {
  observeLifecycleChanges,
  type InspectableSystem,
  type InspectedSnapshot,
  type LifecycleChange,
} from './trace/xstate-inspection';
export { createPrettyTraceSink, type PrettySinkOptions } from './trace/sinks/pretty';
export { createNdjsonTraceSink, toNdjsonLine } from './trace/sinks/ndjson';
export type { LineWriter, TraceSink } from './trace/sinks/sink';

// The hub.
export {
  CatalogConflictError,
  ConfigError,
  DEFAULT_NAMING,
  Hub,
  hubFromConfig,
  hubFromConfigFile,
  loadConfigFile,
  parseConfig,
  type BearerUpstreamAuth,
  type CatalogProblem,
  type ClientCredentialsUpstreamAuth,
  type CollisionPolicy,
  type ConfigOptions,
  type ForwardedFeatures,
  type FramedSource,
  type HttpSource,
  type HubEndpointAuth,
  type HubHttpSettings,
  type HubOptions,
  type HubTaskOptions,
  type InProcessSource,
  type NameFilter,
  type NamingOptions,
  type NamingPolicy,
  type NamingProblem,
  type OAuthUpstreamAuth,
  type ParsedConfig,
  type StdioSource,
  type TransportSource,
  type UpstreamAuth,
  type UpstreamCatalog,
  type UpstreamHandle,
  type UpstreamInstance,
  type UpstreamOptions,
  type UpstreamSource,
  type UpstreamStatus,
  type WebSocketSource,
} from './compose';
export type { ShutdownPolicy } from '../machines/child-process';
export type { HttpLimits } from '../transports/http/limits';
export {
  DEFAULT_SUPERVISION,
  type RestartPolicy,
  type StopReason,
  type SupervisionPolicy,
  type UpstreamState,
} from '../machines/upstream';
