/**
 * OAuth for MCP (`mcp-switchboard/auth`): the client side (an `OAuthClient` to give an HTTP client
 * transport as its `authorization`, token stores, the grants) and the resource server's side (token checks,
 * metadata, challenges; the HTTP endpoint's `auth` option uses them). Runtime-neutral: `fetch` and WebCrypto
 * through oauth4webapi and jose. The Node-only parts (tokens on disk, the loopback redirect) are in
 * `mcp-switchboard/auth/node`.
 */
export type { AuthorizationRefusal, HttpAuthorization } from './http-authorization';
export type { AuthKey, AuthRecord, StoredClient, StoredTokens, TokenStore } from './token-store';
export { MemoryTokenStore } from './memory-token-store';
export { OAuthClient, canonicalServerUrl, DEFAULT_CLIENT_NAME, type OAuthClientOptions } from './client/oauth-client';
export { headlessInteraction, type AuthorizationInteraction } from './client/authorization-code';
export type { PreRegisteredClient } from './client/registration';
export type {
  ClientCredentialsGrant,
  EnterpriseGrant,
  JwtBearerGrant,
  MachineClient,
  MachineGrant,
  TokenSource,
} from './client/machine-grants';
export { AuthorizationError, LoginRequiredError, type AuthHttpOptions, type Fetch } from './client/http';
export {
  ASYMMETRIC_ALGORITHMS,
  bearerChallenge,
  canonicalResource,
  createIntrospectionVerifier,
  createJwtVerifier,
  DEFAULT_CLOCK_TOLERANCE_S,
  DEFAULT_DPOP_ALGORITHMS,
  DEFAULT_DPOP_MAX_AGE_S,
  DEFAULT_DPOP_MAX_FUTURE_S,
  DEFAULT_DPOP_REPLAY_ENTRIES,
  DEFAULT_INTROSPECTION_CACHE_ENTRIES,
  DEFAULT_INTROSPECTION_CACHE_TTL_MS,
  DEFAULT_INTROSPECTION_NEGATIVE_CACHE_ENTRIES,
  DEFAULT_INTROSPECTION_NEGATIVE_CACHE_TTL_MS,
  DEFAULT_INTROSPECTION_TIMEOUT_MS,
  DEFAULT_JWKS_TIMEOUT_MS,
  DEFAULT_JWT_ALGORITHMS,
  DEFAULT_MAX_CONCURRENT_INTROSPECTIONS,
  DEFAULT_MAX_INTROSPECTION_BYTES,
  DEFAULT_MAX_JWKS_BYTES,
  DEFAULT_MAX_QUEUED_INTROSPECTIONS,
  DPOP_NONCE_ROTATION_MS,
  dpopChallenge,
  InvalidTokenError,
  isCompactJws,
  metadataPaths,
  missingScopes,
  parseAuthorization,
  principalFromClaims,
  principalIdOf,
  PROTECTED_RESOURCE_WELL_KNOWN,
  protectedResourceMetadata,
  quotedString,
  ResourceServer,
  scopesOf,
  stepUpScope,
  TokenCheckUnavailableError,
  type AuthOutcome,
  type AuthRefusal,
  type AuthRequest,
  type Credentials,
  type DpopOptions,
  type IntrospectionLimits,
  type IntrospectionOptions,
  type JwksFetchOptions,
  type JwtVerifierOptions,
  type Principal,
  type ProtectedResourceMetadata,
  type ResourceServerOptions,
  type ScopeRequirements,
  type TokenClaims,
  type TokenRequestInfo,
  type TokenScheme,
  type TokenVerifier,
} from './server';
export { DpopProofError } from './server/dpop-proof';
// The types its public signatures name, so this entry stands alone.
export type { LocalErrorCode, SwitchboardError } from '../jsonrpc/errors';
export type { ChallengeParams } from './server/challenge';
export type { MetadataInput } from './server/metadata';
