/**
 * The tasks methods against hostile input, in both eras on a duplex connection (and 2026-07-28 over HTTP): a
 * 100 KB task id, ids that are no string, `tasks/update` with 10,000 keys or an answer nested past the
 * codec's bound, and 2,000 task creations from one anonymous client. Each gets a clear error (or is ignored
 * where the protocol says so), loses nothing of the tasks already there, and the server keeps answering.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../lib/jsonrpc/types';
import { META } from '../../lib/protocol/modern';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { DEFAULT_MAX_TASKS_PER_OWNER } from '../../lib/tasks/task-store';
import { TASKS_EXTENSION_ID } from '../../lib/tasks/task-wire';
import { createMcpHttpHandler } from '../../transports/http/endpoint';
import { createMemoryPair } from '../../transports/memory';
import { modernPeer } from '../fixtures/tasks/http-task-peers';
import { TASK_TOOLS } from '../fixtures/tasks/task-tools';
import { cleanups, listenHttp } from '../helpers/http';
import { modernPostHeaders } from '../helpers/modern-http';
import { RawPeer } from '../helpers/raw-peer';
import { eventually } from '../helpers/wait';

const definition = defineServer({ name: 'hostile-tasks', version: '1.0.0', tools: [...TASK_TOOLS] });
const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function newServer(): Server {
  const server = new Server(definition, { tasks: { pollIntervalMs: 50 } });
  servers.push(server);
  return server;
}

const MODERN_ENVELOPE = {
  [META.protocolVersion]: '2026-07-28',
  [META.clientCapabilities]: { elicitation: {}, extensions: { [TASKS_EXTENSION_ID]: {} } },
  [META.clientInfo]: { name: 'hostile', version: '1' },
};

/** A client of one era on a duplex connection in memory; `request` resolves with the answer to one request. */
async function connect(era: Era, server = newServer()) {
  const [peerSide, serverSide] = createMemoryPair();
  server.connect(serverSide);
  const peer = new RawPeer(peerSide);
  if (era === 'handshake') await peer.initialize('2025-11-25', { elicitation: {} });
  let id = 1;
  const others: any[] = [];
  /** Sends the requests at once, then resolves with their answers in order (others kept aside). */
  const requestAll = async (requests: readonly (readonly [string, JsonObject])[]) => {
    const ids = requests.map(() => id++);
    for (const [index, [method, params]] of requests.entries()) {
      const sent = era === 'modern' ? { ...params, _meta: MODERN_ENVELOPE } : params;
      await peer.send({ jsonrpc: '2.0', id: ids[index], method, params: sent });
    }
    const answers = new Map<number, any>();
    for (let read = 0; answers.size < ids.length; read++) {
      if (read === 10 * ids.length + 1000) throw new Error(`${ids.length - answers.size} requests got no answer`);
      const message = await peer.next();
      if (ids.includes(message.id) && !('method' in message)) answers.set(message.id, message);
      else others.push(message);
    }
    return ids.map((requestId) => answers.get(requestId));
  };
  const request = async (method: string, params: JsonObject = {}) => (await requestAll([[method, params]]))[0];
  /** The `tools/call` of `name` as a task. */
  const asTask = (name: string, args: JsonObject): [string, JsonObject] => [
    'tools/call',
    era === 'modern' ? { name, arguments: args } : { name, arguments: args, task: {} },
  ];
  /** Calls `name` as a task; the answer (a created task, or the error). */
  const callAsTask = (name: string, args: JsonObject) => request(...asTask(name, args));
  const taskIdOf = (created: any): string => (era === 'modern' ? created.result.taskId : created.result.task.taskId);
  return { server, peer, request, requestAll, asTask, callAsTask, taskIdOf, others };
}

type Era = 'handshake' | 'modern';
const ERAS: Era[] = ['handshake', 'modern'];

for (const era of ERAS) {
  describe(`hostile tasks input, ${era === 'modern' ? '2026-07-28' : '2025-11-25'}`, () => {
    it('answers a 100 KB task id and ids that are no string with a short -32602, and goes on serving', async () => {
      const { request, callAsTask, taskIdOf } = await connect(era);
      const real = taskIdOf(await callAsTask('slow_compute', { seconds: 0 }));
      const huge = 'x'.repeat(100_000);
      const methods = era === 'modern' ? ['tasks/get', 'tasks/cancel'] : ['tasks/get', 'tasks/result', 'tasks/cancel'];
      for (const method of methods) {
        const answer = await request(method, { taskId: huge, inputResponses: {} });
        expect(answer.error, method).toMatchObject({ code: -32602 });
        expect(answer.error.message.length, `${method} echoes the id back`).toBeLessThan(200);
        for (const taskId of [42, null, true, {}, [real], { taskId: real }]) {
          const refused = await request(method, { taskId: taskId as never, inputResponses: {} });
          expect(refused.error, `${method} ${JSON.stringify(taskId)}`).toMatchObject({
            code: -32602,
            message: expect.stringContaining('taskId must be a string'),
          });
        }
        const missing = await request(method, { inputResponses: {} });
        expect(missing.error?.code, `${method} without a taskId`).toBe(-32602);
      }
      // The task already there is untouched, and readable.
      await eventually(async () => (await request('tasks/get', { taskId: real })).result.status === 'completed', 'end');
    });

    it(`bounds the tasks of one anonymous client (${DEFAULT_MAX_TASKS_PER_OWNER}) with a clear error, and stays responsive`, async () => {
      const { request, requestAll, asTask, taskIdOf } = await connect(era);
      const created: string[] = [];
      const refused: { code: number; message: string }[] = [];
      // 2,000 creations, 100 in flight at a time.
      for (let batch = 0; batch < 20; batch++) {
        const answers = await requestAll(Array.from({ length: 100 }, () => asTask('slow_compute', { seconds: 0 })));
        for (const answer of answers) {
          if (answer.error) refused.push(answer.error);
          else created.push(taskIdOf(answer));
        }
      }
      expect(created).toHaveLength(DEFAULT_MAX_TASKS_PER_OWNER);
      expect(refused).toHaveLength(2_000 - DEFAULT_MAX_TASKS_PER_OWNER);
      expect(new Set(refused.map((error) => `${error.code} ${error.message}`))).toEqual(
        new Set([
          `-32600 The owner already holds ${DEFAULT_MAX_TASKS_PER_OWNER} tasks, the most allowed; wait for some to expire`,
        ]),
      );
      // Nothing lost, and the server still answers: the first and last tasks made, a plain call.
      for (const taskId of [created[0]!, created.at(-1)!]) {
        await eventually(async () => (await request('tasks/get', { taskId })).result?.status === 'completed', 'end');
      }
      const plain = await request('tools/call', { name: 'greet', arguments: { name: 'still here' } });
      expect(plain.result.content).toEqual([{ type: 'text', text: 'Hello, still here!' }]);
    });
  });
}

describe('hostile tasks/update (2026-07-28)', () => {
  /** A connection with a task parked on its one question (`elicitation-1`). */
  async function parked() {
    const client = await connect('modern');
    const taskId = client.taskIdOf(await client.callAsTask('confirm_delete', { filename: 'f' }));
    await eventually(
      async () => (await client.request('tasks/get', { taskId })).result.status === 'input_required',
      'the task to ask',
    );
    return { ...client, taskId };
  }
  const yes = { action: 'accept', content: { confirm: true } };

  it('ignores 10,000 keys it did not ask; the question stays open and is answered after', async () => {
    const { request, taskId } = await parked();
    const responses: JsonObject = {};
    for (let key = 0; key < 10_000; key++) responses[`key-${key}`] = yes;
    expect((await request('tasks/update', { taskId, inputResponses: responses })).result.resultType).toBe('complete');
    const still = (await request('tasks/get', { taskId })).result;
    expect(still.status).toBe('input_required');
    expect(Object.keys(still.inputRequests)).toEqual(['elicitation-1']);
    // 10,000 wrong answers to the question asked are refused at the first, naming it.
    const wrong: JsonObject = { 'elicitation-1': { action: 'maybe' } };
    for (let key = 0; key < 10_000; key++) wrong[`key-${key}`] = { nested: [key] };
    const refused = await request('tasks/update', { taskId, inputResponses: wrong });
    expect(refused.error).toMatchObject({ code: -32602, message: expect.stringContaining('elicitation-1') });
    await request('tasks/update', { taskId, inputResponses: { 'elicitation-1': yes } });
    await eventually(async () => (await request('tasks/get', { taskId })).result.status === 'completed', 'the end');
    expect((await request('tasks/get', { taskId })).result.result.content[0].text).toBe('Deleted f');
  });

  it('refuses inputResponses that are no object, and an answer nested past the bound, keeping the task', async () => {
    const { request, taskId } = await parked();
    for (const inputResponses of [[yes], 'yes', 42, null]) {
      const refused = await request('tasks/update', { taskId, inputResponses: inputResponses as never });
      expect(refused.error, JSON.stringify(inputResponses)).toMatchObject({ code: -32602 });
    }
    let deep: unknown = 'yes';
    for (let level = 0; level < 10_000; level++) deep = { content: deep };
    const answer = { action: 'accept', content: deep } as JsonObject;
    const refused = await request('tasks/update', { taskId, inputResponses: { 'elicitation-1': answer } });
    expect(refused.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('inputResponses["elicitation-1"] is not an answer to elicitation/create'),
    });
    expect((await request('tasks/get', { taskId })).result.status).toBe('input_required');
    await request('tasks/update', { taskId, inputResponses: { 'elicitation-1': yes } });
    await eventually(async () => (await request('tasks/get', { taskId })).result.status === 'completed', 'the end');
  });

  it('over HTTP: a 100 KB id (431) and an update nested 10,000 deep (-32600) are refused, the task kept', async () => {
    const server = newServer();
    const handler = createMcpHttpHandler(server);
    cleanups.push(() => handler.close());
    const { origin } = await listenHttp(handler);
    const peer = modernPeer(`${origin}/mcp`);
    const created = await peer.request('tools/call', { name: 'confirm_delete', arguments: { filename: 'h' } });
    const taskId = created.result.taskId;
    // Node's HTTP parser refuses a 100 KB header (Mcp-Name mirrors the id) before anything reads the body.
    const huge = await peer.request('tasks/get', { taskId: 'y'.repeat(100_000) }).catch((error: Error) => error);
    expect(huge).toBeInstanceOf(Error);
    expect((huge as Error).message).toMatch(/^HTTP 431/);
    // Nested 10,000 levels deep: written as text (JSON.stringify itself would overflow the stack).
    const deep = `${'['.repeat(10_000)}${']'.repeat(10_000)}`;
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 9,
      method: 'tasks/update',
      params: { taskId, inputResponses: { 'elicitation-1': 'DEEP' }, _meta: MODERN_ENVELOPE },
    }).replace('"DEEP"', deep);
    const nested = await fetch(`${origin}/mcp`, {
      method: 'POST',
      headers: modernPostHeaders({ 'mcp-method': 'tasks/update', 'mcp-name': taskId }),
      body,
    });
    expect(nested.status).toBe(400);
    expect((await nested.json()).error).toEqual({
      code: -32600,
      message: 'Invalid Request: the message nests deeper than 128 levels',
    });
    await eventually(
      async () => (await peer.request('tasks/get', { taskId })).result.status === 'input_required',
      'the task to ask',
    );
  });
});
