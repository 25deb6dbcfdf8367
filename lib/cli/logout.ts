/**
 * `switchboard logout <url>`: forgets what `switchboard login` stored for the server (the tokens and the
 * client registration), and says whether there was anything. Nothing is sent to the server or its
 * authorization server.
 */
import { access } from 'node:fs/promises';
import { canonicalServerUrl } from '../auth/client/oauth-client';
import { FileTokenStore } from '../auth/node/file-token-store';
import type { AuthKey } from '../auth/token-store';
import type { LogoutCommand } from './auth-args';
import { EXIT_OK } from './errors';
import type { CliIo } from './io';

export async function logout(command: LogoutCommand, io: CliIo, store = new FileTokenStore()): Promise<number> {
  const key: AuthKey = { server: canonicalServerUrl(command.url), client: command.clientName };
  // The file, not `load`: an unreadable record is a record too, and goes the same way.
  const existed = await access(store.pathFor(key)).then(
    () => true,
    () => false,
  );
  await store.delete(key);
  io.out(
    existed
      ? `Logged out of ${key.server}: the stored login was removed`
      : `There was no stored login for ${key.server}`,
  );
  return EXIT_OK;
}
