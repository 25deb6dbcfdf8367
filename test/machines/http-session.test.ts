/**
 * The Streamable HTTP session machine on its own: the whole transition table, the idle check on a
 * simulated clock (it reads the host's idleness when it fires: expires, or re-arms for the rest of the
 * timeout), and the end reason as output.
 */
import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock, toPromise } from 'xstate';
import { Runtime } from '../../lib/core/runtime';
import {
  httpSessionMachine,
  type HttpSessionEndReason,
  type HttpSessionEvent,
  type HttpSessionState,
} from '../../machines/http-session';
import { itFollowsTheTable } from '../helpers/transition-table';

type EventName = HttpSessionEvent['type'];
const EVENTS: readonly EventName[] = [
  'handshake.done',
  'handshake.failed',
  'delete',
  'evict',
  'connection.closed',
  'server.close',
  'released',
];

const ENDINGS = {
  delete: 'closing',
  evict: 'closing',
  'connection.closed': 'closing',
  'server.close': 'closing',
} as const;

/** The whole transition table: state -> event -> next state (absent: the event is ignored there). */
const TABLE: Record<Exclude<HttpSessionState, 'closed'>, Partial<Record<EventName, HttpSessionState>>> = {
  handshake: { 'handshake.done': 'active', 'handshake.failed': 'closing', ...ENDINGS },
  active: { ...ENDINGS },
  closing: { released: 'closed' },
};

/** Events that lead from `handshake` to each state. */
const PATHS: Record<HttpSessionState, EventName[]> = {
  handshake: [],
  active: ['handshake.done'],
  closing: ['delete'],
  closed: ['delete', 'released'],
};

const IDLE_MS = 1000;

/**
 * An actor whose host plays a session: `busy()` opens an HTTP response, `quiet()` closes the last one.
 * The host counts how often the machine asked it, so a test can tell that requests cost the machine nothing.
 */
function spawn(idleTimeoutMs = IDLE_MS) {
  const clock = new SimulatedClock();
  const calls: string[] = [];
  let idleSince: number | undefined = clock.now();
  let checks = 0;
  const actor = createActor(httpSessionMachine, {
    input: {
      host: {
        idleForMs: () => {
          checks++;
          return idleSince === undefined ? 0 : clock.now() - idleSince;
        },
        release: (reason) => calls.push(`release:${reason}`),
        finish: (reason) => calls.push(`finish:${reason}`),
      },
      idleTimeoutMs,
    },
    parent: new Runtime({ clock }).root,
  }).start();
  const state = () => actor.getSnapshot().value as HttpSessionState;
  const send = (...types: EventName[]) => {
    for (const type of types) actor.send({ type } as HttpSessionEvent);
  };
  return {
    actor,
    clock,
    calls,
    state,
    send,
    busy: () => void (idleSince = undefined),
    quiet: () => void (idleSince = clock.now()),
    checks: () => checks,
  };
}

describe('the HTTP session machine: transition table', () => {
  it('closed is final: the actor is done and its output is the reason', () => {
    const { send, actor } = spawn();
    send(...PATHS.closed);
    expect(actor.getSnapshot().status).toBe('done');
    expect(actor.getSnapshot().output).toBe('deleted');
  });

  itFollowsTheTable({ table: TABLE, events: EVENTS, paths: PATHS, spawn });
});

describe('the HTTP session machine: idle expiry and reasons', () => {
  it('a session idle since the handshake expires after the timeout, not before', () => {
    const { send, state, clock, calls, actor } = spawn();
    send('handshake.done');
    clock.increment(IDLE_MS - 1);
    expect(state()).toBe('active');
    clock.increment(1);
    expect(state()).toBe('closing');
    expect(calls).toEqual(['release:expired']);
    send('released');
    expect(actor.getSnapshot().status).toBe('done');
    expect(actor.getSnapshot().output).toBe('expired');
    expect(calls).toEqual(['release:expired', 'finish:expired']);
  });

  it('a session busy when the check fires lives on; it expires a whole timeout after it went quiet', () => {
    const { send, state, clock, busy, quiet } = spawn();
    send('handshake.done');
    busy();
    clock.increment(IDLE_MS * 3);
    expect(state()).toBe('active');
    quiet();
    clock.increment(IDLE_MS - 1);
    expect(state()).toBe('active');
    clock.increment(1);
    expect(state()).toBe('closing');
  });

  it('activity between two checks moves the expiry: the check re-arms for the rest of the timeout', () => {
    const { send, state, clock, busy, quiet } = spawn();
    send('handshake.done');
    clock.increment(600);
    busy();
    quiet(); // a request came and went at 600
    clock.increment(IDLE_MS - 600); // the check fires at 1000: idle for 400 only
    expect(state()).toBe('active');
    clock.increment(599);
    expect(state()).toBe('active');
    clock.increment(1); // 1600: idle for the whole timeout
    expect(state()).toBe('closing');
  });

  it('requests cost the machine nothing: it asks the host only when its check fires', () => {
    const { send, clock, busy, quiet, checks } = spawn();
    send('handshake.done');
    const armed = checks();
    for (let request = 0; request < 100; request++) {
      busy();
      quiet();
      clock.increment(1);
    }
    expect(checks()).toBe(armed);
  });

  it('no check runs during the handshake', () => {
    const { state, clock, checks } = spawn();
    clock.increment(IDLE_MS * 10);
    expect(state()).toBe('handshake');
    expect(checks()).toBe(0);
  });

  it('an infinite timeout never expires: the check fires at the longest timer and re-arms', () => {
    const { send, state, clock, checks } = spawn(Infinity);
    send('handshake.done');
    const armed = checks();
    clock.increment(2 ** 31 * 3);
    expect(state()).toBe('active');
    expect(checks()).toBeGreaterThan(armed);
  });

  const reasons: [EventName[], HttpSessionEndReason][] = [
    [['handshake.done', 'delete'], 'deleted'],
    [['handshake.done', 'evict'], 'evicted'],
    [['handshake.done', 'connection.closed'], 'connection-closed'],
    [['server.close'], 'server-closed'],
    [['handshake.failed'], 'handshake-failed'],
  ];
  it.each(reasons)('%j ends with reason %s', async (events, reason) => {
    const { send, actor, calls, clock } = spawn();
    send(...events);
    // The first reason stays: nothing after closing changes it, and the check no longer runs.
    send('delete', 'server.close');
    clock.increment(IDLE_MS * 10);
    send('released');
    expect(await toPromise(actor)).toBe(reason);
    expect(calls).toEqual([`release:${reason}`, `finish:${reason}`]);
  });
});
