/**
 * A task's time to live on the simulated clock (the server's runtime clock, shared with its store): a task
 * kept 60 s is there at 59.999 s and -32602 on every tasks method from 60 s on, in both eras; the store
 * still holds it until the purge sweeps it out; a task still running when it expires is stopped.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Runtime } from '../../lib/core/runtime';
import type { JsonObject } from '../../lib/jsonrpc/types';
import { META } from '../../lib/protocol/modern';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { MemoryTaskStore } from '../../lib/tasks/memory-task-store';
import { TASKS_EXTENSION_ID } from '../../lib/tasks/task-wire';
import { ANONYMOUS_TASK_OWNER } from '../../lib/tasks/types';
import { createMemoryPair } from '../../transports/memory';
import { TASK_TOOLS } from '../fixtures/tasks/task-tools';
import { ManualClock } from '../helpers/manual-clock';
import { RawPeer } from '../helpers/raw-peer';
import { eventually } from '../helpers/wait';

const TTL = 60_000;
/** Sweeps after the task expired, so the test sees it expired yet still stored, then swept. */
const PURGE_EVERY = 2 * TTL;
const definition = defineServer({ name: 'task-ttl', version: '1.0.0', tools: [...TASK_TOOLS] });
const servers: Server[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function serverOnClock() {
  const clock = new ManualClock();
  const store = new MemoryTaskStore({ clock });
  const server = new Server(definition, {
    runtime: new Runtime({ clock }),
    tasks: { store, defaultTtlMs: TTL, purgeEveryMs: PURGE_EVERY, pollIntervalMs: 100 },
  });
  servers.push(server);
  return { clock, store, server };
}

/** A peer on a duplex connection in memory; `request` sends one request and resolves with its answer. */
function connect(server: Server, envelope?: JsonObject) {
  const [peerSide, serverSide] = createMemoryPair();
  server.connect(serverSide);
  const peer = new RawPeer(peerSide);
  let id = 1;
  const request = async (method: string, params: JsonObject = {}) => {
    const requestId = id++;
    const withEnvelope = envelope ? { ...params, _meta: envelope } : params;
    await peer.send({ jsonrpc: '2.0', id: requestId, method, params: withEnvelope });
    for (let skipped = 0; skipped < 100; skipped++) {
      const message = await peer.next();
      if (message.id === requestId && !('method' in message)) return message;
    }
    throw new Error(`no answer to ${method} among 100 messages`);
  };
  return { peer, request };
}

const MODERN_ENVELOPE = {
  [META.protocolVersion]: '2026-07-28',
  [META.clientCapabilities]: { extensions: { [TASKS_EXTENSION_ID]: {} } },
  [META.clientInfo]: { name: 'ttl', version: '1' },
};

describe('a task’s time to live on the simulated clock', () => {
  it('2025-11-25: there at 59.999 s (tasks/get, tasks/result, tasks/list), -32602 from 60 s, then purged', async () => {
    const { clock, store, server } = serverOnClock();
    const { peer, request } = connect(server);
    await peer.initialize('2025-11-25', {} as never);
    const created = await request('tools/call', {
      name: 'slow_compute',
      arguments: { seconds: 0 },
      task: { ttl: TTL },
    });
    const { taskId, ttl } = created.result.task;
    expect(ttl).toBe(TTL);
    await eventually(async () => (await request('tasks/get', { taskId })).result.status === 'completed', 'the end');

    clock.advance(TTL - 1);
    expect((await request('tasks/get', { taskId })).result.status).toBe('completed');
    expect((await request('tasks/result', { taskId })).result.content[0].text).toBe('Computed job in 0 s');
    expect((await request('tasks/list')).result.tasks.map((task: any) => task.taskId)).toEqual([taskId]);

    clock.advance(1);
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      expect((await request(method, { taskId })).error, method).toMatchObject({
        code: -32602,
        message: `Invalid params: Unknown task: ${taskId}`,
      });
    }
    expect((await request('tasks/list')).result.tasks).toEqual([]);
    // Expired is unreadable at once; the record itself goes with the next sweep.
    expect(await store.countOf(ANONYMOUS_TASK_OWNER)).toBe(1);
    clock.advance(PURGE_EVERY - TTL);
    await eventually(async () => (await store.countOf(ANONYMOUS_TASK_OWNER)) === 0, 'the purge');
  });

  it('2026-07-28: there at 59.999 s, -32602 on tasks/get, tasks/update and tasks/cancel from 60 s, then purged', async () => {
    const { clock, store, server } = serverOnClock();
    const { request } = connect(server, MODERN_ENVELOPE);
    const created = (await request('tools/call', { name: 'slow_compute', arguments: { seconds: 0 } })).result;
    expect(created).toMatchObject({ resultType: 'task', ttlMs: TTL });
    const { taskId } = created;
    await eventually(async () => (await request('tasks/get', { taskId })).result.status === 'completed', 'the end');

    clock.advance(TTL - 1);
    expect((await request('tasks/get', { taskId })).result).toMatchObject({ status: 'completed', result: {} });
    clock.advance(1);
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const answer = await request(method, { taskId, inputResponses: {} });
      expect(answer.error, method).toMatchObject({ code: -32602, message: `Invalid params: Unknown task: ${taskId}` });
    }
    expect(await store.countOf(ANONYMOUS_TASK_OWNER)).toBe(1);
    clock.advance(PURGE_EVERY - TTL);
    await eventually(async () => (await store.countOf(ANONYMOUS_TASK_OWNER)) === 0, 'the purge');
  });

  it('stops a task still running when it expires', async () => {
    const { clock, server } = serverOnClock();
    const { request } = connect(server, MODERN_ENVELOPE);
    const { taskId } = (await request('tools/call', { name: 'slow_compute', arguments: { seconds: 3600 } })).result;
    const runner = (server.tasks as unknown as { runner: { liveCount: number } }).runner;
    expect(runner.liveCount).toBe(1);
    clock.advance(TTL - 1);
    expect((await request('tasks/get', { taskId })).result.status).toBe('working');
    clock.advance(1);
    expect((await request('tasks/get', { taskId })).error.code).toBe(-32602);
    await eventually(() => runner.liveCount === 0, 'the expired task to stop running');
  });

  // KNOWN SERVER BUG (reported to the lead): the store the server makes for itself reads time from Date.now
  // while the runner stamps tasks on the runtime's clock, so on a simulated clock a new task reads as expired
  // at once. Flip to `it` once ServerTasks gives its own MemoryTaskStore the runtime's clock.
  it('keeps a task for its time to live with the store the server makes itself', async () => {
    const clock = new ManualClock();
    const server = new Server(definition, { runtime: new Runtime({ clock }), tasks: { defaultTtlMs: TTL } });
    servers.push(server);
    const { request } = connect(server, MODERN_ENVELOPE);
    const { taskId } = (await request('tools/call', { name: 'slow_compute', arguments: { seconds: 3600 } })).result;
    clock.advance(TTL - 1);
    expect((await request('tasks/get', { taskId })).result?.status).toBe('working');
  });
});
