/**
 * The command lines of `switchboard login <url>` and `switchboard logout <url>` (see help.ts). Like args.ts,
 * nothing here touches the network, the file system or the environment.
 */
import { UsageError } from './errors';
import { HELP_OPTION, parseHttpUrl, parseMilliseconds, parseOptions, type Options, type Parsed } from './parse-options';

/** The name logins are stored under unless `--client-name` says otherwise (the OAuthClient's default too). */
export { DEFAULT_CLIENT_NAME } from '../auth/client/oauth-client';
import { DEFAULT_CLIENT_NAME } from '../auth/client/oauth-client';

/**
 * The loopback port the browser is sent back to. Fixed, so that the redirect URI a client registered (by
 * dynamic registration, or by hand for `--client-id`) is the same at every login: authorization servers
 * that compare redirect URIs exactly (RFC 8252 asks them not to, many do) keep accepting it. Below 32768,
 * outside the ranges systems hand out as ephemeral ports (Linux 32768-60999, Windows and macOS 49152-65535),
 * and away from the usual development servers' ports (3000, 5173, 8000, 8080, ...).
 */
export const DEFAULT_CALLBACK_PORT = 19876;
/** Where a pre-registered client's secret may come from instead of the command line (and shell history). */
export const CLIENT_SECRET_ENV = 'SWITCHBOARD_CLIENT_SECRET';
/** How long `login` waits for the browser to come back. */
export const DEFAULT_LOGIN_TIMEOUT_MS = 5 * 60_000;

export interface LoginCommand {
  readonly kind: 'login';
  readonly url: URL;
  /** The store key with the server's URL. */
  readonly clientName: string;
  /** Scopes to ask for, space separated (default: what the server names). */
  readonly scope?: string;
  /** A client registered beforehand; without it the client registers itself (dynamic registration). */
  readonly clientId?: string;
  /** Its secret, when given on the command line (else the login reads `CLIENT_SECRET_ENV`). */
  readonly clientSecret?: string;
  /** The loopback port of the redirect URI (0 picks a free one, which changes the redirect URI every time). */
  readonly callbackPort: number;
  /** How long to wait for the browser to come back. */
  readonly timeoutMs: number;
  /** Only print the URL (`--no-browser`). */
  readonly openBrowser: boolean;
}

export interface LogoutCommand {
  readonly kind: 'logout';
  readonly url: URL;
  readonly clientName: string;
}

const CLIENT_NAME_OPTION: Options = { 'client-name': { type: 'string' } };

const LOGIN_OPTIONS: Options = {
  ...HELP_OPTION,
  ...CLIENT_NAME_OPTION,
  scope: { type: 'string' },
  'client-id': { type: 'string' },
  'client-secret': { type: 'string' },
  'callback-port': { type: 'string' },
  timeout: { type: 'string' },
  'no-browser': { type: 'boolean' },
};

const LOGOUT_OPTIONS: Options = { ...HELP_OPTION, ...CLIENT_NAME_OPTION };

export function parseLogin(args: readonly string[]): LoginCommand | { kind: 'help'; topic: 'login' } {
  const { values, positionals } = parseOptions('login', args, LOGIN_OPTIONS);
  if (values.help) return { kind: 'help', topic: 'login' };
  const url = serverUrl('login', positionals);
  const clientId = nonEmpty(values, 'client-id');
  const clientSecret = nonEmpty(values, 'client-secret');
  if (clientSecret !== undefined && clientId === undefined) {
    throw new UsageError('--client-secret goes with --client-id (the client it is the secret of)');
  }
  const scope = values.scope as string | undefined;
  const timeout = values.timeout as string | undefined;
  return {
    kind: 'login',
    url,
    clientName: clientName(values),
    ...(scope !== undefined && scope.trim() !== '' && { scope: scope.trim() }),
    ...(clientId !== undefined && { clientId }),
    ...(clientSecret !== undefined && { clientSecret }),
    callbackPort: callbackPort(values['callback-port'] as string | undefined),
    timeoutMs: timeout === undefined ? DEFAULT_LOGIN_TIMEOUT_MS : parseMilliseconds('timeout', timeout),
    openBrowser: values['no-browser'] !== true,
  };
}

export function parseLogout(args: readonly string[]): LogoutCommand | { kind: 'help'; topic: 'logout' } {
  const { values, positionals } = parseOptions('logout', args, LOGOUT_OPTIONS);
  if (values.help) return { kind: 'help', topic: 'logout' };
  return { kind: 'logout', url: serverUrl('logout', positionals), clientName: clientName(values) };
}

function serverUrl(command: string, positionals: readonly string[]): URL {
  const [url, ...extra] = positionals;
  if (url === undefined) throw new UsageError(`Missing the server's URL: switchboard ${command} <url>`);
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}" after the URL`);
  return parseHttpUrl(url, `switchboard ${command} takes the http(s):// URL of an MCP server`);
}

function clientName(values: Parsed['values']): string {
  return nonEmpty(values, 'client-name') ?? DEFAULT_CLIENT_NAME;
}

/** A string option's value; given empty, a usage error. */
function nonEmpty(values: Parsed['values'], flag: string): string | undefined {
  const value = values[flag] as string | undefined;
  if (value === '') throw new UsageError(`--${flag} needs a value`);
  return value;
}

function callbackPort(text: string | undefined): number {
  if (text === undefined) return DEFAULT_CALLBACK_PORT;
  if (!/^\d+$/.test(text) || Number(text) > 65_535) {
    throw new UsageError(`--callback-port needs a port number from 0 to 65535 (0 picks a free one), got "${text}"`);
  }
  return Number(text);
}
