/**
 * The options, records and event log of the tests' authorization server (`startAuthorizationServer`).
 * Every option is optional: the defaults make a plain OAuth 2.1 server at the origin's root with dynamic
 * registration, RFC 8414 metadata, PKCE S256 and the `iss` authorization response parameter.
 */
import type { JSONWebKeySet } from 'jose';

export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
export const JWT_CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** The DPoP proof algorithms the server advertises and accepts when `dpop` is on. */
export const DPOP_ALGORITHMS: readonly string[] = ['ES256', 'EdDSA', 'RS256'];

export type GrantType = 'authorization_code' | 'refresh_token' | 'client_credentials' | typeof JWT_BEARER_GRANT;
export type ClientAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt';

/**
 * Where the metadata document is served, for an issuer `http://127.0.0.1:<port>/<path>`:
 * - `oauth-authorization-server`: RFC 8414, `/.well-known/oauth-authorization-server/<path>`
 * - `openid-configuration-inserted`: `/.well-known/openid-configuration/<path>`
 * - `openid-configuration-appended`: `/<path>/.well-known/openid-configuration` (OpenID Connect Discovery)
 * - `openid-configuration`: both OpenID forms.
 * Without an issuer path the inserted and appended forms are the same URL.
 */
export type MetadataLocation =
  | 'oauth-authorization-server'
  | 'openid-configuration'
  | 'openid-configuration-inserted'
  | 'openid-configuration-appended';

/**
 * The `iss` parameter of the authorization response (RFC 9207): the issuer (`sent`), none, a different
 * issuer, or the issuer with a trailing slash (a client must not normalise URLs to accept it).
 */
export type IssParameter = 'sent' | 'omitted' | 'wrong' | 'trailing-slash';

export interface ClientRegistration {
  readonly clientId: string;
  /** Required for the `client_secret_*` methods. */
  readonly clientSecret?: string;
  /** Exact matches, except that a loopback redirect URI matches on any port (RFC 8252 §7.3). */
  readonly redirectUris?: readonly string[];
  /** Default `client_secret_basic` when a secret is given, else `none`. */
  readonly authMethod?: ClientAuthMethod;
  /** The public keys of a `private_key_jwt` client. */
  readonly jwks?: JSONWebKeySet;
  /** The scopes the client may ask for (default: any the server supports). */
  readonly scope?: string;
}

/** The document behind a URL client_id (Client ID Metadata Documents). */
export interface ClientIdMetadataDocument {
  readonly client_id: string;
  readonly redirect_uris?: string[];
  readonly token_endpoint_auth_method?: ClientAuthMethod;
  readonly jwks?: JSONWebKeySet;
  readonly [member: string]: unknown;
}

export interface AuthorizationServerOptions {
  /** A path under the origin, e.g. `/tenant1`: the issuer and every endpoint live under it. Default none. */
  readonly issuerPath?: string;
  /** Where the metadata is served (default RFC 8414 only); `[]` serves none (the 2025-03-26 fallback case). */
  readonly metadataAt?: readonly MetadataLocation[];
  /** The `issuer` written in the metadata document, to test a client that must refuse a mismatch. */
  readonly metadataIssuer?: string;
  /** Members merged over the metadata document last (`undefined` removes one). */
  readonly metadataOverrides?: Readonly<Record<string, unknown>>;
  /** Default `sent`. */
  readonly issParameter?: IssParameter;
  /** `authorization_response_iss_parameter_supported` in the metadata; default true. */
  readonly advertiseIssParameter?: boolean;
  /** Default authorization_code, refresh_token and client_credentials. */
  readonly grantTypes?: readonly GrantType[];
  /** The token endpoint's accepted methods, advertised and enforced. Default none and both secret methods. */
  readonly tokenEndpointAuthMethods?: readonly ClientAuthMethod[];
  /** RFC 7591 at `/register`; default true. */
  readonly dynamicRegistration?: boolean;
  /** Accept a URL client_id by resolving its metadata document; default false. */
  readonly clientIdMetadataDocumentSupported?: boolean;
  /** How a URL client_id's document is found; default an HTTP GET of the URL. */
  readonly resolveClientIdMetadataDocument?: (clientId: string) => Promise<ClientIdMetadataDocument>;
  /** Clients known from the start. */
  readonly clients?: readonly ClientRegistration[];
  /** Advertised in the metadata and enforced (`invalid_scope` beyond them); undefined accepts any scope. */
  readonly scopesSupported?: readonly string[];
  /** When a refresh token is issued: only when `offline_access` was granted (default), always, or never. */
  readonly refreshTokens?: 'offline_access' | 'always' | 'never';
  /** A used refresh token stops working and a new one is returned; default true. */
  readonly rotateRefreshTokens?: boolean;
  /** Default 3600. */
  readonly accessTokenTtlSec?: number;
  /** An authorization code's lifetime; default 60. */
  readonly codeTtlSec?: number;
  /** Access token signature; default ES256. */
  readonly signingAlgorithm?: 'ES256' | 'RS256';
  /** The `sub` of tokens granted through `/authorize`; default `user-1`. */
  readonly subject?: string;
  /** `/authorize` answers `access_denied` instead of approving. */
  readonly denyAuthorization?: boolean;
  /** Issuers whose JWTs the jwt-bearer grant accepts, with their public keys (RFC 7523 §2.1). */
  readonly trustedAssertionIssuers?: Readonly<Record<string, JSONWebKeySet>>;
  /**
   * DPoP (RFC 9449): advertise `dpop_signing_alg_values_supported`, and bind the tokens of a token request that
   * carries a DPoP proof to its key (`cnf.jkt`, `token_type: DPoP`). Default false.
   */
  readonly dpop?: boolean;
  /** The clock in milliseconds (codes, tokens, assertions); default `Date.now`. */
  readonly now?: () => number;
}

export type Endpoint = 'metadata' | 'authorize' | 'token' | 'register' | 'introspect' | 'revoke' | 'jwks' | 'unknown';
export type PkceOutcome = 'matched' | 'mismatched' | 'missing';

/** One request the server answered: what the client sent and what it got. */
export interface AuthorizationServerEvent {
  readonly endpoint: Endpoint;
  readonly method: string;
  /** The request path and query. */
  readonly path: string;
  readonly status: number;
  /** The OAuth error code answered, if any. */
  readonly error?: string;
  readonly grantType?: string;
  readonly clientId?: string;
  readonly resource?: string;
  readonly scope?: string;
  /** The client authentication method the request used (token, introspection). */
  readonly authMethod?: ClientAuthMethod;
  /** Whether the code verifier matched the challenge (authorization_code grant). */
  readonly pkce?: PkceOutcome;
}

/** What `issueToken` signs; unset members take the server's defaults. */
export interface IssueTokenOptions {
  readonly subject?: string;
  /** The `aud` claim; omitted when undefined. */
  readonly audience?: string | string[];
  readonly scope?: string;
  readonly clientId?: string;
  readonly ttlSec?: number;
  /** More claims, written last (they may override the standard ones). */
  readonly claims?: Readonly<Record<string, unknown>>;
}
