/**
 * The child-process lifecycle: the machine on its own (its table, the stdin -> SIGTERM -> SIGKILL ladder on a
 * simulated clock, no restart of its own), then a real child whose actor is part of its runtime: seen by
 * the runtime's inspection and trace, and closed on the runtime's clock.
 */
import { filter, firstValueFrom, toArray, takeWhile } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { createActor, SimulatedClock, type InspectionEvent } from 'xstate';
import { Runtime } from '../../lib/core/runtime';
import { childProcessMachine } from '../../machines/child-process';
import { StdioClientTransport } from '../../transports/stdio';
import { collectGarbage } from '../helpers/gc';
import { isAlive } from '../helpers/processes';
import { fixturePath } from '../helpers/paths';

const sleeper = fixturePath('stdio-sleeper.mjs');

describe('childProcessMachine', () => {
  const run = (input: { shutdown?: { stdinGraceMs?: number; terminateGraceMs?: number } } = {}) => {
    const calls: string[] = [];
    const clock = new SimulatedClock();
    const machine = childProcessMachine.provide({
      actions: {
        spawn: () => calls.push('spawn'),
        endStdin: () => calls.push('endStdin'),
        terminate: () => calls.push('terminate'),
        kill: () => calls.push('kill'),
        reap: () => calls.push('reap'),
      },
    });
    const actor = createActor(machine, { input, clock }).start();
    actor.send({ type: 'start' });
    return { actor, calls, clock };
  };

  it('spawns nothing until start; a stop before start ends it with nothing to signal', () => {
    const calls: string[] = [];
    const machine = childProcessMachine.provide({
      actions: { spawn: () => calls.push('spawn'), reap: () => calls.push('reap') },
    });
    const actor = createActor(machine, { input: {}, clock: new SimulatedClock() }).start();
    expect(actor.getSnapshot().value).toBe('idle');
    actor.send({ type: 'stop' });
    expect(actor.getSnapshot().status).toBe('done');
    expect(actor.getSnapshot().output).toEqual({ kind: 'stopped', code: null, signal: null });
    expect(calls).toEqual(['reap']); // reap signals nothing: there is no pid
  });

  it('escalates stdin end -> SIGTERM -> SIGKILL on its timers', () => {
    const { actor, calls, clock } = run({ shutdown: { stdinGraceMs: 100, terminateGraceMs: 200 } });
    actor.send({ type: 'spawned' });
    actor.send({ type: 'stop' });
    expect(calls).toEqual(['spawn', 'endStdin']);
    clock.increment(99);
    expect(calls).toEqual(['spawn', 'endStdin']);
    clock.increment(1);
    expect(calls).toEqual(['spawn', 'endStdin', 'terminate']);
    clock.increment(200);
    expect(calls).toEqual(['spawn', 'endStdin', 'terminate', 'kill']);
    actor.send({ type: 'exited', code: null, signal: 'SIGKILL' });
    expect(actor.getSnapshot().status).toBe('done');
    expect(actor.getSnapshot().output).toEqual({ kind: 'stopped', code: null, signal: 'SIGKILL' });
    expect(calls.at(-1)).toBe('reap');
  });

  it('stops escalating once the child exits', () => {
    const { actor, calls, clock } = run();
    actor.send({ type: 'spawned' });
    actor.send({ type: 'stop' });
    actor.send({ type: 'exited', code: 0, signal: null });
    clock.increment(10_000);
    expect(calls).toEqual(['spawn', 'endStdin', 'reap']);
    expect(actor.getSnapshot().output).toMatchObject({ kind: 'stopped', code: 0 });
  });

  it('ends when the child dies on its own: one run, no restart (supervision is the upstream machine’s)', () => {
    const { actor, calls, clock } = run();
    actor.send({ type: 'spawned' });
    actor.send({ type: 'exited', code: 3, signal: null });
    clock.increment(60_000);
    expect(actor.getSnapshot().status).toBe('done');
    expect(actor.getSnapshot().output).toEqual({ kind: 'crashed', code: 3, signal: null });
    expect(calls).toEqual(['spawn', 'reap']);
  });

  it('ends with spawn-failed when the process cannot start', () => {
    const { actor } = run();
    const error = new Error('spawn x ENOENT');
    actor.send({ type: 'spawn.failed', error });
    expect(actor.getSnapshot().output).toEqual({ kind: 'spawn-failed', code: null, signal: null, error });
  });
});

describe('a stdio child in its runtime', () => {
  const pids: number[] = [];
  afterEach(() => {
    for (const pid of pids.splice(0)) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });

  /** A child that ignores the end of its stdin and SIGTERM: only SIGKILL ends it. */
  async function stubbornChild(runtime: Runtime, shutdown: { stdinGraceMs: number; terminateGraceMs: number }) {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [sleeper, '--ignore-term'],
      shutdown,
      runtime,
    });
    await transport.start();
    pids.push(transport.pid!);
    // It set its SIGTERM handler before it says so.
    await firstValueFrom(transport.stderr$.pipe(filter((line) => line.startsWith('sleeper '))));
    return transport;
  }

  it("is an actor of the runtime's system: the runtime's inspection sees each of its states", async () => {
    const states: unknown[] = [];
    const runtime = new Runtime({
      inspect: (event: InspectionEvent) => {
        if (event.type !== '@xstate.snapshot') return;
        if ((event.actorRef as { id?: string }).id === `child-process:${process.execPath}`) {
          states.push((event.snapshot as unknown as { value: unknown }).value);
        }
      },
    });
    const transport = await stubbornChild(runtime, { stdinGraceMs: 1, terminateGraceMs: 1 });
    await transport.close();
    expect(states).toEqual([
      'idle',
      'starting',
      'running',
      { stopping: 'endingStdin' },
      { stopping: 'terminating' },
      { stopping: 'killing' },
      'exited',
    ]);
  });

  it("shows its state changes on the runtime's trace$", async () => {
    const runtime = new Runtime();
    const id = `child-process:${process.execPath}`;
    const changes = firstValueFrom(
      runtime.trace$.pipe(
        filter((event) => event.connection === id),
        takeWhile((event) => event.to !== 'exited', true),
        toArray(),
      ),
    );
    const transport = await stubbornChild(runtime, { stdinGraceMs: 1, terminateGraceMs: 1 });
    await transport.close();
    expect((await changes).map((event) => [event.from, event.to])).toEqual([
      ['idle', 'starting'],
      ['starting', 'running'],
      ['running', 'stopping.endingStdin'],
      ['stopping.endingStdin', 'stopping.terminating'],
      ['stopping.terminating', 'stopping.killing'],
      ['stopping.killing', 'exited'],
    ]);
  });

  it("closes on the runtime's clock: SIGTERM and SIGKILL wait for it to advance", async () => {
    const clock = new SimulatedClock();
    const runtime = new Runtime({ clock });
    // An hour's grace each: only the simulated clock can get through the ladder within the test.
    const transport = await stubbornChild(runtime, { stdinGraceMs: 3_600_000, terminateGraceMs: 3_600_000 });
    const pid = transport.pid!;
    let closed = false;
    const closing = transport.close().then(() => (closed = true));
    clock.increment(3_600_000); // stdin ended an hour ago: SIGTERM, which it ignores
    // Give a SIGKILL sent too early (on the real clock) the time to land before checking it was not sent.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(isAlive(pid)).toBe(true);
    expect(closed).toBe(false);
    clock.increment(3_600_000); // SIGKILL
    await closing;
    expect(await transport.exited).toEqual({ kind: 'stopped', code: null, signal: 'SIGKILL' });
  });
});

describe('a stdio transport never started', () => {
  it('leaves nothing in its runtime: dropped, it is collected', async () => {
    const runtime = new Runtime();
    let transport: StdioClientTransport | undefined = new StdioClientTransport({ command: process.execPath, runtime });
    const dropped = new WeakRef(transport);
    transport = undefined;
    await collectGarbage();
    expect(dropped.deref()).toBeUndefined();
  });
});
