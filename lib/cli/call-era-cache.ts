/**
 * The era verdicts of `switchboard call` and `switchboard task`, kept between runs (each call is a new
 * process): an `EraCache` over the file store in the config directory, whose principal is the authorization
 * context of the call, so that two credentials for one server never share a verdict:
 * - a stdio server: `none` (the command line is the whole key);
 * - an HTTP server without --header: `login:<client name>`, the login `switchboard login` stored (or not)
 *   under that name for the URL;
 * - with --header: a digest of every header given (name and value; an `Authorization` among them replaces
 *   the stored login), `headers:<16 hex digits of SHA-256>`, so a changed token or API key is a new entry.
 *   The digest cannot be turned back into the header, and the file is readable only by the user, like the
 *   stored logins next to it.
 * A verdict that may no longer hold is forgotten and settled by one more probe (see `mayMeanAnotherEra`).
 */
import { createHash } from 'node:crypto';
import { DEFAULT_CLIENT_NAME } from '../auth/client/oauth-client';
import { EraCache } from '../client/era-cache';
import { isHandshakeEraFailure } from '../client/modern-request-stamp';
import { FileEraStore } from '../client/node/file-era-store';
import { McpError, TransportError, UnsupportedProtocolVersionError } from '../jsonrpc/errors';
import type { CallTarget, ConnectionSettings } from './connection-args';
import { cliFailureIn } from './errors';
import type { CliIo } from './io';

/** A call's era cache, and the file it keeps its verdicts in. */
export interface CallEraCache {
  readonly cache: EraCache;
  readonly path: string;
}

/** The cache for one call; store failures are said on stderr with --verbose, and otherwise cost a probe. */
export function callEraCache(command: ConnectionSettings, io: CliIo): CallEraCache {
  const store = new FileEraStore();
  const cache = new EraCache({
    store,
    principal: principalOf(command),
    onStoreError: (error) => {
      if (command.verbose) io.err(`era cache: ${store.path}: ${error.message}`);
    },
  });
  return { cache, path: store.path };
}

/** Whose verdicts these are: see the module comment. */
export function principalOf({ target, headers, clientName }: ConnectionSettings): string {
  if (target.kind === 'stdio') return 'none';
  const names = Object.keys(headers);
  if (names.length === 0) return `login:${clientName ?? DEFAULT_CLIENT_NAME}`;
  const digest = createHash('sha256')
    .update(JSON.stringify(names.map((name) => [name.toLowerCase(), headers[name]]).sort()))
    .digest('hex')
    .slice(0, 16);
  const authorized = names.some((name) => name.toLowerCase() === 'authorization');
  return authorized ? `headers:${digest}` : `login:${clientName ?? DEFAULT_CLIENT_NAME} headers:${digest}`;
}

/**
 * Whether `error`, failing a call whose era came from the cache, may mean the server speaks another era
 * now: any JSON-RPC error answer (handshake-era servers refuse a request before `initialize` with -32600,
 * or as the TypeScript SDK v1 does with an id-less -32000 on HTTP 400; a 2026-07-28-only server refuses
 * `initialize`), a version we do not speak, or an HTTP 400, 404 or 405 without one. Over HTTP, any other
 * transport failure too: a refused `initialize` reaches us as the failure of the HTTP+SSE fallback that
 * followed it, which names no status (a server that is down then fails the probe the same way). A probe
 * settles it (call.ts). Timeouts, authorization failures and Ctrl-C say nothing about the era.
 */
export function mayMeanAnotherEra(error: unknown, target: CallTarget['kind']): boolean {
  if (error instanceof McpError || error instanceof UnsupportedProtocolVersionError || isHandshakeEraFailure(error))
    return true;
  if (target !== 'http' || !(error instanceof TransportError) || cliFailureIn(error)) return false;
  const status = (error as { httpStatus?: unknown }).httpStatus;
  return status !== 401 && status !== 403;
}
