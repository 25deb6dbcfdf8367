/**
 * A `node:http` listener for a request handler (or `node:https`, given a certificate and key), with the HTTP
 * limits, a clear error when it cannot listen, and a full close.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { applyHttpLimits, createMcpHttpServer } from '../../transports/http/http-server';
import type { HttpLimits } from '../../transports/http/limits';
import type { McpHttpOptions } from '../../transports/http/endpoint';
import type { ServeHttp } from './args';
import { CliFailure } from './errors';

export interface HttpListener {
  /** `http://host:port` (`https://` with TLS), with the port actually bound (`--http 0` picks one). */
  readonly origin: string;
  /** Stops listening and ends every open connection (SSE streams included). */
  close(): Promise<void>;
}

export type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void;

/** A certificate chain and its private key, PEM-encoded: served over HTTPS. */
export interface TlsCredentials {
  readonly cert: string;
  readonly key: string;
}

/** How often Node checks the header and request timeouts of open sockets, as `createMcpHttpServer` does. */
const TIMEOUT_CHECK_MS = 1_000;

/** `host` as it goes in a URL: IPv6 addresses in brackets. */
export function urlHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** The handler options `serve --http` implies: its origin lists, its limits, CORS and the health endpoint. */
export function httpHandlerOptions(http: ServeHttp): McpHttpOptions {
  return {
    ...(http.allowedHosts.length > 0 && { allowedHosts: http.allowedHosts }),
    ...(http.allowedOrigins.length > 0 && { allowedOrigins: http.allowedOrigins }),
    ...http.limits,
    ...(http.cors && { cors: http.cors }),
    ...(http.health !== undefined && { health: http.health }),
  };
}

/**
 * Listens on `host:port` with a server holding `limits` (the connection cap and timeouts; the rest default):
 * HTTPS with `tls`, else HTTP.
 */
export function listenHttp(
  handler: RequestHandler,
  port: number,
  host: string,
  limits: Partial<HttpLimits> = {},
  tls?: TlsCredentials,
): Promise<HttpListener> {
  const server = tls ? createTlsServer(handler, limits, tls) : createMcpHttpServer(handler, limits);
  const scheme = tls ? 'https' : 'http';
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const why = error.code === 'EADDRINUSE' ? 'the port is in use' : error.message;
      reject(new CliFailure(`Cannot listen on ${urlHost(host)}:${port}: ${why}`, [], { cause: error }));
    });
    server.listen(port, host, () => {
      const { port: bound } = server.address() as AddressInfo;
      resolve({
        origin: `${scheme}://${urlHost(host)}:${bound}`,
        close: () =>
          new Promise((closed) => {
            server.close(() => closed());
            server.closeAllConnections();
          }),
      });
    });
  });
}

/** An HTTPS server with the same limits; a certificate or key that does not load is a `CliFailure`. */
function createTlsServer(handler: RequestHandler, limits: Partial<HttpLimits>, { cert, key }: TlsCredentials): Server {
  let server: Server;
  try {
    server = createHttpsServer({ cert, key, connectionsCheckingInterval: TIMEOUT_CHECK_MS }, handler);
  } catch (error) {
    throw new CliFailure(`Cannot serve HTTPS with this certificate and key: ${(error as Error).message}`, [], {
      cause: error,
    });
  }
  return applyHttpLimits(server, limits);
}
