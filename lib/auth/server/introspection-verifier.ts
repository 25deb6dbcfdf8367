/**
 * Opaque access tokens, checked by asking the authorization server (RFC 7662 token introspection, through
 * oauth4webapi): the token must be `active`, an access token (`token_type`, when given), for this resource
 * (`aud`), and not expired. Active answers are cached by the resource server (token-cache.ts), so a client
 * reusing its token costs one introspection per TTL; refusals, time, size and concurrency are bounded by
 * introspection-limits.ts.
 */
import {
  allowInsecureRequests,
  ClientSecretBasic,
  ClientSecretPost,
  customFetch,
  introspectionRequest,
  None,
  processIntrospectionResponse,
  type AuthorizationServer,
  type Client,
  type ClientAuth,
  type IntrospectionRequestOptions,
} from 'oauth4webapi';
import { boundedFetch, outboundUrl } from './bounded-fetch';
import {
  DEFAULT_MAX_INTROSPECTION_BYTES,
  withIntrospectionLimits,
  type IntrospectionLimits,
} from './introspection-limits';
import { InvalidTokenError, principalFromClaims } from './principal';
import type { TokenVerifier } from './token-verifier';

export const DEFAULT_INTROSPECTION_CACHE_ENTRIES = 1_000;
export const DEFAULT_INTROSPECTION_CACHE_TTL_MS = 60_000;

/** `token_type` values (RFC 7662 §2.2, compared without case) that name an access token. */
const ACCESS_TOKEN_TYPES = new Set(['bearer', 'dpop', 'access_token', 'urn:ietf:params:oauth:token-type:access_token']);

/** The limits (timeout, answer size, concurrency, remembered refusals) are `IntrospectionLimits`'. */
export interface IntrospectionOptions extends IntrospectionLimits {
  /** The introspection endpoint (`introspection_endpoint` of the authorization server's metadata). */
  readonly endpoint: string | URL;
  /** The authorization server's issuer identifier (default: the endpoint's origin). */
  readonly issuer?: string;
  /** This resource server's credentials at the authorization server. */
  readonly clientId: string;
  readonly clientSecret?: string;
  /** How they are sent (default `client_secret_basic`; `none` without a secret). */
  readonly authMethod?: 'client_secret_basic' | 'client_secret_post' | 'none';
  /**
   * The audiences accepted: the answer's `aud` must name one. An answer without `aud` is refused unless
   * `requireAudience: false` (MCP servers must check a token was issued for them).
   */
  readonly audience?: string | readonly string[];
  readonly requireAudience?: boolean;
  /** Answers a `ResourceServer` keeps (default `DEFAULT_INTROSPECTION_CACHE_ENTRIES`; 0: none). */
  readonly cacheEntries?: number;
  /**
   * How long a `ResourceServer` keeps an answer at most (default `DEFAULT_INTROSPECTION_CACHE_TTL_MS`); never
   * past the token's `exp`. The verifier itself keeps only refusals (`negativeCacheEntries`).
   */
  readonly cacheTtlMs?: number;
  /** Allow a plain `http:` endpoint (default: only for loopback hosts). */
  readonly allowInsecureRequests?: boolean;
  /** Put the raw token on the principal (`principal.token`). Default false. */
  readonly exposeToken?: boolean;
  /** The current time in epoch ms, for tests and remembered refusals (default `Date.now`). */
  readonly now?: () => number;
}

export function createIntrospectionVerifier(options: IntrospectionOptions): TokenVerifier {
  const endpoint = outboundUrl(options.endpoint, options.allowInsecureRequests, 'introspection: the endpoint');
  const as: AuthorizationServer = {
    issuer: options.issuer ?? endpoint.origin,
    introspection_endpoint: endpoint.href,
  };
  const client: Client = { client_id: options.clientId };
  const authentication = clientAuthOf(options);
  const insecure = endpoint.protocol === 'http:';
  const fetchAnswer = boundedFetch(options.maxResponseBytes ?? DEFAULT_MAX_INTROSPECTION_BYTES, 'introspection answer');
  const audiences =
    options.audience === undefined ? [] : typeof options.audience === 'string' ? [options.audience] : options.audience;
  const requireAudience = options.requireAudience ?? true;
  const now = options.now ?? Date.now;

  const introspect = async (token: string, signal: AbortSignal) => {
    const requestOptions: IntrospectionRequestOptions = {
      additionalParameters: { token_type_hint: 'access_token' },
      signal,
      [customFetch]: fetchAnswer,
      ...(insecure && { [allowInsecureRequests]: true }),
    };
    const response = await introspectionRequest(as, client, authentication, token, requestOptions);
    const answer = await processIntrospectionResponse(as, client, response);
    if (!answer.active) throw new InvalidTokenError('the token is not active');
    if (answer.token_type !== undefined && !ACCESS_TOKEN_TYPES.has(String(answer.token_type).toLowerCase())) {
      throw new InvalidTokenError('the token is not an access token (token_type)');
    }
    if (typeof answer.exp === 'number' && answer.exp * 1000 <= now())
      throw new InvalidTokenError('the token has expired');
    const aud = answer.aud === undefined ? [] : typeof answer.aud === 'string' ? [answer.aud] : answer.aud;
    if (aud.length === 0 ? requireAudience : !aud.some((audience) => audiences.includes(audience))) {
      throw new InvalidTokenError('the token was not issued for this resource (aud)');
    }
    return principalFromClaims(answer, options.exposeToken ? token : undefined);
  };
  return withIntrospectionLimits(introspect, options, now);
}

function clientAuthOf(options: IntrospectionOptions): ClientAuth {
  const method = options.authMethod ?? (options.clientSecret === undefined ? 'none' : 'client_secret_basic');
  if (method === 'none') return None();
  if (options.clientSecret === undefined) throw new TypeError(`introspection: ${method} needs a clientSecret`);
  return method === 'client_secret_post'
    ? ClientSecretPost(options.clientSecret)
    : ClientSecretBasic(options.clientSecret);
}
