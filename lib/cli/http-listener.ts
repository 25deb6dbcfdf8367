/** A `node:http` listener for a request handler, with a clear error when it cannot listen and a full close. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
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

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

export function listenHttp(handler: RequestHandler, port: number, host: string): Promise<HttpListener> {
  const server = createServer(handler);
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
