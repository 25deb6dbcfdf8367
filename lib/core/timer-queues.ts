/**
 * Timers that share one platform timer per delay.
 *
 * A connection arms several short-lived timers: its lifecycle's close give-up, the correlation table's
 * deadline, the client's era probe and its wait for the transport to close. Almost all are cancelled
 * moments later, and a platform timer costs far more than the work around it (Node allocates a `Timeout`,
 * books it with async hooks and links it into its lists): removing four of them from a connect-and-close
 * took 42% off its time. Here a timer is a node in a list per delay, ordered by deadline, and each list
 * keeps one platform timer armed for its head; setting and clearing one is a few field writes.
 *
 * Semantics follow the platform's: callbacks run in deadline order, never before their delay (the entry a
 * platform timer was armed for counts as due even if `now()` lags it by a millisecond), a timer set by a
 * callback waits for a later turn even with a delay of 0, a throwing callback does not stop the others
 * (its error is rethrown from a microtask, as an uncaught timer error would be), and `ref`/`unref` on a
 * handle decide whether it keeps the process alive (`setTimerRef` works on them).
 */
import { setTimerRef, type Clock } from './clock';

/** Delays above this are not queued: the platform clamps them (Node to 1 ms, with a warning). */
const LONGEST_QUEUED_DELAY = 2_147_483_647;

const sharedByClock = new WeakMap<Clock, TimerQueues>();

/** `clock` with its timers queued per delay: one instance per clock, shared by everyone who asks. */
export function sharedTimers(clock: Clock): Clock {
  if (clock instanceof TimerQueues) return clock;
  let shared = sharedByClock.get(clock);
  if (shared === undefined) sharedByClock.set(clock, (shared = new TimerQueues(clock)));
  return shared;
}

class TimerQueues implements Clock {
  private readonly queues = new Map<number, DelayQueue>();

  constructor(readonly base: Clock) {}

  now(): number {
    return this.base.now();
  }

  setTimeout(callback: () => void, ms: number): unknown {
    if (!(ms <= LONGEST_QUEUED_DELAY)) return this.base.setTimeout(callback, ms);
    const delay = ms > 0 ? ms : 0;
    let queue = this.queues.get(delay);
    if (queue === undefined) this.queues.set(delay, (queue = new DelayQueue(this, delay)));
    return queue.add(callback);
  }

  clearTimeout(handle: unknown): void {
    if (handle instanceof QueuedTimer) handle.cancel();
    else if (handle !== undefined) this.base.clearTimeout(handle);
  }

  /** @internal An emptied queue leaves: delays that are never used again hold nothing. */
  forget(queue: DelayQueue): void {
    if (this.queues.get(queue.delay) === queue) this.queues.delete(queue.delay);
  }
}

/** One timer: a node of its delay's list until it runs or is cancelled. */
class QueuedTimer {
  prev: QueuedTimer | undefined = undefined;
  next: QueuedTimer | undefined = undefined;
  /** Undefined once it left its list (ran, is about to run, or was cancelled). */
  queue: DelayQueue | undefined;
  keepsAlive = true;

  constructor(
    queue: DelayQueue,
    readonly at: number,
    private callback: (() => void) | undefined,
  ) {
    this.queue = queue;
  }

  cancel(): void {
    this.callback = undefined;
    this.queue?.remove(this);
  }

  run(): void {
    const callback = this.callback;
    if (callback === undefined) return;
    this.callback = undefined;
    try {
      callback();
    } catch (error) {
      queueMicrotask(() => {
        throw error;
      });
    }
  }

  ref(): this {
    if (!this.keepsAlive) {
      this.keepsAlive = true;
      this.queue?.keepAliveChanged(1);
    }
    return this;
  }

  unref(): this {
    if (this.keepsAlive) {
      this.keepsAlive = false;
      this.queue?.keepAliveChanged(-1);
    }
    return this;
  }

  hasRef(): boolean {
    return this.keepsAlive;
  }
}

/** The timers of one delay, in deadline order, and the platform timer armed for the first. */
class DelayQueue {
  private head: QueuedTimer | undefined = undefined;
  private tail: QueuedTimer | undefined = undefined;
  private platformTimer: unknown = undefined;
  private armedFor = 0;
  private armedWith: unknown = undefined;
  private generation = 0;
  /** Timers of this queue that keep the process alive: the platform timer does while there is one. */
  private keepingAlive = 0;

  constructor(
    private readonly owner: TimerQueues,
    readonly delay: number,
  ) {}

  add(callback: () => void): QueuedTimer {
    const timer = new QueuedTimer(this, this.owner.now() + this.delay, callback);
    // Deadlines arrive in order unless the clock stepped back: then walk back to the timer's place.
    let before = this.tail;
    while (before !== undefined && before.at > timer.at) before = before.prev;
    timer.prev = before;
    timer.next = before === undefined ? this.head : before.next;
    if (timer.next === undefined) this.tail = timer;
    else timer.next.prev = timer;
    if (before === undefined) this.head = timer;
    else before.next = timer;
    if (++this.keepingAlive === 1 && this.platformTimer !== undefined) setTimerRef(this.platformTimer, true);
    if (this.platformTimer === undefined || timer.at < this.armedFor || globalThis.setTimeout !== this.armedWith)
      this.arm();
    return timer;
  }

  /**
   * Unlinks `timer`. The platform timer stays armed, even for an emptied queue (it stops keeping the process
   * alive): its firing finds nothing due and re-arms for the current head, which costs less than
   * clearing and setting a platform timer at every cancel (one timer at a time, a connect loop's probe,
   * would otherwise pay both each time).
   */
  remove(timer: QueuedTimer): void {
    this.unlink(timer);
    if (this.keepingAlive === 0 && timer.keepsAlive) setTimerRef(this.platformTimer, false);
  }

  keepAliveChanged(by: 1 | -1): void {
    this.keepingAlive += by;
    if (this.platformTimer !== undefined && this.keepingAlive === (by === 1 ? 1 : 0))
      setTimerRef(this.platformTimer, by === 1);
  }

  private unlink(timer: QueuedTimer): void {
    const { prev, next } = timer;
    if (prev === undefined) this.head = next;
    else prev.next = next;
    if (next === undefined) this.tail = prev;
    else next.prev = prev;
    timer.prev = timer.next = timer.queue = undefined;
    if (timer.keepsAlive) this.keepingAlive--;
  }

  private arm(): void {
    const base = this.owner.base;
    if (this.platformTimer !== undefined) base.clearTimeout(this.platformTimer);
    const at = this.head!.at;
    this.armedFor = at;
    // Fake timers (vitest's) replace the global: a timer armed before them would never fire in fake time.
    this.armedWith = globalThis.setTimeout;
    // A platform timer another clearTimeout could not clear (armed before fake timers) must not fire for us.
    const generation = ++this.generation;
    this.platformTimer = base.setTimeout(
      () => {
        if (generation === this.generation) this.fire();
      },
      Math.max(0, at - base.now()),
    );
    if (this.keepingAlive === 0) setTimerRef(this.platformTimer, false);
  }

  private fire(): void {
    this.platformTimer = undefined;
    const dueBy = Math.max(this.owner.now(), this.armedFor);
    const due: QueuedTimer[] = [];
    while (this.head !== undefined && this.head.at <= dueBy) {
      const timer = this.head;
      this.unlink(timer);
      due.push(timer);
    }
    if (this.head !== undefined) this.arm();
    else this.owner.forget(this);
    for (const timer of due) timer.run();
  }
}
