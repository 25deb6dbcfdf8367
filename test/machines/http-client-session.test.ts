/**
 * The Streamable HTTP client session machine on its own: the whole transition table, the guards that decide
 * a lost session (renew, end, give up after renewals in a row that let nothing through), the fallback
 * statuses, what `close` asks of the host from each state, the close give-up on a simulated clock, and the
 * output.
 */
import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock, toPromise } from 'xstate';
import { Runtime } from '../../lib/core/runtime';
import {
  httpClientSessionMachine,
  type HttpClientSessionEvent,
  type HttpClientSessionInput,
  type HttpClientSessionState,
} from '../../machines/http-client-session';
import { itFollowsTheTable } from '../helpers/transition-table';

type EventName = HttpClientSessionEvent['type'];

const INITIALIZE = { jsonrpc: '2.0', id: 0, method: 'initialize', params: {} };
const RENEWAL_FAILURE = new Error('HTTP 503');

/** One event of each type, with the payload the paths below expect. */
const EVENTS: Record<EventName, HttpClientSessionEvent> = {
  'initialize.sent': { type: 'initialize.sent', request: INITIALIZE },
  'session.issued': { type: 'session.issued', sessionId: 's-1' },
  'initialize.refused': { type: 'initialize.refused', status: 405 },
  initialized: { type: 'initialized' },
  'session.lost': { type: 'session.lost', sessionId: 's-1' },
  'renewal.done': { type: 'renewal.done' },
  'renewal.failed': { type: 'renewal.failed', error: RENEWAL_FAILURE },
  'legacy.ready': { type: 'legacy.ready' },
  'legacy.failed': { type: 'legacy.failed' },
  close: { type: 'close' },
  released: { type: 'released' },
};
const NAMES = Object.keys(EVENTS) as EventName[];

/** The whole transition table: state -> event -> next state (absent: the event is ignored there). */
const TABLE: Record<Exclude<HttpClientSessionState, 'closed'>, Partial<Record<EventName, HttpClientSessionState>>> = {
  opening: {
    'initialize.sent': 'opening',
    'session.issued': 'opening',
    'initialize.refused': 'fallingBack',
    initialized: 'active',
    'session.lost': 'ended',
    close: 'closing',
  },
  fallingBack: { 'legacy.ready': 'legacy', 'legacy.failed': 'opening', close: 'closing' },
  legacy: { close: 'closing' },
  active: { 'session.lost': 'renewing', close: 'closing' },
  renewing: { 'session.issued': 'renewing', 'renewal.done': 'active', 'renewal.failed': 'ended', close: 'closing' },
  ended: { close: 'closing' },
  closing: { released: 'closed' },
};

/** Events that lead from the start to each state (the opening one has a session named). */
const PATHS: Record<HttpClientSessionState, EventName[]> = {
  opening: ['session.issued'],
  fallingBack: ['initialize.refused'],
  legacy: ['initialize.refused', 'legacy.ready'],
  active: ['initialize.sent', 'session.issued', 'initialized'],
  renewing: ['initialize.sent', 'session.issued', 'initialized', 'session.lost'],
  ended: ['session.issued', 'session.lost'],
  closing: ['close'],
  closed: ['close', 'released'],
};

const CLOSE_TIMEOUT_MS = 5000;

/** An actor on a simulated clock whose host records what it was asked; `through()` counts an exchange. */
function spawn(options: Partial<Omit<HttpClientSessionInput, 'host'>> = {}) {
  const clock = new SimulatedClock();
  const calls: unknown[][] = [];
  let exchanges = 0;
  const actor = createActor(httpClientSessionMachine, {
    input: {
      host: {
        exchangesThrough: () => exchanges,
        listen: () => calls.push(['listen']),
        renew: (initialize) => calls.push(['renew', initialize]),
        renewed: (previous, current) => calls.push(['renewed', previous, current]),
        end: (ending) => calls.push(['end', ending]),
        release: (deleteSession) => calls.push(['release', deleteSession]),
        finish: () => calls.push(['finish']),
      },
      renewSession: true,
      fallback: true,
      maxRenewalsInARow: 3,
      closeTimeoutMs: CLOSE_TIMEOUT_MS,
      ...options,
    },
    parent: new Runtime({ clock }).root,
  }).start();
  const state = () => actor.getSnapshot().value as HttpClientSessionState;
  const send = (...events: (EventName | HttpClientSessionEvent)[]) => {
    for (const event of events) actor.send(typeof event === 'string' ? EVENTS[event] : event);
  };
  return { actor, clock, calls, state, send, through: () => void exchanges++ };
}

describe('the HTTP client session machine: transition table', () => {
  it('closed is final: the actor is done', () => {
    const { send, actor } = spawn();
    send(...PATHS.closed);
    expect(actor.getSnapshot().status).toBe('done');
  });

  itFollowsTheTable({ table: TABLE, events: NAMES, paths: PATHS, spawn });
});

describe('the HTTP client session machine: a lost session', () => {
  it('renewing replays the initialize that was sent', () => {
    const { send, calls } = spawn();
    send(...PATHS.renewing);
    expect(calls).toContainEqual(['renew', INITIALIZE]);
  });

  it('a renewal forgets the lost session until the new one is issued, then reports both', () => {
    const { send, actor, calls } = spawn();
    send(...PATHS.renewing);
    expect(actor.getSnapshot().context.sessionId).toBeUndefined();
    send({ type: 'session.issued', sessionId: 's-2' }, 'renewal.done');
    expect(calls).toContainEqual(['renewed', 's-1', 's-2']);
  });

  it('back in active after a renewal, the standalone stream is opened again', () => {
    const { send, calls } = spawn();
    send(...PATHS.renewing, 'renewal.done');
    expect(calls.filter(([call]) => call === 'listen')).toHaveLength(2);
  });

  it('a 404 for a session already replaced is ignored', () => {
    const { send, state, calls } = spawn();
    send(...PATHS.active, { type: 'session.lost', sessionId: 's-0' });
    expect(state()).toBe('active');
    expect(calls.filter(([call]) => call === 'renew')).toEqual([]);
  });

  it('with renewSession false, a lost session ends the transport', () => {
    const { send, state, calls } = spawn({ renewSession: false });
    send(...PATHS.active, 'session.lost');
    expect(state()).toBe('ended');
    expect(calls).toContainEqual(['end', { reason: 'session-ended' }]);
  });

  it('without an initialize to replay, a lost session ends the transport', () => {
    const { send, state } = spawn();
    send('session.issued', 'initialized', 'session.lost');
    expect(state()).toBe('ended');
  });

  it('a failed renewal ends the transport with its error', () => {
    const { send, calls } = spawn();
    send(...PATHS.renewing, 'renewal.failed');
    expect(calls).toContainEqual(['end', { reason: 'renewal-failed', error: RENEWAL_FAILURE }]);
  });

  /** Loses the session, renews it as `s-<n>`, `times` times. */
  function renewRepeatedly(machine: ReturnType<typeof spawn>, times: number, between?: () => void) {
    for (let renewal = 1; renewal <= times; renewal++) {
      machine.send({ type: 'session.lost', sessionId: `s-${renewal}` });
      machine.send({ type: 'session.issued', sessionId: `s-${renewal + 1}` }, 'renewal.done');
      between?.();
    }
  }

  it('after three renewals in a row with nothing getting through, the next lost session gives up', () => {
    const machine = spawn();
    machine.send(...PATHS.active);
    renewRepeatedly(machine, 3);
    machine.send({ type: 'session.lost', sessionId: 's-4' });
    expect(machine.state()).toBe('ended');
    expect(machine.calls).toContainEqual(['end', { reason: 'renewals-exhausted', renewals: 3 }]);
  });

  it('an exchange getting through between renewals starts the count again', () => {
    const machine = spawn();
    machine.send(...PATHS.active);
    renewRepeatedly(machine, 3, machine.through);
    machine.send({ type: 'session.lost', sessionId: 's-4' });
    expect(machine.state()).toBe('renewing');
  });
});

describe('the HTTP client session machine: fallback, close and output', () => {
  it.each([
    [400, true, 'fallingBack'],
    [404, true, 'fallingBack'],
    [405, true, 'fallingBack'],
    [401, true, 'opening'],
    [500, true, 'opening'],
    [405, false, 'opening'],
  ] as const)('an initialize refused with %i (fallback %s) -> %s', (status, fallback, target) => {
    const { send, state } = spawn({ fallback });
    send({ type: 'initialize.refused', status });
    expect(state()).toBe(target);
  });

  it.each([
    ['opening', true],
    ['active', true],
    ['renewing', true],
    ['fallingBack', false],
    ['legacy', false],
    ['ended', false],
  ] as const)('close from %s asks for a DELETE: %s', (from, deleteSession) => {
    const { send, calls } = spawn();
    send(...PATHS[from], 'close');
    expect(calls.at(-1)).toEqual(['release', deleteSession]);
  });

  it('closing gives up waiting for the host after the close timeout, not before', () => {
    const { send, state, clock, calls } = spawn();
    send('close');
    clock.increment(CLOSE_TIMEOUT_MS - 1);
    expect(state()).toBe('closing');
    clock.increment(1);
    expect(state()).toBe('closed');
    expect(calls.at(-1)).toEqual(['finish']);
  });

  it('a transport closed while live ends with reason closed', async () => {
    const { send, actor } = spawn();
    send(...PATHS.active, ...PATHS.closed);
    expect(await toPromise(actor)).toEqual({ reason: 'closed' });
  });

  it('a transport that ended before close() keeps why it ended as output', async () => {
    const { send, actor } = spawn({ renewSession: false });
    send(...PATHS.active, 'session.lost', ...PATHS.closed);
    expect(await toPromise(actor)).toEqual({ reason: 'session-ended' });
  });
});
