/** The resource server's side of MCP authorization: token checks, the metadata document, challenges. */
export { bearerChallenge, dpopChallenge, quotedString } from './challenge';
export { isCompactJws, parseAuthorization, type Credentials, type TokenScheme } from './authorization-header';
export { type DpopOptions } from './dpop';
export { DPOP_NONCE_ROTATION_MS } from './dpop-nonce';
export { ASYMMETRIC_ALGORITHMS } from './algorithms';
export { DEFAULT_DPOP_ALGORITHMS, DEFAULT_DPOP_MAX_AGE_S, DEFAULT_DPOP_MAX_FUTURE_S } from './dpop-proof';
export { DEFAULT_DPOP_REPLAY_ENTRIES } from './dpop-replay';
export {
  createIntrospectionVerifier,
  DEFAULT_INTROSPECTION_CACHE_ENTRIES,
  DEFAULT_INTROSPECTION_CACHE_TTL_MS,
  type IntrospectionOptions,
} from './introspection-verifier';
export {
  DEFAULT_INTROSPECTION_NEGATIVE_CACHE_ENTRIES,
  DEFAULT_INTROSPECTION_NEGATIVE_CACHE_TTL_MS,
  DEFAULT_INTROSPECTION_TIMEOUT_MS,
  DEFAULT_MAX_CONCURRENT_INTROSPECTIONS,
  DEFAULT_MAX_INTROSPECTION_BYTES,
  DEFAULT_MAX_QUEUED_INTROSPECTIONS,
  type IntrospectionLimits,
} from './introspection-limits';
export {
  createJwtVerifier,
  DEFAULT_CLOCK_TOLERANCE_S,
  DEFAULT_JWT_ALGORITHMS,
  type JwtVerifierOptions,
} from './jwt-verifier';
export { DEFAULT_JWKS_TIMEOUT_MS, DEFAULT_MAX_JWKS_BYTES, type JwksFetchOptions } from './bounded-fetch';
export {
  canonicalResource,
  metadataPaths,
  PROTECTED_RESOURCE_WELL_KNOWN,
  protectedResourceMetadata,
  type ProtectedResourceMetadata,
} from './metadata';
export {
  InvalidTokenError,
  principalFromClaims,
  principalIdOf,
  scopesOf,
  type Principal,
  type TokenClaims,
} from './principal';
export {
  ResourceServer,
  type AuthOutcome,
  type AuthRefusal,
  type AuthRequest,
  type ResourceServerOptions,
} from './resource-server';
export { missingScopes, stepUpScope, type ScopeRequirements } from './scopes';
export { TokenCheckUnavailableError, type TokenRequestInfo, type TokenVerifier } from './token-verifier';
