/**
 * Newline-delimited JSON over a readable and a writable stream: the framing shared by both stdio sides
 * (and by JSON lines over any socket).
 */
import type { Readable, Writable } from 'node:stream';
import type { Observable } from 'rxjs';
import { DEFAULT_MAX_MESSAGE_BYTES, encodeFrame } from '../lib/jsonrpc/codec';
import { TransportError } from '../lib/jsonrpc/errors';
import type { InboundFrame, JsonRpcBatch, JsonRpcMessage } from '../lib/jsonrpc/types';
import { InboundQueue } from './inbound-queue';
import { LineReader } from './line-reader';
import { WriteCoalescer } from './write-coalescer';

export interface LineStreamOptions {
  readonly maxMessageBytes?: number;
  /** Complete `messages` when the input ends (default true). Off when the owner decides (a child's exit). */
  readonly completeOnInputEnd?: boolean;
}

const SENT: Promise<void> = Promise.resolve();
/**
 * Reading starts with the first subscriber (until then the input buffers, with its own backpressure) and
 * pauses while nobody listens; frames decoded meanwhile wait in the inbound queue.
 */
export class LineStream {
  readonly messages: Observable<InboundFrame>;
  private readonly inbound: InboundQueue;
  private readonly reader: LineReader;
  private closed = false;
  private readonly writes: WriteCoalescer;
  private writeError: TransportError | undefined;
  private drainWaiters: { resolve(): void; reject(error: Error): void }[] = [];

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly options: LineStreamOptions = {},
  ) {
    // Built first: it pauses the input, so attaching 'data' below does not start the flow.
    this.inbound = new InboundQueue('stdio', { flow: input, pauseWhen: 'unobserved' });
    this.messages = this.inbound.messages;
    this.reader = new LineReader(
      (frame) => this.inbound.push(frame),
      options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    );
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
    const written = this.output.write(line);
    this.writes.wrote();
    if (written) return SENT;
    return new Promise((resolve, reject) => this.drainWaiters.push({ resolve, reject }));
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
