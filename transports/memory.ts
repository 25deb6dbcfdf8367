/**
 * The in-process transport: two linked ends that hand messages over by reference (or as JSON copies),
 * delivered on a microtask through the shared `InboundQueue`.
 */
import type { Observable } from 'rxjs';
import { decodeFrame, DEFAULT_MAX_DEPTH, DEFAULT_MAX_MESSAGE_BYTES, encodeFrame } from '../lib/jsonrpc/codec';
import { TransportError } from '../lib/jsonrpc/errors';
import type { InboundFrame, JsonRpcBatch, JsonRpcMessage } from '../lib/jsonrpc/types';
import { deepFreeze, freezeByDefault } from '../lib/core/freeze';
import { InboundQueue } from './inbound-queue';
import type { Transport } from './transport';

// The port and message types its public signatures name, so this subpath stands alone.
export type * from './port-types';

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
  /** Only with the `json` codec: deepest nesting accepted (`DEFAULT_MAX_DEPTH`, 128). */
  readonly maxDepth?: number;
}

const SENT: Promise<void> = Promise.resolve();

/**
 * One end of an in-process link. Delivery is asynchronous (one microtask drains every queued message in
 * order), so a reply is never delivered inside the caller's `send()`.
 */
export class MemoryTransport implements Transport {
  readonly messages: Observable<InboundFrame>;
  private readonly inbound = new InboundQueue('memory', { delivery: 'microtask' });
  private peer: MemoryTransport | undefined;
  private closed = false;

  constructor(
    private readonly codec: 'reference' | 'json',
    private readonly freeze: boolean,
    private readonly maxMessageBytes: number,
    private readonly maxDepth: number,
  ) {
    this.messages = this.inbound.messages;
  }

  /** @internal */
  link(peer: MemoryTransport): void {
    this.peer = peer;
  }

  send(message: JsonRpcMessage | JsonRpcBatch): Promise<void> {
    const peer = this.peer;
    if (this.closed || !peer) return Promise.reject(new TransportError('Transport closed'));
    if (this.codec === 'json') {
      let text: string;
      try {
        text = encodeFrame(message);
      } catch (error) {
        return Promise.reject(new TransportError('Cannot encode the message as JSON', { cause: error }));
      }
      peer.receiveText(text);
    } else peer.inbound.push(this.freeze ? deepFreeze(message) : message);
    return SENT;
  }

  /** Delivers raw text to the peer as if it came off a wire (`json` codec only): for testing bad input. */
  sendRaw(text: string): Promise<void> {
    if (this.codec !== 'json') return Promise.reject(new TransportError('sendRaw needs the json codec'));
    if (this.closed || !this.peer) return Promise.reject(new TransportError('Transport closed'));
    this.peer.receiveText(text);
    return SENT;
  }

  /** Completes `messages` once everything already queued has been delivered, here and at the peer. */
  close(): Promise<void> {
    if (this.closed) return SENT;
    this.closed = true;
    const peer = this.peer;
    this.peer = undefined;
    this.inbound.complete();
    peer?.close();
    return SENT;
  }

  private receiveText(text: string): void {
    if (!this.inbound.ended) this.inbound.push(decodeFrame(text, this.maxMessageBytes, this.maxDepth));
  }
}

/** Two linked transports: give one to a client and the other to a server. */
export function createMemoryPair(options: MemoryPairOptions = {}): [MemoryTransport, MemoryTransport] {
  const codec = options.codec ?? 'reference';
  const freeze = options.freeze ?? freezeByDefault();
  const maxBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const a = new MemoryTransport(codec, freeze, maxBytes, maxDepth);
  const b = new MemoryTransport(codec, freeze, maxBytes, maxDepth);
  a.link(b);
  b.link(a);
  return [a, b];
}
