/**
 * One `node:http` listener for everything MCP over HTTP: the Streamable HTTP endpoint and, next to it, the
 * legacy HTTP+SSE endpoints for 2024-11-05 clients (the backwards-compatibility arrangement the 2025-11-25
 * transports page recommends), CORS for browser clients, and a health endpoint. Requests are routed by
 * path; any other path gets 404.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { corsPolicy, decideCors, VARY_ORIGIN, type CorsOptions, type CorsPolicy } from './cors';
import { healthAnswer, healthPathOf } from './health';
import { createHttpListener, HTTP_SERVER_OPTION_NAMES, type HttpListener } from './http-listener';
import {
  createLegacySseHandler,
  DEFAULT_MESSAGE_PATH,
  DEFAULT_SSE_PATH,
  type LegacySseHandler,
  type LegacySseOptions,
} from './legacy-sse-server';
import {
  isListedOrigin,
  refuseOrigin,
  refuseRequest,
  refuseWithHeaders,
  requestPath,
  singleHeader,
  type OriginPolicy,
} from './request-guard';
import type { SessionServer } from './session-server';
import { createStreamableHttpHandler, type StreamableHttpOptions } from './streamable-server';
import { resourceServerOf } from './http-auth';

export const DEFAULT_MCP_PATH = '/mcp';

export interface McpHttpOptions extends StreamableHttpOptions {
  /** The Streamable HTTP endpoint (default `/mcp`). */
  readonly path?: string;
  /**
   * The legacy HTTP+SSE endpoints: on by default at `/sse` and `/messages`, sharing the origin policy, keep-alive,
   * limits and connection options given here; an object overrides any of those; `false` turns them off.
   */
  readonly legacy?: boolean | LegacySseOptions;
  /**
   * Lets pages of other origins call the MCP endpoints from a browser: preflights answered, the answers
   * readable (`Mcp-Session-Id` included). Default: off (a preflight gets 405, as any `OPTIONS`).
   */
  readonly cors?: CorsOptions;
  /** `true` answers `GET /health` with 200 `{"status":"ok"}` (no token, no session); a path serves it there. Default: off. */
  readonly health?: boolean | string;
}

/** The listener of both transports: `sessionCount` and `close()` cover the sessions of both. */
export type McpHttpHandler = HttpListener;

function legacyOptionsOf(options: McpHttpOptions): LegacySseOptions | undefined {
  if (options.legacy === false) return undefined;
  const shared: Record<string, unknown> = {};
  for (const name of HTTP_SERVER_OPTION_NAMES) shared[name] = options[name];
  return { ...shared, ...(typeof options.legacy === 'object' ? options.legacy : {}) };
}

/** `options` whose Origin check also accepts the origins `cors` allows (the Host check is unchanged). */
function withCorsOrigins<T extends OriginPolicy>(options: T, cors: CorsPolicy | undefined): T {
  if (!cors) return options;
  const listed = options.allowedOrigins;
  return { ...options, allowedOrigins: (origin: string) => cors.allows(origin) || isListedOrigin(listed, origin) };
}

/** Serves `server` over Streamable HTTP at `options.path` and, unless `legacy: false`, over HTTP+SSE. */
export function createMcpHttpHandler(server: SessionServer, givenOptions: McpHttpOptions = {}): McpHttpHandler {
  // One resource server for both transports: one key set cache, one introspection cache.
  const auth = resourceServerOf(givenOptions.auth);
  const cors = givenOptions.cors && corsPolicy(givenOptions.cors, auth !== undefined);
  const unguarded = auth ? { ...givenOptions, auth } : givenOptions;
  const options = withCorsOrigins(unguarded, cors);
  const path = options.path ?? DEFAULT_MCP_PATH;
  const healthPath = healthPathOf(options.health);
  const unguardedLegacy = legacyOptionsOf(unguarded);
  const legacyOptions = unguardedLegacy && withCorsOrigins(unguardedLegacy, cors);
  const legacyPaths = legacyOptions
    ? [legacyOptions.ssePath ?? DEFAULT_SSE_PATH, legacyOptions.messagePath ?? DEFAULT_MESSAGE_PATH]
    : [];
  const paths = [path, ...legacyPaths, ...(healthPath === undefined ? [] : [healthPath])];
  if (new Set(paths).size !== paths.length) {
    throw new RangeError(`The MCP endpoint paths must differ: got ${paths.join(', ')}`);
  }
  const streamable = createStreamableHttpHandler(server, options);
  const legacy: LegacySseHandler | undefined = legacyOptions && createLegacySseHandler(server, legacyOptions);
  // Each MCP path's origin policy: the CORS step checks origins as the transport behind the path will.
  const guards = new Map<string, OriginPolicy>(legacyPaths.map((legacyPath) => [legacyPath, legacyOptions!]));
  guards.set(path, options);

  return createHttpListener(
    (request, response) => {
      const requested = requestPath(request);
      if (requested === healthPath) return answerHealth(request, response);
      // The metadata document is served by the Streamable HTTP handler, at its own well-known path.
      if (auth?.metadataPaths.includes(requested)) return streamable(request, response);
      const guard = cors && guards.get(requested);
      if (guard && answeredByCors(request, response, cors, guard)) return;
      if (requested === path) streamable(request, response);
      else if (legacy)
        legacy(request, response); // it answers 404 for paths other than its own
      else refuseRequest(response, 404, 'Not Found');
    },
    {
      count: () => streamable.sessionCount + (legacy?.sessionCount ?? 0),
      close: async () => {
        await Promise.all([streamable.close(), legacy?.close()]);
      },
    },
  );
}

function answerHealth(request: IncomingMessage, response: ServerResponse): void {
  const { status, headers, body } = healthAnswer(request.method ?? 'GET');
  response.writeHead(status, headers as string[]).end(body);
}

/**
 * The CORS step of a request to an MCP path: answers a preflight (or refuses it), or sets the CORS headers
 * of the answer the transport will write; true when it answered. The origin guard has the last word: a
 * request it refuses gets its 403 here, with no CORS headers.
 */
function answeredByCors(
  request: IncomingMessage,
  response: ServerResponse,
  cors: CorsPolicy,
  guard: OriginPolicy,
): boolean {
  if (request.headers.origin !== undefined) {
    const forbidden = refuseOrigin(request, guard);
    if (forbidden) {
      refuseWithHeaders(response, 403, `Forbidden: ${forbidden}`, VARY_ORIGIN, false);
      return true;
    }
  }
  const verdict = decideCors(cors, request.method ?? 'GET', (name) => singleHeader(request, name));
  switch (verdict.kind) {
    case 'serve':
      for (let index = 0; index < verdict.headers.length; index += 2) {
        response.setHeader(verdict.headers[index]!, verdict.headers[index + 1]!);
      }
      return false;
    case 'preflight':
      response.writeHead(verdict.status, verdict.headers as string[]).end();
      return true;
    case 'refuse':
      refuseWithHeaders(response, verdict.status, verdict.message, verdict.headers, false);
      return true;
  }
}
