/**
 * The client side of tasks in the 2025-11-25 experimental form, against the official SDK v1 server and its own
 * in-memory task store (test/client/tasks/sdk-task-server.ts), in process.
 */
import { firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ConnectionClosedError, McpError, NotReadyError } from '../../../lib/jsonrpc/errors';
import { TaskCancelledError } from '../../../lib/client/tasks/task-handle';
import { TaskRefError } from '../../../lib/client/tasks/task-ref';
import { within } from '../../helpers/wait';
import { SDK_SERVER_NAME, sdkTaskWorld } from './sdk-task-server';

describe('tasks against the SDK v1 server (2025-11-25)', () => {
  it('calls a tool as a task: status$ shows it working then completed, result is the tool result', async () => {
    const world = sdkTaskWorld();
    const client = await world.connect();
    expect(client.connectedEra).toBe('handshake');

    const handle = await client.callToolAsTask('echo', { text: 'hi' }, { ttlMs: 30_000 });
    expect(handle.isTask).toBe(true);
    expect(handle.ref).toEqual({ version: 1, taskId: handle.taskId, era: 'handshake', server: SDK_SERVER_NAME });
    expect((await firstValueFrom(handle.status$)).status).toBe('working');
    expect((await client.getTask(handle.taskId!)).ttlMs).toBe(30_000);

    const statuses = lastValueFrom(handle.status$.pipe(toArray()));
    world.release();
    expect(await within(handle.result, 'the task result')).toMatchObject({
      content: [{ type: 'text', text: 'echo: hi' }],
    });
    expect((await statuses).map((view) => view.status)).toEqual(['working', 'completed']);
    expect(client.followedTasks).toBe(0);
  });

  it('rejects the result of a failed task with an McpError', async () => {
    const client = await sdkTaskWorld().connect();
    const handle = await client.callToolAsTask('fail');
    const error = await within(
      handle.result.catch((e: unknown) => e),
      'the failure',
    );
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(-32603);
    expect((error as McpError).message).toContain('failed');
    expect(handle.status?.status).toBe('failed');
  });

  it('cancels a task: the result rejects with TaskCancelledError and the server lists it cancelled', async () => {
    const client = await sdkTaskWorld().connect();
    const handle = await client.callToolAsTask('hold');
    await handle.cancel();
    const error = await within(
      handle.result.catch((e: unknown) => e),
      'the cancellation',
    );
    expect(error).toBeInstanceOf(TaskCancelledError);
    expect(handle.status?.status).toBe('cancelled');
    const listed = await client.listTasks();
    expect(listed.find((task) => task.taskId === handle.taskId)?.status).toBe('cancelled');
    await expect(client.cancelTask(handle.taskId!)).rejects.toMatchObject({ code: -32602 });
  });

  it('answers an elicitation inside the task with the registered handler (delivered on tasks/result)', async () => {
    const asked: unknown[] = [];
    const client = await sdkTaskWorld().connect({
      elicitation: {
        form: (params) => {
          asked.push(params.message);
          return { action: 'accept', content: { ok: true } };
        },
      },
    });
    const handle = await client.callToolAsTask('confirm', { file: 'a.txt' });
    const result = await within(handle.result, 'the confirmed result');
    expect(result.content).toEqual([{ type: 'text', text: 'accept: {"ok":true}' }]);
    expect(asked).toEqual(['Delete a.txt?']);
  });

  it('runs a tool without task support at once: the handle is final, with no task', async () => {
    const client = await sdkTaskWorld().connect();
    await client.listTools();
    const handle = await client.callToolAsTask('plain');
    expect(handle.isTask).toBe(false);
    expect(handle.ref).toBeUndefined();
    expect(await handle.result).toMatchObject({ content: [{ type: 'text', text: 'plain' }] });
    expect(await lastValueFrom(handle.status$.pipe(toArray()))).toEqual([]);
  });

  it('reopens a task from its ref (as JSON) in a second client after the first one closed', async () => {
    const world = sdkTaskWorld();
    const first = await world.connect();
    const ref = JSON.stringify((await first.callToolAsTask('echo', { text: 'later' })).ref);
    await first.close();

    const second = await world.connect();
    const reopened = await second.reopenTask(ref);
    world.release();
    expect(await within(reopened.result, 'the reopened result')).toMatchObject({
      content: [{ type: 'text', text: 'echo: later' }],
    });
  });

  it('refuses a ref of another server before sending anything', async () => {
    const world = sdkTaskWorld();
    const first = await world.connect();
    const { ref } = await first.callToolAsTask('hold');
    const other = await world.connect({}, 'another-server');
    const sent: string[] = [];
    other.trace$.subscribe((event) => {
      if (event.direction === 'out' && event.method) sent.push(event.method);
    });
    await expect(other.reopenTask(ref!)).rejects.toThrow(TaskRefError);
    await expect(other.reopenTask({ ...ref!, era: 'modern' })).rejects.toThrow(/era "modern", not handshake/);
    await expect(other.reopenTask('{"not":"a ref"}')).rejects.toThrow(TaskRefError);
    await expect(other.reopenTask('not json')).rejects.toThrow(TaskRefError);
    expect(sent).toEqual([]);
  });
});

describe('a task handle ends with its client', () => {
  // The connection's timers are batched (lib/core/timer-queues.ts): a platform timer may outlive a cleared one,
  // so the client's own count of followed tasks (each holds at most one timer) is what is checked.
  it('close() stops the polling (no task followed), completes status$ and rejects the result', async () => {
    const client = await sdkTaskWorld().connect();
    const handle = await client.callToolAsTask('hold');
    expect(client.followedTasks).toBe(1);
    const statuses = lastValueFrom(handle.status$.pipe(toArray()));

    await client.close();
    expect(client.followedTasks).toBe(0);
    expect((await statuses).map((view) => view.status)).toEqual(['working']);
    await expect(handle.result).rejects.toThrow(ConnectionClosedError);
    await expect(client.callToolAsTask('hold')).rejects.toThrow(NotReadyError);
  });

  it('errors status$ with ConnectionClosedError (and its quit reason) when the server goes away', async () => {
    const world = sdkTaskWorld();
    const client = await world.connect();
    const handle = await client.callToolAsTask('hold');
    const ended = lastValueFrom(handle.status$).catch((error: unknown) => error);
    await world.closeServer();
    const error = await within(ended, 'the end of status$');
    expect(error).toBeInstanceOf(ConnectionClosedError);
    expect((error as ConnectionClosedError).quitReason?.kind).not.toBe('local-close');
    await expect(handle.result).rejects.toBe(error);
    expect(client.followedTasks).toBe(0);
  });
});
