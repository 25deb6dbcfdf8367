/** The resource server's side of MCP authorization: token checks, the metadata document, challenges. */
export { bearerChallenge, quotedString } from './challenge';
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
  DEFAULT_JWKS_TIMEOUT_MS,
  DEFAULT_JWT_ALGORITHMS,
  DEFAULT_MAX_JWKS_BYTES,
  type JwksFetchOptions,
  type JwtVerifierOptions,
} from './jwt-verifier';
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
export { ResourceServer, type AuthOutcome, type AuthRefusal, type ResourceServerOptions } from './resource-server';
export { missingScopes, stepUpScope, type ScopeRequirements } from './scopes';
export { TokenCheckUnavailableError, type TokenRequestInfo, type TokenVerifier } from './token-verifier';
