/**
 * Tasks in a handshake-era session (the 2025-11-25 experimental form), on the wire, with a raw peer: the
 * capability, a task-augmented `tools/call` answered at once, `tasks/get`, `tasks/result` (waiting for the
 * end), `tasks/list`, `tasks/cancel`, status notifications, progress and input inside a task. Everything the
 * server sends is checked against the 2025-11-25 schema.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineServer } from '../../../lib/server/definition';
import { Server } from '../../../lib/server/server';
import { RELATED_TASK_META_KEY } from '../../../lib/tasks/task-wire';
import { createMemoryPair } from '../../../transports/memory';
import { RawPeer } from '../../helpers/raw-peer';
import { problemsOf } from '../../helpers/schema';
import { eventually } from '../../helpers/wait';
import { TASK_TOOLS } from '../../fixtures/tasks/task-tools';

const definition = defineServer({ name: 'tasks-test', version: '1.0.0', tools: [...TASK_TOOLS] });
const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function session(version = '2025-11-25', capabilities: object = { elicitation: {} }, server?: Server) {
  if (!server) {
    server = new Server(definition, { tasks: { pollIntervalMs: 100 } });
    servers.push(server);
  }
  const [peerSide, serverSide] = createMemoryPair();
  server.connect(serverSide);
  const peer = new RawPeer(peerSide);
  const problems: string[] = [];
  const initialized = await peer.initialize(version, capabilities as never);
  let id = 1;
  /** One request, and its answer (skipping and keeping what arrives before it). */
  const request = async (method: string, params?: object) => {
    const requestId = id++;
    await peer.send({ jsonrpc: '2.0', id: requestId, method, ...(params && { params }) });
    for (;;) {
      const message = await peer.next();
      problems.push(...problemsOf(message, version as never, method));
      if (message.id === requestId && !('method' in message)) return message;
      others.push(message);
    }
  };
  const others: any[] = [];
  return { server, peer, initialized, request, others, problems };
}

const callAsTask = (name: string, args: object = {}, task: object = {}) => ({ name, arguments: args, task });

describe('tasks in a 2025-11-25 session', () => {
  it('declares the tasks capability to a 2025-11-25 client, and nothing of it to an older one', async () => {
    const { initialized } = await session();
    expect(initialized.result.capabilities.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
    const older = await session('2025-06-18');
    expect(older.initialized.result.capabilities.tasks).toBeUndefined();
    const refused = await older.request('tasks/get', { taskId: 'x' });
    expect(refused.error.code).toBe(-32601);
  });

  it('answers a task-augmented call at once with the task, which then completes; tasks/result gives the result', async () => {
    const { request, others, problems } = await session();
    const created = await request(
      'tools/call',
      callAsTask('slow_compute', { seconds: 0.2, label: 'a' }, { ttl: 60_000 }),
    );
    const task = created.result.task;
    expect(task).toMatchObject({ status: 'working', ttl: 60_000, pollInterval: 100 });
    expect(task.taskId).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(task.createdAt).toISOString()).toBe(task.createdAt);
    expect((await request('tasks/get', { taskId: task.taskId })).result.status).toBe('working');
    const result = await request('tasks/result', { taskId: task.taskId });
    expect(result.result).toMatchObject({
      content: [{ type: 'text', text: 'Computed a in 0.2 s' }],
      _meta: { [RELATED_TASK_META_KEY]: { taskId: task.taskId } },
    });
    expect((await request('tasks/get', { taskId: task.taskId })).result.status).toBe('completed');
    const statuses = others.filter((message) => message.method === 'notifications/tasks/status');
    expect(statuses.map((message) => message.params.status)).toContain('completed');
    expect(problems).toEqual([]);
  });

  it('runs a call without params.task as before, and refuses a task-only tool called so (-32601)', async () => {
    const { request } = await session();
    const plain = await request('tools/call', { name: 'slow_compute', arguments: { seconds: 0 } });
    expect(plain.result.content[0].text).toBe('Computed job in 0 s');
    const refused = await request('tools/call', { name: 'failing_job', arguments: {} });
    expect(refused.error).toMatchObject({ code: -32601, message: expect.stringContaining('only as a task') });
    const ignored = await request('tools/call', callAsTask('greet', { name: 'Ann' }));
    expect(ignored.result).toEqual({ content: [{ type: 'text', text: 'Hello, Ann!' }] });
  });

  it('fails the task on a tool error (its result kept) and on a protocol error (its error given back)', async () => {
    const { request } = await session();
    const toolError = (await request('tools/call', callAsTask('failing_job'))).result.task;
    const toolResult = await request('tasks/result', { taskId: toolError.taskId });
    expect(toolResult.result).toMatchObject({ isError: true, content: [{ text: 'The job failed: the disk is full' }] });
    expect((await request('tasks/get', { taskId: toolError.taskId })).result.status).toBe('failed');
    const protocol = (await request('tools/call', callAsTask('protocol_error_job'))).result.task;
    const protocolResult = await request('tasks/result', { taskId: protocol.taskId });
    expect(protocolResult.error).toMatchObject({ code: -32603, message: 'The job hit a protocol error' });
  });

  it('cancels a working task (its handler stops), then refuses to cancel it again or an unknown task (-32602)', async () => {
    const { request, server } = await session();
    const task = (await request('tools/call', callAsTask('slow_compute', { seconds: 30 }))).result.task;
    const cancelled = await request('tasks/cancel', { taskId: task.taskId });
    expect(cancelled.result).toMatchObject({ taskId: task.taskId, status: 'cancelled' });
    expect((await request('tasks/get', { taskId: task.taskId })).result.status).toBe('cancelled');
    await eventually(() => (server.tasks as any).runner.liveCount === 0, 'the cancelled task to stop running');
    expect((await request('tasks/cancel', { taskId: task.taskId })).error.code).toBe(-32602);
    expect((await request('tasks/get', { taskId: 'no-such-task' })).error.code).toBe(-32602);
    expect((await request('tasks/get', { taskId: 42 })).error.code).toBe(-32602);
    expect((await request('tasks/result', { taskId: 'no-such-task' })).error.code).toBe(-32602);
  });

  it('sends progress with the call token and reports it as the status message', async () => {
    const { request, others } = await session();
    const created = await request('tools/call', {
      ...callAsTask('slow_compute', { seconds: 1.1, label: 'p' }),
      _meta: { progressToken: 'tok' },
    });
    const taskId = created.result.task.taskId;
    await request('tasks/result', { taskId });
    const progress = others.find((message) => message.method === 'notifications/progress');
    expect(progress.params).toMatchObject({ progressToken: 'tok', progress: 1, message: 'p: 1 of 1.1 s' });
    const reported = others.find(
      (message) => message.method === 'notifications/tasks/status' && message.params.statusMessage !== undefined,
    );
    expect(reported.params).toMatchObject({ taskId, status: 'working', statusMessage: 'p: 1 of 1.1 s' });
  });

  it('asks for input inside a task with the task in _meta; the task reads input_required until answered', async () => {
    const { request, peer, others } = await session();
    const task = (await request('tools/call', callAsTask('confirm_delete', { filename: 'a.txt' }))).result.task;
    await eventually(
      async () => (await request('tasks/get', { taskId: task.taskId })).result.status === 'input_required',
      'the task to read input_required',
    );
    const ask = others.find((message) => message.method === 'elicitation/create');
    expect(ask).toMatchObject({
      params: { message: 'Delete a.txt?', _meta: { [RELATED_TASK_META_KEY]: { taskId: task.taskId } } },
    });
    await peer.send({ jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { confirm: true } } });
    const result = await request('tasks/result', { taskId: task.taskId });
    expect(result.result.content[0].text).toBe('Deleted a.txt');
  });

  it('keeps an ask open when its session closes unanswered, and sends it on the next tasks/result of another', async () => {
    const first = await session();
    const task = (await first.request('tools/call', callAsTask('confirm_delete', { filename: 'c.txt' }))).result.task;
    expect((await first.peer.next()).method).toBe('elicitation/create');
    await first.peer.transport.close();
    const second = await session('2025-11-25', { elicitation: {} }, first.server);
    await second.peer.send({ jsonrpc: '2.0', id: 'r', method: 'tasks/result', params: { taskId: task.taskId } });
    const ask = await second.peer.next();
    expect(ask).toMatchObject({
      method: 'elicitation/create',
      params: { message: 'Delete c.txt?', _meta: { [RELATED_TASK_META_KEY]: { taskId: task.taskId } } },
    });
    await second.peer.send({ jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { confirm: true } } });
    const result = await second.peer.next();
    expect(result).toMatchObject({ id: 'r', result: { content: [{ text: 'Deleted c.txt' }] } });
  });

  it('gathers input in the request, then continues as a task (taskStart: handler)', async () => {
    const { request, peer } = await session();
    await peer.send({ jsonrpc: '2.0', id: 77, method: 'tools/call', params: callAsTask('test_tool_with_task') });
    const ask = await peer.next();
    expect(ask.method).toBe('elicitation/create');
    expect(ask.params._meta?.[RELATED_TASK_META_KEY]).toBeUndefined();
    await peer.send({ jsonrpc: '2.0', id: ask.id, result: { action: 'accept', content: { name: 'Alice' } } });
    const created = await peer.next();
    expect(created).toMatchObject({ id: 77, result: { task: { status: 'working' } } });
    const result = await request('tasks/result', { taskId: created.result.task.taskId });
    expect(result.result.content[0].text).toBe('Hello, Alice, from a task');
  });

  it('lists the tasks this session made, and no other session sees them listed', async () => {
    const first = await session();
    const made = (await first.request('tools/call', callAsTask('slow_compute', { seconds: 0 }))).result.task;
    const listed = await first.request('tasks/list', {});
    expect(listed.result.tasks.map((task: { taskId: string }) => task.taskId)).toEqual([made.taskId]);
    const second = await session('2025-11-25', {}, first.server);
    expect((await second.request('tasks/list', {})).result.tasks).toEqual([]);
    // Without authentication the unguessable id is the key: another session holding it may read the task.
    expect((await second.request('tasks/get', { taskId: made.taskId })).result.taskId).toBe(made.taskId);
  });
});
