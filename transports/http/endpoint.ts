/**
 * One request listener for everything MCP over HTTP (`node:http` serves it as it is, `createMcpFetchHandler` on the
 * web): the Streamable HTTP endpoint and, next to it, the
 * legacy HTTP+SSE endpoints for 2024-11-05 clients (the backwards-compatibility arrangement the 2025-11-25
 * transports page recommends), CORS for browser clients, and a health endpoint. Requests are routed by
 * path; any other path gets 404.
 */
import type { ServerRequest, ServerReply } from './server-port';
import { healthAnswer, healthPathOf } from './health';
import { createHttpListener, HTTP_SERVER_OPTION_NAMES, type HttpListener } from './http-listener';
import {
  createLegacySseHandler,
  DEFAULT_MESSAGE_PATH,
  DEFAULT_SSE_PATH,
  type LegacySseHandler,
  type LegacySseOptions,
} from './legacy-sse-server';
import { refuseRequest, requestPath } from './request-guard';
import type { SessionServer } from './session-server';
import { createStreamableHttpHandler, type StreamableHttpOptions } from './streamable-server';
import { resourceServerOf } from './http-auth';

export const DEFAULT_MCP_PATH = '/mcp';

export interface McpHttpOptions extends StreamableHttpOptions {
  /** The Streamable HTTP endpoint (default `/mcp`). */
  readonly path?: string;
  /**
   * The legacy HTTP+SSE endpoints: on by default at `/sse` and `/messages`, sharing the origin policy, CORS,
   * keep-alive, limits and connection options given here; an object overrides any of those; `false` turns them off
   * (and so does `sessions: false`).
   */
  readonly legacy?: boolean | LegacySseOptions;
  /** `true` answers `GET /health` with 200 `{"status":"ok"}` (no token, no session); a path serves it there. Default: off. */
  readonly health?: boolean | string;
}

/** The listener of both transports: `sessionCount` and `close()` cover the sessions of both. */
export type McpHttpHandler = HttpListener;

function legacyOptionsOf(options: McpHttpOptions): LegacySseOptions | undefined {
  if (options.sessions === false) {
    // The legacy transport is nothing but sessions.
    if (options.legacy) throw new RangeError('legacy endpoints need sessions: drop legacy, or sessions: false');
    return undefined;
  }
  if (options.legacy === false) return undefined;
  const shared: Record<string, unknown> = {};
  for (const name of HTTP_SERVER_OPTION_NAMES) shared[name] = options[name];
  shared.cors = options.cors;
  return { ...shared, ...(typeof options.legacy === 'object' ? options.legacy : {}) };
}

/** Serves `server` over Streamable HTTP at `options.path` and, unless `legacy: false`, over HTTP+SSE. */
export function createMcpHttpHandler(server: SessionServer, givenOptions: McpHttpOptions = {}): McpHttpHandler {
  // One resource server for both transports: one key set cache, one introspection cache.
  const auth = resourceServerOf(givenOptions.auth);
  const options = auth ? { ...givenOptions, auth } : givenOptions;
  const path = options.path ?? DEFAULT_MCP_PATH;
  const healthPath = healthPathOf(options.health);
  const legacyOptions = legacyOptionsOf(options);
  const legacyPaths = legacyOptions
    ? [legacyOptions.ssePath ?? DEFAULT_SSE_PATH, legacyOptions.messagePath ?? DEFAULT_MESSAGE_PATH]
    : [];
  const paths = [path, ...legacyPaths, ...(healthPath === undefined ? [] : [healthPath])];
  if (new Set(paths).size !== paths.length) {
    throw new RangeError(`The MCP endpoint paths must differ: got ${paths.join(', ')}`);
  }
  const streamable = createStreamableHttpHandler(server, options);
  // Each transport runs the CORS step (cors-step.ts) for its own paths, with its own origin policy.
  const legacy: LegacySseHandler | undefined = legacyOptions && createLegacySseHandler(server, legacyOptions);

  return createHttpListener(
    (request, response) => {
      const requested = requestPath(request);
      if (requested === healthPath) return answerHealth(request, response);
      // The metadata document is served by the Streamable HTTP handler, at its own well-known path.
      if (auth?.metadataPaths.includes(requested)) return streamable(request, response);
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

function answerHealth(request: ServerRequest, response: ServerReply): void {
  const { status, headers, body } = healthAnswer(request.method ?? 'GET');
  response.writeHead(status, headers as string[]).end(body);
}
