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
import type { HttpAuthorization } from '../auth/http-authorization';
import { MemoryTokenStore } from '../auth/memory-token-store';
import type { TokenStore } from '../auth/token-store';

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
    if (auth.type === 'client_credentials') {
      const { OAuthClient } = await import('../auth/client/oauth-client');
      const grant = { type: 'client_credentials' as const, clientId: auth.clientId, clientSecret: auth.clientSecret };
      return new OAuthClient(this.url, { store: this.tokenStore, ...optionsOf(auth), grant });
    }
    // The hub cannot ask a user: it uses (and refreshes) what `switchboard login` stored, or says to log in.
    const [{ StoredLogin }, { AuthorizationError }] = await Promise.all([
      import('../auth/client/stored-login'),
      import('../auth/client/http'),
    ]);
    const url = this.url;
    const client = auth.clientName === undefined ? '' : ` --client-name ${auth.clientName}`;
    return new StoredLogin(url, {
      store: this.tokenStore,
      ...optionsOf(auth),
      ...(auth.clientId !== undefined && {
        client: {
          clientId: auth.clientId,
          ...(auth.clientSecret !== undefined && { clientSecret: auth.clientSecret }),
        },
      }),
      loginRequired: ({ scope }) =>
        new AuthorizationError(
          `${url} needs a login: run \`switchboard login${client}${scope === undefined ? '' : ` --scope '${scope}'`} ${url}\``,
        ),
    });
  }
}

function optionsOf(auth: OAuthUpstreamAuth | ClientCredentialsUpstreamAuth) {
  return {
    ...(auth.clientName !== undefined && { clientName: auth.clientName }),
    ...(auth.scope !== undefined && { scope: auth.scope }),
  };
}
