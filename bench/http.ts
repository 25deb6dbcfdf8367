/**
 * The Streamable HTTP rows: `tools/call` of `echo` over real HTTP on 127.0.0.1, the client in this process and
 * the server in a child process (this file run with `--serve-http <entrant>`), as a remote server would be.
 * - ours: our `Client` + `StreamableHttpClientTransport` (node:http, keep-alive agent) -> our `Server` with
 *   `createStreamableHttpHandler` (`responseMode: 'json'`) on node:http;
 * - sdk: the SDK `Client` + `StreamableHTTPClientTransport` (fetch) -> `McpServer` + `StreamableHTTPServerTransport`
 *   on node:http, stateful (a session id per client) with `enableJsonResponse: true`;
 * - bare: no MCP, one JSON POST per call over a node:http keep-alive `Agent` to a node:http server that parses
 *   the body and answers `{ jsonrpc, id, result }`: the ceiling for one JSON POST round trip.
 * Each factory resolves once the server answers (after the handshake for ours and the SDK), so child start-up is
 * never timed, and after `WARM_UP_MS` of untimed calls one at a time (so no connection is opened for them): a
 * freshly started child takes a few seconds to reach its steady cost per call (the JIT compiles as calls come in),
 * and the harness's short warm-up window would otherwise time mostly that, which costs the entrant with more code
 * the most. A server in production has long been warm. The child counts the TCP connections it accepts and its
 * CPU time (asked over IPC), and exits when this process disconnects or dies.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as SdkStreamableHttpClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client } from '../lib/client/client';
import { HANDSHAKE_ERA } from './config';
import { StreamableHttpClientTransport } from '../transports/http/streamable-client';
import type { CallPair } from './contender';
import { startServerChild } from './server-child';
import { bareEchoListener } from './bare-echo';

const THIS_FILE = fileURLToPath(import.meta.url);
const SERVE_FLAG = '--serve-http';
const MCP_PATH = '/mcp';
const CLIENT_INFO = { name: 'bench-client', version: '1.0.0' };
const ECHO_ARGUMENTS = { text: 'hi' };
/** For how long each pair makes untimed calls, one at a time, before it is handed over. */
const WARM_UP_MS = 2000;

export type HttpEntrantName = 'ours' | 'sdk' | 'bare';

/** Every server the child can serve: the entrants of the `http` rows and the servers of the modern rows. */
export type HttpServerName = HttpEntrantName | 'ours-dual' | 'ours-fetch' | 'sdk-v2';

export interface HttpCallPair extends CallPair {
  /** TCP connections the server has accepted since it started. */
  connectionsAccepted(): Promise<number>;
  /** CPU time (user + system) the server process has used since it started, in µs. */
  serverCpuMicros(): Promise<number>;
}

// ---- the server side, in the child -----------------------------------------------------------------

async function createOursServer(): Promise<http.Server> {
  const [{ Server }, { createStreamableHttpHandler }, { echoServerDefinition }] = await Promise.all([
    import('../lib/server/server'),
    import('../transports/http/streamable-server'),
    import('./ours'),
  ]);
  const handler = createStreamableHttpHandler(new Server(echoServerDefinition()), { responseMode: 'json' });
  return http.createServer(handler);
}

async function createSdkServer(): Promise<http.Server> {
  const [{ StreamableHTTPServerTransport }, { createEchoServer }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('./sdk'),
  ]);
  type SdkServerTransport = InstanceType<typeof StreamableHTTPServerTransport>;
  const sessions = new Map<string, SdkServerTransport>();
  // The SDK's stateful pattern: a transport and an McpServer per session, found by the MCP-Session-Id header.
  return http.createServer(async (request, response) => {
    const sessionId = request.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (!transport) {
      const created: SdkServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        enableJsonResponse: true,
        onsessioninitialized: (id) => void sessions.set(id, created),
      });
      created.onclose = () => void (created.sessionId && sessions.delete(created.sessionId));
      await createEchoServer(false).connect(created);
      transport = created;
    }
    await transport.handleRequest(request, response);
  });
}

function createBareServer(): http.Server {
  return http.createServer(bareEchoListener);
}

const SERVERS: Record<HttpServerName, () => Promise<http.Server> | http.Server> = {
  ours: createOursServer,
  sdk: createSdkServer,
  bare: createBareServer,
  'ours-dual': async () => http.createServer((await import('./modern-servers')).createOursDualServer()),
  'ours-fetch': async () => http.createServer((await import('./modern-servers')).createOursFetchServer()),
  'sdk-v2': async () => http.createServer(await (await import('./modern-servers')).createSdkV2Server()),
};

type ParentMessage = 'connections' | 'cpu';
type ChildMessage = { readonly port: number } | { readonly connections: number } | { readonly cpuMicros: number };

/** The child: serves one entrant on 127.0.0.1 and reports its port, then its connection count when asked. */
async function serve(entrant: HttpServerName): Promise<void> {
  const server = await SERVERS[entrant]();
  let connections = 0;
  server.on('connection', () => void connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.on('disconnect', () => process.exit(0));
  process.on('message', (message: ParentMessage) => {
    if (message === 'connections') process.send!({ connections } satisfies ChildMessage);
    if (message === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send!({ cpuMicros: user + system } satisfies ChildMessage);
    }
  });
  process.send!({ port: (server.address() as AddressInfo).port } satisfies ChildMessage);
}

// ---- the client side, in this process --------------------------------------------------------------

interface ServerChild {
  readonly url: string;
  connectionsAccepted(): Promise<number>;
  serverCpuMicros(): Promise<number>;
  stop(): Promise<void>;
}

function nextMessage(child: ChildProcess): Promise<ChildMessage> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => reject(new Error(`the HTTP bench server exited (${code})`));
    child.once('exit', onExit);
    child.once('message', (message: ChildMessage) => {
      child.off('exit', onExit);
      resolve(message);
    });
  });
}

async function ask<Reply extends ChildMessage>(child: ChildProcess, question: ParentMessage): Promise<Reply> {
  const reply = nextMessage(child);
  child.send(question);
  return (await reply) as Reply;
}

/** `serverFlags`: extra node flags for the server child (e.g. `--cpu-prof` to profile it). */
async function startServer(entrant: HttpServerName, serverFlags: readonly string[] = []): Promise<ServerChild> {
  const { child, ready, stop } = await startServerChild<{ port: number }>(
    THIS_FILE,
    [SERVE_FLAG, entrant],
    serverFlags,
  );
  return {
    url: `http://127.0.0.1:${ready.port}${MCP_PATH}`,
    connectionsAccepted: async () => (await ask<{ connections: number }>(child, 'connections')).connections,
    serverCpuMicros: async () => (await ask<{ cpuMicros: number }>(child, 'cpu')).cpuMicros,
    stop,
  };
}

/** Starts the server, connects with `connect`, and stops the server when that fails or the pair closes. */
export async function withServer(
  entrant: HttpServerName,
  connect: (url: string) => Promise<CallPair>,
  serverFlags?: readonly string[],
): Promise<HttpCallPair> {
  const server = await startServer(entrant, serverFlags);
  let pair: CallPair | undefined;
  try {
    pair = await connect(server.url);
    const warmUntil = performance.now() + WARM_UP_MS;
    while (performance.now() < warmUntil) await pair.callEcho();
  } catch (error) {
    await pair?.close().catch(() => undefined);
    await server.stop();
    throw error;
  }
  const { callEcho, close } = pair;
  return {
    callEcho,
    connectionsAccepted: server.connectionsAccepted,
    serverCpuMicros: server.serverCpuMicros,
    close: async () => {
      try {
        await close();
      } finally {
        await server.stop();
      }
    },
  };
}

async function connectOurs(url: string): Promise<CallPair> {
  // The transport's default agent: keep-alive, one per transport, destroyed when it closes.
  const client = await new Client(CLIENT_INFO, HANDSHAKE_ERA).connect(new StreamableHttpClientTransport(url));
  return {
    callEcho: () => client.callTool('echo', ECHO_ARGUMENTS),
    close: async () => void (await client.close()),
  };
}

async function connectSdk(url: string): Promise<CallPair> {
  const transport = new SdkStreamableHttpClientTransport(new URL(url));
  const client = new SdkClient(CLIENT_INFO);
  await client.connect(transport);
  // The SDK hands one AbortSignal to every fetch and undici adds a listener to it per request: after ~1,500
  // calls Node warns on every call. Only the warning is silenced; the listeners (the SDK's real cost) stay.
  const signal = (transport as unknown as { _abortController?: AbortController })._abortController?.signal;
  if (signal) setMaxListeners(0, signal);
  return {
    callEcho: () => client.callTool({ name: 'echo', arguments: ECHO_ARGUMENTS }),
    close: async () => {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    },
  };
}

async function connectBare(url: string): Promise<CallPair> {
  const agent = new http.Agent({ keepAlive: true });
  let nextId = 0;
  const callEcho = () =>
    new Promise<unknown>((resolve, reject) => {
      const body = JSON.stringify({
        jsonrpc: '2.0',
        id: nextId++,
        method: 'tools/call',
        params: { name: 'echo', arguments: ECHO_ARGUMENTS },
      });
      const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
      const request = http.request(url, { method: 'POST', agent, headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')).result));
        response.on('error', reject);
      });
      request.on('error', reject);
      request.end(body);
    });
  // The first answer proves the server is up.
  await callEcho();
  return { callEcho, close: async () => agent.destroy() };
}

const CONNECTORS: Readonly<Record<HttpEntrantName, (url: string) => Promise<CallPair>>> = {
  ours: connectOurs,
  sdk: connectSdk,
  bare: connectBare,
};

/** One entrant's client connected to its server in a child process started with `serverFlags`. */
export function connectHttpEntrant(entrant: HttpEntrantName, serverFlags?: readonly string[]): Promise<HttpCallPair> {
  return withServer(entrant, CONNECTORS[entrant], serverFlags);
}

export const HTTP_ENTRANTS: Readonly<Record<HttpEntrantName, () => Promise<HttpCallPair>>> = {
  ours: () => connectHttpEntrant('ours'),
  sdk: () => connectHttpEntrant('sdk'),
  bare: () => connectHttpEntrant('bare'),
};

const serveIndex = process.argv.indexOf(SERVE_FLAG);
if (serveIndex !== -1 && process.argv[1] !== undefined && pathToFileURL(process.argv[1]).href === import.meta.url) {
  serve(process.argv[serveIndex + 1] as HttpServerName).catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
