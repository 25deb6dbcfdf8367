/**
 * `switchboard login <url>`: the OAuth authorization code flow for one MCP server, run the way the client
 * runs it anywhere: connecting with an `OAuthClient`, whose 401 starts the flow (discovery, registration,
 * PKCE, the browser, the token). The user's trip goes through a loopback redirect on 127.0.0.1; the token
 * lands in the `FileTokenStore`, where `switchboard call` (and a hub) find it. The connection that carried
 * the flow confirms it: the server's name and the scopes granted are printed, never a token.
 */
import type { AuthorizationInteraction } from '../auth/client/authorization-code';
import { AuthorizationError } from '../auth/client/http';
import { OAuthClient } from '../auth/client/oauth-client';
import type { PreRegisteredClient } from '../auth/client/registration';
import { FileTokenStore } from '../auth/node/file-token-store';
import { loopbackInteraction } from '../auth/node/loopback-interaction';
import { startLoopbackRedirect, type LoopbackRedirect } from '../auth/node/loopback-redirect';
import type { AuthKey, AuthRecord, TokenStore } from '../auth/token-store';
import { Client } from '../client/client';
import { RequestCancelledError } from '../jsonrpc/errors';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { DEFAULT_CALL_TIMEOUT_MS } from './args';
import { CLIENT_SECRET_ENV, type LoginCommand } from './auth-args';
import { openBrowser } from './browser';
import { CliFailure, EXIT_INTERRUPTED, EXIT_OK } from './errors';
import type { CliIo } from './io';
import { onStopSignal } from './signals';
import { STORED_LOGIN_OAUTH_OPTIONS } from '../auth/client/stored-login';
import { VERSION } from './version';

export async function login(
  command: LoginCommand,
  io: CliIo,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<number> {
  const interrupt = new AbortController();
  const undoSignals = onStopSignal((signal) => interrupt.abort(signal));
  try {
    const redirect = await listenForRedirect(command, interrupt.signal);
    try {
      return await loginThrough(redirect, command, io, env, interrupt.signal);
    } finally {
      await redirect.close();
    }
  } finally {
    undoSignals();
  }
}

async function loginThrough(
  redirect: LoopbackRedirect,
  command: LoginCommand,
  io: CliIo,
  env: Readonly<Record<string, string | undefined>>,
  signal: AbortSignal,
): Promise<number> {
  const { url } = command;
  const preRegistered = preRegisteredClient(command, env);
  const oauth = new OAuthClient(url, {
    ...STORED_LOGIN_OAUTH_OPTIONS,
    store: new FreshLoginView(new FileTokenStore(), redirect.redirectUri),
    clientName: command.clientName,
    interaction: browserInteraction(redirect, command.openBrowser, io),
    ...(command.scope !== undefined && { scope: command.scope }),
    ...(preRegistered && { client: preRegistered }),
  });
  const client = new Client({ name: 'switchboard', version: VERSION }, { listChanges: 'off' });
  try {
    // The flow runs inside the first request: its budget is the browser's plus a request's.
    await client.connect(new StreamableHttpClientTransport(url, { authorization: oauth }), {
      timeout: command.timeoutMs + DEFAULT_CALL_TIMEOUT_MS,
      signal,
    });
  } catch (error) {
    await client.close();
    throw loginFailure(url, error, signal);
  }
  const tokens = oauth.currentTokens;
  const server = client.serverInfo;
  await client.close();
  const name = server === undefined ? '' : ` (${server.name}${server.version ? ` ${server.version}` : ''})`;
  if (tokens === undefined) {
    io.out(`${url.href}${name} did not ask for authorization: there was nothing to log in to, nothing was stored`);
    return EXIT_OK;
  }
  io.out(`Logged in to ${url.href}${name}`);
  io.out(`Scopes granted: ${tokens.scope ?? '(none named)'}`);
  return EXIT_OK;
}

/** The loopback listener, or a failure that says how to get past a port in use. */
async function listenForRedirect(command: LoginCommand, signal: AbortSignal): Promise<LoopbackRedirect> {
  try {
    return await startLoopbackRedirect({ port: command.callbackPort, timeoutMs: command.timeoutMs, signal });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const where = `127.0.0.1:${command.callbackPort}`;
    if (code === 'EADDRINUSE') {
      throw new CliFailure(
        `Cannot wait for the OAuth redirect on ${where}: the port is in use. Stop what holds it, or choose another port with --callback-port <n> (the redirect URI changes with it)`,
        [],
        { cause: error },
      );
    }
    throw new CliFailure(`Cannot wait for the OAuth redirect on ${where}: ${messageOf(error)}`, [], { cause: error });
  }
}

function preRegisteredClient(
  command: LoginCommand,
  env: Readonly<Record<string, string | undefined>>,
): PreRegisteredClient | undefined {
  if (command.clientId === undefined) return undefined;
  const secret = command.clientSecret ?? (env[CLIENT_SECRET_ENV] || undefined);
  return { clientId: command.clientId, ...(secret !== undefined && { clientSecret: secret }) };
}

/** The user's trip: the authorization URL on stderr (and in the browser, when one opens), then the redirect. */
function browserInteraction(redirect: LoopbackRedirect, openInBrowser: boolean, io: CliIo): AuthorizationInteraction {
  return loopbackInteraction(redirect, (url) => {
    io.err('Open this URL in a browser to authorize switchboard:');
    io.err(`  ${url.href}`);
    if (openInBrowser) openBrowser(url.href);
    io.err(`Waiting for the browser to come back to ${redirect.redirectUri} ...`);
  });
}

/**
 * The token store as a new login sees it: without the tokens of an earlier login (they would be sent, and a
 * server that still accepts them would never ask for a new authorization), and without a registration made
 * for another redirect URI (a different --callback-port: the client registers again). Writes go through, so
 * the earlier record stays until the new login replaces it.
 */
export class FreshLoginView implements TokenStore {
  constructor(
    private readonly store: TokenStore,
    private readonly redirectUri: string,
  ) {}

  async load(key: AuthKey): Promise<AuthRecord | undefined> {
    const client = (await this.store.load(key))?.client;
    const registeredElsewhere = client?.redirectUris !== undefined && !client.redirectUris.includes(this.redirectUri);
    return client === undefined || registeredElsewhere ? undefined : { client };
  }

  update(...args: Parameters<TokenStore['update']>): ReturnType<TokenStore['update']> {
    return this.store.update(...args);
  }

  delete(key: AuthKey): Promise<void> {
    return this.store.delete(key);
  }
}

function loginFailure(url: URL, error: unknown, signal: AbortSignal): CliFailure {
  // Ctrl-C stops the wait for the browser and the connection at once: whichever fails first, it was the user.
  if (signal.aborted || error instanceof RequestCancelledError) {
    return new CliFailure('Interrupted: the login was cancelled', [], { cause: error, exitCode: EXIT_INTERRUPTED });
  }
  const chain = causesOf(error);
  // The step of the flow that failed says it best; else the innermost error (a timeout, a refused connection).
  const reason = chain.find((cause) => cause instanceof AuthorizationError) ?? chain[chain.length - 1];
  const answered = chain.map(oauthErrorOf).find((text) => text !== undefined);
  return new CliFailure(
    `Login to ${url.href} failed: ${reason ? reason.message : String(error)}`,
    answered === undefined || reason?.message.includes(answered)
      ? []
      : [`the authorization server answered ${answered}`],
    { cause: error },
  );
}

/** `error` and its causes, outermost first. */
function causesOf(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let current = error; current instanceof Error && !chain.includes(current); current = current.cause) {
    chain.push(current);
  }
  return chain;
}

/** The OAuth error an error carries (oauth4webapi's errors have `error` and `error_description`), as text. */
function oauthErrorOf(error: Error): string | undefined {
  const { error: code, error_description: description } = error as { error?: unknown; error_description?: unknown };
  if (typeof code !== 'string') return undefined;
  return typeof description === 'string' ? `${code}: ${description}` : code;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
