/**
 * The server side of SSE responses: writing events with backpressure, keep-alive comments on idle streams, and
 * `SseStream`, one logical stream of a Streamable HTTP session that outlives the responses it is written to.
 */
import type { ServerReply } from './server-port';
import { setTimerRef } from '../../lib/core/clock';
import { encodeFrame } from '../../lib/jsonrpc/codec';
import { ErrorCode, TransportError } from '../../lib/jsonrpc/errors';
import type { JsonRpcBatch, JsonRpcMessage } from '../../lib/jsonrpc/types';
import type { EventStore, StoredEvent } from './event-store';
import { encodeSseComment, encodeSseEvent } from './sse';

/**
 * Stored in place of a priming event (an id with empty data): an `EventStore` only issues ids for
 * messages, and the priming id must be one the store can resume after. It is never replayed.
 */
const PRIMING: JsonRpcMessage = { jsonrpc: '2.0', method: 'notifications/switchboard/priming' };

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache, no-transform' };

const KEEP_ALIVE = encodeSseComment('keep-alive');

/** The drain each backed-up response waits for: one pair of listeners per response, however many writers wait. */
const pendingDrains = new WeakMap<ServerReply, Promise<void>>();

/**
 * Writes `text` at once (so concurrent writers keep their order), resolving once the socket can take more
 * (or is gone).
 */
export function writeChunk(response: ServerReply, text: string): Promise<void> {
  if (response.destroyed || response.writableEnded) return Promise.resolve();
  if (response.write(text)) return Promise.resolve();
  let drain = pendingDrains.get(response);
  if (!drain) {
    drain = new Promise((resolve) => {
      const done = () => {
        response.off('drain', done);
        response.off('close', done);
        pendingDrains.delete(response);
        resolve();
      };
      response.on('drain', done);
      response.on('close', done);
    });
    pendingDrains.set(response, drain);
  }
  return drain;
}

/**
 * `: keep-alive` comments on an SSE response every `intervalMs` (0: never) while nothing else was written
 * since the previous tick, so proxies do not cut an idle stream. Stops when the response closes.
 */
export class KeepAlive {
  private wroteSinceTick = false;
  private readonly timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly response: ServerReply,
    intervalMs: number,
  ) {
    if (intervalMs <= 0) return;
    this.timer = setInterval(() => this.tick(), intervalMs);
    setTimerRef(this.timer, false);
    response.once('close', () => this.stop());
  }

  /** Something else went out: the next tick needs no comment. */
  touch(): void {
    this.wroteSinceTick = true;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private tick(): void {
    // A stream waiting for the socket to drain is not idle: the comment would only add to its backlog.
    const { response } = this;
    if (!this.wroteSinceTick && !response.writableNeedDrain) void writeChunk(response, KEEP_ALIVE);
    this.wroteSinceTick = false;
  }
}

export function startSseResponse(response: ServerReply): void {
  response.writeHead(200, SSE_HEADERS);
  response.flushHeaders();
}

/**
 * `message` as JSON. A response that cannot be encoded (a result nested too deep for `JSON.stringify`, say)
 * becomes an internal error for the same id, so its request is still answered; anything else that cannot
 * be encoded throws a `TransportError` (its send fails).
 */
export function encodeOutbound(message: JsonRpcMessage | JsonRpcBatch): string {
  try {
    return encodeFrame(message);
  } catch (error) {
    const id = (message as { id?: unknown }).id;
    if (Array.isArray(message) || id === undefined || 'method' in message) {
      throw new TransportError('The message cannot be encoded as JSON', { cause: error });
    }
    const why = `Internal error: the response could not be encoded as JSON (${(error as Error).message})`;
    return encodeFrame({ jsonrpc: '2.0', id, error: { code: ErrorCode.InternalError, message: why } });
  }
}

function messageEvent(event: StoredEvent): string {
  return encodeSseEvent({ id: event.id, event: 'message', data: encodeOutbound(event.message) });
}

/**
 * Answers a resumption of a stream that has finished: its missed events, then the end; or, with none
 * missed (a cancelled request's stream ends without a response), 204: no content, nothing to resume. SDK
 * clients take that as the end of the stream, where an empty 200 makes them reconnect again and again.
 */
export async function replayFinishedStream(
  response: ServerReply,
  events: readonly StoredEvent[],
  headers: string[] = [],
): Promise<void> {
  const missed = events.filter((event) => event.message !== PRIMING);
  if (missed.length === 0) return void response.writeHead(204, headers).end();
  startSseResponse(response);
  for (const event of missed) await writeChunk(response, messageEvent(event));
  response.end();
}

/**
 * One logical SSE stream of a session (a POST's stream or the standalone GET stream). Every message is
 * recorded in the event store first, so it survives the HTTP response it was meant for; a client that
 * lost the response resumes the stream with GET + `Last-Event-ID`. Writes are serialized in order. While
 * a response is attached and nothing else is written, a `: keep-alive` comment goes out every
 * `keepAliveMs`, so proxies do not cut an idle stream.
 */
export class SseStream {
  /** The response this stream is bound to, claimed as soon as it arrives (so a second one gets 409). */
  private response: ServerReply | undefined;
  /** False while a resumption replays: live events wait their turn in the queue meanwhile. */
  private live = false;
  /** Whether a priming event was sent: only then can the client resume the stream. */
  private primedWithId = false;
  private keepAlive: KeepAlive | undefined;
  private tail: Promise<void> = Promise.resolve();

  constructor(
    readonly id: string,
    private readonly sessionId: string,
    private readonly store: EventStore,
    /** 0 turns keep-alive comments off. */
    private readonly keepAliveMs: number,
  ) {}

  get attached(): boolean {
    return this.response !== undefined;
  }

  /** The client got an event id on this stream, so it can resume it after losing the response. */
  get resumable(): boolean {
    return this.primedWithId;
  }

  /** Starts the stream on `response`, primed with an id and a `retry` hint when `retryMs` is given. */
  open(response: ServerReply, retryMs: number | undefined): Promise<void> {
    startSseResponse(response);
    this.claim(response);
    this.live = true;
    if (retryMs === undefined) return this.tail;
    this.primedWithId = true;
    return this.enqueue(async () => {
      const id = await this.store.append(this.sessionId, this.id, PRIMING);
      await this.write(encodeSseEvent({ id, data: '', retry: retryMs }));
    });
  }

  /**
   * Continues the stream on `response`: the events after `lastEventId` first, then live ones. A response
   * still bound is ended: the client resuming has lost it, even if the server has not noticed yet.
   */
  resume(response: ServerReply, lastEventId: string): Promise<void> {
    startSseResponse(response);
    const previous = this.response;
    this.claim(response);
    previous?.end();
    this.live = false;
    return this.enqueue(async () => {
      // Inside the queue: nothing can be appended to this stream between the replay and going live.
      const replay = await this.store.replayAfter(this.sessionId, lastEventId);
      for (const event of replay?.events ?? []) {
        if (event.message !== PRIMING) await writeChunk(response, messageEvent(event));
      }
      if (this.response === response) this.live = true;
    });
  }

  /** Records `message` and writes it when a response is attached; otherwise it waits for a resume. */
  send(message: JsonRpcMessage): Promise<void> {
    return this.enqueue(async () => {
      const id = await this.store.append(this.sessionId, this.id, message);
      await this.write(messageEvent({ id, message }));
    });
  }

  /**
   * Ends the attached response once everything queued is written. The stream itself goes on: what is
   * sent later is kept for a client that resumes it.
   */
  end(): Promise<void> {
    return this.enqueue(async () => {
      const response = this.response;
      this.response = undefined;
      response?.end();
    });
  }

  private claim(response: ServerReply): void {
    this.response = response;
    this.keepAlive?.stop();
    this.keepAlive = new KeepAlive(response, this.keepAliveMs);
    response.once('close', () => {
      if (this.response === response) this.response = undefined;
    });
  }

  private write(text: string): Promise<void> {
    if (!this.response || !this.live) return Promise.resolve();
    this.keepAlive?.touch();
    return writeChunk(this.response, text);
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    // A failing store must not wedge the stream: later messages still get their turn.
    const run = this.tail.then(task);
    this.tail = run.catch(() => undefined);
    return run;
  }
}
