/**
 * `switchboard serve <module | config.json>`: the module's server, or a hub over the servers a config file
 * lists (the `mcpServers` shape), over stdio (the default) or Streamable HTTP (`--http`; at `--path`, over HTTPS
 * with `--tls-cert` and `--tls-key`), optionally tracing everything (the upstreams of a hub too) to stderr or a
 * file, or live to a browser page (`--trace-ui`), and keeping a module's tasks on disk (`--task-store`).
 * Resolves with the exit code once serving has ended: stdin closed (stdio), or SIGINT/SIGTERM, at any point, a
 * hub's start-up included.
 *
 * Stopping ends every upstream child process before the command returns: the hub's own close runs each
 * child's shutdown ladder (stdin EOF, SIGTERM, SIGKILL to its process group); past `SHUTDOWN_DEADLINE_MS`
 * the command SIGKILLs whatever children are left, and returns once their groups have ended (or, for a
 * process stuck in the kernel, after `KILLED_WAIT_MS`, saying so). A second signal kills and exits at once.
 */
import { PassThrough, type Readable } from 'node:stream';
import { readFile } from 'node:fs/promises';
import { createMcpHttpHandler } from '../../transports/http/endpoint';
import { healthPathOf } from '../../transports/http/health';
import { DEFAULT_SSE_PATH } from '../../transports/http/legacy-sse-server';
import { redirectConsoleToStderr } from '../../transports/console-redirect';
import { StdioServerTransport } from '../../transports/stdio';
import { createStderrLogger } from '../core/logger';
import type { Server } from '../server/server';
import type { TaskServingOptions } from '../server/tasks/server-tasks';
import type { HubHttpSettings } from '../compose/config';
import type { HubEndpointAuth } from '../compose/config-auth';
import type { ServeCommand, ServeHttp } from './args';
import type { ServeCors, TlsFiles } from './serve-http-args';
import { CliFailure, EXIT_OK, UsageError } from './errors';
import { callLine } from './hints';
import { httpHandlerOptions, listenHttp, type TlsCredentials } from './http-listener';
import type { CliIo } from './io';
import { loadServer } from './load-server';
import { openTaskStore } from './task-store';
import { killChildren, StopRequest } from './signals';
import { withTrace } from './trace';

/**
 * How long stopping may take in all, from the stop request to the last upstream child gone: the default
 * child shutdown ladder (2 s after stdin EOF, 2 s after SIGTERM) fits, with room for the SIGKILL.
 */
export const SHUTDOWN_DEADLINE_MS = 4500;

export function serve(command: ServeCommand, io: CliIo): Promise<number> {
  // The trace starts first, so a hub's upstreams are traced from their first attempt.
  return withTrace(command, io, async (trace) => {
    // Signals are ours from the start: one arriving while a hub starts its upstreams must stop them too.
    const stop = new StopRequest();
    try {
      // Before the module loads: its top-level logging must not reach stdout, which carries the protocol.
      const input = command.http ? undefined : watchedStdin();
      if (input) redirectConsoleToStderr();
      const served = await loadServed(command, io);
      try {
        const ended = Promise.race([stop.requested, input?.ended ?? new Promise<never>(() => {})]);
        if ((await Promise.race([served.start().then(() => 'started' as const), ended])) !== 'started') return EXIT_OK;
        const server = trace ? trace.serving(served.server) : served.server;
        const http = command.http && withConfigSettings(command.http, served.http);
        if (!http && served.http?.auth)
          io.err('switchboard: the config\'s "auth" protects the HTTP endpoint only (--http)');
        return await (http ? serveHttp(server, http, io, ended, served.http?.auth) : serveStdio(server, input!, ended));
      } finally {
        await closeWithin(served, SHUTDOWN_DEADLINE_MS, io);
      }
    } finally {
      stop.dispose();
    }
  });
}

export interface Served {
  readonly server: Server;
  /** Starts what must run before serving (a hub's upstreams); rejects with a `CliFailure`. */
  start(): Promise<void>;
  /** Stops it all; for a hub, resolves once every upstream has ended. */
  close(): Promise<void>;
  /** A hub config's `switchboard.http`: the HTTP limits and allow-lists to serve it with. */
  readonly http?: HubHttpSettings;
}

/**
 * The HTTP settings to serve with: the config's, then the command line's flags over them. Lists add up: the
 * CORS origins too (`'*'` on either side is any origin), keeping the config's other CORS settings.
 */
function withConfigSettings(flags: ServeHttp, config: HubHttpSettings | undefined): ServeHttp {
  if (!config) return flags;
  const cors = mergedCors(config.cors, flags.cors);
  const health = flags.health ?? healthPathOf(config.health);
  return {
    ...flags,
    limits: { ...config.limits, ...flags.limits },
    allowedHosts: [...config.allowedHosts, ...flags.allowedHosts],
    allowedOrigins: [...config.allowedOrigins, ...flags.allowedOrigins],
    ...(cors && { cors }),
    ...(health !== undefined && { health }),
  };
}

function mergedCors(config: ServeCors | undefined, flags: ServeCors | undefined): ServeCors | undefined {
  if (!config || !flags) return config ?? flags;
  const [own, given] = [config.origins, flags.origins];
  return { ...config, origins: own === '*' || given === '*' ? '*' : [...own, ...given] };
}

/** A `.json` argument is a hub config: every upstream is started (and stopped again when serving ends). */
async function loadServed({ module: path, taskStore }: ServeCommand, io: CliIo): Promise<Served> {
  if (!path.endsWith('.json'))
    return taskStore === undefined ? loadModule(path) : loadWithTaskStore(path, taskStore, io);
  const [{ loadConfigFile }, { FileTokenStore }] = await Promise.all([
    import('../compose/config'),
    import('../auth/node/file-token-store'),
  ]);
  const logger = createStderrLogger('info');
  // The tokens `switchboard login` stored (the config directory), refreshed there for the next run too.
  const tokenStore = new FileTokenStore({ logger });
  const { hub, http } = await loadConfigFile(path, { hub: { logger, tokenStore } }).catch((error: Error) => {
    throw new CliFailure(`Cannot serve ${path}: ${error.message}`);
  });
  return {
    server: hub.server,
    http,
    start: () =>
      hub.start().catch((error: Error) => {
        throw new CliFailure(`Cannot serve ${path}: ${error.message}`);
      }),
    close: () => hub.close(),
  };
}

async function loadModule(path: string, tasks?: TaskServingOptions): Promise<Served> {
  const server = await loadServer(path, process.argv[1] ?? 'switchboard', tasks);
  return { server, start: async () => {}, close: async () => {} };
}

/**
 * The module's server with its tasks in the store in `dir`. Closing ends its tasks (they read `failed` at the
 * next start on the same store), then the store.
 */
async function loadWithTaskStore(path: string, dir: string, io: CliIo): Promise<Served> {
  const store = await openTaskStore(dir);
  try {
    const { server } = await loadModule(path, { store });
    if (!server.definition.servesTasks) io.err(`switchboard: --task-store: ${path} has no tool that runs as a task`);
    const close = async () => {
      try {
        await server.close();
      } finally {
        await store.close();
      }
    };
    return { server, start: async () => {}, close };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/** After the deadline's SIGKILL, how long the close may still take to see every child's process group end. */
export const KILLED_WAIT_MS = 3000;

/**
 * Closes `served`; past `deadlineMs`, SIGKILLs every child process group left, then still waits (at most
 * `KILLED_WAIT_MS`) for the close to see those groups end: the command never returns while a child runs.
 */
export async function closeWithin(served: Pick<Served, 'close'>, deadlineMs: number, io: CliIo): Promise<void> {
  const closed = served.close().catch(() => undefined);
  if (await settlesWithin(closed, deadlineMs)) return;
  const killed = killChildren();
  io.err(`switchboard: stopping took over ${deadlineMs} ms: killed ${killed.length} child process group(s)`);
  if (await settlesWithin(closed, KILLED_WAIT_MS)) return;
  const left = killChildren();
  io.err(
    `switchboard: gave up waiting for the stop ${KILLED_WAIT_MS} ms after the SIGKILL` +
      (left.length ? `; child process group(s) not seen to end: ${left.join(', ')}` : ''),
  );
}

/** Whether `promise` (which never rejects) settles within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(resolve, ms, false)));
  const settled = await Promise.race([promise.then(() => true as const), late]);
  clearTimeout(timer);
  return settled;
}

/**
 * stdin through a PassThrough, so its end is seen (`ended`) even before the protocol reads it: while a hub
 * starts its upstreams, a client that went away stops the command.
 */
function watchedStdin(): Readable & { ended: Promise<void> } {
  const input = new PassThrough() as PassThrough & { ended: Promise<void> };
  input.ended = new Promise((resolve) => input.once('finish', () => resolve()));
  process.stdin.pipe(input);
  return input;
}

async function serveStdio(server: Server, input: Readable, stopped: Promise<unknown>): Promise<number> {
  const connection = server.connect(new StdioServerTransport({ input }));
  await Promise.race([connection.closed, stopped]);
  await connection.close();
  return EXIT_OK;
}

/** A request worth trying first: the list of the first feature the server offers. */
function suggestedMethod(server: Server): string {
  const { tools, resources, prompts } = server.definition.capabilities;
  return tools ? 'tools/list' : resources ? 'resources/list' : prompts ? 'prompts/list' : 'ping';
}

async function serveHttp(
  server: Server,
  http: ServeHttp,
  io: CliIo,
  stopped: Promise<unknown>,
  auth: HubEndpointAuth | undefined,
) {
  // Read before the handler exists: a file that cannot be read leaves nothing to close.
  const tls = http.tls && (await readTlsFiles(http.tls));
  const handler = httpHandler(server, http, auth);
  const listener = await listenHttp(handler, http.port, http.host, http.limits, tls).catch(async (error: unknown) => {
    await handler.close();
    throw error;
  });
  const url = `${listener.origin}${http.path}`;
  const { name, version } = server.definition.info;
  io.out(`Serving ${name} ${version} over Streamable HTTP${tls ? 'S' : ''} at ${url}`);
  io.out(`  legacy HTTP+SSE (2024-11-05 clients): ${listener.origin}${DEFAULT_SSE_PATH}`);
  io.out(`  try: ${callLine('switchboard', url, suggestedMethod(server))}`);
  if (auth) io.out(`  clients need a token for ${auth.resource} from ${auth.authorizationServers.join(', ')}`);
  if (http.cors) io.out(`  CORS: pages of ${corsOrigins(http.cors)} may call it from a browser`);
  if (http.health !== undefined) io.out(`  health: ${listener.origin}${http.health}`);
  await stopped;
  await handler.close();
  await listener.close();
  return EXIT_OK;
}

/** The endpoint for `http`; options it refuses (`--cors-origin '*'` without auth) are a `UsageError` saying why. */
function httpHandler(server: Server, http: ServeHttp, auth: HubEndpointAuth | undefined) {
  try {
    return createMcpHttpHandler(server, { path: http.path, ...httpHandlerOptions(http), ...(auth && { auth }) });
  } catch (error) {
    if (error instanceof RangeError) throw new UsageError(`Cannot serve over HTTP: ${error.message}`);
    throw error;
  }
}

function corsOrigins({ origins }: ServeCors): string {
  return origins === '*' ? 'any origin (with a token)' : origins.join(', ');
}

/** The PEM files of `--tls-cert` and `--tls-key`, or a `CliFailure` naming the one that cannot be read. */
async function readTlsFiles({ certFile, keyFile }: TlsFiles): Promise<TlsCredentials> {
  const read = (file: string, flag: string) =>
    readFile(file, 'utf8').catch((error: Error) => {
      throw new CliFailure(`Cannot read ${flag} ${file}: ${error.message}`, [], { cause: error });
    });
  const [cert, key] = await Promise.all([read(certFile, '--tls-cert'), read(keyFile, '--tls-key')]);
  return { cert, key };
}
