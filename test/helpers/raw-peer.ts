import type { JsonObject, JsonRpcMessage, RequestId } from '../../lib/jsonrpc/types';
import type { MemoryTransport } from '../../transports/memory';
import { within } from './wait';

/**
 * Plays the other side of a connection by hand: sends exactly what a test wants (malformed input
 * included) and collects what comes back.
 */
export class RawPeer {
  readonly received: any[] = [];
  private read = 0;
  private wake: (() => void) | undefined;
  private nextId = 1000;

  constructor(readonly transport: MemoryTransport) {
    transport.messages.subscribe((message) => {
      this.received.push(message);
      this.wake?.();
    });
  }

  send(message: unknown): Promise<void> {
    return this.transport.send(message as JsonRpcMessage);
  }

  sendRaw(text: string): Promise<void> {
    return this.transport.sendRaw(text);
  }

  /** The next message not yet read, waiting (bounded) for it to arrive: woken by the arrival itself. */
  async next(timeoutMs = 2000): Promise<any> {
    if (this.read >= this.received.length) {
      await within(
        new Promise<void>((resolve) => (this.wake = resolve)).finally(() => (this.wake = undefined)),
        'the next message',
        timeoutMs,
      );
    }
    return this.received[this.read++];
  }

  /** Waits for the next message and checks nothing else arrived before it. */
  async expectNext(timeoutMs?: number): Promise<any> {
    return this.next(timeoutMs);
  }

  /** Lets queued deliveries run, then returns what arrived and was not read yet. */
  async drain(): Promise<any[]> {
    await new Promise((resolve) => setTimeout(resolve, 10));
    const rest = this.received.slice(this.read);
    this.read = this.received.length;
    return rest;
  }

  async request(method: string, params?: JsonObject, id: RequestId = this.nextId++): Promise<any> {
    await this.send(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
    return this.next();
  }

  /** The client half of a handshake. */
  async initialize(protocolVersion = '2025-11-25', capabilities: JsonObject = {}): Promise<any> {
    const response = await this.request('initialize', {
      protocolVersion,
      capabilities,
      clientInfo: { name: 'raw', version: '0' },
    });
    await this.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return response;
  }
}
