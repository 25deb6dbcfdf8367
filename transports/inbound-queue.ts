/**
 * The `messages` side of every transport: one consumer, frames kept in order until someone subscribes,
 * then the completion or the failure delivered after the last frame. Options cover what differs between
 * transports: when frames are delivered, and when the source is paused.
 */
import { Observable, type Subscriber } from 'rxjs';
import { afterThisTurn } from '../lib/core/microtask';
import { TransportError } from '../lib/jsonrpc/errors';
import type { InboundFrame } from '../lib/jsonrpc/types';

type Ending = { readonly error: TransportError | undefined };

/** What the queue needs of its source to apply backpressure: a Node stream has both. */
export interface FlowControl {
  pause(): void;
  resume(): void;
}

export interface InboundQueueOptions {
  /**
   * `immediate` (default): a frame pushed while someone listens is delivered inside `push`.
   * `microtask`: never inside `push`; the first frame of a burst schedules one microtask that delivers,
   * in order, everything queued by then (the in-memory link, so a reply never arrives inside `send()`).
   * Either way the first delivery to a new subscriber waits for a microtask, so it has its Subscription.
   */
  readonly delivery?: 'immediate' | 'microtask';
  /** Pauses and resumes the source; without it frames simply wait in memory. */
  readonly flow?: FlowControl;
  /**
   * When the source is paused. `backlog` (default): while more than `highWater` frames wait for a
   * consumer, so the peer's end is still noticed when nobody listens. `unobserved`: also whenever nobody
   * listens, so the source starts paused and flows with the first subscriber (the source's own buffer
   * then pushes back on the peer, as a pipe does for stdio).
   */
  readonly pauseWhen?: 'backlog' | 'unobserved';
  /** Frames waiting before the source is paused (default 1024). */
  readonly highWater?: number;
}

export class InboundQueue {
  readonly messages: Observable<InboundFrame>;
  private sink: Subscriber<InboundFrame> | undefined;
  private readonly inbox: InboundFrame[] = [];
  private ending: Ending | undefined;
  private flushing = false;
  private flushScheduled = false;
  private sourcePaused = false;
  private readonly immediate: boolean;
  private readonly flow: FlowControl | undefined;
  private readonly pauseUnobserved: boolean;
  private readonly highWater: number;

  constructor(label: string, options: InboundQueueOptions = {}) {
    this.immediate = (options.delivery ?? 'immediate') === 'immediate';
    this.flow = options.flow;
    this.pauseUnobserved = options.pauseWhen === 'unobserved';
    this.highWater = options.highWater ?? 1024;
    if (this.pauseUnobserved) this.pauseSource();
    this.messages = new Observable<InboundFrame>((subscriber) => {
      if (this.sink) {
        subscriber.error(new TransportError(`A ${label} transport has a single consumer`));
        return;
      }
      this.sink = subscriber;
      this.scheduleFlush();
      return () => {
        if (this.sink !== subscriber) return;
        this.sink = undefined;
        if (this.pauseUnobserved && !this.ending) this.pauseSource();
      };
    });
  }

  /** True once completed or failed: later frames are dropped. */
  get ended(): boolean {
    return this.ending !== undefined;
  }

  push(frame: InboundFrame): void {
    if (this.ending) return;
    const inbox = this.inbox;
    inbox.push(frame);
    if (this.immediate) this.flush();
    else this.scheduleFlush();
    if (inbox.length > this.highWater) this.pauseSource();
  }

  /** Ends `messages` after the frames already queued. */
  complete(): void {
    this.end({ error: undefined });
  }

  /** Fails `messages` with `error` after the frames already queued. */
  fail(error: TransportError): void {
    this.end({ error });
  }

  private end(ending: Ending): void {
    if (this.ending) return;
    this.ending = ending;
    if (this.immediate) this.flush();
    else this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushScheduled || !this.sink) return;
    this.flushScheduled = true;
    // A closure per scheduled flush, not a bound function per queue: one per connection end adds up.
    afterThisTurn(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    // A consumer may close the transport (or unsubscribe) from inside `next`: re-check on every turn.
    if (this.flushing || !this.sink) return;
    this.flushing = true;
    try {
      const inbox = this.inbox;
      let delivered = 0;
      while (delivered < inbox.length && this.sink) this.sink.next(inbox[delivered++]!);
      if (delivered === inbox.length) inbox.length = 0;
      else inbox.splice(0, delivered);
      if (this.ending) {
        const sink = this.sink;
        if (inbox.length === 0 && sink) {
          this.sink = undefined;
          if (this.ending.error) sink.error(this.ending.error);
          else sink.complete();
        }
      } else if (this.sourcePaused && inbox.length === 0 && this.sink) {
        this.sourcePaused = false;
        this.flow?.resume();
      }
    } finally {
      this.flushing = false;
    }
  }

  private pauseSource(): void {
    if (this.sourcePaused || !this.flow) return;
    this.sourcePaused = true;
    this.flow.pause();
  }
}
