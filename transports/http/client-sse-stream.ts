/**
 * Reading SSE responses on the client side, and following one logical stream across reconnections:
 * when the connection ends (cleanly or not) the stream is reopened with GET and `Last-Event-ID`, after the
 * server's `retry:` delay (or our own), backing off on failures. Used for the standalone GET stream and for
 * the stream of a POST whose response has not arrived yet; the legacy transport only uses `readSseResponse`.
 */
import type { IncomingMessage } from 'node:http';
import { TransportError } from '../../lib/jsonrpc/errors';
import { contentTypeOf, discardResponse } from './client-request';
import { SseParser, type SseEvent } from './sse';

export type SseReadEnding =
  /** The server ended the response. */
  | { readonly kind: 'ended' }
  /** `onEvent` asked to stop; the response was released. */
  | { readonly kind: 'stopped' }
  /** The connection broke, was aborted, or sent an event we cannot parse. */
  | { readonly kind: 'broken'; readonly error: string };

/**
 * Lets the owner of a followed stream cut short what the stream is doing now (reading a response, waiting
 * to reconnect) once it needs nothing more from it: a request stream whose requests were all finished.
 */
export class Interruption {
  private cut: (() => void) | undefined;

  /** Cuts short the current read or wait, if any. */
  interrupt(): void {
    const cut = this.cut;
    this.cut = undefined;
    cut?.();
  }

  /** What `interrupt` does from now on (undefined: nothing). */
  set(cut: (() => void) | undefined): void {
    this.cut = cut;
  }
}

/** How long a stream we no longer need may take to end by itself before we drop its connection. */
const RELEASE_GRACE_MS = 1000;

/**
 * Lets a response we are done with finish on its own, so its keep-alive socket goes back to the agent (a
 * server normally ends a request's stream right after the response); drops the connection otherwise.
 */
function release(response: IncomingMessage): void {
  if (response.complete || response.destroyed) return;
  const timer = setTimeout(() => response.destroy(), RELEASE_GRACE_MS);
  const done = () => clearTimeout(timer);
  response.once('end', done);
  response.once('close', done);
}

/**
 * Feeds an SSE response's events to `onEvent` until it ends. `onEvent` returning `'stop'`, or `interruption`
 * being interrupted, ends the reading at once; the rest of the response is drained and dropped.
 * `maxLineLength` bounds what one unfinished line may buffer.
 */
export function readSseResponse(
  response: IncomingMessage,
  onEvent: (event: SseEvent) => 'stop' | void,
  maxLineLength: number,
  interruption?: Interruption,
): Promise<SseReadEnding> {
  return new Promise((resolve) => {
    const parser = new SseParser(maxLineLength);
    let settled = false;
    const finish = (ending: SseReadEnding) => {
      if (settled) return;
      settled = true;
      interruption?.set(undefined);
      resolve(ending);
    };
    interruption?.set(() => {
      release(response);
      finish({ kind: 'stopped' });
    });
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      if (settled) return;
      let events: SseEvent[];
      try {
        events = parser.push(chunk);
      } catch (error) {
        response.destroy();
        return finish({ kind: 'broken', error: (error as Error).message });
      }
      for (const event of events) {
        if (onEvent(event) === 'stop') {
          release(response);
          return finish({ kind: 'stopped' });
        }
      }
    });
    response.once('end', () => finish({ kind: 'ended' }));
    response.once('close', () => finish({ kind: 'broken', error: 'the connection was lost' }));
    response.on('error', () => undefined); // 'close' follows and reports it
  });
}

export interface ReconnectPolicy {
  /** First delay when the server sent no `retry:` (default 1000 ms). */
  readonly initialDelayMs?: number;
  /** Upper bound of the backoff (default 30 s). */
  readonly maxDelayMs?: number;
  /** Reconnections in a row that may fail before the stream is given up (default 5). */
  readonly maxAttempts?: number;
}

/** The delay before reconnection `attempt` (1-based): the server's `retry:` (or ours), doubling after that. */
export function reconnectDelay(attempt: number, serverRetryMs: number | undefined, policy: ReconnectPolicy): number {
  const base = serverRetryMs ?? policy.initialDelayMs ?? 1000;
  const max = Math.max(base, policy.maxDelayMs ?? 30_000);
  return Math.min(max, base * 2 ** (attempt - 1));
}

/** Resolves after `ms`, or at once when `signal` aborts or `interruption` is interrupted (the timer is cleared either way). */
export function sleep(ms: number, signal: AbortSignal, interruption?: Interruption): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      interruption?.set(undefined);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    interruption?.set(done);
  });
}

/** What opening (or reopening) a stream with GET came to. */
export type StreamOpening =
  | { readonly kind: 'stream'; readonly response: IncomingMessage }
  /** 405, or a 404 without a session: the server offers no stream here. */
  | { readonly kind: 'not-offered' }
  /** 404 for our session. */
  | { readonly kind: 'session-gone' }
  /** Worth another try later (network failure, 5xx, 408, 429). */
  | { readonly kind: 'retry'; readonly error: string }
  /** Another try would fail the same way (any other status). */
  | { readonly kind: 'refused'; readonly error: string };

export type StreamOutcome =
  /** `isDone()` became true (a request stream got every response). */
  | { readonly kind: 'done' }
  | { readonly kind: 'aborted' }
  | { readonly kind: 'not-offered' }
  | { readonly kind: 'session-gone' }
  | { readonly kind: 'lost'; readonly error: string };

export interface FollowedStream {
  readonly kind: 'standalone' | 'request';
  /** Opens the stream with GET, resuming after `lastEventId` when given. */
  open(lastEventId: string | undefined): Promise<StreamOpening>;
  /** Every event of the stream, in order (priming events and comments included, events without data too). */
  onEvent(event: SseEvent): void;
  /** True once nothing more is expected (a request stream got its responses). */
  isDone(): boolean;
  /** Reported before each reconnection. */
  onReconnecting(attempt: number, delayMs: number, lastEventId: string | undefined): void;
  readonly policy: ReconnectPolicy;
  readonly signal: AbortSignal;
  readonly maxLineLength: number;
  /** Cuts short a read or a wait once `isDone()` turned true from outside (a request finished elsewhere). */
  readonly interruption?: Interruption;
}

/**
 * Follows one logical stream until it is done, aborted or lost. `first` is the response the stream started
 * on (a POST's); without it the stream starts with `open`. A stream that carried no event id cannot be
 * resumed: a request stream then is lost when its connection ends, while the standalone stream is reopened
 * afresh. Reconnections that deliver nothing count as failures, so a server replaying an empty stream
 * forever cannot keep us looping. A stream that is done is never reopened, whenever it became done.
 */
export async function followSseStream(stream: FollowedStream, first?: IncomingMessage): Promise<StreamOutcome> {
  let lastEventId: string | undefined;
  let serverRetryMs: number | undefined;
  /** The number of the next reconnection in a row without progress; 0 opens at once. */
  let attempt = 0;
  let current = first;
  let lastError = 'the stream ended';
  const maxAttempts = stream.policy.maxAttempts ?? 5;
  if (first && stream.isDone()) {
    release(first); // finished before its stream began
    return { kind: 'done' };
  }

  for (;;) {
    if (current) {
      let delivered = false;
      const ending = await readSseResponse(
        current,
        (event) => {
          delivered = true;
          if (event.id !== undefined) lastEventId = event.id;
          if (event.retry !== undefined) serverRetryMs = event.retry;
          stream.onEvent(event);
          if (stream.isDone()) return 'stop';
        },
        stream.maxLineLength,
        stream.interruption,
      );
      current = undefined;
      if (stream.isDone()) return { kind: 'done' };
      if (stream.signal.aborted) return { kind: 'aborted' };
      lastError = ending.kind === 'broken' ? ending.error : 'the server ended the stream';
      attempt = delivered ? 1 : attempt + 1;
      if (stream.kind === 'request' && lastEventId === undefined) {
        return { kind: 'lost', error: `${lastError} before the response, without an event id to resume from` };
      }
    }
    if (attempt > maxAttempts) return { kind: 'lost', error: `${lastError} (gave up after ${maxAttempts} attempts)` };
    if (attempt > 0) {
      const delayMs = reconnectDelay(attempt, serverRetryMs, stream.policy);
      stream.onReconnecting(attempt, delayMs, lastEventId);
      await sleep(delayMs, stream.signal, stream.interruption);
    }
    if (stream.signal.aborted) return { kind: 'aborted' };
    if (stream.isDone()) return { kind: 'done' };
    const opening = await stream.open(lastEventId);
    if (stream.signal.aborted || stream.isDone()) {
      if (opening.kind === 'stream') opening.response.destroy();
      return stream.signal.aborted ? { kind: 'aborted' } : { kind: 'done' };
    }
    switch (opening.kind) {
      case 'stream':
        current = opening.response;
        break;
      case 'not-offered':
      case 'session-gone':
        return opening;
      case 'refused':
        return { kind: 'lost', error: opening.error };
      case 'retry':
        lastError = opening.error;
        attempt++;
        break;
    }
  }
}

/** Classifies the answer to a stream GET. Responses not used as the stream are drained. */
export function classifyStreamOpening(response: IncomingMessage, hasSession: boolean, what: string): StreamOpening {
  const status = response.statusCode ?? 0;
  if (status >= 200 && status < 300) {
    const type = contentTypeOf(response);
    if (type === 'text/event-stream') return { kind: 'stream', response };
    discardResponse(response);
    return { kind: 'refused', error: `${what}: expected text/event-stream, got ${type || 'no content type'}` };
  }
  discardResponse(response);
  if (status === 405 || (status === 404 && !hasSession)) return { kind: 'not-offered' };
  if (status === 404) return { kind: 'session-gone' };
  const error = `${what}: HTTP ${status}${response.statusMessage ? ` ${response.statusMessage}` : ''}`;
  return status >= 500 || status === 408 || status === 429 ? { kind: 'retry', error } : { kind: 'refused', error };
}

/** A network failure opening a stream is worth a retry; an abort is not (the caller checks its signal). */
export function openingFailure(error: unknown): StreamOpening {
  return { kind: 'retry', error: error instanceof TransportError ? error.message : String(error) };
}
