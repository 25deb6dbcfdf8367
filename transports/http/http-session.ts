/**
 * One Streamable HTTP session on the server: the `Transport` its connection sees, the routing of each answer
 * to the HTTP response it belongs to, and the host of the session's lifecycle actor.
 */
import type { ServerReply } from './server-port';
import { createActor, type Actor } from 'xstate';
import { classifyMessage } from '../../lib/jsonrpc/classify';
import { encodeFrame } from '../../lib/jsonrpc/codec';
import { ErrorCode, TransportError } from '../../lib/jsonrpc/errors';
import type { JsonRpcBatch, JsonRpcMessage, JsonRpcRequest, RequestId } from '../../lib/jsonrpc/types';
import type { Clock } from '../../lib/core/clock';
import type { Logger } from '../../lib/core/logger';
import type { Runtime } from '../../lib/core/runtime';
import type { TracedNetwork } from '../../lib/trace/instrumentation';
import { HTTP_DEFAULT_PROTOCOL_VERSION, isAtLeast, isSupportedVersion } from '../../lib/protocol/versions';
import {
  httpSessionMachine,
  type HttpSessionEndReason,
  type HttpSessionEvent,
  type HttpSessionHost,
  type HttpSessionState,
} from '../../machines/http-session';
import { InboundQueue } from '../inbound-queue';
import type { Transport, TransportSendOptions } from '../transport';
import type { EventStore } from './event-store';
import { endWithJson, refuseRequest } from './request-guard';
import { encodeOutbound, replayFinishedStream, SseStream } from './sse-stream';
import { StandaloneBacklog, type BacklogLimits } from './standalone-backlog';

export type { HttpSessionEndReason } from '../../machines/http-session';

/**
 * How a POST carrying requests is answered: `json` (one JSON body; messages the handler sends before its
 * response go to the standalone stream), `sse` (always a stream), or `auto`: a stream for clients at
 * 2025-11-25 (primed, so they can resume it), and for older ones JSON unless the handler sends a request
 * or notification before its response.
 */
export type ResponseMode = 'json' | 'sse' | 'auto';

export interface HttpSessionConfig {
  readonly store: EventStore;
  readonly responseMode: ResponseMode;
  readonly retryMs: number;
  readonly idleTimeoutMs: number;
  /** Between keep-alive comments on an idle SSE stream; 0 for none. */
  readonly keepAliveMs: number;
  /** The actor system the session's lifecycle actor joins; its clock times the idle expiry. */
  readonly runtime: Runtime;
  /** How server-to-client messages wait for a standalone stream the client has not opened yet. */
  readonly standaloneBacklog: BacklogLimits;
  /** Where dropped notifications are reported. */
  readonly logger: Logger;
  /** Called once the session has closed and released everything. */
  readonly onClosed: (session: HttpSession, reason: HttpSessionEndReason) => void;
}

/** One POST that carried requests, until every request in it is answered (or cancelled). */
interface Exchange {
  readonly pending: Set<RequestId>;
  readonly response: ServerReply;
  mode: 'json' | 'sse' | 'undecided';
  stream: SseStream | undefined;
}

const STANDALONE_STREAM = 'standalone';

export const SESSION_HEADER = 'mcp-session-id';

export type ResumeOutcome = 'resumed' | 'unknown';

/** The longest part of a peer's request id quoted in an error message. */
const QUOTED_ID_CHARS = 64;

/**
 * The server side of one Streamable HTTP session, seen by the connection as its `Transport`: inbound
 * messages come from POST bodies, outbound ones go to the stream of the POST they belong to, the
 * standalone GET stream, or (when no response is attached) the event store for a later resume.
 *
 * Its lifecycle (handshake, idle expiry, DELETE, close) is an actor of `machines/http-session`; this
 * class is the machine's host and keeps the per-message records. Requests cost the machine nothing: the
 * session counts its open responses itself and the machine's idle check reads the count when it fires.
 */
export class HttpSession implements Transport, HttpSessionHost {
  readonly messages;
  /** Resolves with the reason once the session has closed and released everything. */
  readonly ended: Promise<HttpSessionEndReason>;
  /** The negotiated revision once the connection announced it; the HTTP default until then. */
  protocolVersion: string = HTTP_DEFAULT_PROTOCOL_VERSION;
  private readonly actor: Actor<typeof httpSessionMachine>;
  private readonly inbound = new InboundQueue('Streamable HTTP');
  private readonly exchanges = new Map<RequestId, Exchange>();
  private readonly liveStreams = new Map<string, Exchange>();
  private readonly standalone: SseStream;
  /** Messages for the standalone stream before the client first opened it. */
  private readonly backlog: StandaloneBacklog;
  private standaloneOpened = false;
  private initializeId: RequestId | undefined;
  private streamCount = 0;
  private openResponses = 0;
  /** When the last open response closed, on the runtime's clock (the session's start until one did). */
  private idleSince: number;
  /**
   * Set as `closing` is entered. Not read from the machine: XState commits the new snapshot only after the
   * entry action (`release`) returns, and anything `release` sets off synchronously must already see the
   * session as ending.
   */
  private ending = false;
  private readonly clock: Clock;
  /** `MCP-Session-Id` as names and values, for the POST responses the session writes. */
  private readonly idHeader: string[];
  private resolveEnded!: (reason: HttpSessionEndReason) => void;

  constructor(
    readonly sessionId: string,
    private readonly config: HttpSessionConfig,
    /** Who opened the session, on an endpoint with `auth`: only requests of the same principal reach it. */
    readonly principalId?: string,
    /** The client's address and port as the `initialize` that opened the session came (for the tracing). */
    readonly network?: TracedNetwork,
  ) {
    this.messages = this.inbound.messages;
    this.clock = config.runtime.clock;
    this.idHeader = [SESSION_HEADER, sessionId];
    this.idleSince = this.clock.now();
    this.ended = new Promise((resolve) => (this.resolveEnded = resolve));
    this.standalone = new SseStream(STANDALONE_STREAM, sessionId, config.store, config.keepAliveMs);
    this.backlog = new StandaloneBacklog(config.standaloneBacklog, this.clock, config.logger);
    this.actor = createActor(httpSessionMachine, {
      input: { host: this, idleTimeoutMs: config.idleTimeoutMs },
      parent: config.runtime.root,
    }).start();
  }

  get state(): HttpSessionState {
    return this.actor.getSnapshot().value as HttpSessionState;
  }

  /** In its handshake or active: false from the moment it starts closing (requests naming it get 404 then). */
  get live(): boolean {
    return !this.ending;
  }

  /** No open request or stream: the session may be evicted. */
  get idle(): boolean {
    return this.openResponses === 0 && !this.ending;
  }

  /** Counts `response` as activity until it closes: the session is idle while it has no open response. */
  track(response: ServerReply): void {
    this.openResponses++;
    response.on('close', this.untrack);
  }

  /**
   * Hands a validated POST body to the connection and answers the POST (202, JSON or a stream), naming the
   * session in every answer.
   */
  accept(body: JsonRpcMessage | JsonRpcBatch, response: ServerReply): void {
    const single = Array.isArray(body) ? undefined : (body as JsonRpcMessage);
    const requests = single ? (isRequest(single) ? [single] : []) : (body as JsonRpcBatch).filter(isRequest);
    const reused = this.reusedId(requests);
    if (reused !== undefined) return refuseReusedId(response, reused);
    if (requests.length === 0) response.writeHead(202, this.idHeader).end();
    else this.openExchange(requests, response);
    this.inbound.push(body);
    if (single) this.noticeCancellation(single);
    else for (const message of body as JsonRpcBatch) this.noticeCancellation(message);
  }

  /** Opens the standalone stream on `response`, with what waited for it; false when one is already open. */
  openStandalone(response: ServerReply): boolean {
    if (this.standalone.attached) return false;
    void this.standalone.open(response, this.primingRetry(this.protocolVersion));
    if (!this.standaloneOpened) {
      this.standaloneOpened = true;
      this.backlog.release((message) => this.standalone.send(message));
    }
    return true;
  }

  /** Resumes the stream `lastEventId` belongs to on `response`. */
  async resume(response: ServerReply, lastEventId: string): Promise<ResumeOutcome> {
    const found = await this.config.store.replayAfter(this.sessionId, lastEventId);
    if (!found) return 'unknown';
    const stream =
      found.streamId === STANDALONE_STREAM ? this.standalone : this.liveStreams.get(found.streamId)?.stream;
    if (!stream) {
      await replayFinishedStream(response, found.events, this.idHeader);
      return 'resumed';
    }
    await stream.resume(response, lastEventId);
    return 'resumed';
  }

  send(message: JsonRpcMessage | JsonRpcBatch, options?: TransportSendOptions): Promise<void> {
    if (!this.live) return Promise.reject(new TransportError('The Streamable HTTP session is closed'));
    if (Array.isArray(message)) return this.deliverBatchReply(message);
    const single = message as JsonRpcMessage;
    if (!('method' in single)) return this.deliverResponse(single);
    const related = options?.relatedRequestId;
    const exchange = related === undefined ? undefined : this.exchanges.get(related);
    if (exchange?.mode === 'undecided') this.openExchangeStream(exchange, this.protocolVersion);
    if (exchange?.mode === 'sse') return exchange.stream!.send(single);
    if (this.standaloneOpened) return this.standalone.send(single);
    if (options?.failWithoutStream) {
      return Promise.reject(new TransportError('The client has no stream open that could carry this message'));
    }
    return this.backlog.hold(single);
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  /**
   * Ends the HTTP response carrying request `requestId`'s stream while the request goes on (SSE polling):
   * the client resumes with GET + `Last-Event-ID` and gets the rest there. False when that is impossible:
   * the request is answered as JSON, its stream was never primed with an event id, or it is finished.
   */
  async closeStream(requestId: RequestId): Promise<boolean> {
    const stream = this.exchanges.get(requestId)?.stream;
    if (!stream?.resumable) return false;
    await stream.end();
    return true;
  }

  /** The session table needs the room: ends the session (later requests naming it get 404). */
  evict(): void {
    this.signal({ type: 'evict' });
  }

  /** DELETE: ends the session; resolves once everything is released. */
  delete(): Promise<HttpSessionEndReason> {
    this.signal({ type: 'delete' });
    return this.ended;
  }

  /** The handler is closing: ends the session; resolves once everything is released. */
  shutdown(): Promise<HttpSessionEndReason> {
    this.signal({ type: 'server.close' });
    return this.ended;
  }

  /** The connection closes its transport: ends the session. Idempotent. */
  async close(): Promise<void> {
    this.signal({ type: 'connection.closed' });
    await this.ended;
  }

  // ---- machine host ------------------------------------------------------------------------------

  /** @internal How long the session has had no open response (0 while one is open). */
  idleForMs(): number {
    return this.openResponses > 0 ? 0 : this.clock.now() - this.idleSince;
  }

  /** @internal Entered `closing`: ends every stream, answers open POSTs, forgets the session's events. */
  release(): void {
    this.ending = true;
    void this.releaseAll().finally(() => this.signal({ type: 'released' }));
  }

  /** @internal Entered `closed`. */
  finish(reason: HttpSessionEndReason): void {
    this.resolveEnded(reason);
    this.config.onClosed(this, reason);
  }

  private async releaseAll(): Promise<void> {
    // The connection sees its transport end and closes (it calls `close()` again: a no-op by now).
    this.inbound.complete();
    this.backlog.abandon('the session ended');
    const exchanges = new Set(this.exchanges.values());
    this.exchanges.clear();
    this.liveStreams.clear();
    const endings = [...exchanges].map((exchange) => this.abandon(exchange));
    endings.push(this.standalone.end());
    await Promise.allSettled(endings);
    await this.config.store.dropSession(this.sessionId);
  }

  /** Tells the lifecycle actor; a closed session hears nothing more (responses keep closing after it). */
  private signal(event: HttpSessionEvent): void {
    if (this.actor.getSnapshot().status === 'active') this.actor.send(event);
  }

  /** One function for every response tracked, so a request costs no closure. */
  private readonly untrack = () => {
    if (--this.openResponses === 0) this.idleSince = this.clock.now();
  };

  /**
   * An id among `requests` already in flight in this session (or twice among them): answering it would
   * take the first request's answer away from it.
   */
  private reusedId(requests: readonly JsonRpcRequest[]): RequestId | undefined {
    if (requests.length === 1) return this.exchanges.has(requests[0]!.id) ? requests[0]!.id : undefined;
    const seen = new Set<RequestId>();
    for (const { id } of requests) {
      if (this.exchanges.has(id) || seen.has(id)) return id;
      seen.add(id);
    }
    return undefined;
  }

  /** Starts the exchange of a POST carrying `requests`: they are answered on its response. */
  private openExchange(requests: readonly JsonRpcRequest[], response: ServerReply): void {
    const initialize = requests.find((request) => request.method === 'initialize');
    const version = initialize ? requestedVersion(initialize) : this.protocolVersion;
    const exchange: Exchange = { pending: new Set(), response, mode: this.initialMode(version), stream: undefined };
    for (const request of requests) {
      exchange.pending.add(request.id);
      this.exchanges.set(request.id, exchange);
    }
    if (initialize && this.state === 'handshake') this.watchHandshake(initialize.id, exchange);
    if (exchange.mode === 'sse') this.openExchangeStream(exchange, version);
  }

  /**
   * The handshake ends when `initialize` is answered: a session whose `initialize` failed, or whose POST
   * ended before the answer (the client cannot learn the outcome), is closed at once.
   */
  private watchHandshake(id: RequestId, exchange: Exchange): void {
    this.initializeId = id;
    exchange.response.once('close', () => {
      if (this.exchanges.get(id) === exchange) this.signal({ type: 'handshake.failed' });
    });
  }

  private initialMode(version: string): Exchange['mode'] {
    if (this.config.responseMode !== 'auto') return this.config.responseMode;
    return isAtLeast(version, '2025-11-25') ? 'sse' : 'undecided';
  }

  private primingRetry(version: string): number | undefined {
    return isAtLeast(version, '2025-11-25') ? this.config.retryMs : undefined;
  }

  private openExchangeStream(exchange: Exchange, version: string): void {
    const { store, keepAliveMs } = this.config;
    const stream = new SseStream(`post-${++this.streamCount}`, this.sessionId, store, keepAliveMs);
    exchange.mode = 'sse';
    exchange.stream = stream;
    this.liveStreams.set(stream.id, exchange);
    if (exchange.response.destroyed) return;
    exchange.response.setHeader(SESSION_HEADER, this.sessionId);
    void stream.open(exchange.response, this.primingRetry(version));
  }

  private deliverResponse(message: JsonRpcMessage): Promise<void> {
    const id = (message as { id?: RequestId }).id;
    const exchange = id === undefined ? undefined : this.exchanges.get(id);
    // An id-less error answers nothing we can route (bodies are validated before they get here).
    if (!exchange || id === undefined) return Promise.resolve();
    this.settle(exchange, id);
    const answered = this.answer(exchange, message);
    if (id !== this.initializeId) return answered;
    this.initializeId = undefined;
    return answered.then(() => this.signal({ type: 'error' in message ? 'handshake.failed' : 'handshake.done' }));
  }

  private deliverBatchReply(replies: JsonRpcBatch): Promise<void> {
    let exchange: Exchange | undefined;
    for (const reply of replies) {
      const id = (reply as { id?: RequestId }).id;
      exchange ??= id === undefined ? undefined : this.exchanges.get(id);
    }
    if (!exchange) return Promise.resolve();
    for (const id of exchange.pending) this.settle(exchange, id);
    return this.answer(exchange, replies);
  }

  /** Request `id` of `exchange` needs no more waiting for. */
  private settle(exchange: Exchange, id: RequestId): void {
    exchange.pending.delete(id);
    this.exchanges.delete(id);
  }

  /** Sends `reply` on the exchange's stream, or as its JSON body; ends the stream once nothing is pending. */
  private answer(exchange: Exchange, reply: JsonRpcMessage | JsonRpcBatch): Promise<void> {
    if (exchange.mode === 'sse') return this.streamReply(exchange, reply);
    const response = exchange.response;
    // The client left: a JSON answer cannot be resumed.
    if (response.destroyed || response.headersSent) return Promise.resolve();
    try {
      endWithJson(response, 200, encodeOutbound(reply), this.idHeader);
    } catch (error) {
      // Only a batch reply gets here (a single response is replaced by an error); the POST must still end.
      refuseRequest(response, 500, `Internal error: ${(error as Error).message}`, ErrorCode.InternalError);
    }
    return Promise.resolve();
  }

  private async streamReply(exchange: Exchange, reply: JsonRpcMessage | JsonRpcBatch): Promise<void> {
    const stream = exchange.stream!;
    if (Array.isArray(reply)) for (const event of reply) await stream.send(event);
    else await stream.send(reply as JsonRpcMessage);
    if (exchange.pending.size === 0) {
      this.liveStreams.delete(stream.id);
      await stream.end();
    }
  }

  /** A cancelled request is never answered: stop waiting for it so its POST can end. */
  private noticeCancellation(message: JsonRpcMessage): void {
    if (!('method' in message) || message.method !== 'notifications/cancelled') return;
    const requestId = (message.params as { requestId?: RequestId } | undefined)?.requestId;
    const exchange = requestId === undefined ? undefined : this.exchanges.get(requestId);
    if (!exchange || requestId === undefined) return;
    this.settle(exchange, requestId);
    if (exchange.pending.size === 0) void this.abandon(exchange);
  }

  /** Ends an exchange that will get no (more) responses. */
  private async abandon(exchange: Exchange): Promise<void> {
    if (exchange.stream) {
      this.liveStreams.delete(exchange.stream.id);
      return exchange.stream.end();
    }
    const response = exchange.response;
    if (response.destroyed || response.headersSent) return;
    if (!this.live) refuseRequest(response, 404, 'Session closed');
    else response.writeHead(202, this.idHeader).end();
  }
}

/** 400 with a JSON-RPC error naming the reused id; the request it names keeps its answer. */
function refuseReusedId(response: ServerReply, id: RequestId): void {
  const quoted = typeof id === 'string' && id.length > QUOTED_ID_CHARS ? `${id.slice(0, QUOTED_ID_CHARS)}…` : id;
  const message = `Invalid Request: request id ${JSON.stringify(quoted)} is already in use by a request in flight`;
  endWithJson(response, 400, encodeFrame({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidRequest, message } }));
}

function isRequest(message: JsonRpcMessage): message is JsonRpcRequest {
  return classifyMessage(message) === 'request';
}

function requestedVersion(initialize: JsonRpcRequest): string {
  const requested = initialize.params?.protocolVersion;
  return isSupportedVersion(requested) ? requested : HTTP_DEFAULT_PROTOCOL_VERSION;
}
