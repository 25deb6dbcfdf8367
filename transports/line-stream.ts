/**
 * Newline-delimited JSON over a readable and a writable stream: the framing shared by both stdio sides
 * (and by JSON lines over any socket).
 */
import type { Readable, Writable } from 'node:stream';
import type { Observable } from 'rxjs';
import { DEFAULT_MAX_MESSAGE_BYTES, encodeFrame } from '../lib/jsonrpc/codec';
import { TransportError } from '../lib/jsonrpc/errors';
import type { InboundFrame, JsonRpcBatch, JsonRpcMessage } from '../lib/jsonrpc/types';
import { InboundQueue, type FlowControl } from './inbound-queue';
import { LineReader } from './line-reader';
import { WriteCoalescer } from './write-coalescer';

export interface LineStreamOptions {
  readonly maxMessageBytes?: number;
  /** Deepest nesting accepted in a message (default 128); a deeper one becomes a -32600 `UnreadableFrame`. */
  readonly maxDepth?: number;
  /** Complete `messages` when the input ends (default true). Off when the owner decides (a child's exit). */
  readonly completeOnInputEnd?: boolean;
  /**
   * The soft mark: when a response is written while more than this many bytes of our output are unsent,
   * reading pauses until the output drains (default 1 MiB). See "Back-pressure" below.
   */
  readonly pauseReadingAboveBytes?: number;
  /**
   * The hard cap: more unsent output than this and the stream fails with a `TransportError` (the
   * connection closes): a peer that never reads cannot grow our memory without bound (default 64 MiB).
   */
  readonly maxUnsentBytes?: number;
}

export const DEFAULT_PAUSE_READING_ABOVE_BYTES = 1024 * 1024;
export const DEFAULT_MAX_UNSENT_BYTES = 64 * 1024 * 1024;

const SENT: Promise<void> = Promise.resolve();

/**
 * Reading starts with the first subscriber (until then the input buffers, with its own backpressure) and
 * pauses while nobody listens; frames decoded meanwhile wait in the inbound queue.
 *
 * Back-pressure. A peer that sends requests but does not read our answers would otherwise make us buffer
 * every answer. So when we write a response while more than `pauseReadingAboveBytes` of our output is
 * unsent, we stop reading (the pipe then pushes back on the peer) until the output has drained. Two rules
 * keep two of our own peers from deadlocking, each waiting for the other to read:
 *
 *  (i)  a side pauses only while it awaits no response from its peer: `awaitedResponses` counts the
 *       requests we sent minus the responses we read; sending a request resumes reading at once;
 *  (ii) a side pauses only at the moment it writes a response (output caused by reading).
 *
 * Suppose both A and B were paused, B having paused last, at time t, on writing a response r to a request q
 * of A's. A sent q before t and has not read r (B wrote it at t), so A awaits a response at t; by (i) A
 * resumed reading when it sent q and cannot have paused since. So at t A is reading: a contradiction. Hence
 * one of two of our peers always reads, the other's output drains, and it resumes. And a side waiting for
 * results never stops reading them. (Requests whose answer never comes, cancelled ones included, keep the
 * count above 0 for good: that side then never pauses, which is safe, and the hard cap below bounds it.)
 *
 * What pausing cannot bound (output not caused by reading: our own requests and notifications, or answers
 * written while we await a response the peer never sends) is bounded by `maxUnsentBytes`, which fails the
 * stream with a clear error rather than growing.
 */
export class LineStream {
  readonly messages: Observable<InboundFrame>;
  private readonly inbound: InboundQueue;
  private readonly reader: LineReader;
  private closed = false;
  private readonly writes: WriteCoalescer;
  private writeError: TransportError | undefined;
  private drainWaiters: { resolve(): void; reject(error: Error): void }[] = [];
  private readonly pauseAbove: number;
  private readonly maxUnsent: number;
  /** Requests we sent whose response we have not read (never below 0). */
  private awaitedResponses = 0;
  /** Why reading is paused: the inbound queue is full or unobserved, and/or our output is backed up. */
  private inboundHold = false;
  private outputHold = false;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly options: LineStreamOptions = {},
  ) {
    this.pauseAbove = options.pauseReadingAboveBytes ?? DEFAULT_PAUSE_READING_ABOVE_BYTES;
    this.maxUnsent = options.maxUnsentBytes ?? DEFAULT_MAX_UNSENT_BYTES;
    // Built first: it pauses the input, so attaching 'data' below does not start the flow.
    this.inbound = new InboundQueue('stdio', { flow: this.inboundFlow, pauseWhen: 'unobserved' });
    this.messages = this.inbound.messages;
    this.reader = new LineReader(this.onFrame, options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES, options.maxDepth);
    this.writes = new WriteCoalescer(output);
    input.on('data', this.onData);
    input.on('end', this.onEnd);
    input.on('error', this.onInputError);
    output.on('drain', this.onDrain);
    output.on('error', this.onOutputError);
    output.on('close', this.onOutputClose);
  }

  send(message: JsonRpcMessage | JsonRpcBatch): Promise<void> {
    if (this.closed) return Promise.reject(new TransportError('Transport closed'));
    if (this.writeError) return Promise.reject(this.writeError);
    let line: string;
    try {
      line = encodeFrame(message) + '\n';
    } catch (error) {
      return Promise.reject(new TransportError('Cannot encode the message as JSON', { cause: error }));
    }
    // Rule (i)'s counter: the only per-message work back-pressure adds (a batch, which has no id, is rare).
    const { id, method } = message as { id?: unknown; method?: unknown };
    if (method !== undefined) {
      if (id !== undefined) this.awaitResponse();
    } else if (id === undefined && Array.isArray(message)) {
      this.countBatchRequests(message);
    }
    const written = this.output.write(line);
    this.writes.wrote();
    if (written) return SENT;
    return this.backedUp(method === undefined && id !== undefined);
  }

  /**
   * Stops reading and sending; ends the output when `endOutput` (the peer then sees EOF). `messages` ends
   * now, after the frames already decoded, unless `finish` is false (the owner calls `finish` later).
   */
  close(endOutput: boolean, finish = true): void {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.pause();
    this.detachInput();
    this.rejectWaiters(new TransportError('Transport closed'));
    if (endOutput && !this.output.writableEnded) this.output.end();
    if (finish) this.finish(null);
  }

  /** Ends `messages`, after the frames already decoded: with an error, or completion for `null`. */
  finish(error: TransportError | null): void {
    if (error) this.inbound.fail(error);
    else this.inbound.complete();
  }

  /** The output is past its high-water mark: pause reading or fail as the rules above say; wait for drain. */
  private backedUp(wroteResponse: boolean): Promise<void> {
    const unsent = this.output.writableLength;
    if (unsent > this.maxUnsent) {
      const error = new TransportError(
        `The peer is not reading: ${unsent} bytes of output are unsent, over the limit of ${this.maxUnsent} (maxUnsentBytes)`,
      );
      this.failWriting(error);
      return Promise.reject(error);
    }
    if (wroteResponse && !this.outputHold && this.awaitedResponses === 0 && unsent > this.pauseAbove) {
      this.outputHold = true;
      this.applyFlow();
    }
    return new Promise((resolve, reject) => this.drainWaiters.push({ resolve, reject }));
  }

  private awaitResponse(): void {
    this.awaitedResponses++;
    if (this.outputHold) {
      // Rule (i): our peer may need us to read before it can answer.
      this.outputHold = false;
      this.applyFlow();
    }
  }

  private countBatchRequests(batch: readonly JsonRpcMessage[]): void {
    for (const item of batch as readonly { id?: unknown; method?: unknown }[]) {
      if (item.method !== undefined && item.id !== undefined) this.awaitResponse();
    }
  }

  /** A frame we read: a response (one with an id and no method, or a batch of them) settles an awaited one. */
  private readonly onFrame = (frame: InboundFrame): void => {
    // Rule (i)'s counter counts real responses only: a line may decode to anything (null, a number, garbage).
    if (this.awaitedResponses !== 0 && typeof frame === 'object' && frame !== null) {
      if (Array.isArray(frame)) this.countBatchResponses(frame);
      else if (isResponseShaped(frame)) this.awaitedResponses--;
    }
    this.inbound.push(frame);
  };

  private countBatchResponses(batch: readonly unknown[]): void {
    for (const item of batch) {
      if (this.awaitedResponses > 0 && typeof item === 'object' && item !== null && isResponseShaped(item))
        this.awaitedResponses--;
    }
  }

  /** The failure of a peer that does not read: refuse further sends, end `messages`, free the backlog. */
  private failWriting(error: TransportError): void {
    this.writeError = error;
    this.rejectWaiters(error);
    this.input.off('data', this.onData);
    this.input.pause();
    this.detachInput();
    this.finish(error);
    this.output.destroy();
  }

  private readonly inboundFlow: FlowControl = {
    pause: () => {
      this.inboundHold = true;
      this.applyFlow();
    },
    resume: () => {
      this.inboundHold = false;
      this.applyFlow();
    },
  };

  private applyFlow(): void {
    if (this.closed || this.writeError) return;
    if (this.inboundHold || this.outputHold) this.input.pause();
    else this.input.resume();
  }

  private detachInput(): void {
    this.input.off('end', this.onEnd);
    this.input.off('error', this.onInputError);
  }

  private readonly onData = (chunk: Buffer | string): void => this.reader.push(chunk);

  private readonly onEnd = (): void => {
    this.reader.end();
    this.detachInput();
    if (this.options.completeOnInputEnd ?? true) this.finish(null);
  };

  private readonly onInputError = (error: Error): void => {
    this.finish(new TransportError(`Reading failed: ${error.message}`, { cause: error }));
  };

  private readonly onDrain = (): void => {
    if (this.outputHold) {
      this.outputHold = false;
      this.applyFlow();
    }
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const waiter of waiters) waiter.resolve();
  };

  private readonly onOutputError = (error: Error): void => {
    this.writeError ??= new TransportError(`Writing failed: ${error.message}`, { cause: error });
    this.rejectWaiters(this.writeError);
  };

  private readonly onOutputClose = (): void => {
    this.writeError ??= new TransportError('The output stream closed');
    this.rejectWaiters(this.writeError);
  };

  private rejectWaiters(error: TransportError): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const waiter of waiters) waiter.reject(error);
  }
}

/** A response to one of our requests, as far as the back-pressure counter cares: no method, a result or an error. */
function isResponseShaped(frame: object): boolean {
  const { method, result, error } = frame as { method?: unknown; result?: unknown; error?: unknown };
  return method === undefined && (result !== undefined || error !== undefined);
}
