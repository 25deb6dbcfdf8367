import { Observable, type Subscriber } from 'rxjs';
import { TransportError } from '../lib/jsonrpc/errors';
import type { InboundFrame, JsonRpcBatch, JsonRpcMessage, RequestId } from '../lib/jsonrpc/types';
import type { Transport, TransportSendOptions } from './transport';

// The port and message types its public signatures name, so this subpath stands alone.
export type * from './port-types';

/**
 * The shape of the official TypeScript SDK's `Transport` (`@modelcontextprotocol/sdk/shared/transport.js`),
 * declared structurally so this module does not depend on the SDK: any SDK transport (stdio, Streamable
 * HTTP, SSE, in-memory) or a hand-written one of that shape fits.
 */
export interface SdkTransportLike {
  /** Starts the transport; called once, after the callbacks are installed. */
  start(): Promise<void>;
  /** Gets a batch only as the reply to a batch that came in through `onmessage` (2025-03-26). */
  send(message: JsonRpcMessage | JsonRpcBatch, options?: SdkTransportSendOptions): Promise<void>;
  close(): Promise<void>;
  /** Called when the transport closed, whoever closed it (also after `close()`). */
  onclose?: (() => void) | undefined;
  /** Called for problems that are not necessarily fatal (a malformed line, a failed HTTP poll...). */
  onerror?: ((error: Error) => void) | undefined;
  /** Called for every inbound message. The second argument (auth and HTTP request info) is not forwarded. */
  onmessage?: ((message: any, extra?: any) => void) | undefined;
  readonly sessionId?: string | undefined;
  setProtocolVersion?: ((version: string) => void) | undefined;
}

/**
 * The SDK's send options. The adapter sets only `relatedRequestId`; the resumption fields are listed so
 * transports that accept only those (the Streamable HTTP client) still fit the shape.
 */
export interface SdkTransportSendOptions {
  relatedRequestId?: RequestId | undefined;
  resumptionToken?: string | undefined;
  onresumptiontoken?: ((token: string) => void) | undefined;
}

export interface SdkAdapterOptions {
  /**
   * Receives what the SDK transport reports through `onerror`. SDK transports use it for non-fatal
   * problems (a line that is not JSON-RPC, a failed reconnection attempt...), so it never ends the stream:
   * a transport that fails for good also calls `onclose`. Without this option such reports are dropped.
   */
  readonly onError?: (error: Error) => void;
}

/**
 * Adapts a transport of the official SDK's shape to our `Transport`, so a `Client` or `Server` of this
 * runtime can talk over any SDK transport.
 *
 * - The first subscription to `messages` installs `onmessage`/`onclose`/`onerror` and then calls `start()`
 *   (an SDK transport starts once); a failing `start()` errors the stream with a `TransportError`. One
 *   subscriber at a time: a later one takes over once the previous left (a client's era probe, then its
 *   connection); what arrives in between is dropped. Sends issued while `start()` is pending wait for it.
 * - `onmessage` delivers the message as is (it is not copied), `onclose` completes the stream, `onerror`
 *   goes to `options.onError` and never ends the stream.
 * - `send` forwards `relatedRequestId` and turns a failure into a `TransportError`; after the transport
 *   closed it rejects without calling the SDK transport.
 * - `close()` is idempotent and completes the stream even if the SDK transport forgets to call `onclose`.
 * - `setProtocolVersion` and `sessionId` are forwarded to the SDK transport when it has them.
 *
 * The SDK transport belongs to the adapter from then on: do not install callbacks on it yourself.
 */
export function fromSdkTransport(transport: SdkTransportLike, options: SdkAdapterOptions = {}): Transport {
  return new SdkTransportAdapter(transport, options);
}

const DONE: Promise<void> = Promise.resolve();

class SdkTransportAdapter implements Transport {
  readonly messages: Observable<InboundFrame>;
  /** Set by the first subscription, which starts the SDK transport (it starts once). */
  private started = false;
  private sink: Subscriber<InboundFrame> | undefined;
  /** Set once the stream ended (closed, or start failed): sends are refused from then on. */
  private ended = false;
  /** Set when the SDK transport reported `onclose`: there is nothing left to close. */
  private closedByTransport = false;
  /** Set while `start()` is pending (sends wait for it); rejects with a `TransportError` if it failed. */
  private starting: Promise<void> | undefined;
  private closing: Promise<void> | undefined;

  constructor(
    private readonly transport: SdkTransportLike,
    private readonly options: SdkAdapterOptions,
  ) {
    this.messages = new Observable<InboundFrame>((subscriber) => {
      if (this.sink) {
        subscriber.error(new TransportError('An SDK transport adapter has one subscriber at a time'));
        return;
      }
      if (this.ended) {
        subscriber.complete();
        return;
      }
      this.sink = subscriber;
      if (!this.started) {
        this.started = true;
        transport.onmessage = (message) => this.sink?.next(message as InboundFrame);
        transport.onclose = () => {
          this.closedByTransport = true;
          this.end(undefined);
        };
        transport.onerror = (error) => this.report(error);
        this.startSdkTransport();
      }
      return () => {
        // The subscriber left: stop delivering. Closing the SDK transport is close()'s job.
        if (this.sink === subscriber) this.sink = undefined;
      };
    });
  }

  get sessionId(): string | undefined {
    return this.transport.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.transport.setProtocolVersion?.(version);
  }

  send(message: JsonRpcMessage | JsonRpcBatch, options?: TransportSendOptions): Promise<void> {
    if (this.ended || this.closing) return Promise.reject(new TransportError('Transport closed'));
    const relatedRequestId = options?.relatedRequestId;
    const forward = (): Promise<void> => {
      if (this.ended) return Promise.reject(new TransportError('Transport closed'));
      return attempt(() =>
        relatedRequestId === undefined
          ? this.transport.send(message)
          : this.transport.send(message, { relatedRequestId }),
      ).then(undefined, (error: unknown) => {
        throw error instanceof TransportError
          ? error
          : new TransportError(`Could not send: ${describe(error)}`, { cause: error });
      });
    };
    // While start() is pending, sends wait for it (in order), as they would behind the SDK's own Protocol.
    return this.starting ? this.starting.then(forward) : forward();
  }

  close(): Promise<void> {
    if (this.closing) return this.closing;
    if (this.closedByTransport) return (this.closing = DONE);
    this.closing = attempt(() => this.transport.close()).then(
      () => this.end(undefined),
      (error: unknown) => {
        this.end(undefined);
        throw new TransportError(`The SDK transport failed to close: ${describe(error)}`, { cause: error });
      },
    );
    return this.closing;
  }

  private startSdkTransport(): void {
    const starting = attempt(() => this.transport.start()).then(
      () => {
        if (this.starting === starting) this.starting = undefined;
      },
      (error: unknown) => {
        const failure = new TransportError(`The SDK transport failed to start: ${describe(error)}`, { cause: error });
        this.end(failure);
        throw failure;
      },
    );
    starting.catch(() => undefined); // reported through the stream; sends waiting on it reject with it
    this.starting = starting;
  }

  /** Ends the stream once: completes it, or errors it with `failure`. */
  private end(failure: TransportError | undefined): void {
    if (this.ended) return;
    this.ended = true;
    const sink = this.sink;
    this.sink = undefined;
    if (failure) sink?.error(failure);
    else sink?.complete();
  }

  private report(error: Error): void {
    const onError = this.options.onError;
    if (!onError) return;
    try {
      onError(error);
    } catch {
      // A reporting callback must not break the SDK transport that called us.
    }
  }
}

/** Runs `operation`, turning a synchronous throw into a rejection. */
function attempt(operation: () => Promise<void>): Promise<void> {
  try {
    return Promise.resolve(operation());
  } catch (error) {
    return Promise.reject(error);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
