/**
 * The upstream supervision machine on its own: the whole transition table, the actions it asks of its
 * host, backoff and the crash-loop limit on a simulated clock, and what a stable session forgives.
 */
import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import {
  upstreamMachine,
  type UpstreamEvent,
  type UpstreamMachineHost,
  type UpstreamState,
} from '../machines/upstream';

const boom = new Error('boom');
const EVENTS: Record<string, UpstreamEvent> = {
  start: { type: 'start' },
  connected: { type: 'connected' },
  'connect.failed': { type: 'connect.failed', error: boom },
  lost: { type: 'lost', error: boom },
  unhealthy: { type: 'unhealthy', error: boom },
  healthy: { type: 'healthy' },
  stop: { type: 'stop', reason: 'requested' },
  dispose: { type: 'dispose' },
};
type EventName = keyof typeof EVENTS;

/** state -> event -> next state; an event not named leaves the state as it is. */
const TABLE: Record<UpstreamState, Partial<Record<EventName, UpstreamState>>> = {
  idle: { start: 'connecting', stop: 'stopped', dispose: 'disposed' },
  connecting: { connected: 'ready', 'connect.failed': 'reconnecting', stop: 'stopped', dispose: 'disposed' },
  ready: { unhealthy: 'degraded', lost: 'reconnecting', stop: 'stopped', dispose: 'disposed' },
  degraded: { healthy: 'ready', unhealthy: 'reconnecting', lost: 'reconnecting', stop: 'stopped', dispose: 'disposed' },
  reconnecting: { stop: 'stopped', dispose: 'disposed' },
  failed: { start: 'connecting', stop: 'stopped', dispose: 'disposed' },
  stopped: { start: 'connecting', stop: 'stopped', dispose: 'disposed' },
  disposed: {},
};
// (disposed is final: see 'ends for good when disposed'.)

/** Steps from `idle` to each state (`maxRestarts: 1`: the second failure in a row gives up). */
const PATHS: Record<UpstreamState, (EventName | 'backoff')[]> = {
  idle: [],
  connecting: ['start'],
  ready: ['start', 'connected'],
  degraded: ['start', 'connected', 'unhealthy'],
  reconnecting: ['start', 'connect.failed'],
  failed: ['start', 'connect.failed', 'backoff', 'connect.failed'],
  stopped: ['stop'],
  disposed: ['dispose'],
};

function run(policy: Record<string, number> = {}) {
  const calls: string[] = [];
  const clock = new SimulatedClock();
  const host: UpstreamMachineHost = {
    openSession: () => void calls.push('openSession'),
    closeSession: () => void calls.push('closeSession'),
    publish: () => void calls.push('publish'),
    withdraw: () => void calls.push('withdraw'),
  };
  const actor = createActor(upstreamMachine, { input: { host, policy }, clock }).start();
  const state = () => actor.getSnapshot().value as UpstreamState;
  return { actor, calls, clock, state };
}

describe('the upstream machine', () => {
  for (const [from, path] of Object.entries(PATHS) as [UpstreamState, (EventName | 'backoff')[]][]) {
    // A final state takes no events at all (XState refuses them): checked once below.
    if (from === 'disposed') continue;
    for (const event of Object.keys(EVENTS) as EventName[]) {
      const to = TABLE[from][event] ?? from;
      it(`${from} + ${event} -> ${to}`, () => {
        const { actor, clock, state } = run({ maxRestarts: 1, initialDelayMs: 100 });
        for (const step of path) {
          if (step === 'backoff') clock.increment(100);
          else actor.send(EVENTS[step]!);
        }
        expect(state()).toBe(from);
        actor.send(EVENTS[event]!);
        expect(state()).toBe(to);
      });
    }
  }

  it('asks its host to open, publish, withdraw and close at the right moments', () => {
    const { actor, calls, clock } = run({ initialDelayMs: 100 });
    actor.send(EVENTS.start!);
    actor.send(EVENTS.connected!);
    expect(calls).toEqual(['openSession', 'publish']);
    actor.send(EVENTS.unhealthy!);
    actor.send(EVENTS.healthy!);
    expect(calls).toEqual(['openSession', 'publish']); // degraded keeps serving: nothing withdrawn
    actor.send(EVENTS.lost!);
    // Reconnecting keeps the entries served: calls wait for the next session instead of finding no tool.
    expect(calls).toEqual(['openSession', 'publish', 'closeSession']);
    clock.increment(100);
    expect(calls.at(-1)).toBe('openSession');
    actor.send(EVENTS.connected!);
    expect(calls.at(-1)).toBe('publish');
  });

  it('backs off exponentially up to maxDelayMs, then gives up after maxRestarts failures in a row', () => {
    const { actor, clock, state } = run({ maxRestarts: 4, initialDelayMs: 100, maxDelayMs: 300 });
    actor.send(EVENTS.start!);
    const delays: number[] = [];
    for (let failure = 1; failure <= 4; failure++) {
      actor.send(EVENTS['connect.failed']!);
      expect(state()).toBe('reconnecting');
      let waited = 0;
      while (state() === 'reconnecting') {
        clock.increment(50);
        waited += 50;
      }
      delays.push(waited);
      expect(state()).toBe('connecting');
    }
    expect(delays).toEqual([100, 200, 300, 300]);
    actor.send(EVENTS['connect.failed']!);
    expect(state()).toBe('failed');
    expect(actor.getSnapshot().context).toMatchObject({ failures: 5, lastError: boom });
    // A start from failed begins again with a clean slate.
    actor.send(EVENTS.start!);
    expect(state()).toBe('connecting');
    expect(actor.getSnapshot().context.failures).toBe(0);
  });

  it('by default never gives up: 100 failures in a row, each delay doubling up to the 30 s cap', () => {
    const { actor, clock, state } = run();
    actor.send(EVENTS.start!);
    const delays: number[] = [];
    for (let failure = 1; failure <= 100; failure++) {
      actor.send(EVENTS['connect.failed']!);
      expect(state()).toBe('reconnecting');
      const delay = actor.getSnapshot().context.retryDelayMs!;
      delays.push(delay);
      clock.increment(delay - 1);
      expect(state()).toBe('reconnecting');
      clock.increment(1);
      expect(state()).toBe('connecting');
      expect(actor.getSnapshot().context.retryDelayMs).toBeUndefined();
    }
    expect(delays.slice(0, 8)).toEqual([500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
    expect(new Set(delays.slice(6))).toEqual(new Set([30_000]));
    actor.send(EVENTS.connected!);
    expect(state()).toBe('ready');
    expect(actor.getSnapshot().context.failures).toBe(100);
  });

  it('keeps a zero initial delay a number however long the crash loop', () => {
    const { actor, clock, state } = run({ initialDelayMs: 0 });
    actor.send(EVENTS.start!);
    for (let failure = 1; failure <= 1100; failure++) {
      actor.send(EVENTS['connect.failed']!);
      expect(actor.getSnapshot().context.retryDelayMs).toBe(0);
      clock.increment(1);
      expect(state()).toBe('connecting');
    }
    expect(actor.getSnapshot().context.failures).toBe(1100);
  });

  it('starts the delays over once a session stays up for stableAfterMs', () => {
    const { actor, clock, state } = run({ initialDelayMs: 100, maxDelayMs: 10_000, stableAfterMs: 1000 });
    actor.send(EVENTS.start!);
    for (let failure = 1; failure <= 5; failure++) {
      actor.send(EVENTS['connect.failed']!);
      clock.increment(actor.getSnapshot().context.retryDelayMs!);
    }
    actor.send(EVENTS.connected!);
    actor.send(EVENTS.lost!);
    expect(actor.getSnapshot().context.retryDelayMs).toBe(3200); // failure 6, not stable: 100 * 2^5
    clock.increment(3200);
    actor.send(EVENTS.connected!);
    clock.increment(1000);
    actor.send(EVENTS.lost!);
    expect(state()).toBe('reconnecting');
    expect(actor.getSnapshot().context).toMatchObject({ failures: 1, retryDelayMs: 100 });
  });

  it('forgives earlier failures once a session stays up for stableAfterMs', () => {
    const { actor, clock, state } = run({ maxRestarts: 1, initialDelayMs: 10, stableAfterMs: 1000 });
    actor.send(EVENTS.start!);
    actor.send(EVENTS.connected!);
    actor.send(EVENTS.lost!); // failure 1 of 1 allowed
    clock.increment(10);
    actor.send(EVENTS.connected!);
    clock.increment(999);
    expect(actor.getSnapshot().context.failures).toBe(1);
    clock.increment(1);
    expect(actor.getSnapshot().context.failures).toBe(0);
    actor.send(EVENTS.lost!);
    expect(state()).toBe('reconnecting'); // not failed: the loop was broken by a stable session
    clock.increment(10);
    actor.send(EVENTS.connected!);
    actor.send(EVENTS.lost!); // two in a row without a stable session: a crash loop
    expect(state()).toBe('failed');
  });

  it('keeps the entries of an upstream stopped for being idle, until a requested stop', () => {
    const { actor, calls } = run();
    actor.send(EVENTS.start!);
    actor.send(EVENTS.connected!);
    calls.length = 0;
    actor.send({ type: 'stop', reason: 'idle' });
    expect(calls).toEqual(['closeSession']);
    expect(actor.getSnapshot().context.stopReason).toBe('idle');
    actor.send({ type: 'stop', reason: 'requested' });
    expect(calls).toEqual(['closeSession', 'withdraw']);
    actor.send(EVENTS.start!);
    expect(actor.getSnapshot().context.stopReason).toBeUndefined();
  });

  it('withdraws before closing on a requested stop', () => {
    const { actor, calls } = run();
    actor.send(EVENTS.start!);
    actor.send(EVENTS.connected!);
    actor.send(EVENTS.stop!);
    expect(calls).toEqual(['openSession', 'publish', 'withdraw', 'closeSession']);
  });

  it('ends for good when disposed, closing the session and withdrawing', () => {
    const { actor, calls } = run();
    actor.send(EVENTS.start!);
    actor.send(EVENTS.connected!);
    actor.send(EVENTS.dispose!);
    expect(calls.slice(-2)).toEqual(['closeSession', 'withdraw']);
    expect(actor.getSnapshot().status).toBe('done');
  });
});
