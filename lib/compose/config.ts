/**
 * A hub from a config file in the `mcpServers` shape that Claude Desktop, Claude Code, Cursor and VS Code
 * (`servers`) use, plus our options:
 *
 * ```json
 * {
 *   "mcpServers": {
 *     "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."], "prefix": "fs" },
 *     "search": { "url": "https://example.com/mcp", "headers": { "Authorization": "Bearer ${SEARCH_TOKEN}" } },
 *     "legacy": { "type": "sse", "url": "http://127.0.0.1:8080/sse", "lazy": true, "idleTimeoutMs": 600000 }
 *   },
 *   "switchboard": { "name": "my-hub", "collision": "rename", "maxNameLength": 64 }
 * }
 * ```
 *
 * Per server: `command`/`args`/`env`/`cwd` (stdio), `url`/`headers` (Streamable HTTP; `"type": "sse"` for
 * HTTP+SSE, a `ws://` URL for WebSocket), `auth` for HTTP and SSE servers (`oauth`, `bearer` with `tokenEnv`,
 * `client_credentials`: see config-auth.ts), `"type": "framed"` with `path` or `host`/`port` (another
 * switchboard); `disabled`; naming (`prefix` — `true` for the server's name —, `separator`,
 * `maxNameLength`, `collision`); filters (`tools`, `prompts`, `resources`: a list of names to allow, or
 * `{ "allow": [...], "deny": [...] }`, `*` as a wildcard); `lazy`, `idleTimeoutMs`, `connectTimeoutMs`,
 * `requestTimeoutMs`, `pingIntervalMs`, `unavailableWaitMs`, `restart` (`maxRestarts`, `initialDelayMs`,
 * `maxDelayMs`, `stableAfterMs`), `instance` (`"shared"` or `"per-client"`), `forward` (`sampling`,
 * `elicitation`, `roots`: over the hub's), `era` (`"auto"`, the default: probe with `server/discover` and
 * speak 2026-07-28 to a server that answers it, the handshake to the others; `"handshake"`: the handshake, no
 * probe; `"modern"`: 2026-07-28 or fail; `"legacy"`, deprecated, is read as `"handshake"`).
 * Hub-wide, under `switchboard`: `name`, `version`, `title`,
 * `instructions`, `upstreamInstructions`, naming, `listChangedDebounceMs`, `pageSize`, `forward`,
 * `defaultLogLevel`, and `http` (every `HttpLimits` key, `allowedHosts`, `allowedOrigins`, `cors`, `health`:
 * what `switchboard serve --http` serves the hub with; command-line flags win; config-http.ts). At the top
 * level, `auth`: what the hub's own HTTP endpoint requires of its clients (config-auth.ts).
 * `${VAR}` and `${env:VAR}` in commands, arguments, environment values, URLs and headers are replaced from
 * the environment. Keys other programs use in server entries (`autoApprove`, ...) are ignored; any other
 * key we do not know is a mistake, named with the closest key we know; every mistake is reported at once
 * in a `ConfigError`.
 */
import { isPlainObject } from '../jsonrpc/classify';
import type { SupervisionPolicy } from '../../machines/upstream';
import { defaultLogger } from '../core/logger';
import { readEndpointAuth, readUpstreamAuth } from './config-auth';
import { readHttpSettings, type HubHttpSettings } from './config-http';
import { describe, isUrl, Reader, type Json } from './config-reader';
import { Hub, type HubOptions } from './hub';
import type { NamingOptions } from './naming';
import type { UpstreamSource } from './sources';
import type { UpstreamOptions } from './upstream';
import { SwitchboardError, type LocalErrorCode } from '../jsonrpc/errors';

export type { HubHttpSettings } from './config-http';

export interface ConfigOptions {
  /** Relative `cwd`s and relative stdio commands starting with `./` are resolved against it (the file's directory). */
  readonly baseDir?: string;
  /** Where `${VAR}` comes from (default: the process environment). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Merged over what the file says (a logger, a runtime, hooks). */
  readonly hub?: Partial<HubOptions>;
  /** The file the config came from, named in every mistake about it. */
  readonly file?: string;
}

export interface ParsedConfig {
  readonly options: HubOptions;
  readonly http: HubHttpSettings;
  /** Settings we read but ignore: worth telling the user, not worth refusing the file. */
  readonly warnings: readonly string[];
}

/** Everything wrong with a config file, one line per mistake. */
export class ConfigError extends SwitchboardError {
  override readonly name = 'ConfigError';
  readonly code: LocalErrorCode = 'INVALID_CONFIG';

  constructor(
    readonly problems: readonly string[],
    readonly file?: string,
  ) {
    super(`Invalid hub config${file ? ` ${file}` : ''}:\n${problems.map((problem) => `- ${problem}`).join('\n')}`);
  }
}

/** Keys of other programs' server entries: accepted and ignored. */
const FOREIGN_KEYS = new Set([
  'autoApprove',
  'alwaysAllow',
  'description',
  'timeout',
  'dev',
  'gallery',
  'version',
  'transportType',
]);
const COMMON_KEYS = new Set([
  'type',
  'disabled',
  'prefix',
  'separator',
  'maxNameLength',
  'collision',
  'tools',
  'prompts',
  'resources',
  'lazy',
  'idleTimeoutMs',
  'connectTimeoutMs',
  'requestTimeoutMs',
  'pingIntervalMs',
  'unavailableWaitMs',
  'restart',
  'instance',
  'forward',
  'era',
]);
const KIND_KEYS: Readonly<Record<string, readonly string[]>> = {
  stdio: ['command', 'args', 'env', 'cwd', 'envFile'],
  http: ['url', 'headers', 'auth'],
  sse: ['url', 'headers', 'auth'],
  websocket: ['url', 'headers'],
  framed: ['path', 'host', 'port'],
};
const TYPE_ALIASES: Readonly<Record<string, string>> = {
  stdio: 'stdio',
  http: 'http',
  'streamable-http': 'http',
  streamableHttp: 'http',
  sse: 'sse',
  ws: 'websocket',
  websocket: 'websocket',
  framed: 'framed',
};
const HUB_KEYS = new Set([
  'name',
  'version',
  'title',
  'instructions',
  'upstreamInstructions',
  'prefix',
  'separator',
  'maxNameLength',
  'collision',
  'listChangedDebounceMs',
  'pageSize',
  'forward',
  'defaultLogLevel',
  'http',
]);
/** Top-level keys besides the servers: the hub endpoint's `auth`, VS Code's `inputs`, and an editor's `$schema`. */
const TOP_KEYS = ['mcpServers', 'servers', 'switchboard', 'auth', 'inputs', '$schema'];
const SERVER_KEYS = new Set([...COMMON_KEYS, ...Object.values(KIND_KEYS).flat()]);
const RESTART_KEYS = ['maxRestarts', 'initialDelayMs', 'maxDelayMs', 'stableAfterMs'] as const;

/** Parses and checks a config (already read as JSON). Throws a `ConfigError` listing every problem. */
export function parseConfig(config: unknown, options: ConfigOptions = {}): ParsedConfig {
  const processEnv = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const reader = new Reader(options.env ?? processEnv ?? {}, options.file);
  const fail = (problem: string) => new ConfigError([problem], options.file);
  if (!isPlainObject(config)) throw fail(`The config must be a JSON object, got ${describe(config)}`);
  const serversKey = 'mcpServers' in config ? 'mcpServers' : 'servers' in config ? 'servers' : undefined;
  const servers = serversKey === undefined ? undefined : config[serversKey];
  if (!isPlainObject(servers)) {
    throw fail(
      serversKey === undefined
        ? 'The config needs an "mcpServers" object (or "servers", as VS Code writes it) naming each server'
        : `${serversKey} must be an object naming each server, got ${describe(servers)}`,
    );
  }
  const topKeys = new Set(TOP_KEYS.filter((key) => key !== (serversKey === 'mcpServers' ? 'servers' : 'mcpServers')));
  reader.unknownKeys(config, topKeys, 'the top level', { suggestions: TOP_KEYS });
  const hubSettings = readHubSettings(config.switchboard, reader);
  const auth = readEndpointAuth(config.auth, reader);
  const http = {
    ...readHttpSettings(
      isPlainObject(config.switchboard) ? config.switchboard.http : undefined,
      reader,
      config.auth !== undefined,
    ),
    ...(auth && { auth }),
  };
  const upstreams: UpstreamOptions[] = [];
  for (const [name, entry] of Object.entries(servers)) {
    const upstream = readServer(name, entry, `${serversKey}.${name}`, hubSettings.prefixAll, reader, options.baseDir);
    if (upstream) upstreams.push(upstream);
  }
  if (Object.keys(servers).length === 0) reader.fail(serversKey!, 'names no server');
  if (reader.problems.length > 0) throw new ConfigError(reader.problems, options.file);
  return { options: { ...hubSettings.options, upstreams, ...options.hub }, http, warnings: reader.warnings };
}

/** A hub (not started) from a config; warnings go to the hub's logger. Throws a `ConfigError`. */
export function hubFromConfig(config: unknown, options: ConfigOptions = {}): Hub {
  return hubAndHttpFromConfig(config, options).hub;
}

function hubAndHttpFromConfig(config: unknown, options: ConfigOptions): { hub: Hub; http: HubHttpSettings } {
  const parsed = parseConfig(config, options);
  const logger = parsed.options.logger ?? defaultLogger;
  for (const warning of parsed.warnings) logger.warn(`Config: ${warning}`);
  return { hub: new Hub(parsed.options), http: parsed.http };
}

/**
 * Reads a config file (Node only) and builds its hub (not started): relative paths in it are relative to
 * the file. A missing file or invalid JSON is a `ConfigError` naming the file.
 */
export async function hubFromConfigFile(path: string, options: Omit<ConfigOptions, 'baseDir'> = {}): Promise<Hub> {
  return (await loadConfigFile(path, options)).hub;
}

/** `hubFromConfigFile`, with the file's `switchboard.http` settings for the server that will serve the hub. */
export async function loadConfigFile(
  path: string,
  options: Omit<ConfigOptions, 'baseDir'> = {},
): Promise<{ hub: Hub; http: HubHttpSettings }> {
  const [{ readFile }, { dirname, resolve }] = await Promise.all([import('node:fs/promises'), import('node:path')]);
  const file = resolve(path);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError([`Cannot read ${file}: ${(error as Error).message}`], path);
  }
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch (error) {
    throw new ConfigError([`${file} is not valid JSON: ${(error as Error).message}`], path);
  }
  return hubAndHttpFromConfig(config, { file: path, ...options, baseDir: dirname(file) });
}

function readHubSettings(
  value: unknown,
  reader: Reader,
): { options: Omit<HubOptions, 'upstreams'>; prefixAll: boolean } {
  if (value === undefined) return { options: {}, prefixAll: false };
  if (!isPlainObject(value)) {
    reader.fail('switchboard', `must be an object, got ${describe(value)}`);
    return { options: {}, prefixAll: false };
  }
  reader.unknownKeys(value, HUB_KEYS, 'switchboard');
  const prefixAll = value.prefix === true;
  if (value.prefix !== undefined && value.prefix !== true && value.prefix !== false) {
    reader.fail('switchboard.prefix', "must be true (prefix every server's names with its name) or false");
  }
  const naming: NamingOptions = {
    ...optional('separator', reader.string(value.separator, 'switchboard.separator')),
    ...optional('maxLength', reader.integer(value.maxNameLength, 'switchboard.maxNameLength', 16)),
    ...optional('collision', reader.collision(value.collision, 'switchboard.collision')),
  };
  const options: Omit<HubOptions, 'upstreams'> = {
    ...optional('name', reader.string(value.name, 'switchboard.name')),
    ...optional('version', reader.string(value.version, 'switchboard.version')),
    ...optional('title', reader.string(value.title, 'switchboard.title')),
    ...optional('instructions', reader.string(value.instructions, 'switchboard.instructions')),
    ...optional('upstreamInstructions', reader.boolean(value.upstreamInstructions, 'switchboard.upstreamInstructions')),
    ...optional(
      'listChangedDebounceMs',
      reader.integer(value.listChangedDebounceMs, 'switchboard.listChangedDebounceMs'),
    ),
    ...optional('pageSize', reader.integer(value.pageSize, 'switchboard.pageSize', 1)),
    ...optional('forward', reader.forward(value.forward, 'switchboard.forward')),
    ...optional('defaultLogLevel', reader.logLevel(value.defaultLogLevel, 'switchboard.defaultLogLevel')),
    ...(Object.keys(naming).length > 0 && { naming }),
  };
  reader.naming(naming, 'switchboard');
  return { options, prefixAll };
}

function readServer(
  name: string,
  entry: unknown,
  where: string,
  prefixAll: boolean,
  reader: Reader,
  baseDir: string | undefined,
): UpstreamOptions | undefined {
  if (!isPlainObject(entry)) return reader.fail(where, `must be an object, got ${describe(entry)}`);
  if (name === '') return reader.fail(where, 'needs a non-empty name');
  if (reader.boolean(entry.disabled, `${where}.disabled`) === true) return undefined;
  const kind = kindOf(entry, where, reader);
  reader.unknownKeys(entry, kind ? new Set([...COMMON_KEYS, ...KIND_KEYS[kind]!]) : SERVER_KEYS, where, {
    ignored: FOREIGN_KEYS,
    suggestions: SERVER_KEYS,
    misplaced: (key) =>
      SERVER_KEYS.has(key) ? `it is a setting of ${kindsWith(key)} servers, not ${kind} ones` : undefined,
  });
  if (!kind) return undefined;
  if (entry.envFile !== undefined)
    reader.warnings.push(`${where}.envFile is not supported: put the variables in "env"`);
  const source = readSource(kind, entry, where, reader, baseDir);
  // A server's name as its prefix, made valid (an explicit prefix must be valid as it is).
  const prefix =
    entry.prefix === true || (entry.prefix === undefined && prefixAll)
      ? name.replace(/[^A-Za-z0-9_.-]/g, '_')
      : entry.prefix;
  const naming: NamingOptions = {
    ...optional('prefix', prefix === false ? undefined : reader.string(prefix, `${where}.prefix`)),
    ...optional('separator', reader.string(entry.separator, `${where}.separator`)),
    ...optional('maxLength', reader.integer(entry.maxNameLength, `${where}.maxNameLength`, 16)),
    ...optional('collision', reader.collision(entry.collision, `${where}.collision`)),
  };
  reader.naming(naming, where);
  const supervision = readRestart(entry.restart, `${where}.restart`, reader);
  if (!source) return undefined;
  return {
    name,
    source,
    ...(Object.keys(naming).length > 0 && { naming }),
    ...optional('tools', reader.filter(entry.tools, `${where}.tools`)),
    ...optional('prompts', reader.filter(entry.prompts, `${where}.prompts`)),
    ...optional('resources', reader.filter(entry.resources, `${where}.resources`)),
    ...optional('lazy', reader.boolean(entry.lazy, `${where}.lazy`)),
    ...optional('idleTimeoutMs', reader.integer(entry.idleTimeoutMs, `${where}.idleTimeoutMs`, 1)),
    ...optional('connectTimeoutMs', reader.integer(entry.connectTimeoutMs, `${where}.connectTimeoutMs`, 1)),
    ...optional('requestTimeoutMs', reader.integer(entry.requestTimeoutMs, `${where}.requestTimeoutMs`)),
    ...optional('pingIntervalMs', reader.integer(entry.pingIntervalMs, `${where}.pingIntervalMs`)),
    ...optional('unavailableWaitMs', reader.integer(entry.unavailableWaitMs, `${where}.unavailableWaitMs`)),
    ...optional('instance', reader.instance(entry.instance, `${where}.instance`)),
    ...optional('forward', reader.forward(entry.forward, `${where}.forward`)),
    ...optional('era', reader.era(entry.era, `${where}.era`)),
    ...(supervision && { supervision }),
  };
}

function kindOf(entry: Json, where: string, reader: Reader): string | undefined {
  const declared = entry.type ?? entry.transportType;
  if (declared !== undefined) {
    const kind = typeof declared === 'string' ? TYPE_ALIASES[declared] : undefined;
    if (!kind) {
      return reader.fail(
        `${where}.type`,
        `must be one of "stdio", "http", "sse", "ws", "framed", got ${describe(declared)}`,
      );
    }
    // A Streamable HTTP entry with a ws:// URL is a WebSocket one.
    return kind === 'http' && typeof entry.url === 'string' && /^wss?:/i.test(entry.url) ? 'websocket' : kind;
  }
  if (entry.command !== undefined) return 'stdio';
  if (typeof entry.url === 'string') return /^wss?:/i.test(entry.url) ? 'websocket' : 'http';
  return reader.fail(where, 'needs a "command" (a program to run) or a "url" (a server to reach)');
}

function readSource(
  kind: string,
  entry: Json,
  where: string,
  reader: Reader,
  baseDir: string | undefined,
): UpstreamSource | undefined {
  switch (kind) {
    case 'stdio': {
      const command = reader.requiredString(entry.command, `${where}.command`, { expand: true });
      const args = reader.strings(entry.args, `${where}.args`, { expand: true });
      const env = reader.stringMap(entry.env, `${where}.env`);
      const cwd = reader.string(entry.cwd, `${where}.cwd`, { expand: true });
      if (command === undefined) return undefined;
      return {
        kind: 'stdio',
        command: command.startsWith('./') || command.startsWith('../') ? resolvePath(baseDir, command) : command,
        ...(args && { args }),
        ...(env && { env }),
        ...(cwd !== undefined && { cwd: resolvePath(baseDir, cwd) }),
      };
    }
    case 'http':
    case 'sse':
    case 'websocket': {
      const url = reader.requiredString(entry.url, `${where}.url`, { expand: true });
      const headers = reader.stringMap(entry.headers, `${where}.headers`);
      const auth = readUpstreamAuth(entry.auth, `${where}.auth`, reader, headers);
      if (url === undefined) return undefined;
      if (!isUrl(url)) return reader.fail(`${where}.url`, `is not a URL: ${describe(url)}`);
      if (kind === 'websocket') return { kind: 'websocket', url, ...(headers && { headers }) };
      return {
        kind: 'http',
        url,
        ...(headers && { headers }),
        ...(auth && { auth }),
        ...(kind === 'sse' && { transport: 'sse' as const }),
      };
    }
    default: {
      const path = reader.string(entry.path, `${where}.path`, { expand: true });
      if (path !== undefined) return { kind: 'framed', path: resolvePath(baseDir, path) };
      const port = reader.integer(entry.port, `${where}.port`, 1);
      const host = reader.string(entry.host, `${where}.host`);
      if (port === undefined)
        return reader.fail(where, 'needs a "path" (a unix socket) or a "port" for "type": "framed"');
      return { kind: 'framed', port, ...(host !== undefined && { host }) };
    }
  }
}

function readRestart(value: unknown, where: string, reader: Reader): Partial<SupervisionPolicy> | undefined {
  if (value === undefined) return undefined;
  if (!isPlainObject(value)) return reader.fail(where, `must be an object, got ${describe(value)}`);
  reader.unknownKeys(value, new Set(RESTART_KEYS), where);
  const policy: Record<string, number> = {};
  for (const key of RESTART_KEYS) {
    const number = reader.integer(value[key], `${where}.${key}`);
    if (number !== undefined) policy[key] = number;
  }
  return policy;
}

/** The kinds of server that take `key`: `stdio`, `http, sse, websocket`. */
function kindsWith(key: string): string {
  return Object.keys(KIND_KEYS)
    .filter((kind) => KIND_KEYS[kind]!.includes(key))
    .join(', ');
}

function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** `path` against `baseDir` unless it is absolute (POSIX or Windows). */
function resolvePath(baseDir: string | undefined, path: string): string {
  if (baseDir === undefined || path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith('\\\\')) {
    return path;
  }
  return `${baseDir.replace(/[\\/]+$/, '')}/${path.replace(/^\.[\\/]/, '')}`;
}
