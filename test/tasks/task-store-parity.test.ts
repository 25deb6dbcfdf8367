/**
 * One suite, every TaskStore adapter: what the port promises (lib/tasks/task-store.ts) holds for each. A new
 * adapter joins by adding a row to ADAPTERS.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canMoveTask, type TaskStatus } from '../../machines/task';
import { LmdbTaskStore } from '../../lib/tasks/lmdb-task-store';
import { MemoryTaskStore } from '../../lib/tasks/memory-task-store';
import { newTaskId } from '../../lib/tasks/task-ids';
import {
  RESTART_TASK_ERROR,
  TaskExistsError,
  TaskLimitError,
  TaskNotFoundError,
  TaskTransitionError,
  type TaskStore,
  type TaskStoreOptions,
} from '../../lib/tasks/task-store';
import { ANONYMOUS_TASK_OWNER, type TaskOwner, type TaskRecord } from '../../lib/tasks/types';

interface Adapter {
  readonly name: string;
  open(options: TaskStoreOptions): TaskStore;
}

const folders: string[] = [];
const ADAPTERS: Adapter[] = [
  { name: 'memory', open: (options) => new MemoryTaskStore(options) },
  {
    name: 'lmdb',
    open: (options) => {
      const path = mkdtempSync(join(tmpdir(), 'task-store-'));
      folders.push(path);
      return new LmdbTaskStore({ ...options, path });
    },
  },
];

const STATUSES: TaskStatus[] = ['working', 'input_required', 'completed', 'failed', 'cancelled'];
const ALICE: TaskOwner = { principalId: 'alice', sessionId: 's1' };
const BOB: TaskOwner = { principalId: 'bob', sessionId: 's1' };

/** A simulated clock the tests move by hand. */
function manualClock(start = 1_000_000) {
  let time = start;
  return { now: () => time, advance: (ms: number) => (time += ms) };
}

function task(overrides: Partial<TaskRecord> = {}): TaskRecord {
  return {
    taskId: newTaskId(),
    status: 'working',
    createdAt: 1_000_000,
    lastUpdatedAt: 1_000_000,
    ttlMs: 60_000,
    pollIntervalMs: 500,
    owner: ALICE,
    method: 'tools/call',
    params: { name: 'slow_compute', arguments: { n: 3, nested: { list: [1, 'two', null, true] } } },
    bootEpoch: 'boot-1',
    ...overrides,
  };
}

describe.each(ADAPTERS)('TaskStore parity: $name', (adapter) => {
  let clock: ReturnType<typeof manualClock>;
  let store: TaskStore;

  beforeEach(() => {
    clock = manualClock();
    store = adapter.open({ clock, maxTasksPerOwner: 5 });
  });
  afterEach(async () => {
    await store.close();
    for (const path of folders.splice(0)) rmSync(path, { recursive: true, force: true });
  });

  it('round-trips a record exactly, null ttl and JSON results included', async () => {
    const record = task({ ttlMs: null, statusMessage: 'starting' });
    await store.create(record);
    expect(await store.get(record.taskId, ALICE)).toStrictEqual(record);
    const result = {
      content: [{ type: 'text', text: 'done' }],
      structuredContent: { n: 1.5, none: null, deep: [[{}]] },
    };
    const completed = await store.update(record.taskId, { status: 'completed', result }, 1_000_100);
    expect(completed).toStrictEqual({ ...record, status: 'completed', result, lastUpdatedAt: 1_000_100 });
    expect(await store.get(record.taskId, ALICE)).toStrictEqual(completed);
  });

  it("answers another owner's task exactly like an unknown id", async () => {
    const record = task();
    await store.create(record);
    expect(await store.get(record.taskId, BOB)).toBeUndefined();
    expect(await store.get(record.taskId, {})).toBeUndefined();
    expect(await store.get(newTaskId(), ALICE)).toBeUndefined();
    expect(await store.get('x'.repeat(100_000), ALICE)).toBeUndefined();
  });

  it('matches the principal when the task has one, else the session', async () => {
    const byPrincipal = task({ owner: { principalId: 'alice', sessionId: 's1' } });
    const bySession = task({ owner: { sessionId: 's9' } });
    await store.create(byPrincipal);
    await store.create(bySession);
    expect(await store.get(byPrincipal.taskId, { principalId: 'alice', sessionId: 'other' })).toBeDefined();
    expect(await store.get(byPrincipal.taskId, { sessionId: 's1' })).toBeUndefined();
    expect(await store.get(bySession.taskId, { sessionId: 's9' })).toBeDefined();
    expect(await store.get(bySession.taskId, { principalId: 'mallory', sessionId: 's9' })).toBeUndefined();
  });

  it('lets any anonymous caller read an anonymous task by its id, and nobody authenticated', async () => {
    const anonymous = task({ owner: ANONYMOUS_TASK_OWNER });
    await store.create(anonymous);
    expect(await store.get(anonymous.taskId, { anonymous: true })).toStrictEqual(anonymous);
    expect(await store.get(anonymous.taskId, ALICE)).toBeUndefined();
    expect(await store.get(anonymous.taskId, { sessionId: 's1' })).toBeUndefined();
    expect(await store.get(anonymous.taskId, {})).toBeUndefined();
    const alices = task();
    await store.create(alices);
    expect(await store.get(alices.taskId, ANONYMOUS_TASK_OWNER)).toBeUndefined();
    expect((await store.list(ANONYMOUS_TASK_OWNER)).tasks.map((listed) => listed.taskId)).toEqual([anonymous.taskId]);
  });

  it('refuses a duplicate id, a task owned by nobody and an update that would rewrite the owner', async () => {
    const record = task();
    await store.create(record);
    await expect(store.create(task({ taskId: record.taskId, owner: BOB }))).rejects.toThrow(TaskExistsError);
    expect(await store.get(record.taskId, ALICE)).toStrictEqual(record);
    await expect(store.create(task({ owner: {} }))).rejects.toThrow(/needs an owner/);
    const hijack = { statusMessage: 'x', owner: BOB } as never;
    await expect(store.update(record.taskId, hijack)).rejects.toThrow(/cannot change owner/);
    expect(await store.get(record.taskId, BOB)).toBeUndefined();
    await expect(store.update(newTaskId(), { statusMessage: 'x' })).rejects.toThrow(TaskNotFoundError);
  });

  describe.each(STATUSES)('from %s', (from) => {
    it.each(STATUSES)('to %s: allowed exactly when canMoveTask says so', async (to) => {
      const record = task({ status: from });
      await store.create(record);
      const move = store.update(record.taskId, { status: to });
      if (canMoveTask(from, to)) {
        expect((await move).status).toBe(to);
      } else {
        await expect(move).rejects.toThrow(TaskTransitionError);
        await expect(move).rejects.toMatchObject({ from, to });
      }
      expect((await store.get(record.taskId, ALICE))?.status).toBe(canMoveTask(from, to) ? to : from);
    });
  });

  it('never changes a final task, not even its message', async () => {
    const record = task();
    await store.create(record);
    await store.update(record.taskId, { status: 'cancelled' });
    await expect(store.update(record.taskId, { statusMessage: 'late' })).rejects.toThrow(TaskTransitionError);
    await expect(store.update(record.taskId, { status: 'completed', result: {} })).rejects.toThrow(TaskTransitionError);
    const kept = await store.get(record.taskId, ALICE);
    expect(kept).toMatchObject({ status: 'cancelled' });
    expect(kept?.statusMessage).toBeUndefined();
  });

  it('stamps lastUpdatedAt and drops inputRequests on leaving input_required', async () => {
    const record = task();
    await store.create(record);
    const asking = await store.update(record.taskId, { status: 'input_required', inputRequests: { q: { a: 1 } } }, 7);
    expect(asking).toMatchObject({ inputRequests: { q: { a: 1 } }, lastUpdatedAt: 7 });
    const still = await store.update(record.taskId, { statusMessage: 'waiting' }, 8);
    expect(still.inputRequests).toEqual({ q: { a: 1 } });
    const resumed = await store.update(record.taskId, { status: 'working' }, 9);
    expect(resumed.inputRequests).toBeUndefined();
    expect((await store.get(record.taskId, ALICE))?.inputRequests).toBeUndefined();
  });

  it("pages an owner's tasks with an opaque cursor and never lists another owner's", async () => {
    const big = adapter.open({ clock, maxTasksPerOwner: 100 });
    try {
      const mine = Array.from({ length: 7 }, () => task());
      for (const record of mine) await big.create(record);
      await big.create(task({ owner: BOB }));
      await big.create(task({ owner: { sessionId: 's1' } }));
      const seen: string[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < 10; page++) {
        const result = await big.list(ALICE, { limit: 3, ...(cursor ? { cursor } : {}) });
        expect(result.tasks.length).toBeLessThanOrEqual(3);
        seen.push(...result.tasks.map((record) => record.taskId));
        cursor = result.nextCursor;
        if (cursor === undefined) break;
      }
      expect(seen).toEqual(mine.map((record) => record.taskId).sort());
      expect((await big.list(BOB)).tasks).toHaveLength(1);
      expect((await big.list({})).tasks).toHaveLength(0);
      await expect(big.list(ALICE, { cursor: 'not a cursor!' })).rejects.toThrow(/cursor/);
      await expect(big.list(ALICE, { limit: 0 })).rejects.toThrow(/limit/);
    } finally {
      await big.close();
    }
  });

  it('hides a task once its time to live ends, not before, and purges it', async () => {
    const short = task({ ttlMs: 1_000 });
    const forever = task({ ttlMs: null });
    await store.create(short);
    await store.create(forever);
    clock.advance(999);
    expect(await store.get(short.taskId, ALICE)).toBeDefined();
    expect(await store.purgeExpired()).toBe(0);
    clock.advance(1);
    expect(await store.get(short.taskId, ALICE)).toBeUndefined();
    await expect(store.update(short.taskId, { status: 'completed' })).rejects.toThrow(TaskNotFoundError);
    expect(await store.countOf(ALICE)).toBe(2);
    expect(await store.purgeExpired()).toBe(1);
    expect(await store.countOf(ALICE)).toBe(1);
    expect(await store.get(forever.taskId, ALICE)).toBeDefined();
  });

  it("fails the previous boot's live tasks and leaves final ones and this boot's alone", async () => {
    const running = task({ bootEpoch: 'boot-1' });
    const asking = task({ bootEpoch: 'boot-1', status: 'input_required', inputRequests: { q: {} } });
    const done = task({ bootEpoch: 'boot-1', status: 'completed', result: { content: [] } });
    const current = task({ bootEpoch: 'boot-2' });
    for (const record of [running, asking, done, current]) await store.create(record);
    expect(await store.recover('boot-2', 5)).toBe(2);
    for (const record of [running, asking]) {
      const failed = await store.get(record.taskId, ALICE);
      expect(failed).toMatchObject({ status: 'failed', error: RESTART_TASK_ERROR, lastUpdatedAt: 5 });
      expect(failed?.inputRequests).toBeUndefined();
    }
    expect(await store.get(done.taskId, ALICE)).toStrictEqual(done);
    expect(await store.get(current.taskId, ALICE)).toStrictEqual(current);
    expect(await store.recover('boot-2', 6)).toBe(0);
  });

  it('bounds the tasks one owner holds, making room from expired ones first', async () => {
    for (let index = 0; index < 4; index++) await store.create(task());
    const expiring = task({ ttlMs: 10 });
    await store.create(expiring);
    await expect(store.create(task())).rejects.toThrow(TaskLimitError);
    expect(await store.countOf(ALICE)).toBe(5);
    await store.create(task({ owner: BOB }));
    clock.advance(10);
    await store.create(task());
    expect(await store.countOf(ALICE)).toBe(5);
    expect(await store.countOf(BOB)).toBe(1);
  });

  it('lets exactly one terminal write win when 100 updates race on one task', async () => {
    const record = task();
    await store.create(record);
    const finals: TaskStatus[] = ['completed', 'failed', 'cancelled'];
    const writes = Array.from({ length: 100 }, (_, index) =>
      store.update(record.taskId, index % 4 === 0 ? { statusMessage: `m${index}` } : { status: finals[index % 3]! }),
    );
    const outcomes = await Promise.allSettled(writes);
    const terminal = outcomes.filter(
      (outcome, index) => outcome.status === 'fulfilled' && index % 4 !== 0,
    ) as PromiseFulfilledResult<TaskRecord>[];
    expect(terminal).toHaveLength(1);
    const rejected = outcomes.filter((outcome) => outcome.status === 'rejected') as PromiseRejectedResult[];
    for (const outcome of rejected) expect(outcome.reason).toBeInstanceOf(TaskTransitionError);
    expect((await store.get(record.taskId, ALICE))?.status).toBe(terminal[0]!.value.status);
  });
});
