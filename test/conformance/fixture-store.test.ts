/**
 * The fixture's `--store <dir>`: its tasks kept on disk (LMDB), so that a task outlives the process that ran it.
 * A real fixture process over Streamable HTTP, killed with SIGKILL and started again on the same folder (over
 * HTTP, then over stdio): a completed task still reads completed with its result, in both wire forms (the
 * 2026-07-28 `tasks/get`, the 2025-11-25 `tasks/result` to the official SDK v1 client), and one that was
 * running reads failed. A missing or unusable folder is refused with a clear message.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as SdkStdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, GetTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../lib/jsonrpc/types';
import { META } from '../../lib/protocol/modern';
import { RELATED_TASK_META_KEY, TASKS_EXTENSION_ID } from '../../lib/tasks/task-wire';
import { LongRunning, ROOT, runToEnd, tsxCommand } from '../helpers/cli-process';
import { MODERN_VERSION, mirroredHeaders, postModern } from '../helpers/modern-http';
import { eventually } from '../helpers/wait';

const FIXTURE = path.join(ROOT, 'test/conformance/fixture-server.ts');
const folder = mkdtempSync(path.join(tmpdir(), 'switchboard-fixture-store-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** The fixture on any free port, its tasks in `store`; resolves with the process and its /mcp URL. */
async function startFixture(store: string): Promise<{ fixture: LongRunning; url: string }> {
  const fixture = LongRunning.run(tsxCommand(FIXTURE, '--port', '0', '--store', store));
  const [, url] = await fixture.waitFor('stderr', /listening on (http:\S+)/, 30_000);
  return { fixture, url: url! };
}

/** One 2026-07-28 request declaring the tasks extension; resolves with its JSON-RPC answer. */
async function modern(url: string, method: string, params: Record<string, unknown>): Promise<any> {
  const envelope = {
    [META.protocolVersion]: MODERN_VERSION,
    [META.clientInfo]: { name: 'store-test', version: '1' },
    [META.clientCapabilities]: { extensions: { [TASKS_EXTENSION_ID]: {} } },
  };
  // `Mcp-Name` is the task's id on tasks/*, the tool's name on tools/call.
  const headers = mirroredHeaders(method, params as JsonObject);
  if (typeof params.taskId === 'string') headers['mcp-name'] = params.taskId;
  const response = await postModern(
    url,
    { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: envelope } },
    headers,
  );
  return response.json();
}

/** The official SDK v1 client, speaking 2025-11-25 to the fixture. */
async function sdkClient(url: string): Promise<SdkClient> {
  const client = new SdkClient({ name: 'store-test-sdk', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

describe('the conformance fixture with --store', () => {
  it('keeps a completed task across a SIGKILL and restarts on the same folder (HTTP, stdio); a running one reads failed', async () => {
    const first = await startFixture(folder);
    const done = (
      await modern(first.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 0, label: 'm' } })
    ).result;
    const running = (
      await modern(first.url, 'tools/call', { name: 'slow_compute', arguments: { seconds: 600, label: 'r' } })
    ).result;
    expect([done.resultType, running.resultType]).toEqual(['task', 'task']);
    const sdk = await sdkClient(first.url);
    const created = await sdk.request(
      { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 0, label: 'h' }, task: {} } },
      CreateTaskResultSchema,
    );
    const handshakeId = created.task.taskId;
    await eventually(
      async () => (await modern(first.url, 'tasks/get', { taskId: done.taskId })).result.status === 'completed',
      'the task to complete',
    );
    await eventually(
      async () =>
        (await sdk.request({ method: 'tasks/get', params: { taskId: handshakeId } }, GetTaskResultSchema)).status ===
        'completed',
      'the 2025-11-25 task to complete',
    );
    await sdk.close();
    expect((await first.fixture.stop('SIGKILL')).signal).toBe('SIGKILL');

    const second = await startFixture(folder);
    const kept = (await modern(second.url, 'tasks/get', { taskId: done.taskId })).result;
    expect(kept).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'Computed m in 0 s' }] },
    });
    const died = (await modern(second.url, 'tasks/get', { taskId: running.taskId })).result;
    expect(died).toMatchObject({ status: 'failed', error: { message: expect.stringMatching(/restarted/) } });
    // A clean stop closes the server, then the store.
    expect(await second.fixture.stop('SIGTERM')).toEqual({ code: 0, signal: null });

    // The same folder over stdio, in the 2025-11-25 form.
    const overStdio = new SdkClient({ name: 'store-test-stdio', version: '1.0.0' });
    const [command, ...args] = tsxCommand(FIXTURE, '--stdio', '--store', folder);
    const transport = new SdkStdioTransport({ command: command!, args, cwd: ROOT, stderr: 'pipe' });
    await overStdio.connect(transport);
    try {
      const result = await overStdio.request(
        { method: 'tasks/result', params: { taskId: handshakeId } },
        CallToolResultSchema,
      );
      expect(result.content).toEqual([{ type: 'text', text: 'Computed h in 0 s' }]);
      expect(result._meta?.[RELATED_TASK_META_KEY]).toEqual({ taskId: handshakeId });
      const stillFailed = await overStdio.request(
        { method: 'tasks/get', params: { taskId: running.taskId } },
        GetTaskResultSchema,
      );
      expect(stillFailed.status).toBe('failed');
    } finally {
      await overStdio.close();
    }
  }, 60_000);

  it('refuses --store without a folder, and says so when the folder cannot be made', async () => {
    const bare = await runToEnd(tsxCommand(FIXTURE, '--port', '0', '--store'));
    expect(bare).toMatchObject({ code: 2, stderr: expect.stringContaining('[--store <dir>]') });
    const blocked = path.join(folder, 'a-file');
    writeFileSync(blocked, '');
    const inFile = await runToEnd(tsxCommand(FIXTURE, '--stdio', '--store', path.join(blocked, 'tasks')));
    expect(inFile).toMatchObject({ code: 1, stderr: expect.stringContaining(`Cannot keep tasks in ${blocked}`) });
  });
});
