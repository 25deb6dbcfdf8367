/**
 * Reads the command line into a `Command`, or throws a `UsageError` that says what is wrong. Nothing here
 * touches the network or the file system: a well-formed command can still fail when it runs.
 */
import type { JsonObject } from '../jsonrpc/types';
import { ERA_CHOICES, eraChoiceOf, type EraChoice } from '../client/era-choice';
import { MODERN_PROTOCOL_VERSIONS, namesModernRevision, type ModernProtocolVersion } from '../protocol/modern';
import { isSupportedVersion, SUPPORTED_PROTOCOL_VERSIONS, type ProtocolVersion } from '../protocol/versions';
import type { HttpLimits } from '../../transports/http/limits';
import { parseLogin, parseLogout, type LoginCommand, type LogoutCommand } from './auth-args';
import { parseElicitReply, type ElicitReply } from './elicit-args';
import { UsageError } from './errors';
import {
  parseCorsOrigins,
  parseHealth,
  parseServePath,
  parseTlsFiles,
  type ServeCors,
  type TlsFiles,
} from './serve-http-args';
import {
  didYouMeanWord,
  HELP_OPTION,
  looksLikeUrl,
  parseHttpUrl,
  parseMilliseconds,
  parseOptions,
  type Options,
  type Parsed,
} from './parse-options';

export type HelpTopic = 'serve' | 'call' | 'login' | 'logout';
const HELP_TOPICS: readonly HelpTopic[] = ['serve', 'call', 'login', 'logout'];

export interface ServeCommand {
  readonly kind: 'serve';
  /** The module path as given (resolved against the working directory when loaded). */
  readonly module: string;
  /** Streamable HTTP instead of stdio. */
  readonly http?: ServeHttp;
  readonly trace: boolean;
  /** NDJSON trace to this file. */
  readonly traceFile?: string;
}

export interface ServeHttp {
  readonly port: number;
  readonly host: string;
  /** The limits given on the command line (the rest keep `DEFAULT_HTTP_LIMITS`). */
  readonly limits: Partial<HttpLimits>;
  /** `--allowed-host`: Host header values accepted besides localhost names and the bind address. */
  readonly allowedHosts: readonly string[];
  /** `--allowed-origin`: Origin header values accepted besides localhost ones and the bind address. */
  readonly allowedOrigins: readonly string[];
  /** `--path`: the Streamable HTTP endpoint's path (default `/mcp`). */
  readonly path: string;
  /** `--tls-cert` and `--tls-key`: serve HTTPS. */
  readonly tls?: TlsFiles;
  /** `--cors-origin`: the pages that may call the endpoint from a browser. */
  readonly cors?: ServeCors;
  /** `--health` (`/health`) or `--health-path`: where the health endpoint answers. */
  readonly health?: string;
}

/** The `serve` options that set an HTTP limit, with the limit each sets and its unit. */
export const HTTP_LIMIT_FLAGS: Readonly<Record<string, readonly [keyof HttpLimits, 'ms' | 'bytes' | 'count']>> = {
  'max-sessions': ['maxSessions', 'count'],
  'max-sessions-per-client': ['maxSessionsPerClient', 'count'],
  'max-listen-streams-per-client': ['maxListenStreamsPerClient', 'count'],
  'session-idle-timeout': ['sessionIdleTimeoutMs', 'ms'],
  'max-body-bytes': ['maxBodyBytes', 'bytes'],
  'max-depth': ['maxDepth', 'count'],
  'body-timeout': ['bodyTimeoutMs', 'ms'],
  'standalone-stream-wait': ['standaloneStreamWaitMs', 'ms'],
  'max-standalone-backlog': ['maxStandaloneBacklog', 'count'],
  'max-connections': ['maxConnections', 'count'],
  'max-connections-per-client': ['maxConnectionsPerClient', 'count'],
  'headers-timeout': ['headersTimeoutMs', 'ms'],
  'keep-alive-timeout': ['keepAliveTimeoutMs', 'ms'],
};

export type CallTarget =
  | { readonly kind: 'http'; readonly url: URL }
  | { readonly kind: 'stdio'; readonly command: string; readonly args: readonly string[] };

export interface CallCommand {
  readonly kind: 'call';
  readonly target: CallTarget;
  readonly method: string;
  readonly params?: JsonObject;
  readonly headers: Readonly<Record<string, string>>;
  /** Budget for the handshake and for the request, each; 0 waits forever. */
  readonly timeoutMs: number;
  /** The one revision to speak: a handshake one forces the handshake era, a stateless one the modern era. */
  readonly protocolVersion?: ProtocolVersion | ModernProtocolVersion;
  /** `--era`: which era to speak (absent: probe, or what `protocolVersion` implies). */
  readonly era?: EraChoice;
  /** Keep era verdicts between runs, in the config directory (off with `--no-era-cache`). */
  readonly eraCache: boolean;
  /** Say on stderr which era and revision the connection speaks, and whether the era came from the cache. */
  readonly verbose: boolean;
  readonly trace: boolean;
  /** NDJSON trace to this file. */
  readonly traceFile?: string;
  /** Follow `nextCursor` through every page of a list method. */
  readonly all: boolean;
  /** `--client-name`: whose stored login to use (with the URL, the key of `switchboard login`'s record). */
  readonly clientName?: string;
  /** How to answer the server's questions (form elicitation): `--answer`, `--decline`, `--cancel` (absent: a prompt). */
  readonly elicit?: ElicitReply;
}

export type Command =
  | { readonly kind: 'help'; readonly topic?: HelpTopic }
  | { readonly kind: 'version' }
  | ServeCommand
  | CallCommand
  | LoginCommand
  | LogoutCommand;

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_CALL_TIMEOUT_MS = 60_000;

const SERVE_OPTIONS: Options = {
  ...HELP_OPTION,
  http: { type: 'string' },
  host: { type: 'string' },
  trace: { type: 'boolean' },
  'trace-file': { type: 'string' },
  'allowed-host': { type: 'string', multiple: true },
  'allowed-origin': { type: 'string', multiple: true },
  path: { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'cors-origin': { type: 'string', multiple: true },
  health: { type: 'boolean' },
  'health-path': { type: 'string' },
  ...Object.fromEntries(Object.keys(HTTP_LIMIT_FLAGS).map((flag) => [flag, { type: 'string' }])),
};

const CALL_OPTIONS: Options = {
  ...HELP_OPTION,
  header: { type: 'string', short: 'H', multiple: true },
  timeout: { type: 'string' },
  'protocol-version': { type: 'string' },
  era: { type: 'string' },
  'no-era-cache': { type: 'boolean' },
  verbose: { type: 'boolean' },
  trace: { type: 'boolean' },
  'trace-file': { type: 'string' },
  all: { type: 'boolean' },
  'client-name': { type: 'string' },
  answer: { type: 'string', multiple: true },
  decline: { type: 'boolean' },
  cancel: { type: 'boolean' },
};

export function parseCommandLine(argv: readonly string[]): Command {
  const [first, ...rest] = argv;
  switch (first) {
    case undefined:
      throw new UsageError(`Missing a command: ${COMMANDS}`);
    case '-h':
    case '--help':
      return { kind: 'help' };
    case 'help':
      return { kind: 'help', ...(rest[0] !== undefined && { topic: helpTopic(rest[0]) }) };
    case '-v':
    case '--version':
      return { kind: 'version' };
    case 'serve':
      return parseServe(rest);
    case 'call':
      return parseCall(rest);
    case 'login':
      return parseLogin(rest);
    case 'logout':
      return parseLogout(rest);
    default:
      throw new UsageError(
        first.startsWith('--')
          ? `Unknown option "${first}"${didYouMeanWord(first, ['--help', '--version'])}`
          : first.startsWith('-')
            ? `Unknown option "${first}"`
            : `Unknown command "${first}"${didYouMeanWord(first, HELP_TOPICS) || `: use ${COMMANDS}`}`,
      );
  }
}

const COMMANDS = 'serve, call, login or logout';

function helpTopic(word: string): HelpTopic {
  if ((HELP_TOPICS as readonly string[]).includes(word)) return word as HelpTopic;
  throw new UsageError(`No help for "${word}"${didYouMeanWord(word, HELP_TOPICS) || `: use ${COMMANDS}`}`);
}

function parseServe(args: readonly string[]): Command {
  const { values, positionals } = parseOptions('serve', args, SERVE_OPTIONS);
  if (values.help) return { kind: 'help', topic: 'serve' };
  const [module, ...extra] = positionals;
  if (module === undefined) throw new UsageError('Missing the module to serve: switchboard serve <module>');
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}" after the module`);
  const host = values.host as string | undefined;
  const httpOnly = [
    'host',
    'allowed-host',
    'allowed-origin',
    'path',
    'tls-cert',
    'tls-key',
    'cors-origin',
    'health',
    'health-path',
    ...Object.keys(HTTP_LIMIT_FLAGS),
  ];
  const misplaced = values.http === undefined && httpOnly.find((name) => values[name] !== undefined);
  if (misplaced) throw new UsageError(`--${misplaced} only applies with --http <port>`);
  const path = values.http === undefined ? undefined : parseServePath(values.path as string | undefined);
  const http: ServeHttp | undefined =
    path === undefined
      ? undefined
      : {
          port: parsePort(values.http as string),
          host: host ?? DEFAULT_HOST,
          limits: parseHttpLimits(values),
          allowedHosts: (values['allowed-host'] as string[] | undefined) ?? [],
          allowedOrigins: parseOrigins((values['allowed-origin'] as string[] | undefined) ?? []),
          path,
          ...tlsOption(values),
          ...browserOptions(values, path),
        };
  const traceFile = parseTraceFile(values['trace-file'] as string | undefined);
  return {
    kind: 'serve',
    module,
    ...(http && { http }),
    trace: values.trace === true,
    ...(traceFile !== undefined && { traceFile }),
  };
}

function tlsOption(values: Parsed['values']): { tls?: TlsFiles } {
  const tls = parseTlsFiles(values['tls-cert'] as string | undefined, values['tls-key'] as string | undefined);
  return tls ? { tls } : {};
}

function browserOptions(values: Parsed['values'], path: string): Pick<ServeHttp, 'cors' | 'health'> {
  const cors = parseCorsOrigins(values['cors-origin'] as string[] | undefined);
  const health = parseHealth(values.health === true, values['health-path'] as string | undefined, path);
  return { ...(cors && { cors }), ...(health !== undefined && { health }) };
}

function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65_535) {
    throw new UsageError(`--http needs a port number from 0 to 65535 (0 picks a free one), got "${text}"`);
  }
  return port;
}

function parseHttpLimits(values: Parsed['values']): Partial<HttpLimits> {
  const limits: Partial<Record<keyof HttpLimits, number>> = {};
  for (const [flag, [key, unit]] of Object.entries(HTTP_LIMIT_FLAGS)) {
    const text = values[flag] as string | undefined;
    if (text === undefined) continue;
    if (!/^\d+$/.test(text) || Number(text) === 0) {
      const what = unit === 'ms' ? 'milliseconds' : unit === 'bytes' ? 'a number of bytes' : 'a number';
      throw new UsageError(`--${flag} needs ${what} greater than 0, got "${text}"`);
    }
    limits[key] = Number(text);
  }
  return limits;
}

function parseOrigins(origins: readonly string[]): readonly string[] {
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || parsed.origin !== origin) {
      throw new UsageError(`--allowed-origin needs an origin such as https://app.example.com:8443, got "${origin}"`);
    }
  }
  return origins;
}

function parseCall(args: readonly string[]): Command {
  const separator = args.indexOf('--');
  const ownArgs = separator === -1 ? args : args.slice(0, separator);
  const commandLine = separator === -1 ? undefined : args.slice(separator + 1);
  const { values, positionals } = parseOptions('call', ownArgs, CALL_OPTIONS);
  if (values.help) return { kind: 'help', topic: 'call' };

  let target: CallTarget;
  let rest: string[];
  if (commandLine) {
    const [command, ...commandArgs] = commandLine;
    if (command === undefined) throw new UsageError('Missing the command to run after "--"');
    target = { kind: 'stdio', command, args: commandArgs };
    rest = positionals;
    if (rest[0] !== undefined && looksLikeUrl(rest[0])) {
      throw new UsageError('Give either a URL or a command after "--", not both');
    }
  } else {
    const [url, ...others] = positionals;
    if (url === undefined) {
      throw new UsageError('Missing the target: an http(s):// URL, or a command after "--"');
    }
    target = { kind: 'http', url: parseHttpUrl(url) };
    rest = others;
  }

  const [method, paramsText, ...extra] = rest;
  if (method === undefined) throw new UsageError('Missing the method to call (tools/list, tools/call, ping, ...)');
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}" after the params`);
  const headers = parseHeaders((values.header as string[] | undefined) ?? []);
  if (target.kind === 'stdio' && Object.keys(headers).length > 0) {
    throw new UsageError('--header applies to HTTP targets only');
  }
  const clientName = values['client-name'] as string | undefined;
  if (clientName !== undefined && target.kind === 'stdio') {
    throw new UsageError('--client-name applies to HTTP targets only (it names a stored login)');
  }
  if (clientName === '') throw new UsageError('--client-name needs a name');
  const all = values.all === true;
  if (all && !(method in LIST_KEYS)) {
    throw new UsageError(`--all follows the pages of a list method (${Object.keys(LIST_KEYS).join(', ')})`);
  }
  const params = paramsText === undefined ? undefined : parseParams(paramsText);
  const protocolVersion = parseProtocolVersion(values['protocol-version'] as string | undefined);
  const era = parseEra(values.era as string | undefined, protocolVersion);
  const traceFile = parseTraceFile(values['trace-file'] as string | undefined);
  return {
    kind: 'call',
    target,
    method,
    ...(params && { params }),
    headers,
    timeoutMs: parseTimeout(values.timeout as string | undefined),
    ...(protocolVersion && { protocolVersion }),
    ...(era && { era }),
    eraCache: values['no-era-cache'] !== true,
    verbose: values.verbose === true,
    trace: values.trace === true,
    ...(traceFile !== undefined && { traceFile }),
    all,
    ...(clientName !== undefined && { clientName }),
    elicit: parseElicitReply(values.answer as string[] | undefined, values.decline === true, values.cancel === true),
  };
}

/** The list methods `--all` can follow, with the key of their items. */
export const LIST_KEYS: Readonly<Record<string, string>> = {
  'tools/list': 'tools',
  'resources/list': 'resources',
  'resources/templates/list': 'resourceTemplates',
  'prompts/list': 'prompts',
};

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

function parseHeaders(lines: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = colon === -1 ? '' : line.slice(0, colon).trim();
    if (!HEADER_NAME.test(name)) throw new UsageError(`--header needs "Name: value", got "${line}"`);
    headers[name] = line.slice(colon + 1).trim();
  }
  return headers;
}

function parseParams(text: string): JsonObject {
  let params: unknown;
  try {
    params = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`The params are not valid JSON (${(error as Error).message}): ${text}`);
  }
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw new UsageError(`The params must be a JSON object, for example '{"name":"add","arguments":{"a":1}}'`);
  }
  return params as JsonObject;
}

function parseTimeout(text: string | undefined): number {
  return text === undefined ? DEFAULT_CALL_TIMEOUT_MS : parseMilliseconds('timeout', text, 'waits forever');
}

function parseTraceFile(text: string | undefined): string | undefined {
  if (text === '') throw new UsageError('--trace-file needs the path of the file to write');
  return text;
}

const KNOWN_VERSIONS: readonly string[] = [...MODERN_PROTOCOL_VERSIONS, ...SUPPORTED_PROTOCOL_VERSIONS];

function parseProtocolVersion(text: string | undefined): ProtocolVersion | ModernProtocolVersion | undefined {
  if (text === undefined || isSupportedVersion(text)) return text;
  if ((MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(text)) return text as ModernProtocolVersion;
  throw new UsageError(`Unsupported protocol version "${text}": use one of ${KNOWN_VERSIONS.join(', ')}`);
}

/** `--era` (`legacy`, deprecated, reads as `handshake`), not contradicting the era `--protocol-version` names. */
function parseEra(text: string | undefined, version: string | undefined): EraChoice | undefined {
  if (text === undefined) return undefined;
  const era = eraChoiceOf(text);
  if (era === undefined) throw new UsageError(`--era needs one of ${ERA_CHOICES.join(', ')}, got "${text}"`);
  const implied = version === undefined ? undefined : namesModernRevision(version) ? 'modern' : 'handshake';
  if (implied !== undefined && era !== 'auto' && era !== implied) {
    throw new UsageError(
      `--protocol-version ${version} is a ${implied}-era revision: it cannot be spoken with --era ${era}`,
    );
  }
  return era;
}
