/**
 * One POST that carries requests, from the POST to the last answer: the answer is read as a JSON body or
 * followed as an SSE stream (resumed with GET + `Last-Event-ID` when it breaks), and the POST is sent once
 * more on a new session after a 404 for the session it carried (`client-post.ts`).
 *
 * `run()` (what `send()` returns) resolves once every request in it is answered or finished, and rejects
 * with a `TransportError` when the exchange failed without the server's answer: a local failure, never a
 * made-up JSON-RPC error. An HTTP error status whose body is a JSON-RPC error answers the requests with that
 * error, as the server sent it. A request finished on our side (cancelled, timed out: `finish(id)`) is not
 * waited for: once none is left, the exchange stops reading and its stream is never resumed.
 */
import type { IncomingMessage } from 'node:http';
import { decodeFrame } from '../../lib/jsonrpc/codec';
import { ErrorCode, TransportError } from '../../lib/jsonrpc/errors';
import { classifyMessage } from '../../lib/jsonrpc/classify';
import {
  UnreadableFrame,
  type InboundFrame,
  type JsonRpcBatch,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type RequestId,
} from '../../lib/jsonrpc/types';
import {
  contentTypeOf,
  describeHttpFailure,
  discardResponse,
  HttpStatusError,
  type HeaderList,
  readResponseText,
  type HttpExchange,
} from './client-request';
import {
  followSseStream,
  Interruption,
  type FollowedStream,
  type ReconnectPolicy,
  type StreamOpening,
  type StreamOutcome,
} from './client-sse-stream';
import type { HttpClientEvent } from './client-events';
import { postUntilFinal, type PostChannel, type SentPost, type SessionLost } from './client-post';
import type { SseEvent } from './sse';

/** What an exchange needs of its session: its POST, and GETs resuming its answer's stream. */
export interface ExchangeChannel extends PostChannel {
  readonly policy: ReconnectPolicy;
  /** Aborted when the transport closes or ends. */
  readonly signal: AbortSignal;
  /** The inbound frame limit in bytes. */
  readonly maxMessageBytes: number;
  /**
   * GETs the stream to resume after `lastEventId`: on the session current once any renewal is done; for an
   * `opening` exchange's stream (an `initialize`, maybe a renewal's own) at once, on the session it named.
   */
  openStream(lastEventId: string | undefined, opening: boolean): Promise<StreamOpening>;
  report(event: HttpClientEvent): void;
}

/** Where an exchange's outcome goes. */
export interface ExchangeListener {
  /** Renews the session after a 404 for it; undefined: a 404 is final. */
  readonly sessionLost: SessionLost | undefined;
  /** Every frame of the answer, in order. */
  deliver(frame: InboundFrame): void;
  /** The exchange got a 2xx answer. */
  gotThrough(): void;
  /** The exchange no longer holds up the messages sent after it. */
  handedOver(): void;
  /** The exchange is over: forget its requests. */
  forget(exchange: RequestExchange): void;
}

/** What an exchange carrying the opening `initialize` adds: its answer names the session, or refuses it. */
export interface OpeningHost {
  /** A 2xx answer to the opening `initialize` came. */
  opened(response: IncomingMessage): void;
  /** The opening `initialize` got an error status: resolves once the fallback took over; undefined when there is none. */
  refused(exchange: RequestExchange, response: IncomingMessage): Promise<void> | undefined;
}

/** The ids of the requests in a message (a request, or the requests of a batch). */
export function requestIdsOf(message: JsonRpcMessage | JsonRpcBatch): RequestId[] {
  if (!Array.isArray(message)) return classifyMessage(message) === 'request' ? [(message as JsonRpcRequest).id] : [];
  const ids: RequestId[] = [];
  for (const item of message) if (classifyMessage(item) === 'request') ids.push((item as JsonRpcRequest).id);
  return ids;
}

export function isResponse(item: unknown): item is { id: RequestId } {
  const kind = classifyMessage(item);
  if (kind !== 'result' && kind !== 'error') return false; // also anything that is not an object (null)
  const id = (item as { id?: RequestId | null }).id;
  return id !== undefined && id !== null;
}

export class RequestExchange implements FollowedStream {
  readonly kind = 'request';
  /** The requests still waiting for their answer. */
  readonly pending: Set<RequestId>;
  /** Made once the answer is a stream: cuts short its reading or resumption when nothing waits for it. */
  interruption: Interruption | undefined;
  private handedOver = false;
  /** Aborts the POST of a modern request (closes its response: the server cancels the request). */
  private abortPost: (() => void) | undefined;

  constructor(
    private readonly channel: ExchangeChannel,
    private readonly listener: ExchangeListener,
    readonly message: JsonRpcMessage | JsonRpcBatch,
    readonly ids: readonly RequestId[],
    private readonly body: string,
    /** Given for the opening `initialize`: later messages wait until its answer named the session. */
    private readonly opening?: OpeningHost,
    /** The headers of a modern request (2026-07-28): it travels on no session. */
    readonly modernHeaders?: HeaderList,
  ) {
    this.pending = new Set(ids);
  }

  get policy(): ReconnectPolicy {
    return this.channel.policy;
  }

  get signal(): AbortSignal {
    return this.channel.signal;
  }

  get maxLineLength(): number {
    return this.channel.maxMessageBytes + 1024;
  }

  /** POSTs the message and reads its answer (see the module comment). */
  async run(): Promise<void> {
    const initialize = this.opening !== undefined;
    const post = () => this.posted(this.channel.post(this.body, initialize, this.modernHeaders));
    const first = post();
    if (!initialize) void this.handOverOnceWritten(first.exchange);
    try {
      const outcome = await postUntilFinal(this.channel, first, post, this.listener.sessionLost);
      if (!outcome.answered) {
        if (this.pending.size > 0) throw outcome.error; // a TransportError: never written, or the connection failed
        return;
      }
      const { response } = outcome;
      const status = response.statusCode ?? 0;
      const ok = status >= 200 && status < 300;
      if (this.opening) {
        if (ok) this.opening.opened(response);
        else {
          const fallback = this.opening.refused(this, response);
          if (fallback) return await fallback;
        }
        this.handOver();
      }
      if (!ok) return await this.refusedWith(response);
      this.listener.gotThrough();
      return await this.read(response);
    } finally {
      this.handOver();
      this.listener.forget(this);
    }
  }

  private posted(sent: SentPost): SentPost {
    this.abortPost = sent.abort;
    return sent;
  }

  /** A request of this exchange was finished on our side: it is not waited for any more. */
  finish(id: RequestId): void {
    if (!this.pending.delete(id) || this.pending.size > 0) return;
    this.interruption?.interrupt();
    this.abortPost?.();
  }

  /** Names the POST in failure messages. */
  describe(): string {
    const message = this.message;
    if (Array.isArray(message)) return `POST ${this.channel.url.href} (a batch of ${message.length})`;
    const single = message as { method?: string; id?: RequestId };
    return `POST ${this.channel.url.href} (${single.method} ${JSON.stringify(single.id)})`;
  }

  /**
   * Fails the exchange with `why` (a `TransportError` thrown, which rejects `run()`) for the requests still
   * pending; does nothing when none is (they were answered or finished).
   */
  failPending(why: string, httpStatus?: number): void {
    if (this.pending.size === 0) return;
    throw httpStatus === undefined ? new TransportError(why) : new HttpStatusError(why, httpStatus);
  }

  private async handOverOnceWritten(exchange: HttpExchange): Promise<void> {
    try {
      await exchange.written;
    } catch {
      // never written: `run()` fails with the response's rejection
    }
    this.handOver();
  }

  /** Lets the messages sent after this one go (once). */
  handOver(): void {
    if (this.handedOver) return;
    this.handedOver = true;
    this.listener.handedOver();
  }

  /** An HTTP error status: the server's JSON-RPC error answers the requests; anything else fails the exchange. */
  private async refusedWith(response: IncomingMessage): Promise<void> {
    const failure = await describeHttpFailure(response, this.describe());
    if (!failure.error) return this.failPending(failure.message, response.statusCode ?? 0);
    for (const id of this.pending) this.listener.deliver({ jsonrpc: '2.0', id, error: failure.error });
    this.pending.clear();
  }

  /** Reads a 2xx answer: a JSON body, or an SSE stream. */
  private async read(response: IncomingMessage): Promise<void> {
    const type = contentTypeOf(response);
    if (type === 'application/json') return this.readJson(response);
    if (type === 'text/event-stream') {
      this.interruption = new Interruption();
      const outcome = await followSseStream(this, response);
      if (outcome.kind === 'lost')
        this.channel.report({ type: 'stream-lost', stream: 'request', error: outcome.error });
      return this.failPending(`${this.describe()}: ${describeOutcome(outcome)}`);
    }
    discardResponse(response);
    const why =
      type === '' ? `the server answered ${response.statusCode} without a response` : `unexpected content type ${type}`;
    this.failPending(`${this.describe()}: ${why}`);
  }

  private async readJson(response: IncomingMessage): Promise<void> {
    const { maxMessageBytes } = this.channel;
    const text = await readResponseText(response, maxMessageBytes);
    if (text === 'too-large') {
      this.listener.deliver(
        new UnreadableFrame(ErrorCode.InvalidRequest, `Message too large: the limit is ${maxMessageBytes} bytes`),
      );
      return this.failPending(`${this.describe()}: the response is larger than the limit of ${maxMessageBytes} bytes`);
    }
    if (text === 'broken')
      return this.failPending(`${this.describe()}: the connection was lost before the response arrived`);
    const frame = decodeFrame(text, maxMessageBytes);
    this.crossOff(frame);
    this.listener.deliver(frame);
    const why = frame instanceof UnreadableFrame ? frame.message : 'the JSON body holds no response for the request';
    this.failPending(`${this.describe()}: ${why}`);
  }

  /** Crosses off `pending` the requests a frame answers. */
  private crossOff(frame: InboundFrame): void {
    if (frame instanceof UnreadableFrame) return;
    if (!Array.isArray(frame)) {
      if (isResponse(frame)) this.pending.delete(frame.id);
      return;
    }
    for (const item of frame) if (isResponse(item)) this.pending.delete(item.id);
  }

  // ---- the SSE stream (FollowedStream) -----------------------------------------------------------

  open(lastEventId: string | undefined): Promise<StreamOpening> {
    return this.channel.openStream(lastEventId, this.opening !== undefined);
  }

  onEvent(event: SseEvent): void {
    const frame = frameOf(event, this.channel.maxMessageBytes);
    if (!frame) return;
    this.crossOff(frame);
    this.listener.deliver(frame);
  }

  isDone(): boolean {
    return this.pending.size === 0;
  }

  onReconnecting(attempt: number, delayMs: number, lastEventId: string | undefined): void {
    this.channel.report({ type: 'reconnecting', stream: 'request', attempt, delayMs, lastEventId });
  }
}

/** The frame a `message` event carries; undefined for other events and events without data. */
export function frameOf(event: SseEvent, maxMessageBytes: number): InboundFrame | undefined {
  if ((event.event !== undefined && event.event !== 'message') || event.data === '') return undefined;
  return decodeFrame(event.data, maxMessageBytes);
}

function describeOutcome(outcome: StreamOutcome): string {
  switch (outcome.kind) {
    case 'done':
      return 'answered';
    case 'aborted':
      return 'the transport closed before the response arrived';
    case 'not-offered':
      return 'the stream ended before the response and the server cannot resume it';
    case 'session-gone':
      return 'the session ended before the response arrived';
    case 'lost':
      return `the response stream was lost: ${outcome.error}`;
  }
}
