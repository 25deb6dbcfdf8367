/** A `node:http` listener for a request handler, with the HTTP limits, a clear error when it cannot listen, and a full close. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHttpServer } from '../../transports/http/http-server';
import type { HttpLimits } from '../../transports/http/limits';
import type { McpHttpOptions } from '../../transports/http/endpoint';
import type { ServeHttp } from './args';
import { CliFailure } from './errors';

export interface HttpListener {
  /** `http://host:port`, with the port actually bound (`--http 0` picks one). */
  readonly origin: string;
  /** Stops listening and ends every open connection (SSE streams included). */
  close(): Promise<void>;
}

export type RequestHandler = (request: IncomingMessage, response: ServerResponse) => void;

/** `host` as it goes in a URL: IPv6 addresses in brackets. */
export function urlHost(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** The handler options `serve --http` implies: the origin policy for its bind address, its lists, its limits. */
export function httpHandlerOptions(http: ServeHttp): McpHttpOptions {
  return {
    ...(http.allowedHosts.length > 0 && { allowedHosts: http.allowedHosts }),
    ...(http.allowedOrigins.length > 0 && { allowedOrigins: http.allowedOrigins }),
    ...http.limits,
  };
}

/** Listens on `host:port` with a server holding `limits` (the connection cap and timeouts; the rest default). */
export function listenHttp(
  handler: RequestHandler,
  port: number,
  host: string,
  limits: Partial<HttpLimits> = {},
): Promise<HttpListener> {
  const server = createMcpHttpServer(handler, limits);
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const why = error.code === 'EADDRINUSE' ? 'the port is in use' : error.message;
      reject(new CliFailure(`Cannot listen on ${urlHost(host)}:${port}: ${why}`, [], { cause: error }));
    });
    server.listen(port, host, () => {
      const { port: bound } = server.address() as AddressInfo;
      resolve({
        origin: `http://${urlHost(host)}:${bound}`,
        close: () =>
          new Promise((closed) => {
            server.close(() => closed());
            server.closeAllConnections();
          }),
      });
    });
  });
}
