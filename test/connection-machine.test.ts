import { describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import {
  connectionLifecycle,
  type ConnectionEvent,
  type ConnectionHost,
  type ConnectionState,
  type QuitReason,
} from '../machines/connection';
import { Runtime } from '../lib/core/runtime';

const LOCAL: QuitReason = { kind: 'local-close', message: 'bye' };
const ENDED: QuitReason = { kind: 'transport-closed', message: 'The transport closed' };
const NEGOTIATED = {
  protocolVersion: '2025-11-25',
  peerCapabilities: { tools: {} },
  peerInfo: { name: 'p', version: '1' },
};

const EVENTS: Record<string, ConnectionEvent> = {
  'initialize.start': { type: 'initialize.start' },
  'initialize.done': { type: 'initialize.done', ...NEGOTIATED },
  close: { type: 'close', reason: LOCAL },
  'transport.closed': { type: 'transport.closed', reason: ENDED },
};

/** The whole transition table: state -> event -> next state (absent: the event is ignored there). */
const TABLE: Record<ConnectionState, Partial<Record<keyof typeof EVENTS, ConnectionState>>> = {
  uninitialized: { 'initialize.start': 'initializing', close: 'closing', 'transport.closed': 'closed' },
  initializing: { 'initialize.done': 'ready', close: 'closing', 'transport.closed': 'closed' },
  ready: { close: 'closing', 'transport.closed': 'closed' },
  closing: { 'transport.closed': 'closed' },
  closed: {},
};

/** Events that lead from `uninitialized` to each state. */
const PATHS: Record<ConnectionState, (keyof typeof EVENTS)[]> = {
  uninitialized: [],
  initializing: ['initialize.start'],
  ready: ['initialize.start', 'initialize.done'],
  closing: ['close'],
  closed: ['transport.closed'],
};

function spawn() {
  const calls: string[] = [];
  const host: ConnectionHost = {
    beginClose: (reason) => calls.push(`beginClose:${reason.kind}`),
    finishClose: (reason) => calls.push(`finishClose:${reason.kind}`),
  };
  const actor = createActor(connectionLifecycle, { input: { host }, parent: new Runtime().root }).start();
  return { actor, calls };
}

describe('the connection lifecycle machine', () => {
  for (const [state, transitions] of Object.entries(TABLE) as [ConnectionState, Record<string, ConnectionState>][]) {
    for (const eventName of Object.keys(EVENTS)) {
      const target = transitions[eventName];
      it(`${state} + ${eventName} -> ${target ?? `${state} (ignored)`}`, () => {
        const { actor } = spawn();
        for (const step of PATHS[state]) actor.send(EVENTS[step]!);
        expect(actor.getSnapshot().value).toBe(state);
        actor.send(EVENTS[eventName]!);
        expect(actor.getSnapshot().value).toBe(target ?? state);
      });
    }
  }

  it('records what was negotiated on initialize.done', () => {
    const { actor } = spawn();
    actor.send(EVENTS['initialize.start']!);
    actor.send(EVENTS['initialize.done']!);
    expect(actor.getSnapshot().data.negotiated).toEqual(NEGOTIATED);
  });

  it('runs beginClose on entering closing and finishClose on entering closed, with the first reason', async () => {
    const { actor, calls } = spawn();
    actor.send(EVENTS.close!);
    expect(calls).toEqual(['beginClose:local-close']);
    actor.send(EVENTS['transport.closed']!);
    expect(calls).toEqual(['beginClose:local-close', 'finishClose:local-close']);
    expect(actor.getSnapshot().status).toBe('done');
    expect(await toPromise(actor)).toEqual(LOCAL); // the output is the quit reason
  });

  it('skips closing when the transport ends first, and outputs the transport reason', async () => {
    const { actor, calls } = spawn();
    actor.send(EVENTS['initialize.start']!);
    actor.send({ type: 'transport.closed', reason: { kind: 'transport-error', message: 'pipe broke' } });
    expect(calls).toEqual(['finishClose:transport-error']);
    expect(await toPromise(actor)).toMatchObject({ kind: 'transport-error', message: 'pipe broke' });
  });

  it('is stopped once closed: later events change nothing', () => {
    const { actor, calls } = spawn();
    actor.send(EVENTS['transport.closed']!);
    const snapshot = actor.getSnapshot();
    actor.send(EVENTS.close!);
    expect(actor.getSnapshot()).toBe(snapshot);
    expect(calls).toEqual(['finishClose:transport-closed']);
  });

  it('runs close actions after the new state is in place', () => {
    let seen: string | undefined;
    const host: ConnectionHost = {
      beginClose: () => (seen = String(actor.getSnapshot().value)),
      finishClose: () => {},
    };
    const actor = createActor(connectionLifecycle, { input: { host }, parent: new Runtime().root }).start();
    actor.send(EVENTS.close!);
    expect(seen).toBe('closing');
  });

  it('is visible to XState inspection through its runtime', () => {
    const seen: string[] = [];
    let root: unknown;
    const runtime = new Runtime({
      inspect: (event) => {
        if (event.type === '@xstate.snapshot' && root && event.actorRef !== root) {
          seen.push(String((event.snapshot as { value?: string }).value));
        }
      },
    });
    root = runtime.root;
    const host: ConnectionHost = { beginClose: () => {}, finishClose: () => {} };
    const actor = createActor(connectionLifecycle, { input: { host }, parent: runtime.root }).start();
    actor.send(EVENTS['initialize.start']!);
    actor.send(EVENTS['initialize.done']!);
    expect(seen).toEqual(['uninitialized', 'initializing', 'ready']);
  });
});
