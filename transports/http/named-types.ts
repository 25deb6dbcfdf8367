/**
 * The types the HTTP entries' public signatures name from elsewhere in the package (the port, messages,
 * runtime, auth), re-exported by `mcp-switchboard/transports/http` and `/transports/fetch` so each stands alone.
 */
export type * from '../port-types';
export type { LocalErrorCode, SwitchboardError, TransportError } from '../../lib/jsonrpc/errors';
export type { ConnectionOptions } from '../../lib/core/connection';
export type { Clock } from '../../lib/core/clock';
export type { Logger } from '../../lib/core/logger';
export type { Runtime, RuntimeOptions } from '../../lib/core/runtime';
export type { ModernServer } from '../../lib/core/exchange';
export type { EraPolicy } from '../../lib/protocol/era';
export type * from '../../lib/trace/instrumentation-types';
export type { RedactionContext, Redactor } from '../../lib/trace/redact';
export type { TraceCause, TraceEvent, TraceKind } from '../../lib/trace/types';
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
