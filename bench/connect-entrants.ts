/**
 * The contenders of the connect rows (bench/connect.ts), each a way to open one connected client/server pair
 * in process: our `Client` in each era against one shared `Server`, SDK v1 and SDK v2 (`Client` + a new
 * `McpServer` per pair: an SDK server takes one transport), and a bare JSON echo (one JSON-RPC round trip,
 * stringified and parsed on both ends, a microtask each way: the floor).
 */
import { Client as SdkV2Client, InMemoryTransport as SdkV2MemoryTransport } from '@modelcontextprotocol/client';
import { Client as SdkV1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport as SdkV1MemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer as SdkV2Server } from '@modelcontextprotocol/server';
import { Client, type ClientOptions } from '../lib/client/client';
import { Server } from '../lib/server/server';
import { createMemoryPair } from '../transports/memory';
import { echoServerDefinition } from './ours';
import { createEchoServer } from './sdk';

/** What a connect loop keeps of a pair: the way to close it. */
export interface OpenedPair {
  close(): Promise<unknown>;
}

export type OpenPair = () => Promise<OpenedPair>;

const CLIENT_INFO = { name: 'bench-client', version: '1.0.0' };

let sharedServer: Server | undefined;

/** One `Server` for every pair of every era (the way a hub or an agent's host serves). */
export function connectSharedServer(): Server {
  return (sharedServer ??= new Server(echoServerDefinition()));
}

/** Our `Client` with `options` on an unfrozen memory pair (the production path) to the shared `Server`. */
export function oursIn(options: ClientOptions): OpenPair {
  return async () => {
    const [clientSide, serverSide] = createMemoryPair({ freeze: false });
    connectSharedServer().connect(serverSide);
    return new Client(CLIENT_INFO, options).connect(clientSide);
  };
}

const sdkV1: OpenPair = async () => {
  const [clientSide, serverSide] = SdkV1MemoryTransport.createLinkedPair();
  const server = createEchoServer(false);
  await server.connect(serverSide);
  const client = new SdkV1Client(CLIENT_INFO);
  await client.connect(clientSide);
  return {
    close: async () => {
      await client.close();
      await server.close();
    },
  };
};

/** SDK v2's `McpServer` (`@modelcontextprotocol/server` 2.4.0) with the `echo` tool (zod input schema). */
async function sdkV2EchoServer(): Promise<SdkV2Server> {
  const { z } = await import('zod');
  const server = new SdkV2Server({ name: 'bench-sdk-v2', version: '1.0.0' });
  server.registerTool('echo', { inputSchema: z.object({ text: z.string() }) }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  return server;
}

/** SDK v2 (`@modelcontextprotocol/client` 2.4.0) with its default negotiation (the handshake era). */
const sdkV2: OpenPair = async () => {
  const [clientSide, serverSide] = SdkV2MemoryTransport.createLinkedPair();
  const server = await sdkV2EchoServer();
  await server.connect(serverSide);
  const client = new SdkV2Client(CLIENT_INFO);
  await client.connect(clientSide);
  return {
    close: async () => {
      await client.close();
      await server.close();
    },
  };
};

const INITIALIZE_RESULT = {
  protocolVersion: '2025-11-25',
  capabilities: { tools: {} },
  serverInfo: { name: 'bare', version: '1.0.0' },
};

/** A bare "handshake": one JSON-RPC request and its answer, stringified and parsed, a microtask each way. */
const bare: OpenPair = () =>
  new Promise((resolve) => {
    const request = JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: CLIENT_INFO },
    });
    queueMicrotask(() => {
      const received = JSON.parse(request) as { id: number };
      const answer = JSON.stringify({ jsonrpc: '2.0', id: received.id, result: INITIALIZE_RESULT });
      queueMicrotask(() => {
        JSON.parse(answer);
        resolve({ close: () => Promise.resolve() });
      });
    });
  });

/** Every contender of the kept-alive connect row, by entrant name. */
export const CONNECT_ENTRANTS: Readonly<Record<string, OpenPair>> = {
  'ours-auto': oursIn({}),
  'ours-handshake': oursIn({ era: 'handshake' }),
  'ours-modern': oursIn({ era: 'modern' }),
  'sdk-v1': sdkV1,
  'sdk-v2': sdkV2,
  bare,
};

/** Our three eras: the connect-then-close row. */
export const OUR_ERAS: Readonly<Record<string, OpenPair>> = {
  'ours-auto': CONNECT_ENTRANTS['ours-auto']!,
  'ours-handshake': CONNECT_ENTRANTS['ours-handshake']!,
  'ours-modern': CONNECT_ENTRANTS['ours-modern']!,
};
