/**
 * Task store throughput: create, get (a client polling) and complete for 10,000 tasks on the memory and LMDB
 * stores, and LMDB's size on disk per task. Run: `node --expose-gc --import tsx bench/tasks.ts`.
 * Writes go 100 at a time (a server answering many task-augmented calls at once); reads one at a time.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbTaskStore } from '../lib/tasks/lmdb-task-store';
import { MemoryTaskStore } from '../lib/tasks/memory-task-store';
import { newTaskId } from '../lib/tasks/task-ids';
import type { TaskStore } from '../lib/tasks/task-store';
import type { TaskRecord } from '../lib/tasks/types';

const TASKS = 10_000;
const IN_FLIGHT = 100;
const OWNERS = 100;
const RESULT = { content: [{ type: 'text', text: 'The build finished: 412 files, 0 warnings.' }], isError: false };

function record(index: number): TaskRecord {
  const now = Date.now();
  return {
    taskId: newTaskId(),
    status: 'working',
    createdAt: now,
    lastUpdatedAt: now,
    ttlMs: 3_600_000,
    pollIntervalMs: 1_000,
    owner: { principalId: `user-${index % OWNERS}`, sessionId: `session-${index % OWNERS}` },
    method: 'tools/call',
    params: { name: 'build', arguments: { target: `package-${index}`, release: true } },
    bootEpoch: 'bench-boot',
  };
}

/** Runs `step` for every index, `IN_FLIGHT` at a time; returns operations per second. */
async function rate(step: (index: number) => Promise<unknown>, inFlight: number): Promise<number> {
  const started = performance.now();
  for (let first = 0; first < TASKS; first += inFlight) {
    const batch: Promise<unknown>[] = [];
    for (let index = first; index < Math.min(first + inFlight, TASKS); index++) batch.push(step(index));
    await Promise.all(batch);
  }
  return TASKS / ((performance.now() - started) / 1_000);
}

function bytesOnDisk(path: string): number {
  return readdirSync(path).reduce((sum, name) => sum + statSync(join(path, name)).blocks * 512, 0);
}

async function measure(name: string, store: TaskStore, path?: string) {
  const records = Array.from({ length: TASKS }, (_, index) => record(index));
  globalThis.gc?.();
  const create = await rate((index) => store.create(records[index]!), IN_FLIGHT);
  const get = await rate((index) => store.get(records[index]!.taskId, records[index]!.owner), 1);
  const complete = await rate(
    (index) => store.update(records[index]!.taskId, { status: 'completed', result: RESULT }),
    IN_FLIGHT,
  );
  await store.close();
  const perTask = path === undefined ? undefined : bytesOnDisk(path) / TASKS;
  return { name, create, get, complete, perTask };
}

const folder = mkdtempSync(join(tmpdir(), 'bench-tasks-'));
try {
  const rows = [
    await measure('memory', new MemoryTaskStore({ maxTasksPerOwner: TASKS })),
    await measure('lmdb', new LmdbTaskStore({ path: folder, maxTasksPerOwner: TASKS }), folder),
  ];
  const cell = (value: number) => Math.round(value).toLocaleString('en-US').padStart(12);
  console.log(`${TASKS.toLocaleString('en-US')} tasks, writes ${IN_FLIGHT} in flight (operations per second)`);
  console.log(`${'store'.padEnd(8)}${'create'.padStart(12)}${'get'.padStart(12)}${'complete'.padStart(12)}  disk/task`);
  for (const row of rows) {
    const disk = row.perTask === undefined ? '-' : `${Math.round(row.perTask)} B`;
    console.log(`${row.name.padEnd(8)}${cell(row.create)}${cell(row.get)}${cell(row.complete)}  ${disk}`);
  }
} finally {
  rmSync(folder, { recursive: true, force: true });
}
