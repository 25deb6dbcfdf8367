/**
 * An `HttpAuthorization` that only uses what an earlier login stored: the token is sent and refreshed (by an
 * `OAuthClient` over the store), and a refusal that only a new login can answer fails with the caller's
 * error (`loginRequired`), without discovery or a client registration when nothing was stored at all. What
 * a command line's `call` and a hub's upstreams use: neither may ask a user.
 *
 * Tokens are bearer ones (`dpop: false`): a DPoP-bound token is bound to a key that lives only in the
 * process that logged in.
 */
import type { AuthorizationRefusal, HttpAuthorization } from '../http-authorization';
import type { TokenStore } from '../token-store';
import type { AuthorizationInteraction } from './authorization-code';
import { OAuthClient } from './oauth-client';
import type { PreRegisteredClient } from './registration';
import { OFFLINE_ACCESS, splitScopes } from './scopes';

export interface StoredLoginOptions {
  readonly store: TokenStore;
  /** The name the login was stored under (default `DEFAULT_CLIENT_NAME`). */
  readonly clientName?: string;
  readonly scope?: string;
  /** The client the login used, when it was pre-registered (its secret authenticates the refresh). */
  readonly client?: PreRegisteredClient;
  /**
   * The error a refusal that needs a new login fails with. `scope`: the scopes to log in with, when the
   * server wants scopes the stored token was not granted.
   */
  readonly loginRequired: (why: { readonly scope?: string }) => Error;
}

/** The options a stored login's `OAuthClient` and the login that stores it share: bearer tokens only. */
export const STORED_LOGIN_OAUTH_OPTIONS = { dpop: false } as const;

export class StoredLogin implements HttpAuthorization {
  private readonly oauth: OAuthClient;

  constructor(
    url: string | URL,
    private readonly options: StoredLoginOptions,
  ) {
    this.oauth = new OAuthClient(url, {
      ...STORED_LOGIN_OAUTH_OPTIONS,
      store: options.store,
      ...(options.clientName !== undefined && { clientName: options.clientName }),
      ...(options.scope !== undefined && { scope: options.scope }),
      ...(options.client && { client: options.client }),
      interaction: this.noInteraction(),
    });
  }

  prepare(): Promise<void> {
    return this.oauth.prepare();
  }

  authorization(): string | undefined {
    return this.oauth.authorization();
  }

  requestHeaders(method: string, url: URL): Promise<Readonly<Record<string, string>>> | undefined {
    return this.oauth.requestHeaders(method, url);
  }

  refused(refusal: AuthorizationRefusal): Promise<boolean> {
    if (refusal.status === 401 && this.oauth.currentTokens === undefined) {
      return Promise.reject(this.options.loginRequired({}));
    }
    return this.oauth.refused(refusal);
  }

  /**
   * Where the OAuth client would send a user when the stored token cannot be refreshed or a step-up needs
   * more scopes: nowhere, that is a login's job. The authorization URL it would have opened names the
   * scopes to log in with. (Its redirect URI is never used: the grant stops before the request is sent.)
   */
  private noInteraction(): AuthorizationInteraction {
    return {
      redirectUri: 'http://127.0.0.1/callback',
      authorize: (url) => {
        const scope = this.widerScope(url.searchParams.get('scope'));
        return Promise.reject(this.options.loginRequired(scope === undefined ? {} : { scope }));
      },
    };
  }

  /** `wanted` when it names a scope the stored token was not granted (`offline_access` aside: a login adds it). */
  private widerScope(wanted: string | null): string | undefined {
    if (wanted === null) return undefined;
    const granted = new Set(splitScopes(this.oauth.currentTokens?.scope));
    const scopes = splitScopes(wanted).filter((scope) => scope !== OFFLINE_ACCESS);
    return scopes.some((scope) => !granted.has(scope)) ? scopes.join(' ') : undefined;
  }
}
