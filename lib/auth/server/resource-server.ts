/**
 * An MCP server as an OAuth resource server (MCP authorization, 2025-11-25 and 2026-07-28): the options a
 * protected endpoint takes, and the decisions it makes on each request, free of any HTTP library: which
 * token the `Authorization` header carries, whether it is good here, whether its scopes suffice, and the
 * status and `WWW-Authenticate` challenge of every refusal. The HTTP transports apply them.
 */
import { bearerChallenge } from './challenge';
import { createIntrospectionVerifier, type IntrospectionOptions } from './introspection-verifier';
import { createJwtVerifier, type JwtVerifierOptions } from './jwt-verifier';
import {
  canonicalResource,
  metadataPaths,
  protectedResourceMetadata,
  type ProtectedResourceMetadata,
} from './metadata';
import { InvalidTokenError, type Principal } from './principal';
import { missingScopes, stepUpScope } from './scopes';
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
}

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
  private readonly requiredScopes: readonly string[];
  private readonly unauthenticated: AuthRefusal;

  constructor(options: ResourceServerOptions) {
    const resource = new URL(options.resource);
    if (options.authorizationServers.length === 0) throw new TypeError('auth: authorizationServers must not be empty');
    this.metadata = Object.freeze(protectedResourceMetadata({ ...options, resource }));
    this.metadataPaths = metadataPaths(resource, options.resourceMetadataPath);
    this.metadataUrl = new URL(this.metadataPaths[0]!, resource.origin).href;
    this.verify = verifierOf(options, resource);
    this.requiredScopes = options.requiredScopes ?? [];
    const scope = this.requiredScopes.length > 0 ? this.requiredScopes.join(' ') : undefined;
    this.unauthenticated = {
      status: 401,
      challenge: bearerChallenge({ resource_metadata: this.metadataUrl, scope }),
      message: 'Unauthorized: this MCP server needs an OAuth access token (Authorization: Bearer)',
    };
  }

  /**
   * Checks the request's credentials: `authorization` is its `Authorization` header, `tokenInQuery` whether
   * its URL carries an `access_token` parameter (refused: MCP forbids tokens in URLs).
   */
  async authenticate(
    authorization: string | undefined,
    tokenInQuery: boolean,
    request: TokenRequestInfo,
  ): Promise<AuthOutcome> {
    if (tokenInQuery) return refused(this.invalidRequest('access tokens are not accepted in the URL'));
    if (authorization === undefined) return refused(this.unauthenticated);
    const token = BEARER.exec(authorization)?.[1];
    if (token === undefined) return refused(this.invalidRequest('the Authorization header must be "Bearer <token>"'));
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
        }),
        message: `Unauthorized: ${error.message}`,
      });
    }
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
