import { Observable, type Subscriber } from 'rxjs';
import { decodeFrame, DEFAULT_MAX_MESSAGE_BYTES, encodeFrame } from '../lib/jsonrpc/codec';
import { TransportError } from '../lib/jsonrpc/errors';
import type { InboundFrame, JsonRpcBatch, JsonRpcMessage } from '../lib/jsonrpc/types';
import { deepFreeze, freezeByDefault } from '../lib/core/freeze';
import type { Transport } from './transport';

export interface MemoryPairOptions {
  /**
   * `reference` (default) hands the very same message object to the peer: no serialization, the fastest
   * path. Messages are then immutable by contract. `json` serializes every message, so each side gets
   * its own copy, and enforces `maxMessageBytes`.
   */
  readonly codec?: 'reference' | 'json';
  /** Deep-freeze every message sent by reference, so a handler that mutates one fails loudly. */
  readonly freeze?: boolean;
  /** Only with the `json` codec. */
  readonly maxMessageBytes?: number;
}

const SENT: Promise<void> = Promise.resolve();

/**
 * One end of an in-process link. Delivery is asynchronous (one microtask drains every queued message in
 * order), so a reply is never delivered inside the caller's `send()`.
 */
export class MemoryTransport implements Transport {
  readonly messages: Observable<InboundFrame>;
  private peer: MemoryTransport | undefined;
  private sink: Subscriber<InboundFrame> | undefined;
  private inbox: (InboundFrame | string)[] = [];
  private draining = false;
  private closed = false;
  private inboundEnded = false;

  constructor(
    private readonly codec: 'reference' | 'json',
    private readonly freeze: boolean,
    private readonly maxMessageBytes: number,
  ) {
    this.messages = new Observable<InboundFrame>((subscriber) => {
      if (this.sink) {
        subscriber.error(new TransportError('A memory transport has a single consumer'));
        return;
      }
      this.sink = subscriber;
      this.scheduleDrain();
      return () => {
        if (this.sink === subscriber) this.sink = undefined;
      };
    });
  }

  /** @internal */
  link(peer: MemoryTransport): void {
    this.peer = peer;
  }

  send(message: JsonRpcMessage | JsonRpcBatch): Promise<void> {
    const peer = this.peer;
    if (this.closed || !peer) return Promise.reject(new TransportError('Transport closed'));
    if (this.codec === 'json') peer.receive(encodeFrame(message));
    else peer.receive(this.freeze ? deepFreeze(message) : message);
    return SENT;
  }

  /** Delivers raw text to the peer as if it came off a wire (`json` codec only): for testing bad input. */
  sendRaw(text: string): Promise<void> {
    if (this.codec !== 'json') return Promise.reject(new TransportError('sendRaw needs the json codec'));
    if (this.closed || !this.peer) return Promise.reject(new TransportError('Transport closed'));
    this.peer.receive(text);
    return SENT;
  }

  close(): Promise<void> {
    if (this.closed) return SENT;
    this.closed = true;
    const peer = this.peer;
    this.peer = undefined;
    this.endInbound();
    peer?.close();
    return SENT;
  }

  private receive(frame: InboundFrame | string): void {
    if (this.inboundEnded) return;
    this.inbox.push(frame);
    this.scheduleDrain();
  }

  /** Completes `messages` once everything already queued has been delivered. */
  private endInbound(): void {
    this.inboundEnded = true;
    this.scheduleDrain();
  }

  private scheduleDrain(): void {
    if (this.draining || !this.sink) return;
    this.draining = true;
    queueMicrotask(() => this.drain());
  }

  private drain(): void {
    this.draining = false;
    const inbox = this.inbox;
    // A subscriber may unsubscribe (or the transport close) while we deliver: re-check each turn.
    let index = 0;
    for (; index < inbox.length && this.sink; index++) {
      const frame = inbox[index]!;
      this.sink.next(typeof frame === 'string' ? decodeFrame(frame, this.maxMessageBytes) : frame);
    }
    if (index === inbox.length) inbox.length = 0;
    else inbox.splice(0, index);
    if (this.inboundEnded && inbox.length === 0 && this.sink) {
      const sink = this.sink;
      this.sink = undefined;
      sink.complete();
    }
  }
}

/** Two linked transports: give one to a client and the other to a server. */
export function createMemoryPair(options: MemoryPairOptions = {}): [MemoryTransport, MemoryTransport] {
  const codec = options.codec ?? 'reference';
  const freeze = options.freeze ?? freezeByDefault();
  const maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const a = new MemoryTransport(codec, freeze, maxBytes);
  const b = new MemoryTransport(codec, freeze, maxBytes);
  a.link(b);
  b.link(a);
  return [a, b];
}
