/**
 * The hub (`lib/compose`): one MCP server over many upstream servers in one process.
 */
export { Hub, CatalogConflictError, type HubOptions, type UpstreamHandle } from './hub';
export type { HubTaskOptions } from './hub-options';
export type { UpstreamOptions, UpstreamStatus, UpstreamInstance, ForwardedFeatures } from './upstream';
export type {
  UpstreamSource,
  InProcessSource,
  StdioSource,
  HttpSource,
  WebSocketSource,
  FramedSource,
  TransportSource,
} from './sources';
export type {
  UpstreamAuth,
  OAuthUpstreamAuth,
  BearerUpstreamAuth,
  ClientCredentialsUpstreamAuth,
} from './upstream-auth';
export type { HubEndpointAuth } from './config-auth';
export type { CatalogProblem } from './catalog';
export type { UpstreamCatalog } from './session';
export {
  assignNames,
  fitName,
  formatName,
  namingPolicy,
  renamedName,
  stableHash,
  DEFAULT_NAMING,
  type CollisionPolicy,
  type NamingOptions,
  type NamingPolicy,
  type NameCandidate,
  type NameAssignment,
  type NamingProblem,
} from './naming';
export { compileFilter, type NameFilter } from './name-filter';
export {
  parseConfig,
  hubFromConfig,
  hubFromConfigFile,
  loadConfigFile,
  ConfigError,
  type ConfigOptions,
  type HubHttpSettings,
  type ParsedConfig,
} from './config';
