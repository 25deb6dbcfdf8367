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
  MachineGrant,
  TokenSource,
} from './client/machine-grants';
export { AuthorizationError, LoginRequiredError, type AuthHttpOptions, type Fetch } from './client/http';
export * from './server';
