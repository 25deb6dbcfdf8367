import { Observable, type Subscriber } from 'rxjs';
import { TransportError } from '../lib/jsonrpc/errors';
import type { InboundFrame } from '../lib/jsonrpc/types';

type Ending = { readonly error: TransportError | undefined };

/**
 * The `messages` side of a transport that reads from an event source: one consumer, frames kept in
 * order until someone subscribes, then the completion or the failure delivered after the last frame.
 */
export class InboundQueue {
  readonly messages: Observable<InboundFrame>;
  private sink: Subscriber<InboundFrame> | undefined;
  private readonly inbox: InboundFrame[] = [];
  private ending: Ending | undefined;
  private flushing = false;
  private sourcePaused = false;

  /**
   * `flow`, when given, lets the queue pause the source while more than `highWater` frames wait for a
   * consumer. The source keeps flowing otherwise, so the peer's end is noticed even with no consumer.
   */
  constructor(
    label: string,
    private readonly flow?: { pause(): void; resume(): void },
    private readonly highWater = 1024,
  ) {
    this.messages = new Observable<InboundFrame>((subscriber) => {
      if (this.sink) {
        subscriber.error(new TransportError(`A ${label} transport has a single consumer`));
        return;
      }
      this.sink = subscriber;
      // Deliver in a microtask: a consumer must get its Subscription before the first frame.
      queueMicrotask(() => this.flush());
      return () => {
        if (this.sink === subscriber) this.sink = undefined;
      };
    });
  }

  /** True once completed or failed: later frames are dropped. */
  get ended(): boolean {
    return this.ending !== undefined;
  }

  push(frame: InboundFrame): void {
    if (this.ending) return;
    this.inbox.push(frame);
    this.flush();
    if (this.inbox.length > this.highWater && !this.sourcePaused && this.flow) {
      this.sourcePaused = true;
      this.flow.pause();
    }
  }

  complete(): void {
    this.end({ error: undefined });
  }

  fail(error: TransportError): void {
    this.end({ error });
  }

  private end(ending: Ending): void {
    if (this.ending) return;
    this.ending = ending;
    this.flush();
  }

  private flush(): void {
    // A consumer may close the transport (or unsubscribe) from inside `next`: re-check on every turn.
    if (this.flushing) return;
    this.flushing = true;
    try {
      let delivered = 0;
      while (delivered < this.inbox.length && this.sink) this.sink.next(this.inbox[delivered++]!);
      this.inbox.splice(0, delivered);
      if (this.sourcePaused && this.inbox.length === 0) {
        this.sourcePaused = false;
        this.flow?.resume();
      }
      const sink = this.sink;
      if (this.ending && this.inbox.length === 0 && sink) {
        this.sink = undefined;
        if (this.ending.error) sink.error(this.ending.error);
        else sink.complete();
      }
    } finally {
      this.flushing = false;
    }
  }
}
