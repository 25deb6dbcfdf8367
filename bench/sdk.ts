/**
 * @modelcontextprotocol/sdk v1 fixtures: `Client` + `McpServer` with one `echo` tool (zod input schema),
 * a new `McpServer` per pair, linked by `InMemoryTransport.createLinkedPair()`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  LATEST_PROTOCOL_VERSION,
  LoggingMessageNotificationSchema,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { BenchPair, Contender, CorrelationProbe, PairFactory } from './contender';

const CLIENT_INFO = { name: 'bench-client', version: '1.0.0' };

/** Also served by the Streamable HTTP child of bench/http.ts. */
export function createEchoServer(declareLogging: boolean): McpServer {
  const server = new McpServer(
    { name: 'bench-sdk', version: '1.0.0' },
    declareLogging ? { capabilities: { logging: {} } } : undefined,
  );
  server.registerTool('echo', { inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  return server;
}

async function connectPair(declareLogging: boolean): Promise<BenchPair> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = createEchoServer(declareLogging);
  await server.connect(serverSide);
  const client = new Client(CLIENT_INFO);
  await client.connect(clientSide);
  return {
    callEcho: () => client.callTool({ name: 'echo', arguments: { text: 'hi' } }),
    ping: () => client.ping(),
    notifyClient: () =>
      server.server.notification({ method: 'notifications/message', params: { level: 'info', data: 'x' } }),
    onClientNotification: (listener) => client.setNotificationHandler(LoggingMessageNotificationSchema, listener),
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

/** Default server options: what the handshake and heap figures measure. */
const connectWithDefaults: PairFactory = () => connectPair(false);

/** The SDK refuses to send `notifications/message` unless the server declares `logging` (ours always does). */
const connectWithLogging: PairFactory = () => connectPair(true);

const FAKE_INITIALIZE_RESULT = {
  protocolVersion: LATEST_PROTOCOL_VERSION,
  capabilities: {},
  serverInfo: { name: 'instant-answer', version: '1.0.0' },
};

/**
 * A transport with no server behind it: every request is answered inside `send`, synchronously (as
 * `InMemoryTransport` delivers), `initialize` with a valid result and anything else with `{}`.
 * Notifications and responses are dropped.
 */
class InstantAnswerTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onclose?: Transport['onclose'];
  onerror?: Transport['onerror'];

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.onclose?.();
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!('method' in message) || !('id' in message)) return;
    const result = message.method === 'initialize' ? FAKE_INITIALIZE_RESULT : {};
    this.onmessage?.({ jsonrpc: '2.0', id: message.id, result });
  }
}

async function createCorrelationProbe(): Promise<CorrelationProbe> {
  const client = new Client(CLIENT_INFO);
  await client.connect(new InstantAnswerTransport());
  return { roundTrip: () => client.ping(), close: () => client.close() };
}

export const sdk: Contender = {
  name: 'sdk',
  createCorrelationProbe,
  connectPair: connectWithLogging,
  handshakeVariants: { sdk: connectWithDefaults },
};
