import { afterEach, describe, expect, it, vi } from 'vitest';
import { setTimerRef, systemClock, type Clock } from '../../lib/core/clock';
import { sharedTimers } from '../../lib/core/timer-queues';
import { ManualClock } from '../helpers/manual-clock';

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('shared timers', () => {
  it('runs the timers of one delay in deadline order on one platform timer', () => {
    const base = new ManualClock();
    const timers = sharedTimers(base);
    const ran: string[] = [];
    timers.setTimeout(() => ran.push('a'), 100);
    base.advanceTo(1_010);
    timers.setTimeout(() => ran.push('b'), 100);
    base.advanceTo(1_020);
    timers.setTimeout(() => ran.push('c'), 100);
    expect(base.armed).toBe(1);
    base.advanceTo(1_099);
    expect(ran).toEqual([]);
    base.advanceTo(1_100);
    expect(ran).toEqual(['a']);
    base.advanceTo(1_115);
    expect(ran).toEqual(['a', 'b']);
    base.advanceTo(1_200);
    expect(ran).toEqual(['a', 'b', 'c']);
    expect(base.pending).toBe(0);
  });

  it('is one instance per clock, and sharing a shared clock changes nothing', () => {
    const base = new ManualClock();
    expect(sharedTimers(base)).toBe(sharedTimers(base));
    expect(sharedTimers(sharedTimers(base))).toBe(sharedTimers(base));
    expect(sharedTimers(base).now()).toBe(1_000);
  });

  it('keeps each delay apart and never runs a cancelled timer', () => {
    const base = new ManualClock();
    const timers = sharedTimers(base);
    const ran: string[] = [];
    const long = timers.setTimeout(() => ran.push('long'), 500);
    timers.setTimeout(() => ran.push('short'), 50);
    const cancelled = timers.setTimeout(() => ran.push('cancelled'), 50);
    timers.clearTimeout(cancelled);
    base.advanceTo(1_050);
    expect(ran).toEqual(['short']);
    timers.clearTimeout(long);
    base.advanceTo(2_000);
    expect(ran).toEqual(['short']);
    expect(base.pending).toBe(0);
  });

  it('sets no platform timer for a timer that follows a cancelled one, and stops once it fires empty', () => {
    const base = new ManualClock();
    const timers = sharedTimers(base);
    for (let i = 0; i < 50; i++) {
      timers.clearTimeout(timers.setTimeout(() => expect.fail('cancelled'), 3_000));
      base.advanceTo(base.time + 1);
    }
    expect(base.armed).toBe(1);
    expect(base.cleared).toBe(0);
    base.advanceTo(10_000);
    expect(base.pending).toBe(0);
    // The emptied queue was dropped: a new timer arms a new platform timer.
    let ran = false;
    timers.setTimeout(() => (ran = true), 3_000);
    expect(base.armed).toBe(2);
    base.advanceTo(13_000);
    expect(ran).toBe(true);
  });

  it('gives a timer set by a callback, even with a delay of 0, a later firing', () => {
    const base = new ManualClock();
    const timers = sharedTimers(base);
    const ran: string[] = [];
    timers.setTimeout(() => {
      ran.push('first');
      timers.setTimeout(() => ran.push('second'), 0);
    }, 0);
    timers.setTimeout(() => ran.push('sibling'), 0);
    const armedBefore = base.armed;
    base.advanceTo(1_000);
    expect(ran).toEqual(['first', 'sibling', 'second']);
    expect(base.armed).toBe(armedBefore + 1);
  });

  it('runs the other timers when one throws, and rethrows its error from a microtask', () => {
    const base = new ManualClock();
    const timers = sharedTimers(base);
    const rethrown: (() => void)[] = [];
    vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((task) => rethrown.push(task));
    const ran: string[] = [];
    timers.setTimeout(() => {
      throw new Error('boom');
    }, 10);
    timers.setTimeout(() => ran.push('after'), 10);
    base.advanceTo(1_010);
    expect(ran).toEqual(['after']);
    expect(rethrown).toHaveLength(1);
    expect(() => rethrown[0]!()).toThrow('boom');
  });

  it('puts a timer set after the clock stepped back in its deadline place', () => {
    const base = new ManualClock();
    const timers = sharedTimers(base);
    const ran: string[] = [];
    timers.setTimeout(() => ran.push('set first'), 100);
    base.time = 900;
    timers.setTimeout(() => ran.push('set after a step back'), 100);
    base.advanceTo(1_000);
    expect(ran).toEqual(['set after a step back']);
    base.advanceTo(1_100);
    expect(ran).toEqual(['set after a step back', 'set first']);
  });

  it('leaves delays the platform cannot queue to the platform', () => {
    const base = new ManualClock();
    const timers = sharedTimers(base);
    const handle = timers.setTimeout(() => undefined, 2 ** 31);
    expect(typeof handle).toBe('number');
    timers.clearTimeout(handle);
    expect(base.cleared).toBe(1);
  });

  it('keeps the process alive only while a timer that keeps it alive is queued', () => {
    const refs: boolean[] = [];
    const base: Clock = {
      now: () => 0,
      setTimeout: () => ({ ref: () => refs.push(true), unref: () => refs.push(false) }),
      clearTimeout: () => undefined,
    };
    const timers = sharedTimers(base);
    const background = timers.setTimeout(() => undefined, 1_000);
    setTimerRef(background, false);
    expect(refs.at(-1)).toBe(false);
    const foreground = timers.setTimeout(() => undefined, 1_000);
    expect(refs.at(-1)).toBe(true);
    timers.clearTimeout(foreground);
    expect(refs.at(-1)).toBe(false);
    setTimerRef(background, true);
    expect(refs.at(-1)).toBe(true);
    expect((background as { hasRef(): boolean }).hasRef()).toBe(true);
  });

  it('fires in fake time a timer queued behind a platform timer armed before fake timers', async () => {
    const timers = sharedTimers(systemClock);
    // A real platform timer for this delay, left armed by a cancelled timer.
    timers.clearTimeout(timers.setTimeout(() => undefined, 4_321));
    vi.useFakeTimers();
    let ran = false;
    timers.setTimeout(() => (ran = true), 4_321);
    await vi.advanceTimersByTimeAsync(4_320);
    expect(ran).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(ran).toBe(true);
  });

  it('runs on real timers through the system clock', async () => {
    const timers = sharedTimers(systemClock);
    const ran: number[] = [];
    await new Promise<void>((resolve) => {
      timers.setTimeout(() => ran.push(1), 5);
      timers.setTimeout(() => {
        ran.push(2);
        resolve();
      }, 5);
    });
    expect(ran).toEqual([1, 2]);
  });
});
