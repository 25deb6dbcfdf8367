/**
 * Task store throughput: create, get (a client polling) and complete for 10,000 tasks on the memory and LMDB
 * stores, and LMDB's size on disk per task: the `taskStore` scenario of `npm run bench` (`--only taskStore`).
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
import { entrantRow, type ComparisonTable, type SeriesListing } from './comparisons';
import type { Figures, Scenario } from './scenarios';

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

/** Creates, polls and completes `TASKS` tasks on `store`; figures per second, and bytes on disk per task. */
async function measureStore(store: TaskStore, path?: string): Promise<Figures> {
  const records = Array.from({ length: TASKS }, (_, index) => record(index));
  globalThis.gc?.();
  const createPerSecond = await rate((index) => store.create(records[index]!), IN_FLIGHT);
  const getPerSecond = await rate((index) => store.get(records[index]!.taskId, records[index]!.owner), 1);
  const completePerSecond = await rate(
    (index) => store.update(records[index]!.taskId, { status: 'completed', result: RESULT }),
    IN_FLIGHT,
  );
  await store.close();
  return {
    createPerSecond,
    getPerSecond,
    completePerSecond,
    ...(path !== undefined && { bytesPerTask: bytesOnDisk(path) / TASKS }),
  };
}

/** The LMDB store on a fresh folder, removed after. */
async function measureLmdb(): Promise<Figures> {
  const folder = mkdtempSync(join(tmpdir(), 'bench-tasks-'));
  try {
    return await measureStore(new LmdbTaskStore({ path: folder, maxTasksPerOwner: TASKS }), folder);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

export const TASK_STORE_SCENARIOS: readonly Scenario[] = [
  {
    id: 'taskStore',
    entrants: [
      { name: 'memory', measure: () => measureStore(new MemoryTaskStore({ maxTasksPerOwner: TASKS })) },
      { name: 'lmdb', measure: measureLmdb },
    ],
  },
];

const NOTE = `${TASKS.toLocaleString('en-US')} tasks of 100 owners (bench/tasks.ts): create and complete ${IN_FLIGHT} in flight (a server answering many task-augmented calls at once; LMDB commits and flushes each create before it resolves), get one at a time (a client polling). LMDB on a temporary folder; bytes on disk per task after completing all.`;

export const TASK_STORES: ComparisonTable = {
  title: 'Task stores: the durable LMDB store vs the memory store, same run',
  subjectName: 'lmdb',
  baselineName: 'memory',
  comparisons: [
    entrantRow('taskStore', 'createPerSecond', 'create (durable on resolve)', 'tasks/s', 'higher', 'lmdb', 'memory', {
      note: NOTE,
    }),
    entrantRow('taskStore', 'getPerSecond', 'get (poll)', 'tasks/s', 'higher', 'lmdb', 'memory'),
    entrantRow('taskStore', 'completePerSecond', 'complete (compare-and-set)', 'tasks/s', 'higher', 'lmdb', 'memory'),
  ],
};

export const TASK_STORE_SIZE: SeriesListing = {
  title: `The LMDB task store on disk: bytes per task after creating and completing ${TASKS.toLocaleString('en-US')} tasks`,
  unit: 'bytes',
  series: [{ label: 'lmdb', ref: { scenario: 'taskStore', entrant: 'lmdb', figure: 'bytesPerTask' } }],
};
