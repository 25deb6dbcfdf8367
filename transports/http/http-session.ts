import type { ServerResponse } from 'node:http';
import { classifyMessage } from '../../lib/jsonrpc/classify';
import { encodeFrame } from '../../lib/jsonrpc/codec';
import { ErrorCode, TransportError } from '../../lib/jsonrpc/errors';
import type { JsonRpcBatch, JsonRpcMessage, JsonRpcRequest, RequestId } from '../../lib/jsonrpc/types';
import type { ServerConnection } from '../../lib/server/server';
import { HTTP_DEFAULT_PROTOCOL_VERSION, isAtLeast, isSupportedVersion } from '../../lib/protocol/versions';
import { InboundQueue } from '../inbound-queue';
import type { Transport, TransportSendOptions } from '../transport';
import type { EventStore } from './event-store';
import { replayFinishedStream, SseStream } from './sse-stream';

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
  /** Called once the session has closed and released everything. */
  readonly onClosed: (session: HttpSession) => void;
}

/** One POST that carried requests, until every request in it is answered (or cancelled). */
interface Exchange {
  readonly pending: Set<RequestId>;
  readonly response: ServerResponse;
  mode: 'json' | 'sse' | 'undecided';
  stream: SseStream | undefined;
}

const STANDALONE_STREAM = 'standalone';

export type ResumeOutcome = 'resumed' | 'unknown';

/**
 * The server side of one Streamable HTTP session, seen by the connection as its `Transport`: inbound
 * messages come from POST bodies, outbound ones go to the stream of the POST they belong to, the
 * standalone GET stream, or (when no response is attached) the event store for a later resume.
 */
export class HttpSession implements Transport {
  readonly messages;
  connection: ServerConnection | undefined;
  /** The negotiated revision once `initialize` was answered; the HTTP default until then. */
  protocolVersion: string = HTTP_DEFAULT_PROTOCOL_VERSION;
  private readonly inbound = new InboundQueue('Streamable HTTP');
  private readonly exchanges = new Map<RequestId, Exchange>();
  private readonly liveStreams = new Map<string, Exchange>();
  private readonly standalone: SseStream;
  private initializeId: RequestId | undefined;
  private streamCount = 0;
  private openResponses = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    readonly sessionId: string,
    private readonly config: HttpSessionConfig,
  ) {
    this.messages = this.inbound.messages;
    this.standalone = new SseStream(STANDALONE_STREAM, sessionId, config.store);
    this.armIdleTimer();
  }

  get closed(): boolean {
    return this.closing !== undefined;
  }

  /** Counts `response` as activity: the idle timer runs only while the session has no open response. */
  track(response: ServerResponse): void {
    this.openResponses++;
    clearTimeout(this.idleTimer);
    response.once('close', () => {
      if (--this.openResponses === 0) this.armIdleTimer();
    });
  }

  /** Hands a validated POST body to the connection and answers the POST (202, JSON or a stream). */
  accept(body: JsonRpcMessage | JsonRpcBatch, response: ServerResponse): void {
    const messages: readonly JsonRpcMessage[] = Array.isArray(body) ? body : [body as JsonRpcMessage];
    const requests = messages.filter((message) => classifyMessage(message) === 'request') as JsonRpcRequest[];
    if (requests.length === 0) {
      response.writeHead(202).end();
    } else {
      const initialize = requests.find((request) => request.method === 'initialize');
      if (initialize) this.initializeId = initialize.id;
      const version = initialize ? requestedVersion(initialize) : this.protocolVersion;
      const exchange: Exchange = {
        pending: new Set(requests.map((request) => request.id)),
        response,
        mode: this.initialMode(version),
        stream: undefined,
      };
      for (const id of exchange.pending) this.exchanges.set(id, exchange);
      if (exchange.mode === 'sse') this.openExchangeStream(exchange, version);
    }
    this.inbound.push(body);
    for (const message of messages) this.noticeCancellation(message);
  }

  /** Opens the standalone stream on `response`; false when one is already open. */
  openStandalone(response: ServerResponse): boolean {
    if (this.standalone.attached) return false;
    void this.standalone.open(response, this.primingRetry(this.protocolVersion));
    return true;
  }

  /** Resumes the stream `lastEventId` belongs to on `response`. */
  async resume(response: ServerResponse, lastEventId: string): Promise<ResumeOutcome> {
    const found = await this.config.store.replayAfter(this.sessionId, lastEventId);
    if (!found) return 'unknown';
    const stream =
      found.streamId === STANDALONE_STREAM ? this.standalone : this.liveStreams.get(found.streamId)?.stream;
    if (!stream) {
      await replayFinishedStream(response, found.events);
      return 'resumed';
    }
    await stream.resume(response, lastEventId);
    return 'resumed';
  }

  send(message: JsonRpcMessage | JsonRpcBatch, options?: TransportSendOptions): Promise<void> {
    if (this.closed) return Promise.reject(new TransportError('The Streamable HTTP session is closed'));
    if (Array.isArray(message)) return this.deliverBatchReply(message);
    const single = message as JsonRpcMessage;
    if (!('method' in single)) return this.deliverResponse(single);
    const related = options?.relatedRequestId;
    const exchange = related === undefined ? undefined : this.exchanges.get(related);
    if (exchange?.mode === 'undecided') this.openExchangeStream(exchange, this.protocolVersion);
    if (exchange?.mode === 'sse') return exchange.stream!.send(single);
    return this.standalone.send(single);
  }

  /** Ends every stream, answers open POSTs, forgets the session's events. Idempotent. */
  close(): Promise<void> {
    return (this.closing ??= this.release());
  }

  private async release(): Promise<void> {
    clearTimeout(this.idleTimer);
    this.inbound.complete();
    const exchanges = new Set(this.exchanges.values());
    this.exchanges.clear();
    this.liveStreams.clear();
    const endings = [...exchanges].map((exchange) => this.abandon(exchange));
    endings.push(this.standalone.end());
    await Promise.allSettled(endings);
    await this.config.store.dropSession(this.sessionId);
    this.config.onClosed(this);
  }

  private initialMode(version: string): Exchange['mode'] {
    if (this.config.responseMode !== 'auto') return this.config.responseMode;
    return isAtLeast(version, '2025-11-25') ? 'sse' : 'undecided';
  }

  private primingRetry(version: string): number | undefined {
    return isAtLeast(version, '2025-11-25') ? this.config.retryMs : undefined;
  }

  private openExchangeStream(exchange: Exchange, version: string): void {
    const stream = new SseStream(`post-${++this.streamCount}`, this.sessionId, this.config.store);
    exchange.mode = 'sse';
    exchange.stream = stream;
    this.liveStreams.set(stream.id, exchange);
    if (!exchange.response.destroyed) void stream.open(exchange.response, this.primingRetry(version));
  }

  private deliverResponse(message: JsonRpcMessage): Promise<void> {
    const id = (message as { id?: RequestId }).id;
    const exchange = id === undefined ? undefined : this.exchanges.get(id);
    // An id-less error answers nothing we can route (bodies are validated before they get here).
    if (!exchange || id === undefined) return Promise.resolve();
    if (id === this.initializeId) this.recordNegotiation(message);
    return this.answer(exchange, [id], message);
  }

  private deliverBatchReply(replies: JsonRpcBatch): Promise<void> {
    const ids = replies.flatMap((reply) => ('id' in reply && reply.id !== undefined ? [reply.id] : []));
    const exchange = ids.map((id) => this.exchanges.get(id)).find((found) => found !== undefined);
    if (!exchange) return Promise.resolve();
    return this.answer(exchange, [...exchange.pending], replies);
  }

  private async answer(exchange: Exchange, ids: readonly RequestId[], reply: JsonRpcMessage | JsonRpcBatch) {
    for (const id of ids) {
      exchange.pending.delete(id);
      this.exchanges.delete(id);
    }
    const finished = exchange.pending.size === 0;
    if (exchange.mode === 'sse') {
      const stream = exchange.stream!;
      const events: readonly JsonRpcMessage[] = Array.isArray(reply) ? reply : [reply as JsonRpcMessage];
      for (const event of events) await stream.send(event);
      if (finished) {
        this.liveStreams.delete(stream.id);
        await stream.end();
      }
      return;
    }
    const response = exchange.response;
    if (response.destroyed || response.headersSent) return; // the client left: a JSON answer cannot resume
    response.writeHead(200, { 'content-type': 'application/json' }).end(encodeFrame(reply));
  }

  /** A cancelled request is never answered: stop waiting for it so its POST can end. */
  private noticeCancellation(message: JsonRpcMessage): void {
    if (!('method' in message) || message.method !== 'notifications/cancelled') return;
    const requestId = (message.params as { requestId?: RequestId } | undefined)?.requestId;
    const exchange = requestId === undefined ? undefined : this.exchanges.get(requestId);
    if (!exchange || requestId === undefined) return;
    exchange.pending.delete(requestId);
    this.exchanges.delete(requestId);
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
    if (this.closed) {
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(
        encodeFrame({ jsonrpc: '2.0', error: { code: ErrorCode.InvalidRequest, message: 'Session closed' } }),
      );
    } else response.writeHead(202).end();
  }

  private recordNegotiation(message: JsonRpcMessage): void {
    const version = (message as { result?: { protocolVersion?: unknown } }).result?.protocolVersion;
    if (isSupportedVersion(version)) this.protocolVersion = version;
  }

  private armIdleTimer(): void {
    if (this.closed) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => void this.connection?.close(), this.config.idleTimeoutMs);
    this.idleTimer.unref();
  }
}

function requestedVersion(initialize: JsonRpcRequest): string {
  const requested = initialize.params?.protocolVersion;
  return isSupportedVersion(requested) ? requested : HTTP_DEFAULT_PROTOCOL_VERSION;
}
