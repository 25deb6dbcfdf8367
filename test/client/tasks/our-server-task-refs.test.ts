/**
 * Task references against our own server, in both eras, in process and over Streamable HTTP: a task reopened
 * from its ref (stored as JSON) by a new client after the one that made it closed, and a ref refused before
 * anything is sent when it names another server (another name, another URL), another era, or is not a ref.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '../../../lib/client/client';
import { TASK_REF_VERSION, TaskRefError } from '../../../lib/client/tasks/task-ref';
import { SwitchboardError } from '../../../lib/jsonrpc/errors';
import { within } from '../../helpers/wait';
import { assertWireValid, SERVER_NAME, SETUPS, taskWorld } from './our-task-server';

afterEach(assertWireValid);

/** The methods `client` sends from now on. */
function sentMethods(client: Client): string[] {
  const methods: string[] = [];
  client.trace$.subscribe((event) => {
    if (event.direction === 'out' && event.method !== undefined) methods.push(event.method);
  });
  return methods;
}

describe.each(SETUPS)('task refs against our server, $name', (setup) => {
  it('reopens a task from its ref in a new client after the first one closed', async () => {
    const world = await taskWorld(setup);
    const first = await world.connect();
    const handle = await first.callToolAsTask('slow_compute', { seconds: 0.3, label: 'kept' });
    expect(handle.ref).toEqual({
      version: TASK_REF_VERSION,
      taskId: handle.taskId,
      era: setup.era,
      server: SERVER_NAME,
      // The endpoint as the transport names it (`Transport.eraKey`): scheme, host and path.
      ...(world.url !== undefined && { endpoint: world.url.replace('http://', 'http:') }),
    });
    const stored = JSON.stringify(handle.ref);
    await first.close();

    const second = await world.connect();
    const reopened = await second.reopenTask(stored);
    expect(reopened.taskId).toBe(handle.taskId);
    expect(reopened.ref).toEqual(handle.ref);
    expect(await within(reopened.result, 'the reopened result')).toMatchObject({
      content: [{ type: 'text', text: 'Computed kept in 0.3 s' }],
    });
    expect(reopened.status?.status).toBe('completed');
  });

  it('reopens a task that already ended: the handle ends as the task did', async () => {
    const world = await taskWorld(setup);
    const first = await world.connect();
    const handle = await first.callToolAsTask('protocol_error_job');
    await handle.result.catch(() => undefined);
    await first.close();

    const reopened = await (await world.connect()).reopenTask(handle.ref!);
    await expect(within(reopened.result, 'the failure')).rejects.toMatchObject({
      code: -32603,
      message: 'The job hit a protocol error',
    });
    expect(reopened.status?.status).toBe('failed');
  });

  it('refuses a ref of another server before sending anything', async () => {
    const world = await taskWorld(setup);
    const { ref } = await (await world.connect()).callToolAsTask('slow_compute', { seconds: 0.1, label: 'here' });
    // In process another server is told by its name; over HTTP by its URL (the same server behind another one).
    const elsewhere =
      world.url === undefined
        ? await (await taskWorld(setup, 'another-server')).connect()
        : await world.connect({}, await world.anotherUrl());
    const sent = sentMethods(elsewhere);

    const refused = await elsewhere.reopenTask(ref!).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(TaskRefError);
    expect(refused).toBeInstanceOf(SwitchboardError);
    expect(refused).toMatchObject({ code: 'TASK_REF_REFUSED' });
    expect((refused as Error).message).toMatch(world.url === undefined ? /server "our-task-server"/ : /endpoint/);
    expect(sent).toEqual([]);
  });

  it('refuses a ref of the other era, and what is not a ref, before sending anything', async () => {
    const world = await taskWorld(setup);
    const client = await world.connect();
    const { ref } = await client.callToolAsTask('slow_compute', { seconds: 0.1, label: 'era' });
    const sent = sentMethods(client);
    const otherEra = setup.era === 'modern' ? 'handshake' : 'modern';
    const refusals = [
      { ...ref!, era: otherEra },
      { ...ref!, version: 2 },
      { ...ref!, taskId: 'x'.repeat(513) },
      { ...ref!, taskId: 42 },
      { ...ref!, server: undefined },
      { ...ref!, endpoint: 7 },
      JSON.stringify({ ...ref!, endpoint: 'http://127.0.0.1:1/mcp' }),
      '{"__proto__": {"version": 1}}',
      'not json',
      null,
    ];
    for (const bad of refusals) {
      await expect(client.reopenTask(bad as never), JSON.stringify(bad)).rejects.toThrow(TaskRefError);
    }
    await expect(client.reopenTask({ ...ref!, era: otherEra })).rejects.toThrow(`era "${otherEra}", not ${setup.era}`);
    expect(sent).toEqual([]);
  });
});
