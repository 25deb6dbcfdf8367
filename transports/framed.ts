/**
 * Length-prefixed msgpack over any byte stream, for links where both ends are switchboards: each message
 * is a msgpack value (plain maps, not msgpackr records: records measured slower and no smaller on single
 * messages) preceded by its byte length as a 4-byte unsigned big-endian integer.
 */
import type { Duplex } from 'node:stream';
import { Packr, Unpackr } from 'msgpackr';
import type { Observable } from 'rxjs';
import { DEFAULT_MAX_DEPTH, tooDeep, valueExceedsDepth } from '../lib/jsonrpc/codec';
import { TransportError } from '../lib/jsonrpc/errors';
import type { InboundFrame, JsonRpcBatch, JsonRpcMessage } from '../lib/jsonrpc/types';
import { createDuplexPair } from './duplex-pair';
import { InboundQueue } from './inbound-queue';
import { encodeLengthPrefixed, LengthPrefixReader } from './length-prefix';
import type { Transport } from './transport';
import { WriteCoalescer } from './write-coalescer';

// The port and message types its public signatures name, so this subpath stands alone.
export type * from './port-types';

/** 16 MiB. */
export const DEFAULT_FRAMED_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const DEFAULT_CLOSE_TIMEOUT_MS = 1_000;

export interface FramedTransportOptions {
  /**
   * The largest inbound payload accepted (default 16 MiB). A bigger length header fails the transport
   * before any of the payload is buffered. Outbound messages are not checked: the receiver decides.
   */
  readonly maxMessageBytes?: number;
  /**
   * Deepest nesting of objects and arrays accepted in a message (default 128): a deeper one arrives as a
   * -32600 `UnreadableFrame` and the connection goes on.
   */
  readonly maxDepth?: number;
  /** How long `close()` waits for the peer to end its side before destroying the stream (default 1 s). */
  readonly closeTimeoutMs?: number;
}

// Shared codecs are safe: packing and unpacking are synchronous. `copyBuffers` keeps a decoded binary
// value from pinning the (possibly large) socket chunk it was read from.
const packr = new Packr({ useRecords: false });
const unpackr = new Unpackr({ useRecords: false, copyBuffers: true });

const SENT: Promise<void> = Promise.resolve();

interface Waiter {
  resolve(): void;
  reject(error: TransportError): void;
}

/**
 * A transport over a `Duplex` (a unix or TCP socket, an in-process pipe). A bad frame (a length over the
 * limit, a payload msgpack cannot decode, a stream ending mid-frame) errors `messages` with a
 * `TransportError` and destroys the stream. The peer ending the stream completes `messages`.
 */
export class FramedTransport implements Transport {
  readonly messages: Observable<InboundFrame>;
  private readonly inbound: InboundQueue;
  private readonly reader: LengthPrefixReader;
  private readonly closeTimeoutMs: number;
  private readonly maxDepth: number;
  /** Sends rejected from here on. */
  private closed = false;
  private closeStarted = false;
  private drainWaiters: Waiter[] = [];
  private readonly writes: WriteCoalescer;
  private readonly streamClosed: Promise<void>;
  private markStreamClosed!: () => void;

  constructor(
    private readonly stream: Duplex,
    options: FramedTransportOptions = {},
  ) {
    this.reader = new LengthPrefixReader(options.maxMessageBytes ?? DEFAULT_FRAMED_MAX_MESSAGE_BYTES);
    this.closeTimeoutMs = options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    this.streamClosed = new Promise((resolve) => (this.markStreamClosed = resolve));
    this.inbound = new InboundQueue('framed', { flow: stream });
    this.writes = new WriteCoalescer(stream);
    this.messages = this.inbound.messages;

    stream.on('data', (chunk: Buffer | string) => this.onData(chunk));
    stream.on('end', () => this.onEnd());
    stream.on('error', (error: Error) => this.onStreamError(error));
    stream.on('drain', () => this.settleDrainWaiters());
    stream.on('finish', () => this.settleDrainWaiters()); // after end() no 'drain' comes: 'finish' means flushed
    stream.on('close', () => this.onClose());
    if (stream.destroyed) queueMicrotask(() => this.onClose());
  }

  send(message: JsonRpcMessage | JsonRpcBatch): Promise<void> {
    if (this.closed) return Promise.reject(new TransportError('Transport closed'));
    let frame: Buffer;
    try {
      frame = encodeLengthPrefixed(packr.pack(message));
    } catch (error) {
      if (error instanceof TransportError) return Promise.reject(error);
      return Promise.reject(
        new TransportError(`Could not encode the message as msgpack: ${(error as Error).message}`, { cause: error }),
      );
    }
    const written = this.stream.write(frame);
    this.writes.wrote();
    if (written) return SENT;
    return new Promise((resolve, reject) => this.drainWaiters.push({ resolve, reject }));
  }

  /**
   * Completes `messages`, ends our side (queued frames are still flushed) and resolves once the stream
   * has closed, destroying it if the peer has not ended its side within `closeTimeoutMs`.
   */
  close(): Promise<void> {
    if (!this.closeStarted) {
      this.closeStarted = true;
      this.closed = true;
      this.inbound.complete();
      this.stream.resume(); // keep reading (and dropping) until the peer's end arrives and the stream closes
      this.stream.end();
      const timer = setTimeout(() => this.stream.destroy(), this.closeTimeoutMs);
      timer.unref();
      void this.streamClosed.then(() => clearTimeout(timer));
    }
    return this.streamClosed;
  }

  private onData(chunk: Buffer | string): void {
    if (this.inbound.ended) return;
    if (typeof chunk === 'string') {
      this.fail(new TransportError('Bad frame: the stream delivers text; a framed transport needs bytes'));
      return;
    }
    try {
      this.reader.push(chunk, (payload) => {
        if (!this.inbound.ended) this.inbound.push(decodePayload(payload, this.maxDepth));
      });
    } catch (error) {
      this.fail(error instanceof TransportError ? error : new TransportError('Bad frame', { cause: error }));
    }
  }

  /** The peer ended its side. */
  private onEnd(): void {
    if (!this.inbound.ended) {
      try {
        this.reader.end();
      } catch (error) {
        this.fail(error as TransportError);
        return;
      }
    }
    this.closed = true;
    this.inbound.complete();
    this.stream.end();
  }

  private onStreamError(error: Error): void {
    this.fail(new TransportError(`The stream failed: ${error.message}`, { cause: error }));
  }

  private onClose(): void {
    // Destroyed without an 'end' (e.g. by its owner): the same as the peer ending, truncation included.
    if (!this.inbound.ended) this.onEnd();
    this.closed = true;
    this.rejectDrainWaiters(new TransportError('Transport closed before the message was flushed'));
    this.markStreamClosed();
  }

  /** Binary framing cannot resynchronise: report the failure and drop the connection. */
  private fail(error: TransportError): void {
    this.closed = true;
    this.inbound.fail(error);
    this.rejectDrainWaiters(error);
    this.stream.destroy();
  }

  private settleDrainWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const waiter of waiters) waiter.resolve();
  }

  private rejectDrainWaiters(error: TransportError): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const waiter of waiters) waiter.reject(error);
  }
}

/**
 * The message in `payload`, or a -32600 `UnreadableFrame` for one nested deeper than `maxDepth` (the frame's
 * length prefix is intact, so the stream goes on). Throws a bad-frame `TransportError` when msgpack cannot
 * read the payload.
 */
function decodePayload(payload: Buffer, maxDepth: number): InboundFrame {
  let message: unknown;
  try {
    message = unpackr.unpack(payload);
  } catch (error) {
    // msgpackr decodes recursively: a payload nested deep enough to overflow the stack is too deep.
    if (error instanceof RangeError && /call stack/i.test(error.message)) return tooDeep(undefined, maxDepth);
    throw new TransportError(`Bad frame: could not decode msgpack: ${(error as Error).message}`, { cause: error });
  }
  // Every level of nesting takes at least one byte (a container header), so a short payload cannot be too deep.
  return payload.length > maxDepth && valueExceedsDepth(message, maxDepth)
    ? tooDeep(message, maxDepth)
    : (message as InboundFrame);
}

/** Two framed transports joined by an in-process pipe with real backpressure: for tests and benchmarks. */
export function createFramedPair(options: FramedTransportOptions = {}): [FramedTransport, FramedTransport] {
  const [a, b] = createDuplexPair();
  return [new FramedTransport(a, options), new FramedTransport(b, options)];
}
