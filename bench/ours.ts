/**
 * mcp-switchboard fixtures: a `Server` with one `echo` tool and a `Client`, linked by `createMemoryPair`
 * (or by any pair of transports, for the socket rows).
 */
import type { Subscription } from 'rxjs';
import { Client } from '../lib/client/client';
import { systemClock } from '../lib/core/clock';
import { CorrelationTable } from '../lib/core/correlation';
import type { JsonObject } from '../lib/jsonrpc/types';
import { defineServer, type ServerDefinition } from '../lib/server/definition';
import { Server, type ServerConnection } from '../lib/server/server';
import type { ToolDefinition } from '../lib/server/tools';
import { createMemoryPair } from '../transports/memory';
import type { Transport } from '../transports/transport';
import type { BenchPair, Contender, CorrelationProbe, PairFactory } from './contender';

export interface OursPair extends BenchPair {
  readonly client: Client;
  readonly serverConnection: ServerConnection;
}

/**
 * Defined once: under tsx (esbuild's keepNames) a function created in an object literal is renamed with
 * `Object.defineProperty` each time, a cost the SDK's fixture (an argument, never renamed) does not pay
 * and that the built package does not have either.
 */
const echoHandler: ToolDefinition['handler'] = ({ text }) => ({ content: [{ type: 'text', text: String(text) }] });

/** Also served by the modern rows' server (bench/modern-servers.ts). */
export function echoTool(): ToolDefinition {
  return {
    name: 'echo',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    handler: echoHandler,
  };
}

/** Also served by the stdio child, bench/fixtures/stdio-echo-ours.ts. */
export function echoServerDefinition(): ServerDefinition {
  return defineServer({ name: 'bench-switchboard', version: '1.0.0', tools: [echoTool()] });
}

async function connectTo(server: Server): Promise<OursPair> {
  // Explicitly unfrozen: the production path, whatever SWITCHBOARD_FREEZE_MESSAGES says.
  const [clientSide, serverSide] = createMemoryPair({ freeze: false });
  return connectTransports(server, clientSide, serverSide);
}

async function connectTransports(server: Server, clientSide: Transport, serverSide: Transport): Promise<OursPair> {
  const serverConnection = server.connect(serverSide);
  const client = await new Client({ name: 'bench-client', version: '1.0.0' }).connect(clientSide);
  return {
    client,
    serverConnection,
    callEcho: () => client.callTool('echo', { text: 'hi' }),
    ping: () => client.ping(),
    notifyClient: () => serverConnection.notify('notifications/message', { level: 'info', data: 'x' }),
    onClientNotification: (listener) => {
      client.notifications$.subscribe({ next: listener, error: () => undefined });
    },
    close: async () => {
      await client.close();
      await serverConnection.closed;
    },
  };
}

let sharedServer: Server | undefined;

/** One `Server` for every pair: our server definition is immutable and meant to be shared. */
export const connectOnSharedServer = (): Promise<OursPair> =>
  connectTo((sharedServer ??= new Server(echoServerDefinition())));

/** A `Client` and a connection of the shared `Server` over the given transports (the socket rows). */
export const connectOnSharedServerOver = (clientSide: Transport, serverSide: Transport): Promise<OursPair> =>
  connectTransports((sharedServer ??= new Server(echoServerDefinition())), clientSide, serverSide);

/** A new definition and `Server` per pair, as the SDK builds a new `McpServer` per pair. */
const connectOnOwnServer: PairFactory = () => connectTo(new Server(echoServerDefinition()));

/** A pair whose client and server connection both have a `trace$` subscriber. */
export async function connectTraced(): Promise<OursPair & { readonly traceEvents: () => number }> {
  const pair = await connectOnSharedServer();
  let events = 0;
  const count = () => void events++;
  const subscriptions: Subscription[] = [
    pair.client.trace$.subscribe(count),
    pair.serverConnection.trace$.subscribe(count),
  ];
  return {
    ...pair,
    traceEvents: () => events,
    close: async () => {
      for (const subscription of subscriptions) subscription.unsubscribe();
      await pair.close();
    },
  };
}

const EMPTY_RESULT: JsonObject = {};

async function createCorrelationProbe(): Promise<CorrelationProbe> {
  const table = new CorrelationTable({ clock: systemClock, sendCancelled() {}, reportCallbackError() {} });
  return {
    roundTrip: () => {
      const record = table.begin('ping', undefined);
      table.resolve(record.id, EMPTY_RESULT);
      return record.promise;
    },
    close: async () => {},
  };
}

export const ours: Contender = {
  name: 'ours',
  createCorrelationProbe,
  connectPair: connectOnSharedServer,
  handshakeVariants: { 'ours-shared': connectOnSharedServer, 'ours-per-pair': connectOnOwnServer },
};
