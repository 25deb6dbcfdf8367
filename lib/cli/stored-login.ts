/**
 * The OAuth side of `switchboard call` to an HTTP server: the login `switchboard login` stored for the URL
 * (in the `FileTokenStore` under the config directory), sent and refreshed by a `StoredLogin`. `call` never
 * starts a login itself (it may run where no one can open a browser): when the server needs one, it fails
 * with `LoginRequiredError`, naming the `login` to run.
 */
import { DEFAULT_CLIENT_NAME } from '../auth/client/oauth-client';
import { StoredLogin } from '../auth/client/stored-login';
import { FileTokenStore } from '../auth/node/file-token-store';
import { LoginRequiredError } from './errors';
import { commandLine } from './hints';

/** The stored login for `url`, failing with the `login` command to run (with `--scope` when more is wanted). */
export function storedLoginFor(
  url: URL,
  clientName: string = DEFAULT_CLIENT_NAME,
  store = new FileTokenStore(),
): StoredLogin {
  return new StoredLogin(url, {
    store,
    clientName,
    loginRequired: ({ scope }) => {
      const named = clientName === DEFAULT_CLIENT_NAME ? [] : ['--client-name', clientName];
      const scoped = scope === undefined ? [] : ['--scope', scope];
      return new LoginRequiredError(url, commandLine(['switchboard', 'login', ...named, ...scoped, url.href]));
    },
  });
}
