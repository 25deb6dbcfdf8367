import type { Readable, Writable } from 'node:stream';
import { Observable, type Subscriber } from 'rxjs';
import { DEFAULT_MAX_MESSAGE_BYTES, encodeFrame } from '../lib/jsonrpc/codec';
import { TransportError } from '../lib/jsonrpc/errors';
import type { InboundFrame, JsonRpcBatch, JsonRpcMessage } from '../lib/jsonrpc/types';
import { LineReader } from './line-reader';

export interface LineStreamOptions {
  readonly maxMessageBytes?: number;
  /** Complete `messages` when the input ends (default true). Off when the owner decides (a child's exit). */
  readonly completeOnInputEnd?: boolean;
}

const SENT: Promise<void> = Promise.resolve();

/**
 * Newline-delimited JSON over a readable and a writable stream: the framing shared by both stdio sides.
 * Reading starts with the first subscriber (until then the stream buffers, with its own backpressure) and
 * pauses while nobody listens; frames decoded meanwhile wait in an inbox.
 */
export class LineStream {
  readonly messages: Observable<InboundFrame>;
  private readonly reader: LineReader;
  private sink: Subscriber<InboundFrame> | undefined;
  private inbox: InboundFrame[] = [];
  /** How `messages` ended: `null` completed, an error failed; `undefined` while open. */
  private ending: TransportError | null | undefined;
  private closed = false;
  private writeError: TransportError | undefined;
  private drainWaiters: { resolve(): void; reject(error: Error): void }[] = [];

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly options: LineStreamOptions = {},
  ) {
    this.reader = new LineReader((frame) => this.deliver(frame), options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
    output.on('drain', this.onDrain);
    output.on('error', this.onOutputError);
    output.on('close', this.onOutputClose);
    this.messages = new Observable<InboundFrame>((subscriber) => {
      if (this.sink) {
        subscriber.error(new TransportError('A stdio transport has a single consumer'));
        return;
      }
      this.sink = subscriber;
      const inbox = this.inbox;
      this.inbox = [];
      for (const frame of inbox) subscriber.next(frame);
      if (this.ending !== undefined) return this.settle();
      this.startReading();
      return () => {
        if (this.sink !== subscriber) return;
        this.sink = undefined;
        this.stopReading();
      };
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  send(message: JsonRpcMessage | JsonRpcBatch): Promise<void> {
    if (this.closed) return Promise.reject(new TransportError('Transport closed'));
    if (this.writeError) return Promise.reject(this.writeError);
    if (this.output.write(encodeFrame(message) + '\n')) return SENT;
    return new Promise((resolve, reject) => this.drainWaiters.push({ resolve, reject }));
  }

  /** Stops reading and sending; ends the output when `endOutput` (the peer then sees EOF). */
  close(endOutput: boolean): void {
    if (this.closed) return;
    this.closed = true;
    this.stopReading();
    this.detachInput();
    this.rejectWaiters(new TransportError('Transport closed'));
    if (endOutput && !this.output.writableEnded) this.output.end();
    this.finish(null);
  }

  /** Ends `messages`, after the frames already decoded: with an error, or completion for `null`. */
  finish(error: TransportError | null): void {
    if (this.ending !== undefined) return;
    this.ending = error;
    this.settle();
  }

  private deliver(frame: InboundFrame): void {
    if (this.ending !== undefined) return;
    if (this.sink) this.sink.next(frame);
    else this.inbox.push(frame);
  }

  private settle(): void {
    const sink = this.sink;
    if (!sink || this.ending === undefined) return;
    this.sink = undefined;
    if (this.ending === null) sink.complete();
    else sink.error(this.ending);
  }

  private startReading(): void {
    if (this.closed) return;
    this.input.on('data', this.onData);
    this.input.on('end', this.onEnd);
    this.input.on('error', this.onInputError);
    this.input.resume();
  }

  private stopReading(): void {
    this.input.off('data', this.onData);
    this.input.pause();
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
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const waiter of waiters) waiter.resolve();
  };

  private readonly onOutputError = (error: Error): void => {
    this.writeError = new TransportError(`Writing failed: ${error.message}`, { cause: error });
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
