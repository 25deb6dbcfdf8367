/**
 * `switchboard call --task` and `switchboard task get|result|cancel|list`, run in this process (`runCli`)
 * against a real Streamable HTTP server on 127.0.0.1 serving the conformance suite's task tools, in both eras:
 * the 2026-07-28 tasks extension (the CLI's default against a server that speaks it) and 2025-11-25 tasks
 * (`--era handshake`). Real processes, Ctrl-C and the disk store: tasks-process.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { createMcpHttpHandler } from '../../transports/http/endpoint';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { runCliCapturing } from '../helpers/cli-in-process';
import { freshConfigDirPerTest } from '../helpers/cli-process';
import { cleanups, listenHttp } from '../helpers/http';
import { TASK_TOOLS } from '../fixtures/tasks/task-tools';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'switchboard-cli-tasks-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
freshConfigDirPerTest(() => dir);

const definition = defineServer({ name: 'cli-tasks', version: '1.0.0', tools: [...TASK_TOOLS] });

/** A task server on 127.0.0.1 (polled every 50 ms), closed after the test; resolves with its URL. */
async function serveTasks(): Promise<string> {
  const server = new Server(definition, { tasks: { pollIntervalMs: 50 } });
  const handler = createMcpHttpHandler(server);
  const { origin } = await listenHttp(handler);
  cleanups.push(
    () => server.close(),
    () => handler.close(),
  );
  return `${origin}/mcp`;
}

/** A client of our own on `url` in `era`, closed after the test: it makes the tasks the CLI then asks about. */
async function clientOf(url: string, era: 'handshake' | 'modern'): Promise<Client> {
  const client = new Client({ name: 'maker', version: '1' }, { era, listChanges: 'off' });
  await client.connect(new StreamableHttpClientTransport(url));
  cleanups.push(() => client.close());
  return client;
}

const textOf = (stdout: string) => (JSON.parse(stdout) as { content: { text: string }[] }).content[0]!.text;
const toolCall = (name: string, args: object = {}) => JSON.stringify({ name, arguments: args });
const CREATED_LINE = /^task (\S+) created$/;
/** The id `call --task` announced on stderr. */
const announcedId = (stderr: string) => new RegExp(CREATED_LINE.source, 'm').exec(stderr)?.[1];

const ERAS = [
  ['the 2026-07-28 tasks extension', 'modern', []],
  ['2025-11-25 tasks', 'handshake', ['--era', 'handshake']],
] as const;

describe.each(ERAS)('call --task, in %s', (_name, era, eraFlags) => {
  const callTask = (url: string, name: string, args: object = {}, ...flags: string[]) =>
    runCliCapturing('call', ...eraFlags, '--task', ...flags, url, 'tools/call', toolCall(name, args));

  it('prints the task id, how to follow it, its reference, each status, then the result', async () => {
    const url = await serveTasks();
    const run = await callTask(url, 'slow_compute', { seconds: 2, label: 'build' });
    expect(run.code, run.stderr).toBe(0);
    expect(textOf(run.stdout)).toBe('Computed build in 2 s');
    const id = announcedId(run.stderr)!;
    expect(id).toMatch(/^[\w-]{16,}$/);
    expect(run.err).toContain(`  follow it: switchboard task result ${url} ${id}`);
    expect(run.err).toContain(`  cancel it: switchboard task cancel ${url} ${id}`);
    const ref = JSON.parse(run.err.find((line) => line.startsWith('  reference: '))!.slice('  reference: '.length));
    expect(ref).toMatchObject({ version: 1, taskId: id, era, server: 'cli-tasks' });
    // The statuses in order: made working, the tool's progress as the status message, then its end.
    const statuses = run.err.filter((line) => line.startsWith('task ') && !line.endsWith(' created'));
    expect(statuses[0]).toBe('task working');
    // The first second's progress stands for a second, polled every 50 ms.
    expect(statuses).toContain('task working: build: 1 of 2 s');
    expect(statuses.at(-1)).toMatch(/^task completed/);
  });

  it('answers a question inside the task with --answer or --decline', async () => {
    const url = await serveTasks();
    const accepted = await callTask(url, 'confirm_delete', { filename: 'a.txt' }, '--answer', '{"confirm":true}');
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(textOf(accepted.stdout)).toBe('Deleted a.txt');
    expect(accepted.err).toContain('task waiting for input');
    const declined = await callTask(url, 'confirm_delete', { filename: 'a.txt' }, '--decline');
    expect(declined.code, declined.stderr).toBe(0);
    expect(textOf(declined.stdout)).toBe('Kept a.txt');
  });

  it('stops with exit 1 when a question inside the task cannot be answered', async () => {
    const url = await serveTasks();
    const run = await callTask(url, 'confirm_delete', { filename: 'a.txt' });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.err).toContain(
      "switchboard: The server asks for input, and stdin is not a terminal to ask on: give it with --answer '<json>' (or --decline, --cancel)",
    );
    expect(run.err).toContain('  the server asks: "Delete a.txt?"');
  });

  it('exits 1 for a failed task, saying why', async () => {
    const url = await serveTasks();
    const run = await callTask(url, 'protocol_error_job');
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.err).toContain('task failed');
    expect(run.err).toContain(
      `switchboard: Task ${announcedId(run.stderr)} failed (error -32603): The job hit a protocol error`,
    );
  });

  it('never makes a failed task again, when the era came from the cache', async () => {
    const url = await serveTasks();
    expect((await runCliCapturing('call', ...eraFlags, url, 'tools/list')).code).toBe(0);
    const run = await callTask(url, 'protocol_error_job', {}, '--verbose');
    expect(run.code).toBe(1);
    expect(run.err.filter((line) => line.startsWith('era: '))).toEqual([
      era === 'modern' ? expect.stringMatching(/^era: from the cache/) : 'era: the handshake, as asked (no probe)',
    ]);
    expect(run.err.filter((line) => CREATED_LINE.test(line))).toHaveLength(1);
  });

  it("prints a tool's error as call does: in 2025-11-25 it fails the task (exit 1), in 2026-07-28 it completes it", async () => {
    const url = await serveTasks();
    const run = await callTask(url, 'failing_job');
    if (era === 'handshake') {
      expect(run.code).toBe(1);
      expect(run.err).toContain(
        `switchboard: Task ${announcedId(run.stderr)} failed: The job failed: the disk is full`,
      );
      expect(run.err.some((line) => line.startsWith('  result: {"content":[{"type":"text"'))).toBe(true);
    } else {
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ isError: true });
      expect(textOf(run.stdout)).toBe('The job failed: the disk is full');
    }
  });

  it('prints the result of a tool that makes no task, saying it ran at once', async () => {
    const url = await serveTasks();
    const run = await callTask(url, 'greet', { name: 'Ada' });
    expect(run.code, run.stderr).toBe(0);
    expect(textOf(run.stdout)).toBe('Hello, Ada!');
    expect(run.err).toContain('greet ran at once: the server made no task of it (no task support for this tool)');
    expect(announcedId(run.stderr)).toBeUndefined();
  });

  it('names the closest tool when the tool does not exist', async () => {
    const url = await serveTasks();
    const run = await callTask(url, 'slow_comput');
    expect(run.code).toBe(1);
    expect(run.err).toContain('  no tool is named "slow_comput": did you mean "slow_compute"?');
  });

  it('asks for a time to live with --ttl where the era has one', async () => {
    const url = await serveTasks();
    const run = await callTask(url, 'slow_compute', { seconds: 0 }, '--ttl', '120000');
    expect(run.code, run.stderr).toBe(0);
    const got = await runCliCapturing('task', 'get', ...eraFlags, '--json', url, announcedId(run.stderr)!);
    if (era === 'handshake') {
      expect(JSON.parse(got.stdout).ttlMs).toBe(120000);
    } else {
      expect(JSON.parse(got.stdout).ttlMs).not.toBe(120000);
      expect(
        run.err.some((line) => line.startsWith('--ttl: a 2026-07-28 server decides how long it keeps a task')),
      ).toBe(true);
    }
  });
});

describe.each(ERAS)('task get|result|cancel, in %s', (_name, era, eraFlags) => {
  const task = (action: string, ...args: string[]) => runCliCapturing('task', action, ...eraFlags, ...args);

  it('gets a running task, cancels it, and result then says it was cancelled', async () => {
    const url = await serveTasks();
    const handle = await (await clientOf(url, era)).callToolAsTask('slow_compute', { seconds: 600 });
    const id = handle.taskId!;

    const got = await task('get', url, id);
    expect(got.code, got.stderr).toBe(0);
    expect(got.out[0]).toBe(id);
    expect(got.out[1]).toMatch(/^ {2}task working/);
    const json = await task('get', '--json', url, id);
    expect(JSON.parse(json.stdout)).toMatchObject({ taskId: id, status: 'working', ttlMs: expect.any(Number) });

    const cancelled = await task('cancel', url, id);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toBe(`cancel requested: ${id}`);
    await expect(handle.result).rejects.toThrow(/was cancelled/);
    const after = await task('get', '--json', url, id);
    expect(JSON.parse(after.stdout).status).toBe('cancelled');

    const result = await task('result', url, id);
    expect(result.code).toBe(1);
    expect(result.err).toContain(`switchboard: Task ${id} was cancelled`);
  });

  it('prints the result of a finished task, by id or by reference', async () => {
    const url = await serveTasks();
    const handle = await (await clientOf(url, era)).callToolAsTask('slow_compute', { seconds: 0, label: 'x' });
    await handle.result;
    for (const given of [handle.taskId!, JSON.stringify(handle.ref)]) {
      const result = await task('result', url, given);
      expect(result.code, result.stderr).toBe(0);
      expect(textOf(result.stdout)).toBe('Computed x in 0 s');
      expect(result.err).toContain('task completed');
    }
  });

  it('follows a running task to its end', async () => {
    const url = await serveTasks();
    const handle = await (await clientOf(url, era)).callToolAsTask('slow_compute', { seconds: 1, label: 'y' });
    const result = await task('result', url, handle.taskId!);
    expect(result.code, result.stderr).toBe(0);
    expect(textOf(result.stdout)).toBe('Computed y in 1 s');
    expect(result.err[0]).toMatch(/^task working/);
    expect(result.err.at(-1)).toMatch(/^task completed/);
  });

  it('refuses an id the server does not know, and a reference to another server, with exit 1', async () => {
    const url = await serveTasks();
    for (const [action, what] of [
      ['get', 'tasks/get:'],
      ['result', 'Could not follow task no-such-task to its end:'],
      ['cancel', 'tasks/cancel:'],
    ]) {
      const run = await task(action!, url, 'no-such-task');
      expect(run.code).toBe(1);
      expect(run.err[0]).toMatch(
        new RegExp(`^switchboard: ${what} the server answered with error -32602: .*no-such-task`),
      );
    }
    const elsewhere = JSON.stringify({ version: 1, taskId: 'abc', era, server: 'another', endpoint: 'http:x/mcp' });
    for (const action of ['get', 'result', 'cancel']) {
      const run = await task(action, url, elsewhere);
      expect(run.code).toBe(1);
      expect(run.err[0]).toContain('The task "abc" belongs elsewhere: its reference names server "another"');
    }
  });

  it('refuses to cancel a task that is over (2025-11-25), or acknowledges it (2026-07-28)', async () => {
    const url = await serveTasks();
    const handle = await (await clientOf(url, era)).callToolAsTask('slow_compute', { seconds: 0 });
    await handle.result;
    const run = await task('cancel', '--json', url, handle.taskId!);
    if (era === 'handshake') {
      expect(run.code).toBe(1);
      expect(run.err[0]).toMatch(/^switchboard: tasks\/cancel: the server answered with error -32602: .*completed/);
    } else {
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual({ taskId: handle.taskId, cancelRequested: true });
    }
  });
});

describe('task list', () => {
  it('lists the tasks the server shows a new connection (2025-11-25): none without a login', async () => {
    const url = await serveTasks();
    await (await clientOf(url, 'handshake')).callToolAsTask('slow_compute', { seconds: 0 });
    const human = await runCliCapturing('task', 'list', '--era', 'handshake', url);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toBe('');
    expect(human.err).toEqual(['The server lists no tasks for this client']);
    const json = await runCliCapturing('task', 'list', '--era', 'handshake', '--json', url);
    expect(JSON.parse(json.stdout)).toEqual({ tasks: [] });
  });

  it('is refused on a 2026-07-28 server, saying why and what to do', async () => {
    const url = await serveTasks();
    const run = await runCliCapturing('task', 'list', url);
    expect(run.code).toBe(1);
    expect(run.err).toEqual([
      'switchboard: The server speaks 2026-07-28, whose tasks extension has no tasks/list: keep the ids "call --task" prints',
      '  (a server that also speaks the handshake era lists tasks with --era handshake)',
    ]);
  });
});
