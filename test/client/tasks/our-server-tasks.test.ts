/**
 * The client's task handles against our own server (lib/server) and the conformance suite's task tools, in both
 * eras (the 2025-11-25 experimental form in the handshake era, the 2026-07-28 tasks extension in the stateless
 * one), in process and over Streamable HTTP: a task followed to its result, tasks that fail (a protocol error
 * in both eras; a tool error fails the task in 2025-11-25 and completes it with `isError` in 2026-07-28),
 * cancellation reaching the handler, progress shown as the status message, and a closed client following
 * nothing.
 */
import { filter, firstValueFrom, lastValueFrom, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { ConnectionClosedError, McpError, NotReadyError } from '../../../lib/jsonrpc/errors';
import { TaskCancelledError } from '../../../lib/client/tasks/task-handle';
import { within } from '../../helpers/wait';
import { assertWireValid, SETUPS, taskWorld } from './our-task-server';

afterEach(assertWireValid);

const failure = (promise: Promise<unknown>, what: string) =>
  within(
    promise.then(
      () => undefined,
      (error: unknown) => error,
    ),
    what,
  );

describe.each(SETUPS)('tasks of our server, $name', (setup) => {
  it('follows slow_compute from working to completed, then resolves with its result', async () => {
    const world = await taskWorld(setup);
    const client = await world.connect();
    expect(client.connectedEra).toBe(setup.era);

    const handle = await client.callToolAsTask('slow_compute', { seconds: 0.2, label: 'quick' });
    expect(handle.isTask).toBe(true);
    const statuses = lastValueFrom(handle.status$.pipe(toArray()));
    expect(await within(handle.result, 'the task result')).toMatchObject({
      content: [{ type: 'text', text: 'Computed quick in 0.2 s' }],
    });
    const seen = (await statuses).map((view) => view.status);
    expect(seen[0]).toBe('working');
    expect(seen.at(-1)).toBe('completed');
    expect(new Set(seen)).toEqual(new Set(['working', 'completed']));
    expect(handle.status).toMatchObject({ taskId: handle.taskId, status: 'completed' });
    expect(client.followedTasks).toBe(0);
    if (setup.over === 'HTTP' && setup.era === 'modern') {
      // The extension's requests name their task in Mcp-Name, as tools/call names its tool.
      const polls = world.seen.filter((request) => request.headers['mcp-method'] === 'tasks/get');
      expect(polls.length).toBeGreaterThan(0);
      for (const poll of polls) expect(poll.headers['mcp-name']).toBe(handle.taskId);
    }
  });

  it('runs greet (no task support) at once: the handle is final, with no task and no status', async () => {
    const client = await (await taskWorld(setup)).connect();
    const handle = await client.callToolAsTask('greet', { name: 'Ada' });
    expect(handle.isTask).toBe(false);
    expect(handle.ref).toBeUndefined();
    expect(await handle.result).toMatchObject({ content: [{ type: 'text', text: 'Hello, Ada!' }] });
    expect(await lastValueFrom(handle.status$.pipe(toArray()))).toEqual([]);
    expect(client.followedTasks).toBe(0);
  });

  it('rejects the result of protocol_error_job with the McpError its task failed with', async () => {
    const client = await (await taskWorld(setup)).connect();
    const handle = await client.callToolAsTask('protocol_error_job');
    const error = await failure(handle.result, 'the failure');
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: -32603, message: 'The job hit a protocol error' });
    expect(handle.status?.status).toBe('failed');
  });

  // 2025-11-25: a tool error fails the task (its result kept in the error's data); 2026-07-28 completes it.
  it(`gives failing_job's tool error as ${setup.era === 'handshake' ? 'a failed task' : 'a completed isError result'}`, async () => {
    const client = await (await taskWorld(setup)).connect();
    const handle = await client.callToolAsTask('failing_job');
    if (setup.era === 'handshake') {
      const error = await failure(handle.result, 'the failed task');
      expect(error).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(-32603);
      // The tool's own words say why (the task has no status message).
      expect((error as McpError).message).toMatch(/failed: The job failed: the disk is full$/);
      expect((error as McpError).data).toMatchObject({
        taskId: handle.taskId,
        result: { isError: true, content: [{ type: 'text', text: 'The job failed: the disk is full' }] },
      });
      expect(handle.status?.status).toBe('failed');
    } else {
      expect(await within(handle.result, 'the completed task')).toMatchObject({
        isError: true,
        content: [{ type: 'text', text: 'The job failed: the disk is full' }],
      });
      expect(handle.status?.status).toBe('completed');
    }
  });

  it("cancels a task: the server's handler stops, the result rejects with TaskCancelledError", async () => {
    const world = await taskWorld(setup);
    const client = await world.connect();
    const handle = await client.callToolAsTask('slow_compute', { seconds: 3600, label: 'long' });
    const statuses = lastValueFrom(handle.status$.pipe(toArray()));
    await world.slowComputeStarted('long');
    await handle.cancel();

    expect(await world.slowComputeEnded('long')).toMatchObject({ threw: expect.anything() });
    expect(await failure(handle.result, 'the cancellation')).toBeInstanceOf(TaskCancelledError);
    expect((await statuses).at(-1)?.status).toBe('cancelled');
    expect((await client.getTask(handle.taskId!)).status).toBe('cancelled');
    expect(client.followedTasks).toBe(0);
  });

  it('cancels the task when the signal given to callToolAsTask aborts', async () => {
    const world = await taskWorld(setup);
    const client = await world.connect();
    const abort = new AbortController();
    const handle = await client.callToolAsTask(
      'slow_compute',
      { seconds: 3600, label: 'aborted' },
      {
        signal: abort.signal,
      },
    );
    await world.slowComputeStarted('aborted');
    abort.abort();
    expect(await world.slowComputeEnded('aborted')).toMatchObject({ threw: expect.anything() });
    expect(await failure(handle.result, 'the cancellation')).toBeInstanceOf(TaskCancelledError);
  });

  it("shows the handler's progress as the status message of a working task", async () => {
    const client = await (await taskWorld(setup)).connect();
    // slow_compute reports its progress once a second: the first report comes after a second.
    const handle = await client.callToolAsTask('slow_compute', { seconds: 3600, label: 'report' });
    const reported = await within(
      firstValueFrom(handle.status$.pipe(filter((view) => view.statusMessage !== undefined))),
      'a status message',
    );
    expect(reported).toMatchObject({ status: 'working', statusMessage: 'report: 1 of 3600 s' });
    await handle.cancel();
  });

  it('close() leaves nothing followed: status$ completes, the result rejects, nothing more is sent', async () => {
    const client = await (await taskWorld(setup)).connect();
    const handle = await client.callToolAsTask('slow_compute', { seconds: 3600, label: 'closed' });
    expect(client.followedTasks).toBe(1);
    const statuses = lastValueFrom(handle.status$.pipe(toArray()));
    let sentAfterClose = 0;

    await client.close();
    client.trace$.subscribe((event) => {
      if (event.direction === 'out') sentAfterClose++;
    });
    expect(client.followedTasks).toBe(0);
    expect((await within(statuses, 'the end of status$')).map((view) => view.status)).toEqual(['working']);
    expect(await failure(handle.result, 'the abandoned result')).toBeInstanceOf(ConnectionClosedError);
    await expect(client.callToolAsTask('slow_compute')).rejects.toThrow(NotReadyError);
    expect(sentAfterClose).toBe(0);
  });
});
