/**
 * The official SDK v1 client's experimental tasks (2025-11-25: `client.experimental.tasks`) against our server
 * serving the suite's task tools (`TASK_TOOLS`): over stdio to a real child process
 * (test/fixtures/tasks/task-server.ts) and over Streamable HTTP on 127.0.0.1. A task-augmented call polled to
 * its result, a failed one, a cancelled one, an elicitation inside a task answered by the SDK's handler, the
 * status notifications the SDK hears; over HTTP, the input the SDK fetches through `tasks/result` when it has
 * no standalone GET stream.
 */
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as SdkStdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as SdkHttpClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  McpError as SdkMcpError,
  TaskStatusNotificationSchema,
  type ElicitRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import type { ToolSpec } from '../../lib/server/tools';
import { RELATED_TASK_META_KEY } from '../../lib/tasks/task-wire';
import { createMcpHttpHandler } from '../../transports/http/endpoint';
import { TASK_TOOLS } from '../fixtures/tasks/task-tools';
import { deferred } from '../helpers/fixtures';
import { cleanups, listenHttp } from '../helpers/http';
import { fixturePath } from '../helpers/paths';
import { eventually, within } from '../helpers/wait';

/** The SDK client of one test run, with what it heard. */
interface SdkSide {
  readonly client: SdkClient;
  /** Every `notifications/tasks/status` the SDK client handled, in order. */
  readonly statuses: { taskId: string; status: string }[];
  /** Every `elicitation/create` the SDK client's handler answered. */
  readonly asked: ElicitRequest['params'][];
  /** What the SDK reported through `onerror`. */
  readonly errors: Error[];
}

/** An SDK v1 client declaring elicitation, accepting every form with `{ confirm: true }`, listening for task statuses. */
function sdkClient(): SdkSide {
  const client = new SdkClient({ name: 'sdk-v1-task-client', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  const statuses: SdkSide['statuses'] = [];
  const asked: SdkSide['asked'] = [];
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  client.setNotificationHandler(TaskStatusNotificationSchema, ({ params }) => {
    statuses.push({ taskId: params.taskId, status: params.status });
  });
  client.setRequestHandler(ElicitRequestSchema, async ({ params }) => {
    asked.push(params);
    return { action: 'accept', content: { confirm: true } };
  });
  return { client, statuses, asked, errors };
}

/** The messages of the SDK's stream of a task-augmented call (its task's status, result or error), within `ms`. */
async function streamOf(client: SdkClient, name: string, args: Record<string, unknown>, ms?: number) {
  const messages: { type: string; status?: string; taskId?: string; result?: any; error?: SdkMcpError }[] = [];
  const stream = client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, {
    task: { ttl: 60_000 },
  });
  // The SDK's generator ends with a result or an error; bound it all the same.
  await within(
    (async () => {
      for await (const message of stream) {
        if (message.type === 'taskCreated' || message.type === 'taskStatus') {
          messages.push({ type: message.type, status: message.task.status, taskId: message.task.taskId });
        } else if (message.type === 'result') messages.push({ type: 'result', result: message.result });
        else messages.push({ type: 'error', error: message.error as SdkMcpError });
      }
    })(),
    `the SDK's stream of ${name}`,
    ms,
  );
  return messages;
}

/** The ways the SDK client reaches our server: a fresh SDK client, connected, for each test. */
const WAYS: { readonly name: string; connect(): Promise<SdkSide> }[] = [
  {
    name: 'over stdio (our server in a child process)',
    async connect() {
      const side = sdkClient();
      const transport = new SdkStdioClientTransport({
        command: process.execPath,
        args: ['--import', 'tsx', fixturePath('tasks/task-server.ts'), 'stdio'],
        stderr: 'pipe',
      });
      cleanups.push(() => side.client.close());
      await side.client.connect(transport);
      return side;
    },
  },
  {
    name: 'over Streamable HTTP',
    async connect() {
      const { url } = await serveHttp();
      const side = sdkClient();
      cleanups.push(() => side.client.close());
      await side.client.connect(new SdkHttpClientTransport(new URL(url)));
      return side;
    },
  },
];

/** Our server serving `TASK_TOOLS` (and `extra`) over Streamable HTTP on 127.0.0.1, closed after the test. */
async function serveHttp(extra: ToolSpec<any, any>[] = []): Promise<{ url: string; server: Server }> {
  const definition = defineServer({ name: 'task-server', version: '1.0.0', tools: [...TASK_TOOLS, ...extra] });
  const server = new Server(definition, { tasks: { pollIntervalMs: 100 } });
  const handler = createMcpHttpHandler(server);
  cleanups.push(
    () => server.close(),
    () => handler.close(),
  );
  const { origin } = await listenHttp(handler);
  return { url: `${origin}/mcp`, server };
}

for (const way of WAYS) {
  describe(`the SDK v1 client's tasks against our server, ${way.name}`, () => {
    it('sees the task capability and each tool’s task support', async () => {
      const { client } = await way.connect();
      expect(client.getServerCapabilities()?.tasks).toEqual({
        list: {},
        cancel: {},
        requests: { tools: { call: {} } },
      });
      const { tools } = await client.listTools();
      const support = Object.fromEntries(tools.map((tool) => [tool.name, tool.execution?.taskSupport]));
      expect(support).toMatchObject({ greet: undefined, slow_compute: 'optional', failing_job: 'required' });
    });

    it('calls a tool as a task: created working, polled to completed, then its result', async () => {
      const { client, statuses, errors } = await way.connect();
      const messages = await streamOf(client, 'slow_compute', { seconds: 0.3, label: 'sdk' });
      const [created] = messages;
      expect(created).toMatchObject({ type: 'taskCreated', status: 'working' });
      const taskId = created!.taskId!;
      expect(messages.at(-2)).toMatchObject({ type: 'taskStatus', status: 'completed', taskId });
      expect(messages.at(-1)!.result).toEqual({
        content: [{ type: 'text', text: 'Computed sdk in 0.3 s' }],
        _meta: { [RELATED_TASK_META_KEY]: { taskId } },
      });
      const task = await client.experimental.tasks.getTask(taskId);
      expect(task).toMatchObject({ taskId, status: 'completed', ttl: 60_000, pollInterval: 100 });
      const again = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect(again.content).toEqual([{ type: 'text', text: 'Computed sdk in 0.3 s' }]);
      const { tasks } = await client.experimental.tasks.listTasks();
      expect(tasks.map((listed) => listed.taskId)).toContain(taskId);
      expect(statuses).toContainEqual({ taskId, status: 'completed' });
      expect(errors).toEqual([]);
    });

    it('ends a failed task in an error: a tool error keeps its result, a protocol error is given back', async () => {
      const { client } = await way.connect();
      const toolError = await streamOf(client, 'failing_job', {});
      const toolTaskId = toolError[0]!.taskId!;
      expect(toolError.at(-1)!.error).toBeInstanceOf(SdkMcpError);
      expect(toolError.at(-1)!.error!.message).toContain(`Task ${toolTaskId} failed`);
      expect((await client.experimental.tasks.getTask(toolTaskId)).status).toBe('failed');
      const kept = await client.experimental.tasks.getTaskResult(toolTaskId, CallToolResultSchema);
      expect(kept).toMatchObject({ isError: true, content: [{ text: 'The job failed: the disk is full' }] });

      const protocol = await streamOf(client, 'protocol_error_job', {});
      const protocolTaskId = protocol[0]!.taskId!;
      expect((await client.experimental.tasks.getTask(protocolTaskId)).status).toBe('failed');
      const refused = await client.experimental.tasks
        .getTaskResult(protocolTaskId, CallToolResultSchema)
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(SdkMcpError);
      expect(refused).toMatchObject({ code: -32603, message: expect.stringContaining('The job hit a protocol error') });
    });

    it('cancels a working task; cancelling it again is -32602', async () => {
      const { client, statuses } = await way.connect();
      const stream = client.experimental.tasks.callToolStream(
        { name: 'slow_compute', arguments: { seconds: 60 } },
        CallToolResultSchema,
        { task: {} },
      );
      const first = await within(stream.next(), 'the created task');
      await stream.return(undefined);
      const { taskId } = (first.value as { task: { taskId: string } }).task;
      const cancelled = await client.experimental.tasks.cancelTask(taskId);
      expect(cancelled).toMatchObject({ taskId, status: 'cancelled' });
      expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
      const again = await client.experimental.tasks.cancelTask(taskId).catch((error: unknown) => error);
      expect(again).toBeInstanceOf(SdkMcpError);
      expect((again as SdkMcpError).code).toBe(-32602);
      expect(statuses).toContainEqual({ taskId, status: 'cancelled' });
    });

    it('answers an elicitation inside the task with its handler; it hears the task’s statuses', async () => {
      const { client, statuses, asked, errors } = await way.connect();
      const messages = await streamOf(client, 'confirm_delete', { filename: 'a.txt' });
      const taskId = messages[0]!.taskId!;
      expect(messages.at(-1)).toMatchObject({ type: 'result', result: { content: [{ text: 'Deleted a.txt' }] } });
      expect(asked).toEqual([
        expect.objectContaining({ message: 'Delete a.txt?', _meta: { [RELATED_TASK_META_KEY]: { taskId } } }),
      ]);
      const heard = statuses.filter((entry) => entry.taskId === taskId).map((entry) => entry.status);
      expect(heard).toEqual(['input_required', 'working', 'completed']);
      expect(errors).toEqual([]);
    });
  });
}

// ---- input through tasks/result, over HTTP ----------------------------------------------------------------

describe('the SDK v1 client without a standalone GET stream, over Streamable HTTP', () => {
  /** Asks for confirmation once the test opens `gate` (so a `tasks/result` can be waiting first). */
  let gate = deferred();
  const gatedConfirm: ToolSpec<any, any> = {
    name: 'gated_confirm',
    inputSchema: { type: 'object' },
    execution: { taskSupport: 'optional' },
    handler: async (_args: object, ctx) => {
      await gate.promise;
      const answer = await ctx.elicit({
        message: 'Go on?',
        requestedSchema: { type: 'object', properties: { confirm: { type: 'boolean' } }, required: ['confirm'] },
      });
      return `answered ${answer.action}`;
    },
  };

  /** The SDK client over a fetch that refuses the standalone GET stream (405, which the SDK accepts). */
  async function connectWithoutGetStream(): Promise<SdkSide & { gets: number; server: Server }> {
    gate = deferred();
    const { url, server } = await serveHttp([gatedConfirm]);
    const side = sdkClient();
    let gets = 0;
    const transport = new SdkHttpClientTransport(new URL(url), {
      fetch: async (input, init) => {
        if ((init?.method ?? 'GET') !== 'GET') return fetch(input, init);
        gets++;
        return new Response(null, { status: 405 });
      },
    });
    cleanups.push(() => side.client.close());
    await side.client.connect(transport);
    return Object.assign(side, {
      server,
      get gets() {
        return gets;
      },
    });
  }

  it('gets the elicitation on the stream of the tasks/result it is waiting on, and the result there', async () => {
    const side = await connectWithoutGetStream();
    const created = await side.client.request(
      { method: 'tools/call', params: { name: 'gated_confirm', arguments: {}, task: {} } },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    const result = side.client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    // The server's record of a waiting tasks/result is internal: no event announces it.
    const waiters = (side.server.tasks as unknown as { waiters: Map<string, unknown> }).waiters;
    await eventually(() => waiters.has(taskId), 'the tasks/result to wait on the task');
    gate.resolve();
    expect(await within(result, 'the task result')).toMatchObject({ content: [{ text: 'answered accept' }] });
    expect(side.asked).toEqual([expect.objectContaining({ _meta: { [RELATED_TASK_META_KEY]: { taskId } } })]);
    expect(side.gets).toBeGreaterThan(0);
    expect(side.errors).toEqual([]);
  });

  // KNOWN SERVER BUG (reported to the lead): an ask made while no tasks/result waits is sent on the session's
  // standalone stream, which this client does not have; the tasks/result the SDK sends on reading
  // input_required never carries it, so the task waits for ever. Flip to `it` once the server re-sends open
  // asks on a tasks/result stream.
  it('gets an elicitation asked before its tasks/result (callToolStream) on that tasks/result', async () => {
    const side = await connectWithoutGetStream();
    const messages = await streamOf(side.client, 'confirm_delete', { filename: 'b.txt' }, 2_000);
    expect(messages.at(-1)).toMatchObject({ type: 'result', result: { content: [{ text: 'Deleted b.txt' }] } });
  });
});
