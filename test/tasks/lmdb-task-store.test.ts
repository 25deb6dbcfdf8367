/** What only the durable store does: tasks outlive the store object and a process killed with SIGKILL mid-write. */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LmdbTaskStore } from '../../lib/tasks/lmdb-task-store';
import { newTaskId } from '../../lib/tasks/task-ids';
import { RESTART_TASK_ERROR } from '../../lib/tasks/task-store';
import type { TaskRecord } from '../../lib/tasks/types';

const FIXTURE = join(import.meta.dirname, '../fixtures/tasks/create-tasks.ts');
const folders: string[] = [];

function folder(): string {
  const path = mkdtempSync(join(tmpdir(), 'lmdb-tasks-'));
  folders.push(path);
  return path;
}

afterEach(() => {
  for (const path of folders.splice(0)) rmSync(path, { recursive: true, force: true });
});

function task(overrides: Partial<TaskRecord> = {}): TaskRecord {
  return {
    taskId: newTaskId(),
    status: 'working',
    createdAt: 1,
    lastUpdatedAt: 1,
    ttlMs: null,
    owner: { principalId: 'alice' },
    method: 'tools/call',
    params: { name: 'build' },
    bootEpoch: 'boot-1',
    ...overrides,
  };
}

/** Runs the fixture until it has acknowledged `wanted` tasks, kills it with SIGKILL, returns the acknowledged ids. */
function createThenKill(path: string, wanted: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', FIXTURE, path], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    let errors = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      if (output.split('\n').length > wanted) child.kill('SIGKILL');
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (errors += chunk));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`fixture ended with ${code ?? signal}: ${errors}`));
      // Only whole lines were acknowledged: a torn last line is a write the child had not reported yet.
      else resolve(output.split('\n').slice(0, -1));
    });
  });
}

describe('LmdbTaskStore', () => {
  it('keeps tasks, their results and their failures across close and reopen', async () => {
    const path = folder();
    const first = new LmdbTaskStore({ path });
    const done = task();
    const running = task();
    await first.create(done);
    await first.create(running);
    const result = { content: [{ type: 'text', text: 'built' }], isError: false };
    await first.update(done.taskId, { status: 'completed', result }, 2);
    await first.close();

    const second = new LmdbTaskStore({ path });
    try {
      expect(await second.get(done.taskId, { principalId: 'alice' })).toStrictEqual({
        ...done,
        status: 'completed',
        result,
        lastUpdatedAt: 2,
      });
      expect(await second.recover('boot-2', 3)).toBe(1);
      expect(await second.get(running.taskId, { principalId: 'alice' })).toMatchObject({
        status: 'failed',
        error: RESTART_TASK_ERROR,
      });
      expect(await second.countOf({ principalId: 'alice' })).toBe(2);
    } finally {
      await second.close();
    }
  });

  it('reopens after its process is killed with SIGKILL mid-write and has every acknowledged task', async () => {
    const path = folder();
    const acknowledged = await createThenKill(path, 200);
    expect(acknowledged.length).toBeGreaterThanOrEqual(200);
    const store = new LmdbTaskStore({ path, maxTasksPerOwner: 1_000_000 });
    try {
      const missing: string[] = [];
      for (const taskId of acknowledged) {
        if ((await store.get(taskId, { principalId: 'child' })) === undefined) missing.push(taskId);
      }
      expect(missing).toEqual([]);
      // The child's working tasks died with it: after the boot sweep none reads working.
      expect(await store.recover('after-crash')).toBeGreaterThanOrEqual(acknowledged.length / 2);
      const statuses = new Set<string>();
      for (const taskId of acknowledged) statuses.add((await store.get(taskId, { principalId: 'child' }))!.status);
      expect([...statuses].sort()).toEqual(['completed', 'failed']);
      const page = await store.list({ principalId: 'child' }, { limit: 5 });
      expect(page.tasks).toHaveLength(5);
    } finally {
      await store.close();
    }
  });
});
