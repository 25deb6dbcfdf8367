/**
 * The `node:http` server side of the HTTP limits: how many sockets may be open (in all, and per remote
 * address), and how long a client may take to send its headers, its body, or its next keep-alive request.
 * These belong to the server, not to a request handler: a socket that never completes its headers never
 * reaches one.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { httpLimits, type HttpLimits } from './limits';

/** How often Node checks the header and request timeouts of open sockets (its default is 30 s). */
const TIMEOUT_CHECK_MS = 1_000;

/** Open sockets of a server limited by `applyHttpLimits`. */
export interface ConnectionCounts {
  readonly total: number;
  /** Open sockets of `address`. */
  of(address: string): number;
}

const counted = new WeakMap<Server, ConnectionCounts>();

/** The socket counts `applyHttpLimits` keeps for `server` (undefined for a server it did not configure). */
export function connectionCounts(server: Server): ConnectionCounts | undefined {
  return counted.get(server);
}

/**
 * Gives `server` the connection and timeout limits: a socket beyond `maxConnections`, or beyond its
 * address's `maxConnectionsPerClient`, is destroyed as it arrives; headers must arrive within
 * `headersTimeoutMs` and the whole request within `headersTimeoutMs + bodyTimeoutMs` (408, then closed);
 * an idle keep-alive socket closes after `keepAliveTimeoutMs`. A server made with `node:http`'s
 * `createServer` checks those timeouts only every 30 s; `createMcpHttpServer` checks every second.
 */
export function applyHttpLimits(server: Server, limits: Partial<HttpLimits> = {}): Server {
  const { maxConnections, maxConnectionsPerClient, headersTimeoutMs, bodyTimeoutMs, keepAliveTimeoutMs } =
    httpLimits(limits);
  server.headersTimeout = headersTimeoutMs;
  server.requestTimeout = headersTimeoutMs + bodyTimeoutMs;
  server.keepAliveTimeout = keepAliveTimeoutMs;

  const perAddress = new Map<string, number>();
  let total = 0;
  const release = (address: string) => {
    total--;
    const left = perAddress.get(address)! - 1;
    if (left === 0) perAddress.delete(address);
    else perAddress.set(address, left);
  };
  // Before `node:http`'s own listener: a refused socket never gets a parser.
  server.prependListener('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    const mine = perAddress.get(address) ?? 0;
    if (total >= maxConnections || mine >= maxConnectionsPerClient) {
      socket.destroy();
      return;
    }
    total++;
    perAddress.set(address, mine + 1);
    socket.once('close', () => release(address));
  });
  counted.set(server, {
    get total() {
      return total;
    },
    of: (address) => perAddress.get(address) ?? 0,
  });
  return server;
}

/** A `node:http` server for `handler`, with `limits` applied (see `applyHttpLimits`). */
export function createMcpHttpServer(handler: RequestListener, limits: Partial<HttpLimits> = {}): Server {
  return applyHttpLimits(createServer({ connectionsCheckingInterval: TIMEOUT_CHECK_MS }, handler), limits);
}
