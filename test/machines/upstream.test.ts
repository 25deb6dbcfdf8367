/**
 * The upstream supervision machine on its own: the whole transition table, the actions it asks of the
 * upstream, backoff and the crash-loop limit on a simulated clock, what a stable session forgives, and
 * the idle stop (its timer polling how long the upstream has been unused) and wake.
 */
import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import {
  upstreamMachine,
  type SupervisedUpstream,
  type UpstreamEvent,
  type UpstreamInput,
  type UpstreamState,
} from '../../machines/upstream';

const boom = new Error('boom');
const EVENTS: Record<string, UpstreamEvent> = {
  start: { type: 'start' },
  use: { type: 'use' },
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
  idle: { start: 'connecting', use: 'connecting', stop: 'stopped', dispose: 'disposed' },
  connecting: { connected: 'ready', 'connect.failed': 'reconnecting', stop: 'stopped', dispose: 'disposed' },
  ready: { unhealthy: 'degraded', lost: 'reconnecting', stop: 'stopped', dispose: 'disposed' },
  degraded: { healthy: 'ready', unhealthy: 'reconnecting', lost: 'reconnecting', stop: 'stopped', dispose: 'disposed' },
  reconnecting: { stop: 'stopped', dispose: 'disposed' },
  failed: { start: 'connecting', stop: 'stopped', dispose: 'disposed' },
  // Stopped on request: `use` does not wake it (see 'wakes on use only ...' for an idle stop).
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

function run(policy: Record<string, number> = {}, input: Omit<UpstreamInput, 'upstream' | 'policy'> = {}) {
  const calls: string[] = [];
  const clock = new SimulatedClock();
  /** What the upstream's own bookkeeping would say: in use, or unused since `lastUse`. */
  const use = { busy: false, lastUse: 0 };
  const upstream: SupervisedUpstream = {
    openSession: () => void calls.push('openSession'),
    closeSession: () => void calls.push('closeSession'),
    publish: () => void calls.push('publish'),
    withdraw: () => void calls.push('withdraw'),
    idleForMs: () => (use.busy ? 0 : clock.now() - use.lastUse),
  };
  const actor = createActor(upstreamMachine, { input: { upstream, policy, ...input }, clock }).start();
  const state = () => actor.getSnapshot().value as UpstreamState;
  return { actor, calls, clock, state, use };
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

  it('says in its context whether the entries are served: from publish until withdraw', () => {
    const { actor } = run();
    const serving = () => actor.getSnapshot().context.serving;
    expect(serving()).toBe(false);
    actor.send(EVENTS.start!);
    actor.send(EVENTS.connected!);
    expect(serving()).toBe(true);
    actor.send(EVENTS.lost!);
    expect(serving()).toBe(true);
    actor.send({ type: 'stop', reason: 'idle' });
    expect(serving()).toBe(true);
    actor.send(EVENTS.stop!);
    expect(serving()).toBe(false);
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

  it('wakes on use only when idle or stopped for being idle, with a clean slate', () => {
    const { actor, state } = run({ initialDelayMs: 10 });
    actor.send(EVENTS.start!);
    actor.send(EVENTS['connect.failed']!);
    actor.send(EVENTS.use!);
    expect(state()).toBe('reconnecting');
    actor.send({ type: 'stop', reason: 'idle' });
    actor.send(EVENTS.use!);
    expect(state()).toBe('connecting');
    expect(actor.getSnapshot().context).toMatchObject({ failures: 0, stopReason: undefined });
  });
});

/** Events at given times (ms of the simulated clock, the session up at 0) for the idle-stop table. */
type Step = 'use' | 'busy' | 'free' | 'unhealthy';

describe('the idle stop', () => {
  const HORIZON_MS = 1000;

  /** The first moment the upstream is stopped, stepping 1 ms at a time; undefined if it never is. */
  function stoppedAt(idleTimeoutMs: number | undefined, script: Readonly<Record<number, Step>>): number | undefined {
    const { actor, clock, state, use } = run({}, { idleTimeoutMs });
    actor.send(EVENTS.start!);
    actor.send(EVENTS.connected!);
    for (let now = 0; now <= HORIZON_MS; now++) {
      const step = script[now];
      if (step === 'use' || step === 'free') Object.assign(use, { busy: false, lastUse: now });
      else if (step === 'busy') use.busy = true;
      else if (step === 'unhealthy') actor.send(EVENTS.unhealthy!);
      if (state() === 'stopped') return now;
      clock.increment(1);
    }
    return undefined;
  }

  it.each([
    { title: 'unused since its session opened: at the timeout', timeout: 100, script: {}, stops: 100 },
    { title: 'used at 60: a whole timeout after that use', timeout: 100, script: { 60: 'use' }, stops: 160 },
    {
      title: 'used at 60 and 101 (just after a check): a whole timeout after the last use',
      timeout: 100,
      script: { 60: 'use', 101: 'use' },
      stops: 201,
    },
    {
      title: 'a call in flight from 50 to 250: a timeout after it ends',
      timeout: 100,
      script: { 50: 'busy', 250: 'free' },
      stops: 350,
    },
    { title: 'a subscription that stays open: never', timeout: 100, script: { 10: 'busy' }, stops: undefined },
    { title: 'degraded and unused: at the timeout', timeout: 100, script: { 10: 'unhealthy' }, stops: 100 },
    { title: 'no idle timeout: never', timeout: undefined, script: {}, stops: undefined },
  ] as { title: string; timeout: number | undefined; script: Record<number, Step>; stops: number | undefined }[])(
    '$title',
    ({ timeout, script, stops }) => {
      expect(stoppedAt(timeout, script)).toBe(stops);
    },
  );

  it('keeps the entries served and closes the session', () => {
    const { actor, calls, clock } = run({}, { idleTimeoutMs: 100 });
    actor.send(EVENTS.start!);
    actor.send(EVENTS.connected!);
    calls.length = 0;
    clock.increment(100);
    expect(calls).toEqual(['closeSession']);
    expect(actor.getSnapshot().context).toMatchObject({ stopReason: 'idle', serving: true });
  });

  it('does not restart the stability timer while it checks: a busy upstream is still forgiven its failures', () => {
    const { actor, clock, use } = run({ initialDelayMs: 10, stableAfterMs: 1000 }, { idleTimeoutMs: 100 });
    actor.send(EVENTS.start!);
    actor.send(EVENTS['connect.failed']!);
    clock.increment(10);
    use.busy = true;
    actor.send(EVENTS.connected!);
    clock.increment(999);
    expect(actor.getSnapshot().context.failures).toBe(1);
    clock.increment(1);
    expect(actor.getSnapshot().context.failures).toBe(0);
  });

  it('stops checking once the upstream is no longer up', () => {
    const { actor, clock, state } = run({ initialDelayMs: 10 }, { idleTimeoutMs: 100 });
    actor.send(EVENTS.start!);
    actor.send(EVENTS.connected!);
    actor.send(EVENTS.lost!);
    clock.increment(10); // connecting again, and stays there: the old check must not stop it
    clock.increment(500);
    expect(state()).toBe('connecting');
  });
});
