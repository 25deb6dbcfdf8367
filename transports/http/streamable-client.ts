/**
 * The client side of the Streamable HTTP transport (MCP 2025-03-26 and later), with the fallback to the
 * HTTP+SSE transport of 2024-11-05.
 *
 * - Every message is its own POST (`Accept: application/json, text/event-stream`), carrying
 *   `MCP-Session-Id` once the server issued one and `MCP-Protocol-Version` once negotiated. A POST starts
 *   only after the previous one was handed over (a request's body written, a notification's or response's
 *   status back; everything waits for the `initialize` answer, which names the session), so the server
 *   receives messages in the order they were sent. (POSTs travel on different connections, so a
 *   notification could in theory overtake the request written just before it.)
 * - `send()` resolves once a request's body is written (its answer arrives on `messages`), or once the
 *   server accepted a notification or response (2xx). A POST that fails before it is written rejects
 *   `send()` with a `TransportError`.
 * - A request's answer is a JSON body or an SSE stream. A stream that ends (or breaks) before the response
 *   is resumed with GET + `Last-Event-ID` after the server's `retry:` delay, backing off on failures.
 * - Errors are values, and every request POSTed gets exactly one response on `messages`: the server's,
 *   or, when the HTTP exchange failed after the body was written (an HTTP error status, a lost stream that
 *   cannot be resumed, a body we cannot read), a JSON-RPC error response for that id that we make up, with
 *   code `HTTP_EXCHANGE_FAILED` (-32000, or the code of the JSON-RPC error the server put in an error body)
 *   and a message naming the request, the status and the server's words. The request then fails promptly
 *   with that `McpError`; the connection carries on.
 * - After `notifications/initialized` is accepted, the standalone GET stream is opened when the server
 *   offers it (405 = not offered) and reopened when it ends, resuming after its last event id.
 * - A 404 for our session means the server ended it. By default (`renewSession`) the transport starts a
 *   new session transparently: it replays the remembered `initialize` (with an id of its own, its answer
 *   swallowed) and `notifications/initialized`, then retries the message that failed and reopens the
 *   standalone stream; `events` reports `session-renewed`. A renewal that fails errors `messages` with a
 *   `TransportError` (the transport is unusable). With `renewSession: false` the transport ends instead:
 *   `messages` completes, as when the peer of a socket closes it.
 * - The first `initialize` answered 400, 404 or 405 (and `fallback` not false): the transport GETs the same
 *   URL expecting an HTTP+SSE `endpoint` event and continues over `LegacySseClientTransport`.
 * - `close()` is idempotent: it aborts open streams and POSTs, sends DELETE for the session (405 and any
 *   failure ignored), completes `messages` and `events`, and destroys the agent if it created it.
 */
import { setMaxListeners } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { Subject, type Observable } from 'rxjs';
import { classifyMessage } from '../../lib/jsonrpc/classify';
import { decodeFrame, encodeFrame } from '../../lib/jsonrpc/codec';
import { ErrorCode, TransportError } from '../../lib/jsonrpc/errors';
import { clipText } from '../../lib/jsonrpc/excerpt';
import {
  FrameError,
  type InboundFrame,
  type JsonRpcBatch,
  type JsonRpcMessage,
  type JsonRpcRequest,
  type RequestId,
} from '../../lib/jsonrpc/types';
import { InboundQueue } from '../inbound-queue';
import type { Transport } from '../transport';
import {
  contentTypeOf,
  describeHttpFailure,
  discardResponse,
  headerList,
  HttpPeer,
  readResponseText,
  sendHttpRequest,
  type HeaderList,
  type HttpClientOptions,
  type HttpExchange,
} from './client-request';
import {
  classifyStreamOpening,
  followSseStream,
  openingFailure,
  type ReconnectPolicy,
  type StreamOpening,
  type StreamOutcome,
} from './client-sse-stream';
import { LegacySseClientTransport } from './legacy-sse-client';
import type { SseEvent } from './sse';

export type { HttpClientOptions } from './client-request';

export interface StreamableHttpClientOptions extends HttpClientOptions {
  /** Default true: use the legacy HTTP+SSE transport when the initialize POST gets 400, 404 or 405. */
  readonly fallback?: boolean;
  /** Reconnection of SSE streams: delays (the server's `retry:` wins) and attempts in a row. */
  readonly reconnect?: ReconnectPolicy;
  /** Default true: open the GET stream after initialization when the server offers it (405 = not offered). */
  readonly standaloneStream?: boolean;
  /**
   * Default true: a 404 for our session starts a new one transparently (`session-renewed`); false: the
   * transport ends (`messages` completes).
   */
  readonly renewSession?: boolean;
}

export type HttpClientEvent =
  | { type: 'session-renewed'; previousSessionId: string; sessionId: string }
  | { type: 'fallback'; to: 'legacy-sse'; status: number }
  | { type: 'reconnecting'; stream: 'standalone' | 'request'; attempt: number; delayMs: number; lastEventId?: string }
  | { type: 'stream-lost'; stream: 'standalone' | 'request'; error: string };

/** The code of the error responses made up for requests whose HTTP exchange failed (JSON-RPC server range). */
export const HTTP_EXCHANGE_FAILED = -32000;

const FALLBACK_STATUSES = new Set([400, 404, 405]);
/** Renewals in a row without a message getting through in between before we give up. */
const MAX_RENEWALS_IN_A_ROW = 3;
const DELETE_TIMEOUT_MS = 5000;
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;

/** Why the ids of an answer were not all answered. */
interface Answer {
  readonly unanswered: readonly RequestId[];
  readonly why: string;
  readonly code?: number;
}

/** The own headers of every POST (the session and revision headers come first). */
const POST_HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

function requestIdsOf(message: JsonRpcMessage | JsonRpcBatch): RequestId[] {
  if (!Array.isArray(message)) return classifyMessage(message) === 'request' ? [(message as JsonRpcRequest).id] : [];
  const ids: RequestId[] = [];
  for (const item of message) if (classifyMessage(item) === 'request') ids.push((item as JsonRpcRequest).id);
  return ids;
}

function isSingle(message: JsonRpcMessage | JsonRpcBatch, method: string): boolean {
  return !Array.isArray(message) && (message as { method?: unknown }).method === method;
}

function isResponse(item: unknown): item is { id: RequestId } {
  const kind = classifyMessage(item);
  if (kind !== 'result' && kind !== 'error') return false; // also anything that is not an object (null)
  const id = (item as { id?: RequestId | null }).id;
  return id !== undefined && id !== null;
}

/** Crosses off `pending` the ids of the responses in a frame. */
function crossOffAnswered(frame: InboundFrame, pending: Set<RequestId>): void {
  if (frame instanceof FrameError) return;
  if (!Array.isArray(frame)) {
    if (isResponse(frame)) pending.delete(frame.id);
    return;
  }
  for (const item of frame) if (isResponse(item)) pending.delete(item.id);
}

const NONE: readonly RequestId[] = [];

/** The ids of `ids` a frame leaves unanswered. */
function unansweredBy(frame: InboundFrame, ids: readonly RequestId[]): readonly RequestId[] {
  if (ids.length === 1 && !Array.isArray(frame) && isResponse(frame) && frame.id === ids[0]) return NONE;
  const pending = new Set(ids);
  crossOffAnswered(frame, pending);
  return pending.size === 0 ? NONE : [...pending];
}

export class StreamableHttpClientTransport implements Transport {
  readonly messages: Observable<InboundFrame>;
  /** What the transport did on its own: renewals, the fallback, reconnections, streams given up. */
  readonly events: Observable<HttpClientEvent>;
  private readonly peer: HttpPeer;
  private readonly inbound = new InboundQueue('Streamable HTTP');
  private readonly eventSubject = new Subject<HttpClientEvent>();
  private readonly policy: ReconnectPolicy;
  private readonly abort = new AbortController();
  private session: string | undefined;
  private protocolVersion: string | undefined;
  /** The headers of a POST, for the session and revision they were made for. */
  private postHeaders: { session?: string; version?: string; list: HeaderList } | undefined;
  /** The `initialize` request our connection sent: replayed to renew the session. */
  private initializeRequest: JsonRpcRequest | undefined;
  private initializedSent = false;
  private renewal: Promise<void> | undefined;
  private renewalsInARow = 0;
  private renewals = 0;
  private legacy: LegacySseClientTransport | undefined;
  /** Whether a message is being handed over (see the module comment); those sent meanwhile wait, in order. */
  private handingOver = false;
  private readonly waiting: (() => void)[] = [];
  private standaloneRunning = false;
  /** Set once the transport ended without `close()`: the session is gone or it failed. */
  private ended = false;
  private closing: Promise<void> | undefined;

  constructor(
    url: string | URL,
    private readonly options: StreamableHttpClientOptions = {},
  ) {
    this.peer = new HttpPeer(url, options);
    setMaxListeners(0, this.abort.signal); // every stream waiting to reconnect listens to it: many is normal
    this.policy = options.reconnect ?? {};
    this.messages = this.inbound.messages;
    this.events = this.eventSubject.asObservable();
  }

  /** The session the server issued (the current one after a renewal); undefined before or without one. */
  get sessionId(): string | undefined {
    return this.session;
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
    this.legacy?.setProtocolVersion(version);
  }

  send(message: JsonRpcMessage | JsonRpcBatch): Promise<void> {
    const refusal = this.refusal();
    if (refusal) return Promise.reject(refusal);
    let body: string;
    try {
      body = encodeFrame(message);
    } catch (error) {
      return Promise.reject(new TransportError('Cannot encode the message as JSON', { cause: error }));
    }
    if (!this.handingOver) {
      this.handingOver = true;
      return this.beginDelivery(message, body);
    }
    return new Promise((resolve, reject) => {
      this.waiting.push(() => void this.beginDelivery(message, body).then(resolve, reject));
    });
  }

  close(): Promise<void> {
    return (this.closing ??= this.shutdown());
  }

  // ---- sending -----------------------------------------------------------------------------------

  private refusal(): TransportError | undefined {
    if (this.closing) return new TransportError('The Streamable HTTP transport is closed');
    if (this.ended) return new TransportError('The Streamable HTTP transport has ended: its session is over');
    return undefined;
  }

  /** Delivers a message; the next one waiting starts once it is handed over, at the latest when it settles. */
  private beginDelivery(message: JsonRpcMessage | JsonRpcBatch, body: string): Promise<void> {
    const handOver = this.handOverOnce();
    const delivery = this.deliver(message, body, handOver);
    delivery.then(handOver, handOver);
    return delivery;
  }

  /** Lets the next message waiting start; only its first call counts. */
  private handOverOnce(): () => void {
    let handedOver = false;
    return () => {
      if (handedOver) return;
      handedOver = true;
      const next = this.waiting.shift();
      if (next) queueMicrotask(next);
      else this.handingOver = false;
    };
  }

  private async deliver(message: JsonRpcMessage | JsonRpcBatch, body: string, handOver: () => void): Promise<void> {
    if (this.renewal) await this.renewal.catch(() => undefined);
    if (this.legacy) {
      handOver();
      return this.legacy.send(message);
    }
    const refusal = this.refusal();
    if (refusal) throw refusal;
    const ids = requestIdsOf(message);
    const initialize = isSingle(message, 'initialize') && ids.length === 1;
    if (initialize) this.initializeRequest = message as JsonRpcRequest;
    if (ids.length === 0) {
      await this.postNotice(body, true);
      if (isSingle(message, 'notifications/initialized')) {
        this.initializedSent = true;
        this.startStandalone();
      }
      return;
    }
    const opening = initialize && this.session === undefined;
    const sent = this.post(body, initialize);
    void this.answer(message, ids, body, sent, opening ? handOver : undefined);
    return sent.exchange.written;
  }

  /** Headers of every request: the extra ones, the session, the negotiated revision, then `own`. */
  private headers(own: Record<string, string | undefined>): HeaderList {
    return headerList(this.peer.target, this.options.headers, {
      'mcp-session-id': this.session,
      'mcp-protocol-version': this.protocolVersion,
      ...own,
    });
  }

  /** The headers of a POST: made again only when the session or the revision changed. */
  private postHeaderList(): HeaderList {
    const made = this.postHeaders;
    if (made && made.session === this.session && made.version === this.protocolVersion) return made.list;
    const list = this.headers(POST_HEADERS);
    this.postHeaders = { session: this.session, version: this.protocolVersion, list };
    return list;
  }

  private post(body: string, initialize: boolean): { exchange: HttpExchange; session: string | undefined } {
    const session = this.session;
    const exchange = sendHttpRequest({
      method: 'POST',
      target: this.peer.target,
      // An initialize announces its revision in its body only.
      headers: initialize
        ? this.headers({ ...POST_HEADERS, 'mcp-protocol-version': undefined })
        : this.postHeaderList(),
      body,
      signal: this.abort.signal,
    });
    return { exchange, session };
  }

  /** POSTs a notification or response; resolves on 2xx. `renew`: a 404 for our session renews it and retries. */
  private async postNotice(body: string, renew: boolean): Promise<void> {
    for (let retried = !renew; ; retried = true) {
      const { exchange, session } = this.post(body, false);
      const response = await exchange.response;
      const status = response.statusCode ?? 0;
      if (status >= 200 && status < 300) {
        discardResponse(response);
        if (renew) this.renewalsInARow = 0;
        return;
      }
      if (status === 404 && session !== undefined && !retried) {
        discardResponse(response);
        await this.sessionLost(session);
        continue;
      }
      throw new TransportError((await describeHttpFailure(response, `POST ${this.peer.url.href}`)).message);
    }
  }

  /**
   * Reads the answer to a POST that carried requests, in the background, and makes up an error response
   * for every id left unanswered. `handOver` is given for the opening `initialize`: later messages wait
   * until its answer named the session (or the fallback took over).
   */
  private async answer(
    message: JsonRpcMessage | JsonRpcBatch,
    ids: readonly RequestId[],
    body: string,
    sent: { exchange: HttpExchange; session: string | undefined },
    handOver: (() => void) | undefined,
  ): Promise<void> {
    const what = this.describePost(message);
    let retried = false;
    let outcome: Answer | undefined;
    for (;;) {
      let response: IncomingMessage;
      try {
        response = await sent.exchange.response;
      } catch (error) {
        handOver?.();
        const written = await sent.exchange.written.then(
          () => true,
          () => false,
        );
        // A first POST never written rejected send(), and the connection failed the request with that.
        if (written || retried) this.failRequests(ids, (error as Error).message);
        return;
      }
      const status = response.statusCode ?? 0;
      if (handOver && status >= 200 && status < 300) this.adoptSession(response);
      if (handOver && FALLBACK_STATUSES.has(status) && this.options.fallback !== false) {
        return this.fallBack(message, ids, response, handOver);
      }
      handOver?.();
      if (status === 404 && sent.session !== undefined && !retried && !isSingle(message, 'initialize')) {
        discardResponse(response);
        try {
          await this.sessionLost(sent.session);
        } catch (error) {
          return this.failRequests(ids, `${what()}: HTTP 404: ${(error as Error).message}`);
        }
        retried = true;
        sent = this.post(body, false);
        continue;
      }
      if (status < 200 || status >= 300) {
        const failure = await describeHttpFailure(response, what());
        outcome = { unanswered: ids, why: failure.message, ...(failure.code !== undefined && { code: failure.code }) };
      } else {
        this.renewalsInARow = 0;
        outcome = await this.readAnswer(response, ids, this.deliverFrame, what);
      }
      break;
    }
    if (outcome) this.failRequests(outcome.unanswered, outcome.why, outcome.code);
  }

  private readonly deliverFrame = (frame: InboundFrame) => this.inbound.push(frame);

  /** Names a POST in failure messages; made only when one is needed. */
  private describePost(message: JsonRpcMessage | JsonRpcBatch): () => string {
    return () => `POST ${this.peer.url.href} (${describeRequests(message)})`;
  }

  /**
   * Reads a 2xx answer (a JSON body or an SSE stream), handing every frame to `deliver`; undefined once every
   * id is answered. `what` names the exchange in the reasons.
   */
  private async readAnswer(
    response: IncomingMessage,
    ids: readonly RequestId[],
    deliver: (frame: InboundFrame) => void,
    what: () => string,
  ): Promise<Answer | undefined> {
    const type = contentTypeOf(response);
    if (type === 'application/json') {
      const text = await readResponseText(response, this.peer.maxMessageBytes);
      if (text === 'too-large') {
        deliver(
          new FrameError(
            ErrorCode.InvalidRequest,
            `Message too large: the limit is ${this.peer.maxMessageBytes} bytes`,
          ),
        );
        return unanswered(what, ids, `the response is larger than the limit of ${this.peer.maxMessageBytes} bytes`);
      }
      if (text === 'broken') return unanswered(what, ids, 'the connection was lost before the response arrived');
      const frame = decodeFrame(text, this.peer.maxMessageBytes);
      const left = unansweredBy(frame, ids);
      deliver(frame);
      return unanswered(
        what,
        left,
        frame instanceof FrameError ? frame.message : 'the JSON body holds no response for the request',
      );
    }
    if (type === 'text/event-stream') {
      const pending = new Set(ids);
      const take = (frame: InboundFrame) => {
        crossOffAnswered(frame, pending);
        deliver(frame);
      };
      const outcome = await followSseStream(
        {
          kind: 'request',
          open: (lastEventId) => this.openStream(lastEventId),
          onEvent: (event) => {
            const frame = this.frameOf(event);
            if (frame) take(frame);
          },
          isDone: () => pending.size === 0,
          onReconnecting: (attempt, delayMs, lastEventId) =>
            this.report({ type: 'reconnecting', stream: 'request', attempt, delayMs, lastEventId }),
          policy: this.policy,
          signal: this.abort.signal,
          maxLineLength: this.peer.maxMessageBytes + 1024,
        },
        response,
      );
      if (outcome.kind === 'lost') this.report({ type: 'stream-lost', stream: 'request', error: outcome.error });
      return unanswered(what, [...pending], describeOutcome(outcome));
    }
    discardResponse(response);
    const status = response.statusCode;
    return unanswered(
      what,
      ids,
      type === '' ? `the server answered ${status} without a response` : `unexpected content type ${type}`,
    );
  }

  private frameOf(event: SseEvent): InboundFrame | undefined {
    if ((event.event !== undefined && event.event !== 'message') || event.data === '') return undefined;
    return decodeFrame(event.data, this.peer.maxMessageBytes);
  }

  /** Makes up one error response per id, so each pending request fails promptly. */
  private failRequests(ids: readonly RequestId[], message: string, code = HTTP_EXCHANGE_FAILED): void {
    for (const id of ids) this.inbound.push({ jsonrpc: '2.0', id, error: { code, message } });
  }

  private adoptSession(response: IncomingMessage): void {
    const id = response.headers['mcp-session-id'];
    if (typeof id === 'string' && VISIBLE_ASCII.test(id)) this.session = id;
  }

  private report(event: HttpClientEvent): void {
    if (!this.closing) this.eventSubject.next(event);
  }

  // ---- the standalone stream ---------------------------------------------------------------------

  private startStandalone(): void {
    if (this.options.standaloneStream === false || this.standaloneRunning || this.legacy) return;
    if (this.closing || this.ended) return;
    this.standaloneRunning = true;
    void this.runStandalone().finally(() => (this.standaloneRunning = false));
  }

  private async runStandalone(): Promise<void> {
    for (;;) {
      let openedWith: string | undefined;
      const outcome = await followSseStream({
        kind: 'standalone',
        open: async (lastEventId) => {
          const opening = await this.openStreamOn(lastEventId);
          openedWith = opening.session;
          return opening.result;
        },
        onEvent: (event) => {
          const frame = this.frameOf(event);
          if (frame) this.inbound.push(frame);
        },
        isDone: () => false,
        onReconnecting: (attempt, delayMs, lastEventId) =>
          this.report({ type: 'reconnecting', stream: 'standalone', attempt, delayMs, lastEventId }),
        policy: this.policy,
        signal: this.abort.signal,
        maxLineLength: this.peer.maxMessageBytes + 1024,
      });
      if (outcome.kind === 'session-gone' && openedWith !== undefined) {
        const renewed = await this.sessionLost(openedWith).then(
          () => true,
          () => false,
        );
        if (renewed) continue; // a fresh stream on the new session
        return;
      }
      if (outcome.kind === 'lost') this.report({ type: 'stream-lost', stream: 'standalone', error: outcome.error });
      return;
    }
  }

  /** GETs a stream (resuming after `lastEventId` when given), on the session current once any renewal is done. */
  private async openStream(lastEventId: string | undefined): Promise<StreamOpening> {
    return (await this.openStreamOn(lastEventId)).result;
  }

  /** `openStream`, telling which session the GET carried. */
  private async openStreamOn(
    lastEventId: string | undefined,
  ): Promise<{ result: StreamOpening; session: string | undefined }> {
    if (this.renewal) await this.renewal.catch(() => undefined);
    const session = this.session;
    const what = `GET ${this.peer.url.href}`;
    try {
      const response = await sendHttpRequest({
        method: 'GET',
        target: this.peer.target,
        headers: this.headers({ accept: 'text/event-stream', 'last-event-id': lastEventId }),
        signal: this.abort.signal,
      }).response;
      return { result: classifyStreamOpening(response, session !== undefined, what), session };
    } catch (error) {
      return { result: openingFailure(error), session };
    }
  }

  // ---- sessions ----------------------------------------------------------------------------------

  /**
   * The server answered 404 for `session`: renew it (resolves once a new session is ready), or end the
   * transport and reject when renewal is off or impossible.
   */
  private sessionLost(session: string): Promise<void> {
    const refusal = this.refusal();
    if (refusal) return Promise.reject(refusal);
    if (this.session !== session) return this.renewal ?? Promise.resolve(); // renewed already
    const renewable = this.options.renewSession !== false && this.initializeRequest && this.initializedSent;
    if (!renewable) {
      this.end();
      return Promise.reject(new TransportError('The server ended the session (HTTP 404)'));
    }
    return (this.renewal ??= this.renew(session)
      .catch((error: unknown) => {
        const failure = new TransportError(
          `The server ended the session (HTTP 404) and a new one could not be started: ${(error as Error).message}`,
          { cause: error },
        );
        this.fail(failure);
        throw failure;
      })
      .finally(() => (this.renewal = undefined)));
  }

  private async renew(previous: string): Promise<void> {
    if (++this.renewalsInARow > MAX_RENEWALS_IN_A_ROW) {
      throw new TransportError(`the server ended ${MAX_RENEWALS_IN_A_ROW} new sessions in a row`);
    }
    this.session = undefined;
    const replayId = `switchboard-renewal-${++this.renewals}`;
    const what = `POST ${this.peer.url.href} (initialize, renewing the session)`;
    const { exchange } = this.post(encodeFrame({ ...this.initializeRequest!, id: replayId }), true);
    const response = await exchange.response;
    const status = response.statusCode ?? 0;
    if (status < 200 || status >= 300) throw new TransportError((await describeHttpFailure(response, what)).message);
    this.adoptSession(response);
    let answer: Record<string, any> | undefined;
    const outcome = await this.readAnswer(
      response,
      [replayId],
      (frame) => {
        if (!Array.isArray(frame) && isResponse(frame) && frame.id === replayId) answer = frame;
      },
      () => what,
    );
    if (!answer) throw new TransportError(outcome?.why ?? `${what}: the JSON body holds no response for the request`);
    if (answer.error) throw new TransportError(`${what}: the server refused: ${clipText(answer.error.message, 500)}`);
    const version = answer.result?.protocolVersion;
    if (this.protocolVersion !== undefined && version !== this.protocolVersion) {
      throw new TransportError(
        `${what}: the server now answers protocol version ${version}, not ${this.protocolVersion}`,
      );
    }
    await this.postNotice(encodeFrame({ jsonrpc: '2.0', method: 'notifications/initialized' }), false);
    this.report({ type: 'session-renewed', previousSessionId: previous, sessionId: this.session ?? '' });
    queueMicrotask(() => this.startStandalone());
  }

  /** The session is over and will not be renewed: `messages` completes. */
  private end(): void {
    if (this.closing) return;
    this.ended = true;
    this.abort.abort();
    this.inbound.complete();
  }

  /** The transport is unusable: `messages` errors. */
  private fail(error: TransportError): void {
    if (this.closing) return;
    this.ended = true;
    this.abort.abort();
    this.inbound.fail(error);
  }

  // ---- fallback ----------------------------------------------------------------------------------

  /** The opening `initialize` got 400/404/405: try HTTP+SSE on the same URL and resend it there. */
  private async fallBack(
    message: JsonRpcMessage | JsonRpcBatch,
    ids: readonly RequestId[],
    response: IncomingMessage,
    handOver: () => void,
  ): Promise<void> {
    const status = response.statusCode ?? 0;
    const refused = await describeHttpFailure(response, `POST ${this.peer.url.href} (initialize)`);
    const legacy = new LegacySseClientTransport(this.peer.url, {
      ...(this.options.headers && { headers: this.options.headers }),
      agent: this.peer.agent,
      maxMessageBytes: this.peer.maxMessageBytes,
    });
    try {
      await legacy.connect();
      if (this.closing) throw new TransportError('the transport closed');
    } catch (error) {
      await legacy.close();
      handOver();
      return this.failRequests(
        ids,
        `${refused.message}; falling back to the HTTP+SSE transport failed too: ${(error as Error).message}`,
      );
    }
    this.legacy = legacy;
    if (this.protocolVersion !== undefined) legacy.setProtocolVersion(this.protocolVersion);
    legacy.messages.subscribe({
      next: (frame) => this.inbound.push(frame),
      error: (error: unknown) =>
        this.inbound.fail(error instanceof TransportError ? error : new TransportError(String(error))),
      complete: () => this.inbound.complete(),
    });
    this.report({ type: 'fallback', to: 'legacy-sse', status });
    handOver();
    legacy.send(message).catch((error: unknown) => this.failRequests(ids, (error as Error).message));
  }

  // ---- closing -----------------------------------------------------------------------------------

  private async shutdown(): Promise<void> {
    const session = this.ended ? undefined : this.session;
    this.abort.abort();
    await this.legacy?.close();
    if (session !== undefined && !this.legacy) await this.deleteSession();
    this.inbound.complete();
    this.eventSubject.complete();
    this.peer.release();
  }

  /** DELETE for the session; whatever the answer (405 included), the session is ours no more. */
  private async deleteSession(): Promise<void> {
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), DELETE_TIMEOUT_MS);
    try {
      const response = await sendHttpRequest({
        method: 'DELETE',
        target: this.peer.target,
        headers: this.headers({}),
        signal: timeout.signal,
      }).response;
      discardResponse(response);
    } catch {
      // unreachable or timed out: nothing more to do
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The ids of an exchange named `what` left unanswered, and why; undefined when none were. */
function unanswered(what: () => string, left: readonly RequestId[], why: string): Answer | undefined {
  return left.length === 0 ? undefined : { unanswered: left, why: `${what()}: ${why}` };
}

function describeRequests(message: JsonRpcMessage | JsonRpcBatch): string {
  if (Array.isArray(message)) return `a batch of ${message.length}`;
  const single = message as { method?: string; id?: RequestId };
  return `${single.method} ${JSON.stringify(single.id)}`;
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
