/**
 * The task runner over the memory store: a task is in the store before `start` resolves and its work starts
 * only after; the work's end (a result, a coded error, any throw) is written as the lifecycle table says;
 * cancelling aborts the work and is idempotent on a final task; a report becomes the status message; a task
 * of an earlier boot reads failed; the time to live runs on the runtime's clock.
 */
import { filter } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { Runtime } from '../../lib/core/runtime';
import { McpError } from '../../lib/jsonrpc/errors';
import { MemoryTaskStore } from '../../lib/tasks/memory-task-store';
import { TaskRunner, type RunningTask } from '../../lib/tasks/task-runner';
import type { TaskOwner } from '../../lib/tasks/types';
import { deferred } from '../helpers/fixtures';
import { ManualClock } from '../helpers/manual-clock';
import { eventually, within } from '../helpers/wait';

const ALICE: TaskOwner = { principalId: 'alice' };
const REQUEST = { method: 'tools/call', params: { name: 'build', arguments: {} } };
const runners: TaskRunner[] = [];

afterEach(async () => {
  for (const runner of runners.splice(0)) await runner.close();
});

function runnerWith(
  options: { clock?: ManualClock; bootEpoch?: string; store?: MemoryTaskStore; purgeEveryMs?: number } = {},
) {
  const runtime = new Runtime(options.clock ? { clock: options.clock } : {});
  const store = options.store ?? new MemoryTaskStore({ clock: runtime.clock });
  const runner = new TaskRunner({
    store,
    runtime,
    bootEpoch: options.bootEpoch,
    pollIntervalMs: 250,
    purgeEveryMs: options.purgeEveryMs ?? 0,
  });
  runners.push(runner);
  return { runner, store, runtime };
}

const statusOf = async (runner: TaskRunner, taskId: string) => (await runner.get(ALICE, taskId))?.status;

describe('TaskRunner', () => {
  it('keeps the task before start resolves, and starts the work only after', async () => {
    const { runner, store } = runnerWith();
    let started = false;
    const record = await runner.start(ALICE, REQUEST, async () => {
      started = true;
      return { content: [] };
    });
    expect(started).toBe(false);
    expect(await store.get(record.taskId, ALICE)).toMatchObject({
      status: 'working',
      method: 'tools/call',
      pollIntervalMs: 250,
      bootEpoch: runner.bootEpoch,
    });
    await eventually(async () => (await statusOf(runner, record.taskId)) === 'completed', 'the task to complete');
    expect(started).toBe(true);
  });

  it('writes the result of work that succeeds, and forgets the live task', async () => {
    const { runner } = runnerWith();
    const record = await runner.start(ALICE, REQUEST, async () => ({ content: [{ type: 'text', text: 'built' }] }));
    await eventually(async () => (await statusOf(runner, record.taskId)) === 'completed', 'completion');
    expect((await runner.get(ALICE, record.taskId))?.result).toEqual({ content: [{ type: 'text', text: 'built' }] });
    await eventually(() => runner.liveCount === 0, 'the live task to be dropped');
  });

  it.each([
    ['an McpError', new McpError(-32602, 'bad input'), { code: -32602, message: 'bad input' }],
    ['any other throw', new TypeError('boom'), { code: -32603, message: 'boom' }],
  ])('fails the task with the error of %s', async (_what, thrown, error) => {
    const { runner } = runnerWith();
    const record = await runner.start(ALICE, REQUEST, async () => {
      throw thrown;
    });
    await eventually(async () => (await statusOf(runner, record.taskId)) === 'failed', 'failure');
    expect((await runner.get(ALICE, record.taskId))?.error).toMatchObject(error);
  });

  it('cancels a live task, aborting its work, and acknowledges a second cancel without change', async () => {
    const { runner } = runnerWith();
    const started = deferred<RunningTask>();
    const record = await runner.start(ALICE, REQUEST, (task) => {
      started.resolve(task);
      return new Promise((_resolve, reject) => task.signal.addEventListener('abort', () => reject(task.signal.reason)));
    });
    const running = await within(started.promise, 'the work to start');
    expect((await runner.cancel(ALICE, record.taskId))?.status).toBe('cancelled');
    expect(running.signal.aborted).toBe(true);
    const again = await runner.cancel(ALICE, record.taskId);
    expect(again?.status).toBe('cancelled');
    // The work's rejection after the abort writes nothing: the task stays cancelled.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await statusOf(runner, record.taskId)).toBe('cancelled');
  });

  it('leaves a completed task completed when cancelled afterwards', async () => {
    const { runner } = runnerWith();
    const record = await runner.start(ALICE, REQUEST, async () => ({ content: [] }));
    await eventually(async () => (await statusOf(runner, record.taskId)) === 'completed', 'completion');
    expect((await runner.cancel(ALICE, record.taskId))?.status).toBe('completed');
  });

  it('gives another owner nothing: not the task, not a cancel', async () => {
    const { runner } = runnerWith();
    const record = await runner.start(ALICE, REQUEST, () => new Promise(() => undefined));
    expect(await runner.get({ principalId: 'mallory' }, record.taskId)).toBeUndefined();
    expect(await runner.cancel({ principalId: 'mallory' }, record.taskId)).toBeUndefined();
    expect(await statusOf(runner, record.taskId)).toBe('working');
  });

  it('turns a report into the status message, in order with the end', async () => {
    const { runner } = runnerWith();
    const record = await runner.start(ALICE, REQUEST, async (task) => {
      await task.report('half way');
      return { content: [] };
    });
    await eventually(async () => (await statusOf(runner, record.taskId)) === 'completed', 'completion');
    expect((await runner.get(ALICE, record.taskId))?.statusMessage).toBe('half way');
  });

  it('fails at boot the tasks an earlier run left working, and only those', async () => {
    const store = new MemoryTaskStore();
    const { runner: first } = runnerWith({ store, bootEpoch: 'boot-1' });
    const stuck = await first.start(ALICE, REQUEST, () => new Promise(() => undefined));
    const done = await first.start(ALICE, REQUEST, async () => ({ content: [] }));
    await eventually(async () => (await statusOf(first, done.taskId)) === 'completed', 'completion');
    const { runner: second } = runnerWith({ store, bootEpoch: 'boot-2' });
    expect(await second.boot()).toBe(1);
    expect((await second.get(ALICE, stuck.taskId))?.status).toBe('failed');
    expect((await second.get(ALICE, stuck.taskId))?.error?.message).toContain('restarted');
    expect((await second.get(ALICE, done.taskId))?.status).toBe('completed');
  });

  it('keeps a task for its time to live on the runtime clock, then it reads as unknown', async () => {
    const clock = new ManualClock();
    const { runner } = runnerWith({ clock });
    const record = await runner.start(ALICE, REQUEST, () => new Promise(() => undefined), { ttlMs: 60_000 });
    clock.advance(59_999);
    expect(await statusOf(runner, record.taskId)).toBe('working');
    clock.advance(1);
    expect(await runner.get(ALICE, record.taskId)).toBeUndefined();
    await eventually(() => runner.liveCount === 0, 'the expired task to leave the runner');
  });

  it('sweeps expired tasks out of the store on the runtime clock, and stops sweeping once closed', async () => {
    const clock = new ManualClock();
    const { runner, store } = runnerWith({ clock, purgeEveryMs: 5_000 });
    await runner.start(ALICE, REQUEST, async () => ({ content: [] }), { ttlMs: 1_000 });
    await runner.start(ALICE, REQUEST, async () => ({ content: [] }), { ttlMs: 60_000 });
    clock.advance(4_999);
    // Expired, not yet swept: the store still holds it (and counts it against its owner).
    expect(await store.countOf(ALICE)).toBe(2);
    clock.advance(1);
    await eventually(async () => (await store.countOf(ALICE)) === 1, 'the sweep');
    await runner.close();
    // The other task expires too, but nothing sweeps any more (each sweep would have scheduled the next).
    for (let step = 0; step < 24; step++) {
      clock.advance(5_000);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(await store.countOf(ALICE)).toBe(1);
  });

  it("shows each task's moves on the runtime's trace, as an actor of its system", async () => {
    const { runner, runtime } = runnerWith();
    const moves: string[] = [];
    const subscription = runtime.trace$
      .pipe(filter((event) => event.actor === 'task'))
      .subscribe((event) => moves.push(`${event.from} -> ${event.to}`));
    try {
      const record = await runner.start(ALICE, REQUEST, async (task) => {
        await task.report('half way');
        return { content: [] };
      });
      await eventually(async () => (await statusOf(runner, record.taskId)) === 'completed', 'completion');
      await eventually(() => moves.includes('working -> completed'), 'the completion on the trace');
    } finally {
      subscription.unsubscribe();
    }
  });
});
