/**
 * An MCP server as an OAuth resource server (MCP authorization, 2025-11-25 and 2026-07-28): the options a
 * protected endpoint takes, and the decisions it makes on each request, free of any HTTP library: which
 * token the `Authorization` header carries, whether it is good here, whether its scopes suffice, and the
 * status and `WWW-Authenticate` challenge of every refusal. The HTTP transports apply them.
 */
import { bearerChallenge } from './challenge';
import {
  createIntrospectionVerifier,
  DEFAULT_INTROSPECTION_CACHE_ENTRIES,
  DEFAULT_INTROSPECTION_CACHE_TTL_MS,
  type IntrospectionOptions,
} from './introspection-verifier';
import { createJwtVerifier, type JwtVerifierOptions } from './jwt-verifier';
import {
  canonicalResource,
  metadataPaths,
  protectedResourceMetadata,
  type ProtectedResourceMetadata,
} from './metadata';
import { InvalidTokenError, type Principal } from './principal';
import { missingScopes, stepUpScope } from './scopes';
import { TokenCache, tokenKey } from './token-cache';
import type { TokenRequestInfo, TokenVerifier } from './token-verifier';

/** The `auth` option of an HTTP endpoint. Give one way of checking tokens: `verifier`, `jwks` or `introspection`. */
export interface ResourceServerOptions {
  /** This MCP server's canonical URL (`https://mcp.example.com/mcp`): the audience tokens must name. */
  readonly resource: URL | string;
  /** The issuers of the authorization servers clients may get tokens from (named in the metadata document). */
  readonly authorizationServers: readonly string[];
  /** Checks a token yourself. */
  readonly verifier?: TokenVerifier;
  /** JWT access tokens: the authorization server's JWKS URL (with `issuer`, and `audience` or the resource). */
  readonly jwks?: string | URL;
  /** The `iss` JWT tokens must carry (default: `authorizationServers`). */
  readonly issuer?: string | readonly string[];
  /** The audiences accepted (default: the resource's canonical URL). */
  readonly audience?: readonly string[];
  /** JWT signing algorithms accepted (default `DEFAULT_JWT_ALGORITHMS`). */
  readonly algorithms?: readonly string[];
  /** Opaque tokens: RFC 7662 introspection at the authorization server. */
  readonly introspection?: Omit<IntrospectionOptions, 'audience' | 'exposeToken'>;
  /** Named in the metadata document (`scopes_supported`). */
  readonly scopesSupported?: readonly string[];
  /** Scopes every request needs (named in the 401 challenge); tools, resources and prompts can need more. */
  readonly requiredScopes?: readonly string[];
  /** Where the metadata document is served (default: the RFC 9728 well-known path of the resource). */
  readonly resourceMetadataPath?: string;
  /** `resource_name` of the metadata document. */
  readonly resourceName?: string;
  /** `resource_documentation` of the metadata document. */
  readonly resourceDocumentation?: string;
  /** Handlers see the raw token on `ctx.auth.token` (default false: a handler must never pass it on). */
  readonly exposeToken?: boolean;
  /**
   * Verdicts kept per token, so a token seen again is not checked again (never past its `exp`). Default: JWTs
   * `DEFAULT_JWT_VERDICT_TTL_MS`, introspection its `cacheTtlMs`; a custom `verifier` keeps none unless this
   * says so. `false`: check every request.
   */
  readonly verdictCache?: { readonly maxEntries?: number; readonly ttlMs?: number } | false;
  /** Milliseconds since the epoch, for the verdict cache (default `Date.now`). */
  readonly now?: () => number;
}

/** How long a JWT's verdict is kept (its signature, issuer and audience do not change; a key removed from the JWKS is noticed within this). */
export const DEFAULT_JWT_VERDICT_TTL_MS = 5 * 60_000;
const DEFAULT_VERDICT_ENTRIES = 1_000;

/** A refused request: its HTTP status, the `WWW-Authenticate` challenge (when there is one) and a message. */
export interface AuthRefusal {
  readonly status: 400 | 401 | 403 | 503;
  readonly challenge?: string;
  readonly message: string;
  /** Why the token could not be checked (a 503), for the server's log: never the token. */
  readonly cause?: unknown;
}

export type AuthOutcome =
  { readonly ok: true; readonly principal: Principal } | { readonly ok: false; readonly refusal: AuthRefusal };

/** `Bearer <token68>`, the scheme in any case (RFC 7235), one space or more. */
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * The decisions of one protected endpoint; made once per endpoint (`createMcpHttpHandler` shares it between
 * the Streamable HTTP and the legacy HTTP+SSE transports, so both use one key cache).
 */
export class ResourceServer {
  /** The paths the metadata document is served at. */
  readonly metadataPaths: readonly string[];
  readonly metadata: ProtectedResourceMetadata;
  /** The metadata document's absolute URL, as challenges name it. */
  readonly metadataUrl: string;
  private readonly verify: TokenVerifier;
  private readonly verdicts: TokenCache | undefined;
  /** The last token hashed, and its key. */
  private lastToken: string | undefined;
  private lastKey: string | undefined;
  private readonly requiredScopes: readonly string[];
  private readonly unauthenticated: AuthRefusal;
  /** The scopes every request needs, as challenges name them (undefined: none). */
  private readonly unauthenticatedScope: string | undefined;

  constructor(options: ResourceServerOptions) {
    const resource = new URL(options.resource);
    if (options.authorizationServers.length === 0) throw new TypeError('auth: authorizationServers must not be empty');
    this.metadata = Object.freeze(protectedResourceMetadata({ ...options, resource }));
    this.metadataPaths = metadataPaths(resource, options.resourceMetadataPath);
    this.metadataUrl = new URL(this.metadataPaths[0]!, resource.origin).href;
    this.verify = verifierOf(options, resource);
    this.verdicts = verdictCacheOf(options);
    this.requiredScopes = options.requiredScopes ?? [];
    const scope = this.requiredScopes.length > 0 ? this.requiredScopes.join(' ') : undefined;
    this.unauthenticatedScope = scope;
    this.unauthenticated = {
      status: 401,
      challenge: bearerChallenge({ resource_metadata: this.metadataUrl, scope }),
      message: 'Unauthorized: this MCP server needs an OAuth access token (Authorization: Bearer)',
    };
  }

  /**
   * Checks the request's credentials: `authorization` is its `Authorization` header, `tokenInQuery` whether
   * its URL carries an `access_token` parameter (refused: MCP forbids tokens in URLs). Synchronous for a
   * token whose verdict is cached (on Node): a request with a known token waits for nothing.
   */
  authenticate(
    authorization: string | undefined,
    tokenInQuery: boolean,
    request: TokenRequestInfo,
  ): AuthOutcome | Promise<AuthOutcome> {
    if (tokenInQuery) return refused(this.invalidRequest('access tokens are not accepted in the URL'));
    if (authorization === undefined) return refused(this.unauthenticated);
    const token = BEARER.exec(authorization)?.[1];
    if (token === undefined) return refused(this.invalidRequest('the Authorization header must be "Bearer <token>"'));
    const verdicts = this.verdicts;
    if (verdicts === undefined) return this.check(token, undefined, request);
    // A client sends one token again and again: its key is remembered (a string comparison, not a hash).
    const key = token === this.lastToken ? this.lastKey! : tokenKey(token);
    if (typeof key !== 'string') return key.then((hashed) => this.cachedOrChecked(verdicts, token, hashed, request));
    this.lastToken = token;
    this.lastKey = key;
    return this.cachedOrChecked(verdicts, token, key, request);
  }

  private cachedOrChecked(
    verdicts: TokenCache,
    token: string,
    key: string,
    request: TokenRequestInfo,
  ): AuthOutcome | Promise<AuthOutcome> {
    const known = verdicts.get(key);
    return known ? this.admit(known) : this.check(token, key, request);
  }

  /** Verifies the token (and keeps the verdict under `key`). */
  private async check(token: string, key: string | undefined, request: TokenRequestInfo): Promise<AuthOutcome> {
    let principal: Principal;
    try {
      principal = await this.verify(token, request);
    } catch (error) {
      if (!(error instanceof InvalidTokenError)) {
        return refused({
          status: 503,
          message: 'Service Unavailable: the access token could not be checked',
          cause: error,
        });
      }
      return refused({
        status: 401,
        challenge: bearerChallenge({
          error: 'invalid_token',
          error_description: error.message,
          resource_metadata: this.metadataUrl,
          scope: this.unauthenticatedScope,
        }),
        message: `Unauthorized: ${error.message}`,
      });
    }
    if (key !== undefined) this.verdicts!.set(key, principal);
    return this.admit(principal);
  }

  private admit(principal: Principal): AuthOutcome {
    const lacking = this.insufficientScope(principal, this.requiredScopes);
    return lacking ? refused(lacking) : { ok: true, principal };
  }

  /** The 403 `insufficient_scope` refusal when `principal` lacks some of `needed`, else undefined. */
  insufficientScope(principal: Principal, needed: readonly string[] | undefined): AuthRefusal | undefined {
    if (needed === undefined || needed.length === 0) return undefined;
    const missing = missingScopes(principal.scopes, needed);
    if (missing.length === 0) return undefined;
    return {
      status: 403,
      challenge: bearerChallenge({
        error: 'insufficient_scope',
        scope: stepUpScope(principal.scopes, needed),
        resource_metadata: this.metadataUrl,
        error_description: `this request needs the scope ${missing.join(' ')}`,
      }),
      message: `Forbidden: insufficient_scope: this request needs the scope ${missing.join(' ')}`,
    };
  }

  private invalidRequest(why: string): AuthRefusal {
    return {
      status: 400,
      challenge: bearerChallenge({
        error: 'invalid_request',
        error_description: why,
        resource_metadata: this.metadataUrl,
      }),
      message: `Bad Request: ${why}`,
    };
  }
}

function refused(refusal: AuthRefusal): AuthOutcome {
  return { ok: false, refusal };
}

function verifierOf(options: ResourceServerOptions, resource: URL): TokenVerifier {
  const ways = [options.verifier, options.jwks, options.introspection].filter((way) => way !== undefined).length;
  if (ways !== 1) throw new TypeError('auth: give exactly one of verifier, jwks and introspection');
  if (options.verifier) return options.verifier;
  const audience = options.audience ?? [...new Set([canonicalResource(resource), resource.href])];
  if (options.jwks !== undefined) {
    const jwt: JwtVerifierOptions = {
      jwksUrl: options.jwks,
      issuer: options.issuer ?? options.authorizationServers,
      audience,
      ...(options.algorithms && { algorithms: options.algorithms }),
      ...(options.exposeToken && { exposeToken: true }),
    };
    return createJwtVerifier(jwt);
  }
  return createIntrospectionVerifier({ ...options.introspection!, audience, exposeToken: options.exposeToken });
}

function verdictCacheOf(options: ResourceServerOptions): TokenCache | undefined {
  const setting = options.verdictCache;
  if (setting === false) return undefined;
  const defaults =
    options.jwks !== undefined
      ? { maxEntries: DEFAULT_VERDICT_ENTRIES, ttlMs: DEFAULT_JWT_VERDICT_TTL_MS }
      : options.introspection !== undefined
        ? {
            maxEntries: options.introspection.cacheEntries ?? DEFAULT_INTROSPECTION_CACHE_ENTRIES,
            ttlMs: options.introspection.cacheTtlMs ?? DEFAULT_INTROSPECTION_CACHE_TTL_MS,
          }
        : undefined;
  if (setting === undefined && defaults === undefined) return undefined;
  const maxEntries = setting?.maxEntries ?? defaults?.maxEntries ?? DEFAULT_VERDICT_ENTRIES;
  const ttlMs = setting?.ttlMs ?? defaults?.ttlMs ?? DEFAULT_JWT_VERDICT_TTL_MS;
  return maxEntries > 0 ? new TokenCache(maxEntries, ttlMs, options.now ?? Date.now) : undefined;
}
