/**
 * How the hub authenticates to one HTTP upstream: OAuth with the tokens of an earlier `switchboard login`
 * (from the hub's token store, refreshed as needed), the client credentials grant (no user), or a static
 * bearer token. The upstream's requests carry only these credentials: nothing a downstream client sent
 * (its `Authorization` above all) ever reaches an upstream, as the MCP authorization spec requires (no
 * token passthrough).
 *
 * The OAuth client (oauth4webapi, jose) is imported when an upstream first needs it, so the hub, on the
 * runtime-neutral root entry, pulls in neither; where tokens live is the hub's `tokenStore`.
 */
import type { AuthorizationRefusal, HttpAuthorization } from '../auth/http-authorization';
import { MemoryTokenStore } from '../auth/memory-token-store';
import type { AuthKey, TokenStore } from '../auth/token-store';

/** The client name `switchboard login` and the OAuth client store tokens under by default. */

/** OAuth through the hub's token store: the user logged in beforehand (`switchboard login <url>`). */
export interface OAuthUpstreamAuth {
  readonly type: 'oauth';
  /** Scopes to ask for when a token is renewed (default: what the server's challenge or metadata names). */
  readonly scope?: string;
  /** The name the tokens are stored under with the server's URL (default `mcp-switchboard`, as `login` uses). */
  readonly clientName?: string;
  /** A client registered beforehand at the authorization server (else: the login's registration). */
  readonly clientId?: string;
  readonly clientSecret?: string;
}

/** A static token, sent as `Authorization: Bearer <token>` on every request. */
export interface BearerUpstreamAuth {
  readonly type: 'bearer';
  readonly token: string;
}

/** The client credentials grant: the hub is the client, no user is involved. */
export interface ClientCredentialsUpstreamAuth {
  readonly type: 'client_credentials';
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scope?: string;
  /** The name the tokens are stored under with the server's URL (default `mcp-switchboard`). */
  readonly clientName?: string;
}

export type UpstreamAuth = OAuthUpstreamAuth | BearerUpstreamAuth | ClientCredentialsUpstreamAuth;

/** What a transport to the upstream is given besides its URL. */
export interface AuthorizedTransportOptions {
  readonly headers?: Readonly<Record<string, string>>;
  readonly authorization?: HttpAuthorization;
}

/** Throws when `headers` carry an `Authorization` while `auth` says how to authorize: one must go. */
export function checkUpstreamAuth(
  name: string,
  auth: UpstreamAuth | undefined,
  headers: Readonly<Record<string, string>> | undefined,
): void {
  if (auth && hasAuthorizationHeader(headers)) {
    throw new TypeError(`Hub: upstream ${name} has both an Authorization header and auth (${auth.type}): keep one`);
  }
}

export function hasAuthorizationHeader(headers: Readonly<Record<string, string>> | undefined): boolean {
  return headers !== undefined && Object.keys(headers).some((name) => name.toLowerCase() === 'authorization');
}

/**
 * One upstream's credentials, for every session it opens: one OAuth client per upstream, so a token
 * obtained or refreshed in one session is used by the next.
 */
export class UpstreamCredentials {
  private authorization: Promise<HttpAuthorization> | undefined;

  constructor(
    private readonly auth: UpstreamAuth,
    private readonly url: string,
    private readonly tokenStore: TokenStore = new MemoryTokenStore(),
  ) {}

  /** The source's `headers` with what `auth` adds. */
  async transportOptions(headers: Readonly<Record<string, string>> | undefined): Promise<AuthorizedTransportOptions> {
    const auth = this.auth;
    if (auth.type === 'bearer') return { headers: { ...headers, authorization: `Bearer ${auth.token}` } };
    return { ...(headers && { headers }), authorization: await (this.authorization ??= this.oauthClient(auth)) };
  }

  private async oauthClient(auth: OAuthUpstreamAuth | ClientCredentialsUpstreamAuth): Promise<HttpAuthorization> {
    const [{ OAuthClient, canonicalServerUrl, DEFAULT_CLIENT_NAME }, { AuthorizationError }] = await Promise.all([
      import('../auth/client/oauth-client'),
      import('../auth/client/http'),
    ]);
    const common = {
      store: this.tokenStore,
      ...(auth.clientName !== undefined && { clientName: auth.clientName }),
      ...(auth.scope !== undefined && { scope: auth.scope }),
    };
    if (auth.type === 'client_credentials') {
      const grant = { type: 'client_credentials' as const, clientId: auth.clientId, clientSecret: auth.clientSecret };
      return new OAuthClient(this.url, { ...common, grant });
    }
    const client = auth.clientId !== undefined && {
      client: { clientId: auth.clientId, ...(auth.clientSecret !== undefined && { clientSecret: auth.clientSecret }) },
    };
    // No interaction: the hub cannot ask a user. A grant that needs one fails with how to log in.
    return new LoginRequired(new OAuthClient(this.url, { ...common, ...client }), {
      url: this.url,
      clientName: auth.clientName,
      store: this.tokenStore,
      key: { server: canonicalServerUrl(new URL(this.url)), client: auth.clientName ?? DEFAULT_CLIENT_NAME },
      failure: (message, cause) => new AuthorizationError(message, { cause }),
    });
  }
}

interface LoginSettings {
  readonly url: string;
  readonly clientName: string | undefined;
  readonly store: TokenStore;
  /** The record a login writes. */
  readonly key: AuthKey;
  /** The error to fail with (an `AuthorizationError`, from the module imported on demand). */
  readonly failure: (message: string, cause?: unknown) => Error;
}

/**
 * An OAuth client whose failures to authorize say how the user logs in (the hub has no one to ask). With
 * no tokens stored at all it fails at once: nothing to refresh, and no registration worth making.
 */
class LoginRequired implements HttpAuthorization {
  constructor(
    private readonly inner: HttpAuthorization,
    private readonly settings: LoginSettings,
  ) {}

  prepare(): Promise<void> {
    return this.inner.prepare?.() ?? Promise.resolve();
  }

  authorization(): string | undefined {
    return this.inner.authorization();
  }

  requestHeaders(method: string, url: URL): Promise<Readonly<Record<string, string>>> | undefined {
    return this.inner.requestHeaders?.(method, url);
  }

  async refused(refusal: AuthorizationRefusal): Promise<boolean> {
    const { store, key, failure } = this.settings;
    if (refusal.status === 401 && !(await store.load(key))?.tokens) throw failure(this.hint('no tokens are stored'));
    try {
      return await this.inner.refused(refusal);
    } catch (error) {
      throw failure(this.hint(error instanceof Error ? error.message : String(error)), error);
    }
  }

  private hint(why: string): string {
    const { url, clientName } = this.settings;
    const client = clientName === undefined ? '' : ` as client "${clientName}"`;
    return `${url} needs a login: run \`switchboard login ${url}\`${client} (${why})`;
  }
}
