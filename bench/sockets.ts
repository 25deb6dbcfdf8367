/**
 * The socket rows: our `Client` and `Server` (the shared one, as in-process) in this one process, joined by
 * a real unix socket in os.tmpdir(), once with `FramedTransport` (length-prefixed msgpack) on each end and
 * once with JSON lines (`StdioServerTransport`, i.e. our `LineStream`, over the socket) on each end.
 */
import { createConnection, createServer, type Socket } from 'node:net';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FramedTransport } from '../transports/framed';
import { StdioServerTransport } from '../transports/stdio';
import type { Transport } from '../transports/transport';
import type { CallPair } from './contender';
import { connectOnSharedServerOver } from './ours';

let socketCount = 0;

/** Both ends of one connected unix socket. The listener is closed (and its file removed) once it has accepted. */
async function connectedUnixSockets(): Promise<[client: Socket, server: Socket]> {
  const path = join(tmpdir(), `switchboard-bench-${process.pid}-${socketCount++}.sock`);
  rmSync(path, { force: true });
  const listener = createServer();
  try {
    const accepted = new Promise<Socket>((resolve, reject) => {
      listener.once('connection', resolve);
      listener.once('error', reject);
    });
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(path, resolve);
    });
    const client = createConnection(path);
    const [, server] = await Promise.all([
      new Promise<void>((resolve, reject) => client.once('connect', resolve).once('error', reject)),
      accepted,
    ]);
    return [client, server];
  } finally {
    listener.close();
    rmSync(path, { force: true });
  }
}

type TransportOver = (socket: Socket) => Transport;

const framed: TransportOver = (socket) => new FramedTransport(socket);
const jsonLines: TransportOver = (socket) => new StdioServerTransport({ input: socket, output: socket });

async function connectOverSocket(transportOver: TransportOver): Promise<CallPair> {
  const [clientSocket, serverSocket] = await connectedUnixSockets();
  const destroy = () => {
    clientSocket.destroy();
    serverSocket.destroy();
  };
  let pair;
  try {
    pair = await connectOnSharedServerOver(transportOver(clientSocket), transportOver(serverSocket));
  } catch (error) {
    destroy();
    throw error;
  }
  const { callEcho } = pair;
  const closePair = pair.close;
  return {
    callEcho,
    close: async () => {
      try {
        await closePair();
      } finally {
        destroy();
      }
    },
  };
}

export const SOCKET_ENTRANTS: Readonly<Record<'framed' | 'lines', () => Promise<CallPair>>> = {
  framed: () => connectOverSocket(framed),
  lines: () => connectOverSocket(jsonLines),
};
