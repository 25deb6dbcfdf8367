/**
 * The server side of the deprecated HTTP+SSE transport (MCP 2024-11-05), for clients that predate
 * Streamable HTTP. A GET on the SSE path opens a session: a `text/event-stream` whose first event is
 * `endpoint` (the URL to POST to, naming the session in `?sessionId=`), followed by one `message` event per
 * server-to-client message, responses included. Each POST carries one client message (or a batch, which the
 * connection judges) and is answered 202 Accepted with an empty body; the answer travels on the stream.
 * The session lives as long as the SSE response: the client going away closes the connection, and closing
 * the connection ends the response.
 */
import type { ServerRequest, ServerReply } from './server-port';
import { classifyMessage, describeInvalid } from '../../lib/jsonrpc/classify';
import { TransportError } from '../../lib/jsonrpc/errors';
import type { JsonRpcBatch, JsonRpcMessage } from '../../lib/jsonrpc/types';
import { InboundQueue } from '../inbound-queue';
import type { Transport } from '../transport';
import { createHttpListener, DEFAULT_KEEP_ALIVE_MS, type HttpListener, type HttpServerOptions } from './http-listener';
import { remoteAddressKey } from './client-key';
import { httpServerNetwork } from './network';
import type { TracedNetwork } from '../../lib/trace/instrumentation';
import { httpLimits } from './limits';
import { readJsonBody } from './read-body';
import { mediaTypes, refuseAndClose, refuseOrigin, refuseRequest, requestPath, singleHeader } from './request-guard';
import type { SessionConnection, SessionServer } from './session-server';
import { SessionTable, type TableSession } from './session-table';
import { withTraceHeaders } from './trace-headers';
import { HttpAuth, resourceServerOf, withPrincipal } from './http-auth';
import { defaultLogger } from '../../lib/core/logger';
import type { Principal } from '../../lib/core/request-context';
import { encodeSseEvent } from './sse';
import { encodeOutbound, KeepAlive, startSseResponse, writeChunk } from './sse-stream';
import type { CorsOptions } from './cors';
import { corsStep } from './cors-step';

export const DEFAULT_SSE_PATH = '/sse';
export const DEFAULT_MESSAGE_PATH = '/messages';

export interface LegacySseOptions extends HttpServerOptions {
  /** Where clients GET the event stream (default `/sse`). */
  readonly ssePath?: string;
  /** Where clients POST their messages; advertised in the `endpoint` event (default `/messages`). */
  readonly messagePath?: string;
  /** CORS for both paths, as `StreamableHttpOptions.cors`. Default: off. */
  readonly cors?: CorsOptions;
}

/**
 * A request listener (server-port.ts) serving the SSE path (GET) and the message path (POST); a session lives as
 * long as its event stream, and `close()` ends every stream.
 */
export type LegacySseHandler = HttpListener;

/**
 * One session: the connection's `Transport`, fed by POSTs and writing to the event stream. It lives exactly
 * as long as its stream, so it is never idle: a client at its quota gets 429, a full table 503.
 */
class LegacySseSession implements Transport, TableSession {
  readonly idle = false;
  readonly messages;
  connection: SessionConnection | undefined;
  private readonly inbound = new InboundQueue('HTTP+SSE');
  private keepAlive: KeepAlive | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    readonly sessionId: string,
    private readonly stream: ServerReply,
    private readonly keepAliveMs: number,
    private readonly onClosed: (session: LegacySseSession) => void,
    /** Who opened the session, on an endpoint with `auth`: only POSTs of the same principal reach it. */
    readonly principalId: string | undefined,
    /** The client's address and port as its event stream's GET came (for the tracing). */
    readonly network: TracedNetwork,
  ) {
    this.messages = this.inbound.messages;
    stream.once('close', () => void this.close());
  }

  /** False from the moment it starts closing (POSTs naming it get 404 then). */
  get live(): boolean {
    return this.closing === undefined;
  }

  idleForMs(): number {
    return 0;
  }

  evict(): void {
    void this.close();
  }

  /** Starts the event stream with the `endpoint` event. */
  open(endpoint: string): Promise<void> {
    startSseResponse(this.stream);
    this.keepAlive = new KeepAlive(this.stream, this.keepAliveMs);
    return this.write(encodeSseEvent({ event: 'endpoint', data: endpoint }));
  }

  receive(body: JsonRpcMessage | JsonRpcBatch): void {
    this.inbound.push(body);
  }

  send(message: JsonRpcMessage | JsonRpcBatch): Promise<void> {
    if (!this.live || this.stream.destroyed) {
      return Promise.reject(new TransportError('The HTTP+SSE session is closed'));
    }
    let event: string;
    try {
      event = encodeSseEvent({ event: 'message', data: encodeOutbound(message) });
    } catch (error) {
      return Promise.reject(error);
    }
    return this.write(event);
  }

  /** Ends the event stream and the inbound messages. Idempotent. */
  close(): Promise<void> {
    return (this.closing ??= this.release());
  }

  private write(event: string): Promise<void> {
    this.keepAlive?.touch();
    return writeChunk(this.stream, event);
  }

  private async release(): Promise<void> {
    this.keepAlive?.stop();
    this.inbound.complete();
    if (!this.stream.writableEnded) this.stream.end();
    this.onClosed(this);
  }
}

/**
 * Serves the HTTP+SSE transport of 2024-11-05. The Origin and Host checks are those of the Streamable HTTP
 * server. Whatever revision the client asks for in `initialize` is negotiated as usual: the transport does
 * not limit it.
 */
export function createLegacySseHandler(server: SessionServer, options: LegacySseOptions = {}): LegacySseHandler {
  const ssePath = options.ssePath ?? DEFAULT_SSE_PATH;
  const messagePath = options.messagePath ?? DEFAULT_MESSAGE_PATH;
  if (ssePath === messagePath) throw new RangeError(`The SSE and message paths must differ: both are ${ssePath}`);
  const limits = httpLimits(options);
  const clientKey = options.clientKey ?? remoteAddressKey;
  const keepAliveMs = options.keepAliveMs ?? DEFAULT_KEEP_ALIVE_MS;
  const sessions = new SessionTable<LegacySseSession>(limits);
  const forget = (session: LegacySseSession) => sessions.remove(session);
  const resourceServer = resourceServerOf(options.auth);
  const auth = resourceServer && new HttpAuth(resourceServer, options.connectionOptions?.logger ?? defaultLogger);
  const cors = corsStep(options.cors, resourceServer !== undefined, options);
  const guard = cors?.guard ?? options;

  async function openStream(request: ServerRequest, response: ServerReply, principal?: Principal): Promise<void> {
    if (!mediaTypes(singleHeader(request, 'accept')).includes('text/event-stream')) {
      return refuseRequest(response, 406, 'Not Acceptable: Accept must list text/event-stream');
    }
    const client = clientKey(request);
    const refusal = sessions.makeRoom(client);
    if (refusal) return refuseRequest(response, refusal.status, refusal.message);
    const network = httpServerNetwork(request);
    const session = new LegacySseSession(crypto.randomUUID(), response, keepAliveMs, forget, principal?.id, network);
    sessions.add(session, client);
    await session.open(`${messagePath}?sessionId=${encodeURIComponent(session.sessionId)}`);
    if (!session.live) return; // the client left before the endpoint event got out
    session.connection = server.connect(session, options.connectionOptions);
  }

  async function acceptMessage(request: ServerRequest, response: ServerReply, principal?: Principal): Promise<void> {
    const sessionId = new URLSearchParams(request.url!.slice(messagePath.length)).get('sessionId');
    // Refused before its body is read: the connection closes, so the unread body is never parsed as a request.
    if (!sessionId) return refuseAndClose(response, 400, 'Bad Request: the sessionId query parameter is required');
    const session = sessions.get(sessionId);
    // A session opened by another principal is not found either: session ids cannot be probed.
    if (!session?.live || session.principalId !== principal?.id)
      return refuseAndClose(response, 404, 'Session not found');
    if (mediaTypes(singleHeader(request, 'content-type'))[0] !== 'application/json') {
      return refuseAndClose(response, 415, 'Unsupported Media Type: Content-Type must be application/json');
    }
    const body = await readJsonBody(request, response, limits);
    if (body === undefined) return;
    const invalid = invalidity(body);
    if (invalid) return refuseRequest(response, 400, invalid);
    if (!session.live) return refuseRequest(response, 404, 'Session not found');
    const message = withTraceHeaders(body as JsonRpcMessage | JsonRpcBatch, request);
    if (principal && auth!.refuseScope(message, principal, server.definition, response)) return;
    session.receive(principal ? withPrincipal(message, principal) : message);
    response.writeHead(202).end();
  }

  async function handle(request: ServerRequest, response: ServerReply): Promise<void> {
    if (auth?.isMetadataRequest(request)) return auth.serveMetadata(request, response);
    const route = routes.get(requestPath(request));
    if (route && cors?.answered(request, response)) return;
    const forbidden = refuseOrigin(request, guard);
    if (forbidden) return refuseRequest(response, 403, `Forbidden: ${forbidden}`);
    if (!route) return refuseRequest(response, 404, 'Not Found');
    if (request.method !== route.method) {
      response.setHeader('allow', route.method);
      return refuseRequest(response, 405, 'Method Not Allowed');
    }
    if (!auth) return route.serve(request, response);
    const principal = await auth.authenticate(request, response);
    if (principal) return route.serve(request, response, principal);
  }

  const routes = new Map([
    [ssePath, { method: 'GET', serve: openStream }],
    [messagePath, { method: 'POST', serve: acceptMessage }],
  ]);
  return createHttpListener(handle, {
    count: () => sessions.size,
    close: async () => {
      const closing = sessions.all().map(async (session) => {
        await session.connection?.close();
        await session.close();
      });
      await Promise.all(closing);
    },
  });
}

/** Why a parsed body is not a JSON-RPC message (or batch), or undefined; one too deep to examine is invalid too. */
function invalidity(body: unknown): string | undefined {
  try {
    return classifyMessage(body) === 'invalid' ? describeInvalid(body).message : undefined;
  } catch {
    return 'Invalid Request: the message could not be examined (too deeply nested?)';
  }
}
