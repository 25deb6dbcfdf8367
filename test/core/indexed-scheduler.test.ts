/**
 * The runtime's XState scheduler, indexed by source: an actor that stops cancels its own delayed events
 * without scanning the rest of the system's (every connection, HTTP session and upstream of a runtime
 * shares one system, so the scan made ending N of them quadratic).
 */
import { describe, expect, it } from 'vitest';
import { assign, createActor, createMachine, raise, SimulatedClock } from 'xstate';
import { Runtime } from '../../lib/core/runtime';

/** Ends on `END`, or by itself after `ms`; `tick` fires every 10 ms meanwhile (a timer that keeps re-arming). */
function timedMachine(ms: number) {
  return createMachine({
    initial: 'waiting',
    states: {
      waiting: {
        initial: 'ticking',
        states: { ticking: { after: { 10: { target: 'ticking', reenter: true } } } },
        after: { [ms]: 'timedOut' },
        on: { END: 'ended' },
      },
      timedOut: { type: 'final' },
      ended: { type: 'final' },
    },
  });
}

/** The system's table of delayed events, wrapped to count how often it is scanned. */
function countScans(runtime: Runtime): { scans: number } {
  const counter = { scans: 0 };
  const holder = (runtime.root.system as unknown as { _snapshot: { _scheduledEvents: object } })._snapshot;
  holder._scheduledEvents = new Proxy(holder._scheduledEvents, {
    ownKeys(target) {
      counter.scans++;
      return Reflect.ownKeys(target);
    },
  });
  return counter;
}

describe("the runtime's delayed events", () => {
  it('an actor that stops cancels its own without scanning the others', () => {
    const clock = new SimulatedClock();
    const runtime = new Runtime({ clock });
    const scans = countScans(runtime);
    const actors = Array.from({ length: 5 }, () => createActor(timedMachine(1_000), { parent: runtime.root }).start());
    expect(Object.keys(runtime.root.system.getSnapshot()._scheduledEvents)).toHaveLength(10);
    scans.scans = 0;
    for (const actor of actors.slice(0, 3)) actor.send({ type: 'END' });
    expect(scans.scans).toBe(0);
    expect(actors.map((actor) => actor.getSnapshot().status)).toEqual(['done', 'done', 'done', 'active', 'active']);
    expect(Object.keys(runtime.root.system.getSnapshot()._scheduledEvents)).toHaveLength(4);
  });

  it('still fire for the actors left, and never for a stopped one', () => {
    const clock = new SimulatedClock();
    const runtime = new Runtime({ clock });
    const [stopped, left] = [1, 2].map(() => createActor(timedMachine(1_000), { parent: runtime.root }).start());
    stopped!.send({ type: 'END' });
    clock.increment(999);
    expect(left!.getSnapshot().value).toEqual({ waiting: 'ticking' });
    clock.increment(1);
    expect(left!.getSnapshot().value).toBe('timedOut');
    expect(stopped!.getSnapshot().value).toBe('ended');
    expect(runtime.root.system.getSnapshot()._scheduledEvents).toEqual({});
  });

  it('keep working for an actor that schedules thousands of events it never cancels', () => {
    // Each TICK raises the next one, delayed: XState forgets each as it fires, and so must the index.
    const machine = createMachine({
      initial: 'running',
      context: { ticks: 0 },
      states: {
        running: {
          entry: raise({ type: 'TICK' }, { delay: 10 }),
          on: {
            TICK: {
              actions: [assign({ ticks: ({ context }) => context.ticks + 1 }), raise({ type: 'TICK' }, { delay: 10 })],
            },
            END: 'ended',
          },
        },
        ended: { type: 'final' },
      },
    });
    const clock = new SimulatedClock();
    const runtime = new Runtime({ clock });
    const actor = createActor(machine, { parent: runtime.root }).start();
    for (let i = 0; i < 5_000; i++) clock.increment(10);
    expect(actor.getSnapshot().context.ticks).toBe(5_000);
    expect(Object.keys(runtime.root.system.getSnapshot()._scheduledEvents)).toHaveLength(1);
    actor.send({ type: 'END' });
    expect(runtime.root.system.getSnapshot()._scheduledEvents).toEqual({});
    clock.increment(10);
    expect(actor.getSnapshot().context.ticks).toBe(5_000);
  });
});
