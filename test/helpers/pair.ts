import { afterEach } from 'vitest';
import { Client, type ClientOptions } from '../../lib/client/client';
import type { Connection } from '../../lib/core/connection';
import type { ServerDefinition } from '../../lib/server/definition';
import { Server, type ServerConnection } from '../../lib/server/server';
import { createMemoryPair, type MemoryPairOptions } from '../../transports/memory';
import { RawPeer } from './raw-peer';
import { recordEmitted } from './schema';

const recorders: { assertValid(): void }[] = [];

/** Validates everything `connection` emits against the official schema; checked after each test. */
export function validateEmitted(connection: Connection): void {
  recorders.push(recordEmitted(connection));
}

afterEach(() => {
  const pending = recorders.splice(0);
  for (const recorder of pending) recorder.assertValid();
});

export interface Pair {
  readonly client: Client;
  readonly server: Server;
  readonly serverConnection: ServerConnection;
}

/** A server for `definition` and a client connected to it in memory; everything both emit is schema-checked. */
export async function connectPair(
  definition: ServerDefinition,
  clientOptions: ClientOptions = {},
  transportOptions: MemoryPairOptions = {},
): Promise<Pair> {
  const [clientSide, serverSide] = createMemoryPair(transportOptions);
  const server = new Server(definition);
  const serverConnection = server.connect(serverSide);
  const client = new Client({ name: 'test-client', version: '1.0.0' }, clientOptions);
  validateEmitted(serverConnection);
  validateEmitted(client);
  await client.connect(clientSide);
  return { client, server, serverConnection };
}

/** A server for `definition` driven by a raw peer that plays the client (for input our client would never send). */
export function serveRaw(definition: ServerDefinition): {
  server: Server;
  connection: ServerConnection;
  peer: RawPeer;
} {
  const [peerSide, serverSide] = createMemoryPair();
  const server = new Server(definition);
  const connection = server.connect(serverSide);
  validateEmitted(connection);
  return { server, connection, peer: new RawPeer(peerSide) };
}

/** `count` clients connected to one `server` in memory, everything they and the server emit schema-checked. */
export async function connectClients(server: Server, count: number, options: ClientOptions = {}): Promise<Client[]> {
  const clients: Client[] = [];
  for (let i = 0; i < count; i++) {
    const [clientSide, serverSide] = createMemoryPair();
    validateEmitted(server.connect(serverSide));
    const client = new Client({ name: `client-${i}`, version: '1.0.0' }, options);
    validateEmitted(client);
    clients.push(await client.connect(clientSide));
  }
  return clients;
}
