/**
 * Tasks outlive their server process: a real server (test/fixtures/tasks/task-server.ts, Streamable HTTP on
 * 127.0.0.1, tasks in an `LmdbTaskStore` folder) killed with SIGKILL while one task runs and after another
 * completed, then started again on the same folder. The completed task's result is still there, the running
 * one reads `failed` with the restart error, in both eras: 2025-11-25 `tasks/get` and `tasks/result` on a new
 * session, 2026-07-28 `tasks/get`. Neither is ever "not found".
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RESTART_TASK_ERROR } from '../../lib/tasks/task-store';
import { RELATED_TASK_META_KEY } from '../../lib/tasks/task-wire';
import { modernPeer, openSession, type TaskPeer } from '../fixtures/tasks/http-task-peers';
import { LongRunning, tsxCommand } from '../helpers/cli-process';
import { fixturePath } from '../helpers/paths';
import { eventually, within } from '../helpers/wait';

const folders: string[] = [];
afterEach(() => {
  for (const path of folders.splice(0)) rmSync(path, { recursive: true, force: true });
});

/** The task server on the store in `folder`; resolves once it listens. */
async function startServer(folder: string): Promise<{ server: LongRunning; url: string }> {
  const command = tsxCommand(fixturePath('tasks/task-server.ts'), 'http', '--store', folder, '--poll-ms', '50');
  const { process: server, match } = await LongRunning.start(command, /listening (http:\S+)/);
  return { server, url: match[1]! };
}

/** What one era does with tasks over its peer: make one, read it, read its end. */
interface EraWay {
  readonly era: string;
  peer(url: string): Promise<TaskPeer>;
  /** Calls `slow_compute` as a task; its id. */
  start(peer: TaskPeer, seconds: number, label: string): Promise<string>;
  /** The task's status as `tasks/get` gives it (failing the test on an error answer). */
  status(peer: TaskPeer, taskId: string): Promise<any>;
}

const WAYS: EraWay[] = [
  {
    era: '2025-11-25 (a session)',
    peer: (url) => openSession(url),
    async start(peer, seconds, label) {
      const created = await peer.request('tools/call', {
        name: 'slow_compute',
        arguments: { seconds, label },
        task: { ttl: 600_000 },
      });
      expect(created.result?.task?.status, JSON.stringify(created)).toBe('working');
      return created.result.task.taskId;
    },
    async status(peer, taskId) {
      const got = await peer.request('tasks/get', { taskId });
      expect(got.error, JSON.stringify(got.error)).toBeUndefined();
      return got.result;
    },
  },
  {
    era: '2026-07-28 (stateless)',
    peer: async (url) => modernPeer(url),
    async start(peer, seconds, label) {
      const created = await peer.request('tools/call', { name: 'slow_compute', arguments: { seconds, label } });
      expect(created.result?.resultType, JSON.stringify(created)).toBe('task');
      return created.result.taskId;
    },
    async status(peer, taskId) {
      const got = await peer.request('tasks/get', { taskId });
      expect(got.error, JSON.stringify(got.error)).toBeUndefined();
      return got.result;
    },
  },
];

describe('tasks across a server killed with SIGKILL and started again on the same LMDB store', () => {
  for (const way of WAYS) {
    it(`keeps the completed task's result and fails the running one, ${way.era}`, async () => {
      const folder = mkdtempSync(join(tmpdir(), 'task-restart-'));
      folders.push(folder);
      const first = await startServer(folder);
      const before = await way.peer(first.url);
      const done = await way.start(before, 0, 'done');
      await eventually(async () => (await way.status(before, done)).status === 'completed', 'the quick task to end');
      const running = await way.start(before, 600, 'running');
      expect((await way.status(before, running)).status).toBe('working');
      expect(await first.server.stop('SIGKILL')).toMatchObject({ signal: 'SIGKILL' });

      const second = await startServer(folder);
      const after = await way.peer(second.url);
      const completed = await way.status(after, done);
      expect(completed).toMatchObject({ taskId: done, status: 'completed' });
      const failed = await way.status(after, running);
      expect(failed).toMatchObject({ taskId: running, status: 'failed' });

      if (way.era.startsWith('2026')) {
        expect(completed.result).toMatchObject({ content: [{ type: 'text', text: 'Computed done in 0 s' }] });
        expect(failed.error).toEqual(RESTART_TASK_ERROR);
      } else {
        const result = await within(after.request('tasks/result', { taskId: done }), 'the kept result');
        expect(result.result).toMatchObject({
          content: [{ type: 'text', text: 'Computed done in 0 s' }],
          _meta: { [RELATED_TASK_META_KEY]: { taskId: done } },
        });
        const refused = await within(after.request('tasks/result', { taskId: running }), 'the failed task’s end');
        expect(refused.error).toMatchObject(RESTART_TASK_ERROR);
        const listed = await after.request('tasks/list', {});
        // Unauthenticated: a new session lists only what it made; the ids are the key.
        expect(listed.result.tasks).toEqual([]);
      }
      await second.server.stop('SIGTERM');
    });
  }
});
