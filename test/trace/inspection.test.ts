/**
 * Lifecycle changes in the trace: a connection publishes its own (with its quit reason, from its
 * lifecycle's effects); the runtime's other actors reach the trace through XState's inspection API,
 * attached to the runtime's system only while someone listens to the runtime's trace.
 */
import { firstValueFrom, toArray } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { createActor, setup, type InspectionEvent } from 'xstate';
import { Runtime } from '../../lib/core/runtime';
import { Server } from '../../lib/server/server';
import { observeLifecycleChanges } from '../../lib/trace/xstate-inspection';
import type { TraceEvent } from '../../lib/trace/types';
import { fakeClock, GOLDEN_EPOCH, openPair, traceServer } from '../fixtures/traces/session';

const doorMachine = setup({
  types: { events: {} as { type: 'open' } | { type: 'close' } | { type: 'lock' } },
}).createMachine({
  id: 'door',
  initial: 'closed',
  states: {
    closed: { on: { open: 'open', lock: 'locked' } },
    open: { on: { close: 'closed' } },
    locked: { type: 'final' },
  },
  output: () => ({ message: 'locked for the night' }),
});

const lifecycle = (events: readonly TraceEvent[]) =>
  events.filter((e) => e.kind === 'lifecycle').map((e) => `${e.from}->${e.to}`);

describe('lifecycle changes in the trace', () => {
  it("attaches inspection to the runtime only while the runtime's trace has subscribers", async () => {
    const runtime = new Runtime();
    const inspect = vi.spyOn(runtime.root.system, 'inspect');
    const server = new Server(traceServer());
    const { client } = await openPair(server, runtime, runtime, { validate: false });
    expect(inspect).not.toHaveBeenCalled();

    const first = runtime.trace$.subscribe();
    const second = runtime.trace$.subscribe();
    expect(inspect).toHaveBeenCalledTimes(1);
    const detach = vi.spyOn(inspect.mock.results[0]!.value as { unsubscribe(): void }, 'unsubscribe');
    first.unsubscribe();
    expect(detach).not.toHaveBeenCalled();
    second.unsubscribe();
    expect(detach).toHaveBeenCalledTimes(1);

    runtime.trace$.subscribe().unsubscribe(); // attaches again, and detaches
    expect(inspect).toHaveBeenCalledTimes(2);
    await client.close();
  });

  it("traces a connection's lifecycle without XState inspection", async () => {
    const runtime = new Runtime();
    const inspect = vi.spyOn(runtime.root.system, 'inspect');
    const { client } = await openPair(new Server(traceServer()), runtime, runtime, { validate: false });
    const events = firstValueFrom(client.trace$.pipe(toArray()));
    await client.close();
    expect(lifecycle(await events)).toEqual(['ready->closing', 'closing->closed']);
    expect(inspect).not.toHaveBeenCalled();
  });

  it('reports the state left when it starts listening to a connection already running', async () => {
    const runtime = new Runtime();
    const { client, serverConnection } = await openPair(new Server(traceServer()), runtime, runtime, {
      validate: false,
    });
    const clientEvents = firstValueFrom(client.trace$.pipe(toArray()));
    const all: TraceEvent[] = [];
    runtime.trace$.subscribe((event) => all.push(event));
    await client.close();
    await serverConnection.closed;
    expect(lifecycle(await clientEvents)).toEqual(['ready->closing', 'closing->closed']);
    expect(all.filter((e) => e.kind === 'lifecycle').map((e) => [e.role, e.from, e.to, e.quitKind, e.reason])).toEqual([
      ['client', 'ready', 'closing', 'local-close', 'Closed by the client'],
      ['client', 'closing', 'closed', 'local-close', 'Closed by the client'],
      ['server', 'ready', 'closed', 'transport-closed', 'The transport closed'],
    ]);
  });

  it("ends a connection's trace with its closed event", async () => {
    const runtime = new Runtime();
    const { client } = await openPair(new Server(traceServer()), runtime, runtime, { validate: false });
    const events = firstValueFrom(client.trace$.pipe(toArray()));
    await client.close();
    expect((await events).at(-1)).toMatchObject({ kind: 'lifecycle', from: 'closing', to: 'closed' });
  });

  it("completes a closed connection's trace at once", async () => {
    const runtime = new Runtime();
    const { client } = await openPair(new Server(traceServer()), runtime, runtime, { validate: false });
    const events = firstValueFrom(client.trace$.pipe(toArray()));
    await client.close();
    await events;
    expect(await firstValueFrom(client.trace$.pipe(toArray()))).toEqual([]);
  });

  it('completes at once the trace of a connection closed before anyone subscribed', async () => {
    const runtime = new Runtime();
    const { client: unwatched } = await openPair(new Server(traceServer()), runtime, runtime, { validate: false });
    void unwatched.trace$; // created, never subscribed
    await unwatched.close();
    expect(await firstValueFrom(unwatched.trace$.pipe(toArray()))).toEqual([]);
  });

  it("reports the runtime's other actors: their id, machine, states and final reason", () => {
    const clock = fakeClock();
    const runtime = new Runtime({ clock });
    const events: TraceEvent[] = [];
    const subscription = runtime.trace$.subscribe((event) => events.push(event));
    const door = createActor(doorMachine, { parent: runtime.root, id: 'front-door' }).start();
    door.send({ type: 'open' });
    clock.increment(5);
    door.send({ type: 'close' });
    door.send({ type: 'lock' });
    subscription.unsubscribe();
    expect(events).toEqual([
      { time: GOLDEN_EPOCH, connection: 'front-door', actor: 'door', kind: 'lifecycle', from: 'closed', to: 'open' },
      {
        time: GOLDEN_EPOCH + 5,
        connection: 'front-door',
        actor: 'door',
        kind: 'lifecycle',
        from: 'open',
        to: 'closed',
      },
      {
        time: GOLDEN_EPOCH + 5,
        connection: 'front-door',
        actor: 'door',
        kind: 'lifecycle',
        from: 'closed',
        to: 'locked',
        reason: 'locked for the night',
      },
    ]);
  });

  it('stamps the upstream of a connection on every event, lifecycle included', async () => {
    const runtime = new Runtime();
    const events: TraceEvent[] = [];
    runtime.trace$.subscribe((event) => events.push(event));
    const { client, serverConnection } = await openPair(new Server(traceServer()), runtime, runtime, {
      client: { upstream: 'weather' },
    });
    await client.ping();
    await client.close();
    await serverConnection.closed;
    const ofClient = events.filter((e) => e.connection === client.id);
    expect(ofClient.length).toBeGreaterThan(5);
    expect(ofClient.every((e) => e.upstream === 'weather')).toBe(true);
    expect(events.filter((e) => e.connection === serverConnection.id).some((e) => 'upstream' in e)).toBe(false);
  });

  it("keeps the runtime's own inspect option working beside the trace", async () => {
    const seen: InspectionEvent['type'][] = [];
    const runtime = new Runtime({ inspect: (event) => void seen.push(event.type) });
    const traced: TraceEvent[] = [];
    runtime.trace$.subscribe((event) => traced.push(event));
    const { client } = await openPair(new Server(traceServer()), runtime);
    await client.close();
    expect(seen).toContain('@xstate.snapshot');
    expect(lifecycle(traced)).toContain('closing->closed');
  });

  it('observeLifecycleChanges: one change per state entered, none for events that change nothing', () => {
    const runtime = new Runtime();
    const changes: string[] = [];
    const subscription = observeLifecycleChanges(runtime.root.system, (change) =>
      changes.push(`${change.actor.id}:${change.from}->${change.to}:${change.snapshot.status}`),
    );
    const door = createActor(doorMachine, { parent: runtime.root, id: 'd' }).start();
    door.send({ type: 'close' }); // not handled in `closed`
    door.send({ type: 'open' });
    door.send({ type: 'close' });
    door.send({ type: 'lock' });
    subscription.unsubscribe();
    const later = createActor(doorMachine, { parent: runtime.root, id: 'e' }).start();
    later.send({ type: 'open' });
    expect(changes).toEqual(['d:closed->open:active', 'd:open->closed:active', 'd:closed->locked:done']);
  });
});
