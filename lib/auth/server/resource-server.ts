/**
 * An MCP server as an OAuth resource server (MCP authorization, 2025-11-25 and 2026-07-28): the options a
 * protected endpoint takes, and the decisions it makes on each request, free of any HTTP library: which
 * token the `Authorization` header carries, whether it is good here, whether its scopes suffice, and the
 * status and `WWW-Authenticate` challenge of every refusal. The HTTP transports apply them.
 */
import { nodeCrypto } from '../../core/node-builtins';
import { parseAuthorization, type TokenScheme } from './authorization-header';
import { bearerChallenge, dpopChallenge, type ChallengeParams } from './challenge';
import { boundKeyOf, DpopGuard, type DpopFailure, type DpopOptions } from './dpop';
import {
  createIntrospectionVerifier,
  DEFAULT_INTROSPECTION_CACHE_ENTRIES,
  DEFAULT_INTROSPECTION_CACHE_TTL_MS,
  type IntrospectionOptions,
} from './introspection-verifier';
import type { JwksFetchOptions } from './bounded-fetch';
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
import type { TokenVerifier } from './token-verifier';

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
  /** How the key set at `jwks` is fetched: timeout, size limit, plain `http:` (default: loopback only). */
  readonly jwksFetch?: JwksFetchOptions;
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
  /**
   * DPoP-bound tokens (RFC 9449): accepted with the `DPoP` scheme and a proof, and a token bound to a key
   * (`cnf.jkt`) refused without one. On by default (our own client uses DPoP whenever the authorization
   * server offers it); `false` refuses the DPoP scheme, `required: true` refuses Bearer tokens.
   */
  readonly dpop?: false | DpopOptions;
  /** Milliseconds since the epoch, for the verdict cache and DPoP proofs (default `Date.now`). */
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
  /** The `DPoP-Nonce` header to send (a `use_dpop_nonce` refusal). */
  readonly dpopNonce?: string;
}

export type AuthOutcome =
  { readonly ok: true; readonly principal: Principal } | { readonly ok: false; readonly refusal: AuthRefusal };

/**
 * What the resource server reads of a request: every `Authorization` and `DPoP` header (a repeated one is
 * refused), whether its URL carries an `access_token` parameter (refused: MCP forbids tokens in URLs), its
 * method and path.
 */
export interface AuthRequest {
  readonly authorization: readonly string[] | undefined;
  readonly dpop: readonly string[] | undefined;
  readonly tokenInQuery: boolean;
  readonly method: string;
  /** Without the query. */
  readonly path: string;
}

/** A principal, or why there is none. */
type Verdict = Principal | AuthRefusal;
const isRefusal = (verdict: Verdict): verdict is AuthRefusal => 'status' in verdict;

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
  /** The last token hashed (as Latin-1 bytes: a token68 is ASCII; compared in constant time), and its key. */
  private lastToken: Uint8Array | undefined;
  private lastKey: string | undefined;
  private readonly requiredScopes: readonly string[];
  private readonly unauthenticated: AuthRefusal;
  private readonly malformed: AuthRefusal;
  /** The scopes every request needs, as challenges name them (undefined: none). */
  private readonly unauthenticatedScope: string | undefined;
  /** DPoP-bound tokens and their proofs (undefined: `dpop: false`, the DPoP scheme is refused). */
  private readonly dpop: DpopGuard | undefined;
  /** `DPoP algs="…"`, the challenge that offers DPoP, with the Bearer one unless DPoP is required. */
  private readonly dpopOffer: string | undefined;

  constructor(options: ResourceServerOptions) {
    const resource = new URL(options.resource);
    if (options.authorizationServers.length === 0) throw new TypeError('auth: authorizationServers must not be empty');
    this.dpop =
      options.dpop === false ? undefined : new DpopGuard(options.dpop ?? {}, resource, options.now ?? Date.now);
    const dpop = this.dpop && { algorithms: this.dpop.algorithms, required: this.dpop.required };
    this.metadata = Object.freeze(protectedResourceMetadata({ ...options, resource, dpop }));
    this.metadataPaths = metadataPaths(resource, options.resourceMetadataPath);
    this.metadataUrl = new URL(this.metadataPaths[0]!, resource.origin).href;
    this.verify = verifierOf(options, resource);
    this.verdicts = verdictCacheOf(options);
    this.requiredScopes = options.requiredScopes ?? [];
    const scope = this.requiredScopes.length > 0 ? this.requiredScopes.join(' ') : undefined;
    this.unauthenticatedScope = scope;
    this.dpopOffer = this.dpop && dpopChallenge({ algs: this.dpop.algorithms.join(' ') });
    const needed = this.dpop?.required ? 'DPoP' : 'Bearer';
    this.unauthenticated = {
      status: 401,
      challenge: this.challenges('bearer', { resource_metadata: this.metadataUrl, scope }),
      message: `Unauthorized: this MCP server needs an OAuth access token (Authorization: ${needed})`,
    };
    this.malformed = this.invalidRequest(
      this.dpop
        ? 'the Authorization header must be "Bearer <token>" or "DPoP <token>"'
        : 'the Authorization header must be "Bearer <token>"',
    );
  }

  /**
   * Checks the request's credentials. Synchronous for a Bearer token whose verdict is cached (on Node): a
   * request with a known token waits for nothing. A DPoP request's proof is checked every time.
   */
  authenticate(request: AuthRequest): AuthOutcome | Promise<AuthOutcome> {
    if (request.tokenInQuery) return refused(this.invalidRequest('access tokens are not accepted in the URL'));
    const headers = request.authorization;
    if (headers === undefined || headers.length === 0) return refused(this.unauthenticated);
    if (headers.length > 1) return refused(this.invalidRequest('send one Authorization header'));
    const credentials = parseAuthorization(headers[0]!);
    if (credentials === undefined) return refused(this.malformed);
    if (credentials.scheme === 'dpop') {
      return this.dpop ? this.withProof(this.dpop, credentials.token, request) : refused(this.malformed);
    }
    if (this.dpop?.required) {
      return refused(this.tokenRefusal('dpop', 'invalid_token', 'this server accepts DPoP-bound tokens only'));
    }
    const verdict = this.verdictOf(credentials.token, 'bearer', request);
    return verdict instanceof Promise
      ? verdict.then((settled) => this.admitBearer(settled))
      : this.admitBearer(verdict);
  }

  /** A Bearer token's outcome: a token bound to a key is refused without its proof (RFC 9449 §7.2). */
  private admitBearer(verdict: Verdict): AuthOutcome {
    if (isRefusal(verdict)) return refused(verdict);
    if (boundKeyOf(verdict) !== undefined) {
      return refused(
        this.tokenRefusal('dpop', 'invalid_token', 'the token is bound to a DPoP key: send it as "DPoP" with a proof'),
      );
    }
    return this.admit(verdict);
  }

  private async withProof(dpop: DpopGuard, token: string, request: AuthRequest): Promise<AuthOutcome> {
    const dpopRequest = { proofs: request.dpop, method: request.method, path: request.path };
    const proof = dpop.proofOf(dpopRequest);
    if (typeof proof !== 'string') return refused(this.dpopRefusal(dpop, proof));
    const verdict = await this.verdictOf(token, 'dpop', request);
    if (isRefusal(verdict)) return refused(verdict);
    const failure = await dpop.check(proof, token, verdict, dpopRequest);
    return failure ? refused(this.dpopRefusal(dpop, failure)) : this.admit(verdict);
  }

  /** The principal of `token`, from the verdict cache or checked (and then kept). */
  private verdictOf(token: string, scheme: TokenScheme, request: AuthRequest): Verdict | Promise<Verdict> {
    const verdicts = this.verdicts;
    if (verdicts === undefined) return this.check(token, undefined, scheme, request);
    const key = this.keyOf(token);
    if (typeof key !== 'string') {
      return key.then((hashed) => verdicts.get(hashed) ?? this.check(token, hashed, scheme, request));
    }
    return verdicts.get(key) ?? this.check(token, key, scheme, request);
  }

  /**
   * The verdict cache's key of `token`. A client sends one token again and again: the last one's key is
   * remembered, the tokens compared in constant time (a comparison that stops at the first difference
   * would tell a timing attacker how much of another client's token it has guessed).
   */
  private keyOf(token: string): string | Promise<string> {
    const bytes = latin1Bytes(token);
    if (this.lastToken !== undefined && sameBytes(bytes, this.lastToken)) return this.lastKey!;
    const key = tokenKey(token);
    if (typeof key !== 'string') return key;
    this.lastToken = bytes;
    this.lastKey = key;
    return key;
  }

  /** Verifies the token (and keeps the verdict under `key`). */
  private async check(
    token: string,
    key: string | undefined,
    scheme: TokenScheme,
    request: AuthRequest,
  ): Promise<Verdict> {
    let principal: Principal;
    try {
      principal = await this.verify(token, { method: request.method, path: request.path });
    } catch (error) {
      if (!(error instanceof InvalidTokenError)) {
        return { status: 503, message: 'Service Unavailable: the access token could not be checked', cause: error };
      }
      return this.tokenRefusal(scheme, 'invalid_token', error.message);
    }
    if (key !== undefined) this.verdicts!.set(key, principal);
    return principal;
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
    // A bound token came with the DPoP scheme (it is refused otherwise): the challenge names that scheme.
    const scheme = this.dpop && boundKeyOf(principal) !== undefined ? dpopChallenge : bearerChallenge;
    return {
      status: 403,
      challenge: scheme({
        error: 'insufficient_scope',
        scope: stepUpScope(principal.scopes, needed),
        resource_metadata: this.metadataUrl,
        error_description: `this request needs the scope ${missing.join(' ')}`,
      }),
      message: `Forbidden: insufficient_scope: this request needs the scope ${missing.join(' ')}`,
    };
  }

  /**
   * The challenges of a 401 to a request of `scheme`: a DPoP request gets the DPoP challenge with the
   * parameters (and `algs`); a Bearer request (or none) the Bearer one, followed by the DPoP offer when the
   * server takes DPoP too; the DPoP one alone when it takes nothing else.
   */
  private challenges(scheme: TokenScheme, params: ChallengeParams): string {
    if (this.dpop && (scheme === 'dpop' || this.dpop.required)) {
      return dpopChallenge({ ...params, algs: this.dpop.algorithms.join(' ') });
    }
    const bearer = bearerChallenge(params);
    return this.dpopOffer === undefined ? bearer : `${bearer}, ${this.dpopOffer}`;
  }

  /** A 401 `error` for a token presented under `scheme`. */
  private tokenRefusal(scheme: TokenScheme, error: string, description: string): AuthRefusal {
    return {
      status: 401,
      challenge: this.challenges(scheme, {
        error,
        error_description: description,
        resource_metadata: this.metadataUrl,
        scope: this.unauthenticatedScope,
      }),
      message: `Unauthorized: ${description}`,
    };
  }

  /** A refused DPoP request; `use_dpop_nonce` hands out the nonce to use (RFC 9449 §9). */
  private dpopRefusal(dpop: DpopGuard, failure: DpopFailure): AuthRefusal {
    if (failure.status === 400) {
      const challenge = dpopChallenge({
        error: failure.error,
        error_description: failure.description,
        resource_metadata: this.metadataUrl,
      });
      return { status: 400, challenge, message: `Bad Request: ${failure.description}` };
    }
    const refusal = this.tokenRefusal('dpop', failure.error, failure.description);
    const nonce = failure.error === 'use_dpop_nonce' ? dpop.currentNonce() : undefined;
    return nonce === undefined ? refusal : { ...refusal, dpopNonce: nonce };
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

const node = nodeCrypto();
const NodeBuffer = (globalThis as { Buffer?: { from(text: string, encoding: 'latin1'): Uint8Array } }).Buffer;

/** One byte per character (a token is ASCII): `Buffer`'s Latin-1 is 2x faster than `TextEncoder`'s UTF-8. */
function latin1Bytes(text: string): Uint8Array {
  if (NodeBuffer) return NodeBuffer.from(text, 'latin1');
  const bytes = new Uint8Array(text.length);
  for (let index = 0; index < text.length; index++) bytes[index] = text.charCodeAt(index);
  return bytes;
}

/** Equal bytes, in a time that depends on the length only (no early exit at the first difference). */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  if (node) return node.timingSafeEqual(a, b);
  let difference = 0;
  for (let index = 0; index < a.length; index++) difference |= a[index]! ^ b[index]!;
  return difference === 0;
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
      ...(options.jwksFetch && { jwksFetch: options.jwksFetch }),
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
