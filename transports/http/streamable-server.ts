import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { classifyMessage, describeInvalid } from '../../lib/jsonrpc/classify';
import { encodeFrame } from '../../lib/jsonrpc/codec';
import { ErrorCode } from '../../lib/jsonrpc/errors';
import type { JsonRpcBatch, JsonRpcMessage } from '../../lib/jsonrpc/types';
import type { ConnectionOptions } from '../../lib/core/connection';
import type { Server } from '../../lib/server/server';
import { isSupportedVersion } from '../../lib/protocol/versions';
import { MemoryEventStore, type EventStore } from './event-store';
import { HttpSession, type ResponseMode } from './http-session';
import { readBody } from './read-body';
import { mediaTypes, refuseOrigin, singleHeader, type OriginPolicy } from './request-guard';

export type { ResponseMode } from './http-session';

export interface StreamableHttpOptions extends OriginPolicy {
  /** How POSTs carrying requests are answered (default 'auto'; see `ResponseMode`). */
  readonly responseMode?: ResponseMode;
  /** Where SSE events are kept for resumption (default: a bounded `MemoryEventStore`). */
  readonly eventStore?: EventStore;
  /** The reconnection delay sent to 2025-11-25 clients with each stream's priming event (default 1000 ms). */
  readonly retryMs?: number;
  /** A session with no open request or stream for this long is closed (default 30 minutes). */
  readonly idleTimeoutMs?: number;
  /** Sessions open at once; an `initialize` beyond it gets 503 (default 10,000). */
  readonly maxSessions?: number;
  /** Largest POST body accepted; larger ones get 413 (default 4 MiB). */
  readonly maxBodyBytes?: number;
  /** Passed to `server.connect` for every session. */
  readonly connectionOptions?: ConnectionOptions;
}

/** A `node:http` request listener serving one MCP endpoint (POST, GET, DELETE). */
export interface StreamableHttpHandler {
  (request: IncomingMessage, response: ServerResponse): void;
  /** Sessions currently open. */
  readonly sessionCount: number;
  /** Closes every session. */
  close(): Promise<void>;
}

const SESSION_HEADER = 'mcp-session-id';
const VERSION_HEADER = 'mcp-protocol-version';

function refuse(response: ServerResponse, status: number, message: string, code: number = ErrorCode.InvalidRequest) {
  if (response.headersSent) return void response.destroy();
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(encodeFrame({ jsonrpc: '2.0', error: { code, message } }));
}

/**
 * The server side of the Streamable HTTP transport: each `initialize` POST without a session opens one
 * (a transport given to `server.connect`), named by the `MCP-Session-Id` response header. A GET with a
 * `Last-Event-ID` the event store does not know opens a fresh standalone stream rather than failing with
 * 404, which a client would take for "session gone".
 */
export function createStreamableHttpHandler(
  server: Server,
  options: StreamableHttpOptions = {},
): StreamableHttpHandler {
  const store = options.eventStore ?? new MemoryEventStore();
  const maxSessions = options.maxSessions ?? 10_000;
  const maxBodyBytes = options.maxBodyBytes ?? 4 * 1024 * 1024;
  const sessions = new Map<string, HttpSession>();
  const sessionConfig = {
    store,
    responseMode: options.responseMode ?? 'auto',
    retryMs: options.retryMs ?? 1000,
    idleTimeoutMs: options.idleTimeoutMs ?? 30 * 60 * 1000,
    onClosed: (session: HttpSession) => sessions.delete(session.sessionId),
  } as const;

  /** The session the request names; answers 400 or 404 itself when there is none. */
  function sessionOf(request: IncomingMessage, response: ServerResponse): HttpSession | undefined {
    const id = singleHeader(request, SESSION_HEADER);
    if (id === undefined) return void refuse(response, 400, 'Bad Request: the MCP-Session-Id header is required');
    const session = sessions.get(id);
    if (!session || session.closed) return void refuse(response, 404, 'Session not found');
    return session;
  }

  function refuseVersionHeader(request: IncomingMessage, response: ServerResponse): boolean {
    const version = singleHeader(request, VERSION_HEADER);
    if (version === undefined || isSupportedVersion(version)) return false;
    refuse(response, 400, `Bad Request: unsupported MCP-Protocol-Version ${version}`);
    return true;
  }

  function openSession(): HttpSession {
    const session = new HttpSession(randomUUID(), sessionConfig);
    sessions.set(session.sessionId, session);
    session.connection = server.connect(session, options.connectionOptions);
    return session;
  }

  async function post(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const accepted = mediaTypes(singleHeader(request, 'accept'));
    if (!accepted.includes('application/json') || !accepted.includes('text/event-stream')) {
      return refuse(response, 406, 'Not Acceptable: Accept must list application/json and text/event-stream');
    }
    if (mediaTypes(singleHeader(request, 'content-type'))[0] !== 'application/json') {
      return refuse(response, 415, 'Unsupported Media Type: Content-Type must be application/json');
    }
    if (refuseVersionHeader(request, response)) return;
    const named = singleHeader(request, SESSION_HEADER) !== undefined;
    let session = named ? sessionOf(request, response) : undefined;
    if (named && !session) return;

    const text = await readBody(request, maxBodyBytes);
    if (text === 'too-large') return refuse(response, 413, `Payload Too Large: the limit is ${maxBodyBytes} bytes`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (error) {
      return refuse(response, 400, `Parse error: ${(error as Error).message}`, ErrorCode.ParseError);
    }
    const invalid = invalidity(body, session?.protocolVersion);
    if (invalid) return refuse(response, 400, invalid);

    if (!session) {
      if (
        classifyMessage(body) !== 'request' ||
        (body as JsonRpcMessage & { method: string }).method !== 'initialize'
      ) {
        return refuse(response, 400, 'Bad Request: the MCP-Session-Id header is required');
      }
      if (sessions.size >= maxSessions) return refuse(response, 503, 'Service Unavailable: too many sessions');
      session = openSession();
    } else if (session.closed) {
      return refuse(response, 404, 'Session not found');
    }
    response.setHeader(SESSION_HEADER, session.sessionId);
    session.track(response);
    session.accept(body as JsonRpcMessage | JsonRpcBatch, response);
  }

  async function get(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!mediaTypes(singleHeader(request, 'accept')).includes('text/event-stream')) {
      return refuse(response, 406, 'Not Acceptable: Accept must list text/event-stream');
    }
    if (refuseVersionHeader(request, response)) return;
    const session = sessionOf(request, response);
    if (!session) return;
    response.setHeader(SESSION_HEADER, session.sessionId);
    session.track(response);
    const lastEventId = singleHeader(request, 'last-event-id');
    if (lastEventId !== undefined) {
      const outcome = await session.resume(response, lastEventId);
      if (outcome === 'resumed') return;
    }
    if (!session.openStandalone(response)) refuse(response, 409, 'Conflict: the standalone stream is already open');
  }

  async function remove(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (refuseVersionHeader(request, response)) return;
    const session = sessionOf(request, response);
    if (!session) return;
    await (session.connection ? session.connection.close() : session.close());
    await session.close();
    response.writeHead(204).end();
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const forbidden = refuseOrigin(request, options);
    if (forbidden) return refuse(response, 403, `Forbidden: ${forbidden}`);
    switch (request.method) {
      case 'POST':
        return post(request, response);
      case 'GET':
        return get(request, response);
      case 'DELETE':
        return remove(request, response);
      default:
        response.setHeader('allow', 'GET, POST, DELETE');
        return refuse(response, 405, 'Method Not Allowed');
    }
  }

  const handler = (request: IncomingMessage, response: ServerResponse) => {
    handle(request, response).catch((error: unknown) => {
      refuse(response, 500, `Internal error: ${(error as Error)?.message ?? String(error)}`, ErrorCode.InternalError);
    });
  };
  return Object.defineProperties(handler, {
    sessionCount: { get: () => sessions.size },
    close: {
      value: async () => {
        await Promise.all([...sessions.values()].map((session) => session.connection?.close() ?? session.close()));
      },
    },
  }) as StreamableHttpHandler;
}

/** Why a parsed POST body is not acceptable JSON-RPC, or undefined. Batches need a 2025-03-26 session. */
function invalidity(body: unknown, version: string | undefined): string | undefined {
  if (!Array.isArray(body)) {
    return classifyMessage(body) === 'invalid' ? describeInvalid(body).message : undefined;
  }
  if (version !== '2025-03-26')
    return 'Invalid Request: JSON-RPC batches are only allowed with protocol version 2025-03-26';
  if (body.length === 0) return 'Invalid Request: an empty batch';
  const bad = body.find((element) => {
    const kind = classifyMessage(element);
    return kind === 'invalid' || kind === 'batch';
  });
  return bad === undefined ? undefined : describeInvalid(bad).message;
}
