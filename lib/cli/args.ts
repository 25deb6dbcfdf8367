/**
 * Reads the command line into a `Command`, or throws a `UsageError` that says what is wrong. Nothing here
 * touches the network or the file system: a well-formed command can still fail when it runs.
 */
import type { JsonObject } from '../jsonrpc/types';
import type { HttpLimits } from '../../transports/http/limits';
import { parseLogin, parseLogout, type LoginCommand, type LogoutCommand } from './auth-args';
import { CONNECTION_OPTIONS, parseConnectionArgs, type ConnectionSettings } from './connection-args';
import { UsageError } from './errors';
import {
  parseCorsOrigins,
  parseHealth,
  parseServePath,
  parseTlsFiles,
  type ServeCors,
  type TlsFiles,
} from './serve-http-args';
import { didYouMeanWord, HELP_OPTION, parseOptions, parseTraceFile, type Options, type Parsed } from './parse-options';
import { parseTask, parseTaskCall, type TaskCallSettings, type TaskCommand } from './task-args';
import { parseTrace, parseTraceUi, TRACE_UI_OPTIONS, type TraceCommand, type TraceUiSettings } from './trace-args';

export { DEFAULT_CALL_TIMEOUT_MS, type CallTarget } from './connection-args';

export type HelpTopic = 'serve' | 'call' | 'task' | 'trace' | 'login' | 'logout';
const HELP_TOPICS: readonly HelpTopic[] = ['serve', 'call', 'task', 'trace', 'login', 'logout'];

export interface ServeCommand {
  readonly kind: 'serve';
  /** The module path as given (resolved against the working directory when loaded). */
  readonly module: string;
  /** Streamable HTTP instead of stdio. */
  readonly http?: ServeHttp;
  readonly trace: boolean;
  /** NDJSON trace to this file. */
  readonly traceFile?: string;
  /** `--trace-ui <port>`: the live trace viewer. */
  readonly traceUi?: TraceUiSettings;
  /** `--task-store`: the folder the served server keeps its tasks in (LMDB); absent, in memory. */
  readonly taskStore?: string;
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

export interface CallCommand extends ConnectionSettings {
  readonly kind: 'call';
  readonly method: string;
  readonly params?: JsonObject;
  /** Follow `nextCursor` through every page of a list method. */
  readonly all: boolean;
  /** `--task`: call the tool as a task and follow it to its end. */
  readonly task?: TaskCallSettings;
}

export type Command =
  | { readonly kind: 'help'; readonly topic?: HelpTopic }
  | { readonly kind: 'version' }
  | ServeCommand
  | CallCommand
  | TaskCommand
  | TraceCommand
  | LoginCommand
  | LogoutCommand;

export const DEFAULT_HOST = '127.0.0.1';

const SERVE_OPTIONS: Options = {
  ...HELP_OPTION,
  http: { type: 'string' },
  host: { type: 'string' },
  trace: { type: 'boolean' },
  'trace-file': { type: 'string' },
  ...TRACE_UI_OPTIONS,
  'allowed-host': { type: 'string', multiple: true },
  'allowed-origin': { type: 'string', multiple: true },
  path: { type: 'string' },
  'tls-cert': { type: 'string' },
  'tls-key': { type: 'string' },
  'cors-origin': { type: 'string', multiple: true },
  health: { type: 'boolean' },
  'health-path': { type: 'string' },
  'task-store': { type: 'string' },
  ...Object.fromEntries(Object.keys(HTTP_LIMIT_FLAGS).map((flag) => [flag, { type: 'string' }])),
};

const CALL_OPTIONS: Options = {
  ...CONNECTION_OPTIONS,
  all: { type: 'boolean' },
  task: { type: 'boolean' },
  ttl: { type: 'string' },
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
    case 'task':
      return parseTask(rest);
    case 'trace':
      return parseTrace(rest);
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

const COMMANDS = 'serve, call, task, trace, login or logout';

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
  const taskStore = parseTaskStore(values['task-store'] as string | undefined, module);
  const traceUi = parseTraceUi(values);
  return {
    kind: 'serve',
    module,
    ...(http && { http }),
    trace: values.trace === true,
    ...(traceFile !== undefined && { traceFile }),
    ...(traceUi && { traceUi }),
    ...(taskStore !== undefined && { taskStore }),
  };
}

/** `--task-store <dir>`: for a server module only. */
function parseTaskStore(text: string | undefined, module: string): string | undefined {
  if (text === undefined) return undefined;
  if (text === '') throw new UsageError('--task-store needs the folder to keep the tasks in');
  if (module.endsWith('.json')) {
    throw new UsageError('--task-store applies to a server module, not to a hub config');
  }
  return text;
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
  const parsed = parseConnectionArgs('call', args, CALL_OPTIONS);
  if (parsed === 'help') return { kind: 'help', topic: 'call' };
  const { values, rest, settings } = parsed;
  const [method, paramsText, ...extra] = rest;
  if (method === undefined) throw new UsageError('Missing the method to call (tools/list, tools/call, ping, ...)');
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}" after the params`);
  const all = values.all === true;
  if (all && !(method in LIST_KEYS)) {
    throw new UsageError(`--all follows the pages of a list method (${Object.keys(LIST_KEYS).join(', ')})`);
  }
  const params = paramsText === undefined ? undefined : parseParams(paramsText);
  const task = parseTaskCall(method, params, values.task === true, values.ttl as string | undefined);
  return { kind: 'call', ...settings, method, ...(params && { params }), all, ...(task && { task }) };
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

/** The list methods `--all` can follow, with the key of their items. */
export const LIST_KEYS: Readonly<Record<string, string>> = {
  'tools/list': 'tools',
  'resources/list': 'resources',
  'resources/templates/list': 'resourceTemplates',
  'prompts/list': 'prompts',
};
