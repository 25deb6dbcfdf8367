/**
 * The OAuth side of `switchboard call` to an HTTP server: the tokens `switchboard login` stored for the URL
 * (in the `FileTokenStore` under the config directory), sent with every request and refreshed by the
 * `OAuthClient` when the server says they expired. `call` never starts a login itself (it may run where no
 * one can open a browser): when the server needs one, it fails with `LoginRequiredError`.
 */
import type { AuthorizationRefusal, HttpAuthorization } from '../auth/http-authorization';
import { OAuthClient } from '../auth/client/oauth-client';
import type { AuthorizationInteraction } from '../auth/client/authorization-code';
import { FileTokenStore } from '../auth/node/file-token-store';
import { OFFLINE_ACCESS, splitScopes } from '../auth/client/scopes';
import { DEFAULT_CALLBACK_PORT, DEFAULT_CLIENT_NAME } from './auth-args';
import { LoginRequiredError } from './errors';
import { commandLine } from './hints';

/**
 * Tokens a CLI process can use: bearer ones. A DPoP-bound token is bound to a key that lives only in the
 * process that logged in, so `login` and `call` do not ask for DPoP.
 */
export const CLI_OAUTH_OPTIONS = { dpop: false } as const;

/**
 * The stored login for `url`: an `HttpAuthorization` that sends and refreshes it, and turns a refusal that
 * needs a new login into `LoginRequiredError`. A refusal with no stored token fails at once (no discovery,
 * no client registration on the user's behalf).
 */
export class StoredLoginAuthorization implements HttpAuthorization {
  private readonly oauth: OAuthClient;

  constructor(
    private readonly url: URL,
    private readonly clientName: string = DEFAULT_CLIENT_NAME,
    store = new FileTokenStore(),
  ) {
    this.oauth = new OAuthClient(url, {
      ...CLI_OAUTH_OPTIONS,
      store,
      clientName,
      interaction: this.noLogin(),
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
    if (refusal.status === 401 && this.oauth.currentTokens === undefined) return Promise.reject(this.loginRequired());
    return this.oauth.refused(refusal);
  }

  /** The failure that names the `login` to run: with `--scope` when the server wants scopes the token lacks. */
  private loginRequired(scope?: string): LoginRequiredError {
    const named = this.clientName === DEFAULT_CLIENT_NAME ? [] : ['--client-name', this.clientName];
    const scoped = scope === undefined ? [] : ['--scope', scope];
    return new LoginRequiredError(this.url, commandLine(['switchboard', 'login', ...named, ...scoped, this.url.href]));
  }

  /**
   * Where the OAuthClient would send the user when the stored token cannot be refreshed, or a step-up
   * (403 `insufficient_scope`) needs more scopes: nowhere, it is a `login`'s job. The authorization URL
   * it would have opened names the scopes to ask for. (The redirect URI is never used: the grant stops
   * before the authorization request is sent.)
   */
  private noLogin(): AuthorizationInteraction {
    return {
      redirectUri: `http://127.0.0.1:${DEFAULT_CALLBACK_PORT}/callback`,
      authorize: (url) => Promise.reject(this.loginRequired(this.widerScope(url.searchParams.get('scope')))),
    };
  }

  /** `wanted` when it names a scope the stored token was not granted (offline_access aside: login adds it). */
  private widerScope(wanted: string | null): string | undefined {
    if (wanted === null) return undefined;
    const granted = new Set(splitScopes(this.oauth.currentTokens?.scope));
    const scopes = splitScopes(wanted).filter((scope) => scope !== OFFLINE_ACCESS);
    return scopes.some((scope) => !granted.has(scope)) ? scopes.join(' ') : undefined;
  }
}
