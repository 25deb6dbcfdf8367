/**
 * What the HTTP server transports have in common: the options both take, the shape of the
 * request listener each returns (and the combined endpoint too), and the one way to build it.
 */
import type { ServerRequest, ServerReply } from './server-port';
import type { ConnectionOptions } from '../../lib/core/connection';
import { ErrorCode } from '../../lib/jsonrpc/errors';
import type { ClientKey } from './client-key';
import type { HttpAuthOption } from './http-auth';
import { HTTP_LIMIT_NAMES, type HttpLimits } from './limits';
import { refuseRequest, type OriginPolicy } from './request-guard';

/**
 * What both server transports take: the origin policy, the limits of `HttpLimits` (each defaulting to
 * `DEFAULT_HTTP_LIMITS`; the connection ones only matter to `applyHttpLimits`), and how clients are told apart.
 */
export interface HttpServerOptions extends OriginPolicy, Partial<HttpLimits> {
  /** An SSE stream with nothing to send gets a `: keep-alive` comment this often (default 15 s; 0: never). */
  readonly keepAliveMs?: number;
  /** Who a request counts against in `maxSessionsPerClient` and `maxListenStreamsPerClient` (default: its remote address). */
  readonly clientKey?: ClientKey;
  /** Passed to `server.connect` for every session. */
  readonly connectionOptions?: ConnectionOptions;
  /**
   * Requires an OAuth access token on every request (the endpoint is an OAuth resource server) and serves
   * the Protected Resource Metadata document; see `ResourceServerOptions`. Default: no authentication.
   */
  readonly auth?: HttpAuthOption;
}

/** The options of `HttpServerOptions`, by name: what the combined endpoint hands to both transports. */
export const HTTP_SERVER_OPTION_NAMES = [
  'allowedOrigins',
  'allowedHosts',
  'keepAliveMs',
  'clientKey',
  'connectionOptions',
  'auth',
  ...HTTP_LIMIT_NAMES,
] as const satisfies readonly (keyof HttpServerOptions)[];

export const DEFAULT_KEEP_ALIVE_MS = 15_000;

/**
 * A request listener serving MCP sessions, on the server port (server-port.ts): `node:http` calls it with its own
 * request and response, as `http.createServer(listener)`; `fetchHandlerOf` calls it with the web port's.
 */
export interface HttpListener {
  (request: ServerRequest, response: ServerReply): void;
  /** Sessions currently open. */
  readonly sessionCount: number;
  /** Closes every session. */
  close(): Promise<void>;
}

/** Answers 500 with a JSON-RPC internal error naming `error` (or drops a response whose answer had started). */
export function answerInternalError(response: ServerReply, error: unknown): void {
  refuseRequest(
    response,
    500,
    `Internal error: ${(error as Error)?.message ?? String(error)}`,
    ErrorCode.InternalError,
  );
}

/**
 * The listener for `handle`: a request it fails (throwing or rejecting) is answered 500 with a JSON-RPC
 * internal error, or dropped when its answer had already started.
 */
export function createHttpListener(
  handle: (request: ServerRequest, response: ServerReply) => unknown,
  sessions: { count(): number; close(): Promise<void> },
): HttpListener {
  const listener = (request: ServerRequest, response: ServerReply) => {
    try {
      const handling = handle(request, response);
      if (handling instanceof Promise) handling.catch((error: unknown) => answerInternalError(response, error));
    } catch (error) {
      answerInternalError(response, error);
    }
  };
  return Object.defineProperties(listener, {
    sessionCount: { get: sessions.count },
    close: { value: sessions.close },
  }) as HttpListener;
}
