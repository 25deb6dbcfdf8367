/**
 * `switchboard serve <module | config.json>`: the module's server, or a hub over the servers a config file
 * lists (the `mcpServers` shape), over stdio (the default) or Streamable HTTP (`--http`), optionally tracing
 * everything (the upstreams of a hub too) to stderr or a file. Resolves with the exit code once serving has
 * ended: stdin closed (stdio), or SIGINT/SIGTERM.
 */
import { createMcpHttpHandler, DEFAULT_MCP_PATH } from '../../transports/http/endpoint';
import { DEFAULT_SSE_PATH } from '../../transports/http/legacy-sse-server';
import { redirectConsoleToStderr } from '../../transports/console-redirect';
import { StdioServerTransport } from '../../transports/stdio';
import { createStderrLogger } from '../core/logger';
import type { Server } from '../server/server';
import type { ServeCommand } from './args';
import { CliFailure, EXIT_OK } from './errors';
import { callLine } from './hints';
import { isLoopback, listenHttp } from './http-listener';
import type { CliIo } from './io';
import { loadServer } from './load-server';
import { stopSignal } from './signals';
import { withTrace } from './trace';

export function serve(command: ServeCommand, io: CliIo): Promise<number> {
  // The trace starts first, so a hub's upstreams are traced from their first attempt.
  return withTrace(command, io, async (trace) => {
    // Before the module loads: its top-level logging must not reach stdout, which carries the protocol.
    if (!command.http) redirectConsoleToStderr();
    const served = await loadServed(command.module);
    try {
      const server = trace ? trace.serving(served.server) : served.server;
      return await (command.http ? serveHttp(server, command.http, io) : serveStdio(server));
    } finally {
      await served.close();
    }
  });
}

interface Served {
  readonly server: Server;
  close(): Promise<void>;
}

/** A `.json` argument is a hub config: every upstream is started (and stopped again when serving ends). */
async function loadServed(path: string): Promise<Served> {
  if (!path.endsWith('.json'))
    return { server: await loadServer(path, process.argv[1] ?? 'switchboard'), close: async () => {} };
  const { hubFromConfigFile } = await import('../compose/config');
  const hub = await hubFromConfigFile(path, { hub: { logger: createStderrLogger('info') } }).catch((error: Error) => {
    throw new CliFailure(`Cannot serve ${path}: ${error.message}`);
  });
  try {
    await hub.start();
  } catch (error) {
    await hub.close();
    throw new CliFailure(`Cannot serve ${path}: ${(error as Error).message}`);
  }
  return { server: hub.server, close: () => hub.close() };
}

async function serveStdio(server: Server): Promise<number> {
  const connection = server.connect(new StdioServerTransport());
  const stopped = stopSignal().then(() => connection.close());
  await Promise.race([connection.closed, stopped]);
  return EXIT_OK;
}

/** A request worth trying first: the list of the first feature the server offers. */
function suggestedMethod(server: Server): string {
  const { tools, resources, prompts } = server.definition.capabilities;
  return tools ? 'tools/list' : resources ? 'resources/list' : prompts ? 'prompts/list' : 'ping';
}

async function serveHttp(server: Server, { port, host }: NonNullable<ServeCommand['http']>, io: CliIo) {
  const handler = createMcpHttpHandler(server, { path: DEFAULT_MCP_PATH, localhostOnly: isLoopback(host) });
  const listener = await listenHttp(handler, port, host);
  const url = `${listener.origin}${DEFAULT_MCP_PATH}`;
  const { name, version } = server.definition.info;
  io.out(`Serving ${name} ${version} over Streamable HTTP at ${url}`);
  io.out(`  legacy HTTP+SSE (2024-11-05 clients): ${listener.origin}${DEFAULT_SSE_PATH}`);
  io.out(`  try: ${callLine('switchboard', url, suggestedMethod(server))}`);
  await stopSignal();
  await handler.close();
  await listener.close();
  return EXIT_OK;
}
