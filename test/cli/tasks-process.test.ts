/**
 * Tasks from the command line as a user runs it, every piece a real process: `switchboard serve <module>
 * --http 0 --task-store <dir>` serving the conformance suite's task tools (test/fixtures/cli-tasks/), and
 * `switchboard call --task` / `switchboard task ...` as separate clients. The store outlives a server killed
 * with SIGKILL; Ctrl-C (SIGINT) cancels the task `call --task` made, and only stops `task result` following.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCommand, freshConfigDirPerTest, LongRunning, ROOT, runToEnd } from '../helpers/cli-process';

const FIXTURE = join(ROOT, 'test/fixtures/cli-tasks/task-server.ts');
const SERVER_INSTANCE = join(ROOT, 'test/fixtures/cli-tasks/task-server-instance.ts');

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'switchboard-cli-tasks-process-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
freshConfigDirPerTest(() => dir);

/** `switchboard <args>` from the sources, run to its end. */
const switchboard = (...args: string[]) => runToEnd(cliCommand(...args), { timeoutMs: 30_000 });

/** `switchboard serve` of the task tools over HTTP (a free port), keeping tasks in `store` when given. */
async function serveTasks(store?: string): Promise<{ server: LongRunning; url: string }> {
  const flags = store === undefined ? [] : ['--task-store', store];
  const { process: server, match } = await LongRunning.start(
    cliCommand('serve', FIXTURE, '--http', '0', ...flags),
    /over Streamable HTTP at (\S+)/,
  );
  return { server, url: match[1]! };
}

const textOf = (stdout: string) => (JSON.parse(stdout) as { content: { text: string }[] }).content[0]!.text;
const taskCall = (name: string, args: object) => JSON.stringify({ name, arguments: args });
const CREATED = /^task (\S+) created$/m;

describe('serve --task-store', () => {
  it('keeps tasks on disk: their results outlive a killed server, a task it was running reads failed', async () => {
    const store = join(dir, 'store');
    let { server, url } = await serveTasks(store);

    // A task followed to its end by call --task (2025-11-25), then read by id from other processes.
    const done = await switchboard(
      'call',
      '--era',
      'handshake',
      '--task',
      url,
      'tools/call',
      taskCall('slow_compute', { seconds: 1, label: 'a' }),
    );
    expect(done.code, done.stderr).toBe(0);
    expect(textOf(done.stdout)).toBe('Computed a in 1 s');
    const doneId = CREATED.exec(done.stderr)![1]!;
    const got = await switchboard('task', 'get', '--json', url, doneId);
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ taskId: doneId, status: 'completed' });

    // A task still running (2026-07-28) when the server is killed.
    const follower = LongRunning.run(
      cliCommand('call', '--task', url, 'tools/call', taskCall('slow_compute', { seconds: 600 })),
    );
    const runningId = (await follower.waitFor('stderr', CREATED))[1]!;
    await follower.waitFor('stderr', /^task working/m);
    await server.stop('SIGKILL');
    // The follower loses the server: it says so, and how to follow the task again was printed first.
    expect((await follower.finished()).code).toBe(1);
    expect(follower.stderr).toContain(`  follow it: switchboard task result ${url} ${runningId}`);
    expect(follower.stderr).toMatch(new RegExp(`switchboard: Could not follow task ${runningId} to its end: `));

    ({ server, url } = await serveTasks(store));
    const result = await switchboard('task', 'result', url, doneId);
    expect(result.code, result.stderr).toBe(0);
    expect(textOf(result.stdout)).toBe('Computed a in 1 s');
    const failed = await switchboard('task', 'get', url, runningId);
    expect(failed.code, failed.stderr).toBe(0);
    expect(failed.stdout.split('\n')[1]).toMatch(/^ {2}task failed/);
    const lost = await switchboard('task', 'result', '--era', 'handshake', url, runningId);
    expect(lost.code).toBe(1);
    expect(lost.stderr).toContain(`switchboard: Task ${runningId} failed`);
    expect(lost.stderr).toContain('The server restarted while the task was running');
    await server.stop();

    // A stdio target is a new server process on the same store: it finds the tasks on disk.
    const stdio = ['--', ...cliCommand('serve', FIXTURE, '--task-store', store)];
    const fromDisk = await switchboard('task', 'result', doneId, ...stdio);
    expect(fromDisk.code, fromDisk.stderr).toBe(0);
    expect(textOf(fromDisk.stdout)).toBe('Computed a in 1 s');
  }, 120_000);

  it('refuses a folder it cannot use, and a module that exports its own Server', async () => {
    const file = join(dir, 'not-a-folder');
    writeFileSync(file, 'x');
    const notFolder = await switchboard('serve', FIXTURE, '--task-store', file);
    expect(notFolder.code).toBe(1);
    expect(notFolder.stderr).toMatch(new RegExp(`^switchboard: Cannot keep tasks in ${file}: `));
    const instance = await switchboard('serve', SERVER_INSTANCE, '--http', '0', '--task-store', join(dir, 'unused'));
    expect(instance.code).toBe(1);
    expect(instance.stderr).toContain(
      `switchboard: --task-store needs a module that exports a server definition: "${SERVER_INSTANCE}" exports a Server`,
    );
  }, 60_000);
});

describe('Ctrl-C', () => {
  it.each([
    ['2026-07-28', []],
    ['2025-11-25', ['--era', 'handshake']],
  ])(
    'cancels the task call --task made (%s) and exits 130',
    async (_era, eraFlags) => {
      const { server, url } = await serveTasks();
      const call = LongRunning.run(
        cliCommand('call', ...eraFlags, '--task', url, 'tools/call', taskCall('slow_compute', { seconds: 600 })),
      );
      const id = (await call.waitFor('stderr', CREATED))[1]!;
      await call.waitFor('stderr', /^task working/m);
      expect((await call.stop('SIGINT', 15_000)).code).toBe(130);
      expect(call.stderr).toContain(`cancelling task ${id} ...`);
      expect(call.stderr).toContain(`switchboard: Interrupted: task ${id} was cancelled`);
      const got = await switchboard('task', 'get', '--json', url, id);
      expect(JSON.parse(got.stdout).status).toBe('cancelled');
      await server.stop();
    },
    60_000,
  );

  it('stops task result following, and the task runs on', async () => {
    const { server, url } = await serveTasks();
    const call = LongRunning.run(
      cliCommand('call', '--task', url, 'tools/call', taskCall('slow_compute', { seconds: 600 })),
    );
    const id = (await call.waitFor('stderr', CREATED))[1]!;
    const result = LongRunning.run(cliCommand('task', 'result', url, id));
    await result.waitFor('stderr', /^task working/m);
    expect((await result.stop('SIGINT', 15_000)).code).toBe(130);
    expect(result.stderr).toContain(`switchboard: Interrupted: stopped following task ${id}, which the server runs on`);
    const got = await switchboard('task', 'get', '--json', url, id);
    expect(JSON.parse(got.stdout).status).toBe('working');
    await call.stop('SIGINT', 15_000);
    await server.stop();
  }, 60_000);
});
