/**
 * MCP over HTTP as a web-standard fetch handler, `(request: Request) => Promise<Response>`: the endpoint of
 * `createMcpHttpHandler` (Streamable HTTP in both eras, the legacy HTTP+SSE endpoints, CORS, health, auth)
 * on the web port of web-exchange.ts, for Bun, Deno, Cloudflare Workers, Hono, or Node through a fetch
 * adapter. The same code serves `node:http`, which hands its own request and response to it directly.
 */
import { createMcpHttpHandler, type McpHttpOptions } from './endpoint';
import type { HttpListener } from './http-listener';
import type { SessionServer } from './session-server';
import { remoteAddressOf, WebReply, WebRequest } from './web-exchange';

/** The options of `createMcpHttpHandler`: one endpoint, whichever way HTTP reaches it. */
export type McpFetchOptions = McpHttpOptions;

/** A fetch handler serving MCP sessions. */
export interface McpFetchHandler {
  /**
   * Answers `request`. `context`: what the runtime passes beside it, read for the client's address where it
   * has one (Deno's `info`, Bun's `server`, @hono/node-server's `env`); anything else is ignored.
   */
  (request: Request, context?: unknown): Promise<Response>;
  /** Sessions currently open. */
  readonly sessionCount: number;
  /** Closes every session. */
  close(): Promise<void>;
}

/** Serves `server` as `createMcpHttpHandler` does, answering fetch `Request`s with `Response`s. */
export function createMcpFetchHandler(server: SessionServer, options: McpFetchOptions = {}): McpFetchHandler {
  return fetchHandlerOf(createMcpHttpHandler(server, options));
}

/** `listener` (any of the server transports) answering fetch `Request`s. */
export function fetchHandlerOf(listener: HttpListener): McpFetchHandler {
  const handler = (request: Request, context?: unknown): Promise<Response> => {
    const incoming = new WebRequest(request, remoteAddressOf(request, context));
    const reply = new WebReply();
    const gone = () => reply.gone();
    request.signal?.addEventListener('abort', gone);
    reply.once('close', () => {
      request.signal?.removeEventListener('abort', gone);
      incoming.stopReading();
    });
    listener(incoming, reply);
    return reply.response;
  };
  return Object.defineProperties(handler, {
    sessionCount: { get: () => listener.sessionCount },
    close: { value: () => listener.close() },
  }) as McpFetchHandler;
}
