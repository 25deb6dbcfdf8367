/**
 * Tasks in the stateless revision (the 2026-07-28 extension `io.modelcontextprotocol/tasks`), on the wire:
 * over a duplex connection in memory and over Streamable HTTP. The extension declared per request, the flat
 * created task, `tasks/get` inlining the end or the open input requests, `tasks/update` answering some or all
 * of them, `tasks/cancel` acknowledged, what a request without the extension gets, `Mcp-Name` on tasks/get,
 * and a call that gathers input in the request before it becomes a task. Every message is checked against
 * the 2026-07-28 schema.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { JsonObject } from '../../../lib/jsonrpc/types';
import { META } from '../../../lib/protocol/modern';
import type { ServerContext } from '../../../lib/server/context';
import { defineServer } from '../../../lib/server/definition';
import { Server } from '../../../lib/server/server';
import type { ToolSpec } from '../../../lib/server/tools';
import { TASKS_EXTENSION_ID } from '../../../lib/tasks/task-wire';
import { createMemoryPair } from '../../../transports/memory';
import { createMcpHttpHandler } from '../../../transports/http/endpoint';
import { cleanups, listenHttp } from '../../helpers/http';
import { mirroredHeaders, postModern } from '../../helpers/modern-http';
import { validateEveryModernExchange } from '../../helpers/modern-wire';
import { RawPeer } from '../../helpers/raw-peer';
import { eventually } from '../../helpers/wait';
import { TASK_TOOLS } from '../../fixtures/tasks/task-tools';

const VERSION = '2026-07-28';
const WITH_TASKS = { elicitation: {}, extensions: { [TASKS_EXTENSION_ID]: {} } };
const envelope = (capabilities: object) => ({
  [META.protocolVersion]: VERSION,
  [META.clientCapabilities]: capabilities,
  [META.clientInfo]: { name: 'raw', version: '1' },
});

const definition = defineServer({ name: 'tasks-modern', version: '1.0.0', tools: [...TASK_TOOLS] });
const servers: Server[] = [];
let problems: string[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
  expect(problems).toEqual([]);
  problems = [];
});

function newServer(): Server {
  const server = new Server(definition, { tasks: { pollIntervalMs: 100 } });
  problems = validateEveryModernExchange(server);
  servers.push(server);
  return server;
}

/** A duplex connection in memory whose requests carry the envelope (with the extension unless told otherwise). */
function connect(server = newServer()) {
  const [peerSide, serverSide] = createMemoryPair();
  const connection = server.connect(serverSide);
  cleanups.push(() => connection.close());
  const peer = new RawPeer(peerSide);
  let id = 1;
  const request = async (method: string, params: JsonObject = {}, capabilities: object = WITH_TASKS) => {
    const requestId = id++;
    await peer.send({
      jsonrpc: '2.0',
      id: requestId,
      method,
      params: { ...params, _meta: { ...envelope(capabilities), ...(params._meta as object) } },
    });
    for (;;) {
      const message = await peer.next();
      if (message.id === requestId) return message;
    }
  };
  const untilStatus = async (taskId: string, status: string) => {
    let last: any;
    await eventually(async () => {
      last = (await request('tasks/get', { taskId })).result;
      return last.status === status;
    }, `the task to read ${status}`);
    return last;
  };
  return { server, peer, request, untilStatus };
}

describe('the tasks extension on a duplex connection', () => {
  it('is advertised by server/discover under extensions, with no 2025 tasks capability', async () => {
    const { request } = connect();
    const capabilities = (await request('server/discover')).result.capabilities;
    expect(capabilities.extensions).toEqual({ [TASKS_EXTENSION_ID]: {} });
    expect(capabilities.tasks).toBeUndefined();
  });

  it('answers a declaring call with the flat created task; tasks/get inlines the result once completed', async () => {
    const { request, untilStatus } = connect();
    const created = (await request('tools/call', { name: 'slow_compute', arguments: { seconds: 0.1, label: 'm' } }))
      .result;
    expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: 3_600_000, pollIntervalMs: 100 });
    for (const absent of ['task', 'result', 'error', 'inputRequests', 'requestState', 'ttl', 'pollInterval']) {
      expect(created).not.toHaveProperty(absent);
    }
    const done = await untilStatus(created.taskId, 'completed');
    expect(done).toMatchObject({ resultType: 'complete', result: { content: [{ text: 'Computed m in 0.1 s' }] } });
    expect(done.result._meta?.['io.modelcontextprotocol/related-task']).toBeUndefined();
  });

  it('keeps a tool error completed (isError) and a protocol error failed (its error, no result)', async () => {
    const { request, untilStatus } = connect();
    const tool = (await request('tools/call', { name: 'failing_job', arguments: {} })).result;
    expect((await untilStatus(tool.taskId, 'completed')).result).toMatchObject({ isError: true });
    const protocol = (await request('tools/call', { name: 'protocol_error_job', arguments: {} })).result;
    const failed = await untilStatus(protocol.taskId, 'failed');
    expect(failed.error).toEqual({ code: -32603, message: 'The job hit a protocol error' });
    expect(failed).not.toHaveProperty('result');
  });

  it('without the extension: an optional tool runs at once, a required one and tasks/* are -32021', async () => {
    const { request } = connect();
    const plain = await request('tools/call', { name: 'slow_compute', arguments: { seconds: 0 } }, {});
    expect(plain.result).toMatchObject({ resultType: 'complete', content: [{ text: 'Computed job in 0 s' }] });
    const required = await request('tools/call', { name: 'failing_job', arguments: {} }, {});
    expect(required.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID]: {} } } },
    });
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const refused = await request(method, { taskId: 'x', inputResponses: {} }, {});
      expect(refused.error.code, method).toBe(-32021);
    }
    const legacy = await request('tools/call', { name: 'greet', arguments: { name: 'L' }, task: { ttl: 1 } });
    expect(legacy.result).toMatchObject({ resultType: 'complete', content: [{ text: 'Hello, L!' }] });
    expect((await request('tasks/result', { taskId: 'x' })).error.code).toBe(-32601);
    expect((await request('tasks/list', {})).error.code).toBe(-32601);
  });

  it('parks input in the task; tasks/update answers one key at a time, and the task ends', async () => {
    const { request, untilStatus } = connect();
    const created = (await request('tools/call', { name: 'multi_input', arguments: {} })).result;
    const parked = await untilStatus(created.taskId, 'input_required');
    expect(Object.keys(parked.inputRequests).sort()).toEqual(['first', 'second']);
    expect(parked.inputRequests.first).toMatchObject({ method: 'elicitation/create' });
    const yes = { action: 'accept', content: { confirm: true } };
    const ack = await request('tasks/update', { taskId: created.taskId, inputResponses: { first: yes, nope: yes } });
    expect(ack.result).toEqual({ resultType: 'complete', _meta: expect.any(Object) });
    await eventually(async () => {
      const now = (await request('tasks/get', { taskId: created.taskId })).result;
      return now.status === 'input_required' && Object.keys(now.inputRequests).join() === 'second';
    }, 'only the second input request to stay open');
    const bad = await request('tasks/update', { taskId: created.taskId, inputResponses: { second: { action: 'x' } } });
    expect(bad.error.code).toBe(-32602);
    await request('tasks/update', { taskId: created.taskId, inputResponses: { second: yes } });
    const done = await untilStatus(created.taskId, 'completed');
    expect(done.result.content[0].text).toBe('first: true, second: true');
  });

  it('shows a tasks/update in the very next tasks/get: the key answered gone, the task working once all are', async () => {
    const { request, untilStatus } = connect();
    const yes = { action: 'accept', content: { confirm: true } };
    const multi = (await request('tools/call', { name: 'multi_input', arguments: {} })).result;
    await untilStatus(multi.taskId, 'input_required');
    await request('tasks/update', { taskId: multi.taskId, inputResponses: { first: yes } });
    const partly = (await request('tasks/get', { taskId: multi.taskId })).result;
    expect(partly.status).toBe('input_required');
    expect(Object.keys(partly.inputRequests)).toEqual(['second']);

    const single = (await request('tools/call', { name: 'confirm_delete', arguments: { filename: 'f' } })).result;
    const [key] = Object.keys((await untilStatus(single.taskId, 'input_required')).inputRequests);
    await request('tasks/update', { taskId: single.taskId, inputResponses: { [key!]: yes } });
    const resumed = (await request('tasks/get', { taskId: single.taskId })).result;
    expect(['working', 'completed']).toContain(resumed.status);
    expect(resumed).not.toHaveProperty('inputRequests');
  });

  it('acknowledges tasks/cancel, also on an ended task; an unknown id is -32602', async () => {
    const { request, server, untilStatus } = connect();
    const created = (await request('tools/call', { name: 'slow_compute', arguments: { seconds: 30 } })).result;
    const ack = await request('tasks/cancel', { taskId: created.taskId });
    expect(ack.result.resultType).toBe('complete');
    expect(Object.keys(ack.result).sort()).toEqual(['_meta', 'resultType']);
    await untilStatus(created.taskId, 'cancelled');
    await eventually(() => (server.tasks as any).runner.liveCount === 0, 'the cancelled task to stop');
    expect((await request('tasks/cancel', { taskId: created.taskId })).result.resultType).toBe('complete');
    expect((await request('tasks/get', { taskId: 'tasks-conformance-nonexistent-12345' })).error.code).toBe(-32602);
  });

  it('ends a cancelled task quietly: its work stopping after the cancel sends nothing to its ended actor', async () => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const untilCancelled: ToolSpec<any, any> = {
      name: 'until_cancelled',
      description: 'Runs until its task is cancelled',
      inputSchema: { type: 'object' },
      execution: { taskSupport: 'required' },
      handler: (_args: object, ctx: ServerContext) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
          started();
        }),
    };
    const server = new Server(definition.withTools(untilCancelled));
    servers.push(server);
    const warnings = vi.spyOn(console, 'warn');
    try {
      const { request, untilStatus } = connect(server);
      const created = (await request('tools/call', { name: 'until_cancelled', arguments: {} })).result;
      await running;
      await request('tasks/cancel', { taskId: created.taskId });
      await untilStatus(created.taskId, 'cancelled');
      expect(warnings.mock.calls.map(([message]) => String(message))).toEqual([]);
    } finally {
      warnings.mockRestore();
    }
  });

  it('gathers input with an input_required round first, then answers with the created task', async () => {
    const { request, untilStatus } = connect();
    const round = (await request('tools/call', { name: 'test_tool_with_task', arguments: {} })).result;
    expect(round.resultType).toBe('input_required');
    expect(round).not.toHaveProperty('taskId');
    const [key] = Object.keys(round.inputRequests);
    const created = (
      await request('tools/call', {
        name: 'test_tool_with_task',
        arguments: {},
        inputResponses: { [key!]: { action: 'accept', content: { name: 'Alice' } } },
        requestState: round.requestState,
      })
    ).result;
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    expect(created).not.toHaveProperty('requestState');
    expect(created).not.toHaveProperty('inputRequests');
    const done = await untilStatus(created.taskId, 'completed');
    expect(done.result.content[0].text).toContain('Alice');
  });
});

describe('the tasks extension over Streamable HTTP', () => {
  it('serves tasks/get with Mcp-Name naming the task, and refuses a mismatched one (-32020)', async () => {
    const server = newServer();
    const handler = createMcpHttpHandler(server);
    cleanups.push(() => handler.close());
    const { origin } = await listenHttp(handler);
    const url = `${origin}/mcp`;
    let id = 1;
    const post = (method: string, params: JsonObject, headers = mirroredHeaders(method, params)) =>
      postModern(
        url,
        { jsonrpc: '2.0', id: id++, method, params: { ...params, _meta: envelope(WITH_TASKS) } },
        headers,
      );
    const created = await (await post('tools/call', { name: 'slow_compute', arguments: { seconds: 0 } })).json();
    const taskId = created.result.taskId;
    const get = await post('tasks/get', { taskId }, { 'mcp-method': 'tasks/get', 'mcp-name': taskId });
    expect(get.status).toBe(200);
    expect((await get.json()).result.taskId).toBe(taskId);
    const wrong = await post('tasks/get', { taskId }, { 'mcp-method': 'tasks/get', 'mcp-name': 'another-task' });
    expect(wrong.status).toBe(400);
    expect((await wrong.json()).error.code).toBe(-32020);
    const missing = await post('tasks/cancel', { taskId }, { 'mcp-method': 'tasks/cancel' });
    expect((await missing.json()).error.code).toBe(-32020);
  });
});
