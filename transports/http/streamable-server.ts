/**
 * The Streamable HTTP server transport: a request listener (on the server port: `node:http`'s own request and
 * response, or the web port's) that checks each request, opens,
 * finds and ends sessions, and hands POST bodies, GET streams and DELETEs to them.
 */
import type { ServerRequest, ServerReply } from './server-port';
import { classifyMessage, describeInvalid } from '../../lib/jsonrpc/classify';
import type { JsonRpcBatch, JsonRpcMessage, RequestId } from '../../lib/jsonrpc/types';
import { ErrorCode } from '../../lib/jsonrpc/errors';
import { defaultLogger } from '../../lib/core/logger';
import { defaultRuntime } from '../../lib/core/runtime';
import { isSupportedVersion } from '../../lib/protocol/versions';
import { MemoryEventStore, type EventStore } from './event-store';
import {
  answerInternalError,
  createHttpListener,
  DEFAULT_KEEP_ALIVE_MS,
  type HttpListener,
  type HttpServerOptions,
} from './http-listener';
import { HttpSession, SESSION_HEADER, type ResponseMode } from './http-session';
import { remoteAddressKey } from './client-key';
import { httpServerNetwork } from './network';
import { httpLimits } from './limits';
import { ListenQuota } from './listen-quota';
import { withJsonBody } from './read-body';
import { mediaTypes, refuseAndClose, refuseOrigin, refuseRequest, singleHeader } from './request-guard';
import type { SessionServer } from './session-server';
import type { ModernServer } from '../../lib/core/exchange';
import { classifyInbound, errorResponseOf } from '../../lib/protocol/era';
import { answerRefusal, HttpExchangeReply, refuseListenAsJson } from './modern-reply';
import { SessionTable } from './session-table';
import { withTraceHeaders } from './trace-headers';
import { HttpAuth, resourceServerOf, withPrincipal } from './http-auth';
import { attachPrincipal, type Principal } from '../../lib/core/request-context';
import type { CorsOptions } from './cors';
import { corsStep } from './cors-step';

export type { HttpSessionEndReason, ResponseMode } from './http-session';

export interface StreamableHttpOptions extends HttpServerOptions {
  /** How POSTs carrying requests are answered (default 'auto'; see `ResponseMode`). */
  readonly responseMode?: ResponseMode;
  /** Where SSE events are kept for resumption (default: a bounded `MemoryEventStore`). */
  readonly eventStore?: EventStore;
  /** The reconnection delay sent to 2025-11-25 clients with each stream's priming event (default 1000 ms). */
  readonly retryMs?: number;
  /** @deprecated The same as `sessionIdleTimeoutMs`, which wins when both are given. */
  readonly idleTimeoutMs?: number;
  /** Passed to `server.connect` for every session; its `runtime` also hosts the sessions' lifecycle actors. */
  readonly connectionOptions?: HttpServerOptions['connectionOptions'];
  /**
   * Lets pages of other origins call the endpoint from a browser: preflights answered, the answers readable
   * (`Mcp-Session-Id` included). Default: off (a preflight gets 405, as any `OPTIONS`).
   */
  readonly cors?: CorsOptions;
  /**
   * `false`: the stateless 2026-07-28 revision only, for deployments where no memory outlives a request (many
   * isolates, many replicas): a handshake-era request (an `initialize`, a session id, a handshake-era version)
   * is refused with -32022 naming the revisions served, and GET and DELETE get 405. Needs a server that serves
   * the 2026-07-28 revision. Default: true.
   */
  readonly sessions?: boolean;
}

/**
 * A request listener serving one MCP endpoint (POST, GET, DELETE): give it to `node:http`, or to
 * `fetchHandlerOf` for the web. Call `close()` when the HTTP
 * server stops: an idle session's expiry check runs on the runtime's clock until then.
 */
export type StreamableHttpHandler = HttpListener;

const VERSION_HEADER = 'mcp-protocol-version';

/**
 * The server side of the Streamable HTTP transport: each `initialize` POST without a session opens one
 * (a transport given to `server.connect`), named by the `MCP-Session-Id` response header. A GET with a
 * `Last-Event-ID` the event store does not know opens a fresh standalone stream rather than failing with
 * 404, which a client would take for "session gone".
 */
export function createStreamableHttpHandler(
  server: SessionServer,
  options: StreamableHttpOptions = {},
): StreamableHttpHandler {
  const store = options.eventStore ?? new MemoryEventStore();
  const limits = httpLimits({
    ...options,
    sessionIdleTimeoutMs: options.sessionIdleTimeoutMs ?? options.idleTimeoutMs,
  });
  const clientKey = options.clientKey ?? remoteAddressKey;
  /** The server's stateless side, when it has one (and serves at least one modern revision). */
  const modern = server.serveModern && server.eraPolicy ? (server as SessionServer & ModernServer) : undefined;
  const sessionsOn = options.sessions !== false;
  if (!sessionsOn && !modern?.eraPolicy.supportedVersions.length) {
    throw new RangeError('sessions: false needs a server that serves the 2026-07-28 revision (modernProtocolVersions)');
  }
  const sessions = new SessionTable<HttpSession>(limits);
  const listenQuota = new ListenQuota(limits.maxListenStreamsPerClient);
  const sessionConfig = {
    store,
    responseMode: options.responseMode ?? 'auto',
    retryMs: options.retryMs ?? 1000,
    idleTimeoutMs: limits.sessionIdleTimeoutMs,
    keepAliveMs: options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS,
    runtime: options.connectionOptions?.runtime ?? defaultRuntime(),
    standaloneBacklog: { waitMs: limits.standaloneStreamWaitMs, maxLength: limits.maxStandaloneBacklog },
    logger: options.connectionOptions?.logger ?? defaultLogger,
    onClosed: (session: HttpSession) => sessions.remove(session),
  } as const;
  const resourceServer = resourceServerOf(options.auth);
  const auth = resourceServer && new HttpAuth(resourceServer, sessionConfig.logger);
  const cors = corsStep(options.cors, resourceServer !== undefined, options);
  const guard = cors?.guard ?? options;

  /**
   * The session the request names; answers 400 or 404 itself (with `refuse`) when there is none. A session
   * opened by another principal is not found either, so session ids cannot be probed with a token of one's own.
   */
  function sessionOf(
    request: ServerRequest,
    response: ServerReply,
    principal: Principal | undefined,
    refuse = refuseRequest,
  ): HttpSession | undefined {
    const id = singleHeader(request, SESSION_HEADER);
    if (id === undefined) return void refuse(response, 400, 'Bad Request: the MCP-Session-Id header is required');
    const session = sessions.get(id);
    if (!session?.live || session.principalId !== principal?.id) return void refuse(response, 404, 'Session not found');
    return session;
  }

  function refuseVersionHeader(request: ServerRequest, response: ServerReply, refuse = refuseRequest): boolean {
    const version = singleHeader(request, VERSION_HEADER);
    if (version === undefined || isSupportedVersion(version)) return false;
    refuse(response, 400, `Bad Request: unsupported MCP-Protocol-Version ${quoted(version)}`);
    return true;
  }

  function openSession(request: ServerRequest, client: string, principal: Principal | undefined): HttpSession {
    const network = httpServerNetwork(request);
    const session = new HttpSession(crypto.randomUUID(), sessionConfig, principal?.id, network);
    sessions.add(session, client);
    server.connect(session, options.connectionOptions);
    return session;
  }

  function post(request: ServerRequest, response: ServerReply, principal: Principal | undefined): void {
    const accepted = mediaTypes(singleHeader(request, 'accept'));
    // Refused before its body is read: the connection closes, so the unread body is never parsed as a request.
    if (!accepted.includes('application/json') || !accepted.includes('text/event-stream')) {
      return refuseAndClose(response, 406, 'Not Acceptable: Accept must list application/json and text/event-stream');
    }
    if (mediaTypes(singleHeader(request, 'content-type'))[0] !== 'application/json') {
      return refuseAndClose(response, 415, 'Unsupported Media Type: Content-Type must be application/json');
    }
    const named = singleHeader(request, SESSION_HEADER) !== undefined;
    if (!sessionsOn && (named || isSupportedVersion(singleHeader(request, VERSION_HEADER)))) {
      return refuseHandshakeEra(response, modern!.eraPolicy.supportedVersions, undefined, true);
    }
    if (!modern || named || isSupportedVersion(singleHeader(request, VERSION_HEADER))) {
      return postToSession(request, response, named, principal);
    }
    // No session named and no handshake-era version: the body says which era the request is of.
    withBody(request, response, (body) => servePostBody(request, response, body, principal));
  }

  /**
   * Reads the POST's body, then serves it with `serve` in a microtask after the body's 'end' event; a failure
   * there answers 500. Not inside the event: served there, in a benchmark over an in-memory socket pair,
   * every request's objects outlived V8's young generation and calls took 2.5 times as long.
   */
  function withBody(request: ServerRequest, response: ServerReply, serve: (body: unknown) => void): void {
    withJsonBody(request, response, limits, (body) => {
      if (body === undefined) return;
      queueMicrotask(() => {
        try {
          serve(body);
        } catch (error) {
          answerInternalError(response, error);
        }
      });
    });
  }

  /** A POST body of either era, sent without a session or a handshake-era version header. */
  function servePostBody(
    request: ServerRequest,
    response: ServerReply,
    body: unknown,
    principal: Principal | undefined,
  ): void {
    const verdict = classifyInbound({ httpMethod: 'POST', headers: request.headers, body }, modern!.eraPolicy);
    switch (verdict.era) {
      case 'reject':
        return answerRefusal(response, verdict.status, errorResponseOf(verdict));
      case 'modern':
        if (verdict.kind === 'notification') {
          modern!.noteModernNotification?.(verdict);
          return void response.writeHead(202).end();
        }
        if (principal) {
          if (auth!.refuseScope(verdict.request, principal, server.definition, response)) return;
          // A modern request always has params: its envelope is in their `_meta`.
          attachPrincipal(verdict.request.params!, principal);
        }
        if (verdict.request.method === 'subscriptions/listen') {
          if (sessionConfig.responseMode === 'json') return refuseListenAsJson(response, verdict.request.id);
          if (!listenQuota.admit(clientKey(request), verdict.request.id, response)) return;
        }
        return modern!.serveModern(
          verdict,
          new HttpExchangeReply(response, sessionConfig.keepAliveMs, sessionConfig.responseMode, request),
          request.headers,
        );
      default:
        if (!sessionsOn) return refuseHandshakeEra(response, modern!.eraPolicy.supportedVersions, idOf(body), false);
        if (refuseVersionHeader(request, response)) return;
        return acceptBody(request, response, body, undefined, principal);
    }
  }

  /** A POST of the handshake era: to the session it names, or an `initialize` that opens one. */
  function postToSession(
    request: ServerRequest,
    response: ServerReply,
    named: boolean,
    principal: Principal | undefined,
  ): void {
    if (refuseVersionHeader(request, response, refuseAndClose)) return;
    const session = named ? sessionOf(request, response, principal, refuseAndClose) : undefined;
    if (named && !session) return;
    withBody(request, response, (body) => acceptBody(request, response, body, session, principal));
  }

  function acceptBody(
    request: ServerRequest,
    response: ServerReply,
    body: unknown,
    session: HttpSession | undefined,
    principal: Principal | undefined,
  ): void {
    const invalid = invalidity(body, session?.protocolVersion);
    if (invalid) return refuseRequest(response, 400, invalid);
    const message = body as JsonRpcMessage | JsonRpcBatch;
    if (principal && auth!.refuseScope(message, principal, server.definition, response)) return;

    if (!session) {
      if (
        classifyMessage(body) !== 'request' ||
        (body as JsonRpcMessage & { method: string }).method !== 'initialize'
      ) {
        return refuseRequest(response, 400, 'Bad Request: the MCP-Session-Id header is required');
      }
      const client = clientKey(request);
      const refusal = sessions.makeRoom(client);
      if (refusal) return refuseRequest(response, refusal.status, refusal.message);
      session = openSession(request, client, principal);
    } else if (!session.live) {
      return refuseRequest(response, 404, 'Session not found');
    }
    session.track(response);
    const traced = withTraceHeaders(message, request);
    session.accept(principal ? withPrincipal(traced, principal) : traced, response);
  }

  async function get(request: ServerRequest, response: ServerReply, principal: Principal | undefined): Promise<void> {
    if (!mediaTypes(singleHeader(request, 'accept')).includes('text/event-stream')) {
      return refuseRequest(response, 406, 'Not Acceptable: Accept must list text/event-stream');
    }
    if (refuseVersionHeader(request, response)) return;
    const session = sessionOf(request, response, principal);
    if (!session) return;
    response.setHeader(SESSION_HEADER, session.sessionId);
    session.track(response);
    const lastEventId = singleHeader(request, 'last-event-id');
    if (lastEventId !== undefined) {
      const outcome = await session.resume(response, lastEventId);
      if (outcome === 'resumed') return;
    }
    if (!session.openStandalone(response))
      refuseRequest(response, 409, 'Conflict: the standalone stream is already open');
  }

  async function remove(
    request: ServerRequest,
    response: ServerReply,
    principal: Principal | undefined,
  ): Promise<void> {
    if (refuseVersionHeader(request, response)) return;
    const session = sessionOf(request, response, principal);
    if (!session) return;
    await session.delete();
    response.writeHead(204).end();
  }

  function handle(request: ServerRequest, response: ServerReply): void | Promise<void> {
    if (auth?.isMetadataRequest(request)) return auth.serveMetadata(request, response);
    if (cors?.answered(request, response)) return;
    const forbidden = refuseOrigin(request, guard);
    if (forbidden) return refuseRequest(response, 403, `Forbidden: ${forbidden}`);
    if (auth) return handleAuthenticated(request, response, auth);
    return serve(request, response, undefined);
  }

  function serve(
    request: ServerRequest,
    response: ServerReply,
    principal: Principal | undefined,
  ): void | Promise<void> {
    if (!sessionsOn && request.method !== 'POST') {
      response.setHeader('allow', 'POST');
      return refuseRequest(response, 405, 'Method Not Allowed: this endpoint serves stateless requests only (POST)');
    }
    switch (request.method) {
      case 'POST':
        return post(request, response, principal);
      case 'GET':
        return get(request, response, principal);
      case 'DELETE':
        return remove(request, response, principal);
      default:
        response.setHeader('allow', 'GET, POST, DELETE');
        return refuseRequest(response, 405, 'Method Not Allowed');
    }
  }

  /** Every request needs a good token first (401 before its body is read), then is served as its principal's. */
  function handleAuthenticated(request: ServerRequest, response: ServerReply, auth: HttpAuth): void | Promise<void> {
    const principal = auth.authenticate(request, response);
    if (principal instanceof Promise) {
      return principal.then((known) => (known ? serve(request, response, known) : undefined));
    }
    if (principal) return serve(request, response, principal);
  }

  return createHttpListener(handle, {
    count: () => sessions.size,
    close: async () => {
      await Promise.all(sessions.all().map((session) => session.shutdown()));
    },
  });
}

/**
 * Refuses a handshake-era request on an endpoint without sessions: 400 with -32022 and the revisions it serves,
 * so a client that can speak 2026-07-28 retries in that revision. `close`: the body was left unread.
 */
function refuseHandshakeEra(
  response: ServerReply,
  supported: readonly string[],
  id: RequestId | undefined,
  close: boolean,
) {
  const message = `Unsupported protocol version: this endpoint serves ${supported.join(', ')} only (no sessions)`;
  const error = { code: ErrorCode.UnsupportedProtocolVersion, message, data: { supported: [...supported] } };
  if (close) response.setHeader('connection', 'close');
  answerRefusal(response, 400, id === undefined ? { jsonrpc: '2.0', error } : { jsonrpc: '2.0', id, error });
}

/** The id of a request body, when it has a usable one. */
function idOf(body: unknown): RequestId | undefined {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/** The longest part of a header value quoted back in an error message. */
const QUOTED_HEADER_CHARS = 64;

function quoted(value: string): string {
  return value.length > QUOTED_HEADER_CHARS ? `${value.slice(0, QUOTED_HEADER_CHARS)}…` : value;
}

/**
 * Why a parsed POST body is not acceptable JSON-RPC, or undefined. Batches need a 2025-03-26 session. A body
 * that cannot even be examined (too deep for the classifier) is invalid too, never a 500.
 */
function invalidity(body: unknown, version: string | undefined): string | undefined {
  try {
    return examine(body, version);
  } catch {
    return 'Invalid Request: the message could not be examined (too deeply nested?)';
  }
}

function examine(body: unknown, version: string | undefined): string | undefined {
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
