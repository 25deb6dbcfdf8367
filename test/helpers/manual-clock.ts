import type { Clock } from '../../lib/core/clock';

/**
 * A clock whose time moves only when told, counting the platform timers it was asked for: timers run as
 * time is moved past their deadline, in deadline order (a timer set meanwhile waits its turn), so tests of
 * back-offs and timeouts never wait for real.
 */
export class ManualClock implements Clock {
  time = 1_000;
  /** Timers set, and timers cleared while still pending. */
  armed = 0;
  cleared = 0;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();
  private nextId = 1;

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, ms: number): unknown {
    this.armed++;
    const id = this.nextId++;
    this.timers.set(id, { at: this.time + ms, callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    if (this.timers.delete(handle as number)) this.cleared++;
  }

  /** Timers set and not yet run or cleared. */
  get pending(): number {
    return this.timers.size;
  }

  /** Moves time to `to`, running the timers that come due (at most 1,000: a timer loop fails the test). */
  advanceTo(to: number): void {
    for (let guard = 0; ; guard++) {
      if (guard === 1_000) throw new Error('ManualClock: more than 1,000 timers came due in one move');
      const due = [...this.timers].filter(([, timer]) => timer.at <= to).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.time = Math.max(this.time, due[1].at);
      due[1].callback();
    }
    this.time = to;
  }

  /** Moves time on by `ms`. */
  advance(ms: number): void {
    this.advanceTo(this.time + ms);
  }
}
