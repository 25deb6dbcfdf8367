/**
 * Tasks through the hub, in both eras downstream: a tool whose upstream supports tasks is offered as a task,
 * and the hub's task follows the upstream's (the downstream sees only the hub's task id; cancelling it cancels
 * the upstream's); with `tasks.everyTool` the hub runs any tool as a task, so an upstream without task support
 * still serves a downstream client that asks for one. Upstreams reached over a connection (in process, not
 * direct) and over HTTP in the stateless revision.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { Hub } from '../../lib/compose/hub';
import type { HubTaskOptions } from '../../lib/compose/hub-options';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { createMemoryPair } from '../../transports/memory';
import { createMcpHttpHandler } from '../../transports/http/endpoint';
import { cleanups, listenHttp } from '../helpers/http';
import { eventually } from '../helpers/wait';
import { text } from '../helpers/content';
import { sleep, TASK_TOOLS } from '../fixtures/tasks/task-tools';

const upstreams: Server[] = [];
afterEach(async () => {
  await Promise.all(upstreams.splice(0).map((server) => server.close()));
});

/** The conformance task tools, and `plain_slow`, which has no task support. */
function upstreamServer(): Server {
  const server = new Server(
    defineServer({
      name: 'up',
      version: '1.0.0',
      tools: [
        ...TASK_TOOLS,
        {
          name: 'plain_slow',
          inputSchema: { type: 'object' },
          handler: async (_args, ctx) => {
            await sleep(100, ctx.signal);
            return text('plain and slow');
          },
        },
      ],
    }),
    { tasks: { pollIntervalMs: 50 } },
  );
  upstreams.push(server);
  return server;
}

async function hubWith(source: object, tasks: HubTaskOptions = { pollIntervalMs: 50 }) {
  const hub = new Hub({ upstreams: [{ name: 'up', source: source as never }], tasks });
  cleanups.push(() => hub.close());
  await hub.start();
  return hub;
}

async function clientOf(hub: Hub, era: 'handshake' | 'modern') {
  const [clientSide, hubSide] = createMemoryPair();
  hub.connect(hubSide);
  const client = new Client({ name: 'down', version: '1' }, { era } as never);
  cleanups.push(() => client.close());
  await client.connect(clientSide);
  return client;
}

describe.each(['handshake', 'modern'] as const)('tasks through the hub, downstream %s', (era) => {
  it('offers a task-capable upstream tool as a task and follows the upstream task to its result', async () => {
    const upstream = upstreamServer();
    const hub = await hubWith({ kind: 'in-process', server: upstream, direct: false });
    const client = await clientOf(hub, era);
    const tools = await client.listTools();
    expect(tools.find((tool) => tool.name === 'slow_compute')?.execution).toEqual({ taskSupport: 'optional' });
    expect(tools.find((tool) => tool.name === 'plain_slow')?.execution).toBeUndefined();
    const handle = await client.callToolAsTask('slow_compute', { seconds: 0.2, label: 'hub' });
    expect(handle.isTask).toBe(true);
    const result = await handle.result;
    expect(result.content[0]).toMatchObject({ text: 'Computed hub in 0.2 s' });
    // The upstream ran it as a task of its own, under an id the downstream never saw.
    const upstreamTasks = await (upstream.tasks as any).runner.list({ anonymous: true });
    expect(upstreamTasks.tasks.map((task: { taskId: string }) => task.taskId)).not.toContain(handle.taskId);
    expect(upstreamTasks.tasks).toHaveLength(1);
  });

  it("cancels the upstream's task with the hub's", async () => {
    const upstream = upstreamServer();
    const hub = await hubWith({ kind: 'in-process', server: upstream, direct: false });
    const client = await clientOf(hub, era);
    const handle = await client.callToolAsTask('slow_compute', { seconds: 30 });
    await eventually(async () => {
      const listed = await (upstream.tasks as any).runner.list({ anonymous: true });
      return listed.tasks.length === 1;
    }, 'the upstream task to exist');
    await handle.cancel();
    await eventually(async () => {
      const [task] = (await (upstream.tasks as any).runner.list({ anonymous: true })).tasks;
      return task.status === 'cancelled';
    }, "the upstream's task to be cancelled");
  });

  it('with tasks.everyTool runs a tool of an upstream without task support as a task of its own', async () => {
    const upstream = upstreamServer();
    const hub = await hubWith(
      { kind: 'in-process', server: upstream, direct: false },
      { everyTool: true, pollIntervalMs: 50 },
    );
    const client = await clientOf(hub, era);
    const tools = await client.listTools();
    expect(tools.find((tool) => tool.name === 'plain_slow')?.execution).toEqual({ taskSupport: 'optional' });
    const handle = await client.callToolAsTask('plain_slow', {});
    expect(handle.isTask).toBe(true);
    expect((await handle.result).content[0]).toMatchObject({ text: 'plain and slow' });
  });
});

it('follows a task of a stateless (2026-07-28) upstream over HTTP for a handshake-era client', async () => {
  const upstream = upstreamServer();
  const handler = createMcpHttpHandler(upstream);
  cleanups.push(() => handler.close());
  const { origin } = await listenHttp(handler);
  const hub = await hubWith({ kind: 'http', url: `${origin}/mcp` });
  const client = await clientOf(hub, 'handshake');
  const handle = await client.callToolAsTask('failing_job', {});
  expect(handle.isTask).toBe(true);
  // The upstream's task completes with the tool error; in the 2025-11-25 form downstream that fails the task.
  await expect(handle.result).rejects.toMatchObject({ data: { result: { isError: true } } });
});
