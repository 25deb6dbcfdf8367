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

  private loginRequired(): LoginRequiredError {
    const named = this.clientName === DEFAULT_CLIENT_NAME ? [] : ['--client-name', this.clientName];
    return new LoginRequiredError(this.url, commandLine(['switchboard', 'login', ...named, this.url.href]));
  }

  /**
   * Where the OAuthClient would send the user when the stored token cannot be refreshed: nowhere, it is a
   * `login`'s job. (The redirect URI is never used: the grant stops before the authorization request.)
   */
  private noLogin(): AuthorizationInteraction {
    return {
      redirectUri: `http://127.0.0.1:${DEFAULT_CALLBACK_PORT}/callback`,
      authorize: () => Promise.reject(this.loginRequired()),
    };
  }
}
