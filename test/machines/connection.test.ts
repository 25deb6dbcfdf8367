import { describe, expect, it, vi } from 'vitest';
import { createActor, SimulatedClock, toPromise } from 'xstate';
import {
  CLOSE_TIMEOUT_MS,
  CONNECTION_TRANSITIONS,
  connectionLifecycle,
  type ConnectionEvent,
  type ConnectionLifecycleHost,
  type ConnectionState,
  type QuitReason,
} from '../../machines/connection';
import { Runtime } from '../../lib/core/runtime';

const LOCAL: QuitReason = { kind: 'local-close', message: 'bye' };
const ENDED: QuitReason = { kind: 'transport-closed', message: 'The transport closed' };
const NEGOTIATED = {
  protocolVersion: '2025-11-25',
  peerCapabilities: { tools: {} },
  peerInfo: { name: 'p', version: '1' },
};

const EVENTS: Record<ConnectionEvent['type'], ConnectionEvent> = {
  'initialize.start': { type: 'initialize.start' },
  'initialize.done': { type: 'initialize.done', ...NEGOTIATED },
  'initialize.accepted': { type: 'initialize.accepted', ...NEGOTIATED },
  'era.modern': { type: 'era.modern' },
  close: { type: 'close', reason: LOCAL },
  'transport.closed': { type: 'transport.closed', reason: ENDED },
};

/** The whole transition table, written out: state -> event -> next state (absent: the event is ignored there). */
const TABLE: Record<ConnectionState, Partial<Record<ConnectionEvent['type'], ConnectionState>>> = {
  uninitialized: {
    'initialize.start': 'initializing',
    'initialize.accepted': 'ready',
    'era.modern': 'modern',
    close: 'closing',
    'transport.closed': 'closed',
  },
  initializing: { 'initialize.done': 'ready', close: 'closing', 'transport.closed': 'closed' },
  ready: { close: 'closing', 'transport.closed': 'closed' },
  modern: { close: 'closing', 'transport.closed': 'closed' },
  closing: { 'transport.closed': 'closed' },
  closed: {},
};

/** Events that lead from `uninitialized` to each state. */
const PATHS: Record<ConnectionState, ConnectionEvent['type'][]> = {
  uninitialized: [],
  initializing: ['initialize.start'],
  ready: ['initialize.start', 'initialize.done'],
  modern: ['era.modern'],
  closing: ['close'],
  closed: ['transport.closed'],
};

function recordingHost(calls: string[]): ConnectionLifecycleHost {
  return {
    beginClose: (reason) => calls.push(`beginClose:${reason.kind}`),
    finishClose: (reason) => calls.push(`finishClose:${reason.kind}`),
    lifecycleChanged: (from, to) => calls.push(`${from}->${to}`),
  };
}

function spawn(runtime = new Runtime()) {
  const calls: string[] = [];
  const actor = createActor(connectionLifecycle, {
    input: { host: recordingHost(calls) },
    parent: runtime.root,
  }).start();
  return { actor, calls };
}

/** Sends `event`; to a stopped actor without XState's console warning (that it ignores the event is the claim). */
function send(
  actor: { send: (event: ConnectionEvent) => void; getSnapshot: () => { status: string } },
  event: ConnectionEvent,
) {
  if (actor.getSnapshot().status === 'active') return actor.send(event);
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
  try {
    actor.send(event);
  } finally {
    warn.mockRestore();
  }
}

const CASES = (Object.keys(TABLE) as ConnectionState[]).flatMap((state) =>
  (Object.keys(EVENTS) as ConnectionEvent['type'][]).map(
    (event) => [state, event, TABLE[state][event] ?? `${state} (ignored)`] as const,
  ),
);

describe('the connection lifecycle', () => {
  it('is the table written out here', () => {
    expect(CONNECTION_TRANSITIONS).toEqual(TABLE);
  });

  it.each(CASES)('%s + %s -> %s', (state, event, target) => {
    const { actor } = spawn();
    for (const step of PATHS[state]) actor.send(EVENTS[step]);
    expect(actor.getSnapshot().value).toBe(state);
    send(actor, EVENTS[event]);
    expect(actor.getSnapshot().value).toBe(target.replace(' (ignored)', ''));
  });

  it('records what was negotiated on initialize.done (client)', () => {
    const { actor } = spawn();
    actor.send(EVENTS['initialize.start']);
    actor.send(EVENTS['initialize.done']);
    expect(actor.getSnapshot().data.negotiated).toEqual(NEGOTIATED);
  });

  it("takes the server's handshake in one step, recording what was negotiated", () => {
    const { actor, calls } = spawn();
    actor.send(EVENTS['initialize.accepted']);
    expect(calls).toEqual(['uninitialized->ready']);
    expect(actor.getSnapshot().data.negotiated).toEqual(NEGOTIATED);
  });

  it('runs beginClose on entering closing and finishClose on entering closed, with the first reason', async () => {
    const { actor, calls } = spawn();
    actor.send(EVENTS.close);
    actor.send(EVENTS['transport.closed']);
    expect(calls).toEqual([
      'beginClose:local-close',
      'uninitialized->closing',
      'finishClose:local-close',
      'closing->closed',
    ]);
    expect(actor.getSnapshot().status).toBe('done');
    expect(await toPromise(actor)).toEqual(LOCAL); // the output is the quit reason
  });

  it('skips closing when the transport ends first, and outputs the transport reason', async () => {
    const { actor, calls } = spawn();
    actor.send(EVENTS['initialize.start']);
    actor.send({ type: 'transport.closed', reason: { kind: 'transport-error', message: 'pipe broke' } });
    expect(calls).toEqual(['uninitialized->initializing', 'finishClose:transport-error', 'initializing->closed']);
    expect(await toPromise(actor)).toMatchObject({ kind: 'transport-error', message: 'pipe broke' });
  });

  it('is stopped once closed: later events change nothing', () => {
    const { actor, calls } = spawn();
    actor.send(EVENTS['transport.closed']);
    const snapshot = actor.getSnapshot();
    send(actor, EVENTS.close);
    expect(actor.getSnapshot()).toBe(snapshot);
    expect(calls).toEqual(['finishClose:transport-closed', 'uninitialized->closed']);
  });

  it('runs close effects after the new state is in place', () => {
    let seen: string | undefined;
    const host: ConnectionLifecycleHost = {
      beginClose: () => (seen = String(actor.getSnapshot().value)),
      finishClose: () => {},
      lifecycleChanged: () => {},
    };
    const actor = createActor(connectionLifecycle, { input: { host }, parent: new Runtime().root }).start();
    actor.send(EVENTS.close);
    expect(seen).toBe('closing');
  });

  it('gives up on a transport that never closes after CLOSE_TIMEOUT_MS on the runtime clock', () => {
    const clock = new SimulatedClock();
    const { actor, calls } = spawn(new Runtime({ clock }));
    actor.send(EVENTS.close);
    clock.increment(CLOSE_TIMEOUT_MS - 1);
    expect(actor.getSnapshot().value).toBe('closing');
    clock.increment(1);
    expect(actor.getSnapshot().value).toBe('closed');
    expect(calls.at(-2)).toBe('finishClose:local-close'); // the reason stays the first one given
  });

  it('cancels the give-up once the transport closed in time', () => {
    const clock = new SimulatedClock();
    const runtime = new Runtime({ clock });
    const { actor, calls } = spawn(runtime);
    actor.send(EVENTS.close);
    actor.send(EVENTS['transport.closed']);
    expect(Object.keys(runtime.root.system.getSnapshot()._scheduledEvents)).toEqual([]);
    clock.increment(CLOSE_TIMEOUT_MS);
    expect(calls.filter((call) => call.startsWith('finishClose'))).toHaveLength(1);
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
    const { actor } = spawn(runtime);
    actor.send(EVENTS['initialize.start']);
    actor.send(EVENTS['initialize.done']);
    expect(seen).toEqual(['uninitialized', 'initializing', 'ready']);
  });
});
