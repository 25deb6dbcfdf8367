/**
 * Input asked inside a task of our own server, answered by the client's registered elicitation handler, in both
 * eras, in process and over Streamable HTTP. 2025-11-25: each ask is an `elicitation/create` request to the
 * client (on the stream of its waiting `tasks/result` over HTTP), answered as any request is. 2026-07-28: the
 * asks wait in the task (`inputRequests` of `tasks/get`) and each answer goes back with `tasks/update` as soon as
 * it is ready. And a tool that asks in the request first (`test_tool_with_task`): an `input_required` round
 * (2026-07-28) or an elicitation inside the `tools/call` (2025-11-25), then the task.
 */
import { lastValueFrom, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '../../../lib/client/client';
import type { ElicitResult } from '../../../lib/protocol/client-features';
import type { TraceEvent } from '../../../lib/trace/types';
import { eventually, nextEvent, within } from '../../helpers/wait';
import { assertWireValid, SETUPS, taskWorld } from './our-task-server';

afterEach(assertWireValid);

const accept = (content: ElicitResult['content']): ElicitResult => ({ action: 'accept', content });

/** A client of a new task world whose form handler accepts with `content`, and the messages it was asked. */
async function answering(setup: (typeof SETUPS)[number], content: ElicitResult['content']) {
  const asked: string[] = [];
  const client = await (
    await taskWorld(setup)
  ).connect({
    elicitation: {
      form: (params) => {
        asked.push(params.message);
        return accept(content);
      },
    },
  });
  return { asked, client };
}

/** What the client sends, as it sends it. */
function sent(client: Client): TraceEvent[] {
  const events: TraceEvent[] = [];
  client.trace$.subscribe((event) => {
    if (event.direction === 'out' && event.message !== undefined) events.push(event);
  });
  return events;
}

/** The keys of each `tasks/update` among `events`, in order. */
const updatedKeys = (events: readonly TraceEvent[]) =>
  events
    .filter((event) => event.method === 'tasks/update')
    .map((event) => Object.keys((event.message as any).params.inputResponses));

describe.each(SETUPS)('input inside a task of our server, $name', (setup) => {
  it('answers confirm_delete with the registered elicitation handler', async () => {
    const { asked, client } = await answering(setup, { confirm: true });
    const handle = await client.callToolAsTask('confirm_delete', { filename: 'a.txt' });
    const statuses = lastValueFrom(handle.status$.pipe(toArray()));
    expect(await within(handle.result, 'the confirmed result')).toMatchObject({
      content: [{ type: 'text', text: 'Deleted a.txt' }],
    });
    expect(asked).toEqual(['Delete a.txt?']);
    const seen = (await statuses).map((view) => view.status);
    expect(seen.at(-1)).toBe('completed');
    // 2026-07-28 reads the asks from a task seen input_required; 2025-11-25 may hear of it too late to show it.
    if (setup.era === 'modern') expect(seen).toContain('input_required');
  });

  it("keeps the file when the user declines (the handler's answer reaches the task as given)", async () => {
    const client = await (await taskWorld(setup)).connect({ elicitation: { form: () => ({ action: 'decline' }) } });
    const handle = await client.callToolAsTask('confirm_delete', { filename: 'b.txt' });
    expect(await within(handle.result, 'the declined result')).toMatchObject({
      content: [{ type: 'text', text: 'Kept b.txt' }],
    });
  });

  it('answers the two questions of multi_input as they come: the first is sent while the second is pending', async () => {
    let releaseSecond!: (answer: ElicitResult) => void;
    const second = new Promise<ElicitResult>((resolve) => (releaseSecond = resolve));
    const client = await (
      await taskWorld(setup)
    ).connect({
      elicitation: {
        form: (params) => (params.message.startsWith('First') ? accept({ confirm: true }) : second),
      },
    });
    const events = sent(client);
    const firstAnswered = nextEvent(
      client.trace$,
      (event) =>
        event.direction === 'out' &&
        (setup.era === 'modern'
          ? event.method === 'tasks/update'
          : event.kind === 'result' && (event.message as any)?.result?.content?.confirm === true),
      'the answer to the first question',
    );
    const handle = await client.callToolAsTask('multi_input');
    await firstAnswered;
    expect(handle.status?.status).not.toBe('completed');

    releaseSecond(accept({ confirm: false }));
    expect(await within(handle.result, 'both answers')).toMatchObject({
      content: [{ type: 'text', text: 'first: true, second: false' }],
    });
    if (setup.era === 'modern') expect(updatedKeys(events)).toEqual([['first'], ['second']]);
  });

  it('asks for the name of test_tool_with_task in the request, then follows the task it became', async () => {
    const { asked, client } = await answering(setup, { name: 'Ada' });
    const events = sent(client);
    const handle = await client.callToolAsTask('test_tool_with_task');
    expect(handle.isTask).toBe(true);
    expect(await within(handle.result, 'the greeting')).toMatchObject({
      content: [{ type: 'text', text: 'Hello, Ada, from a task' }],
    });
    expect(asked).toEqual(['Your name?']);
    const calls = events.filter((event) => event.method === 'tools/call' && event.kind === 'request');
    if (setup.era === 'modern') {
      // One input_required round: the call, then its retry with the answer; the task comes after.
      expect(calls.map((event) => Object.keys((event.message as any).params.inputResponses ?? {}))).toEqual([
        [],
        ['elicitation-1'],
      ]);
    } else {
      // The elicitation is a request inside the tools/call: answered before the call is, and only once.
      expect(calls).toHaveLength(1);
      const answers = events.filter((event) => event.kind === 'result');
      expect(answers).toHaveLength(1);
      expect(events.indexOf(answers[0]!)).toBeGreaterThan(events.indexOf(calls[0]!));
    }
    expect(events.filter((event) => event.method === 'tasks/update')).toEqual([]);
  });
});

describe.each(SETUPS.filter((setup) => setup.era === 'modern'))('tasks/update answers, $name', (setup) => {
  // 2025-11-25 has no such thing: there the ask was a request on the first client's session, and went with it.
  it('answers the question a task still waits on with the handler of the client that reopened it', async () => {
    const world = await taskWorld(setup);
    let asked!: () => void;
    const wasAsked = new Promise<void>((resolve) => (asked = resolve));
    const first = await world.connect({
      elicitation: {
        form: () => {
          asked();
          return new Promise<never>(() => undefined);
        },
      },
    });
    const { ref } = await first.callToolAsTask('confirm_delete', { filename: 'later.txt' });
    await within(wasAsked, 'the question to the first client');
    await first.close();

    const second = await world.connect({ elicitation: { form: () => accept({ confirm: true }) } });
    const reopened = await second.reopenTask(ref!);
    expect(await within(reopened.result, 'the confirmed result')).toMatchObject({
      content: [{ type: 'text', text: 'Deleted later.txt' }],
    });
  });

  it('cancels the task when the elicitation handler fails (the task cannot go on as asked)', async () => {
    const world = await taskWorld(setup);
    const client = await world.connect({
      elicitation: {
        form: () => {
          throw new Error('No user at the keyboard');
        },
      },
    });
    const handle = await client.callToolAsTask('confirm_delete', { filename: 'c.txt' });
    const error = await within(
      handle.result.then(
        () => undefined,
        (thrown: unknown) => thrown,
      ),
      'the failure',
    );
    expect(String(error)).toContain('No user at the keyboard');
    // The cancel is sent and not awaited (the result already says why the call failed): the server's state.
    await eventually(async () => (await client.getTask(handle.taskId!)).status === 'cancelled', 'the task cancelled');
  });
});
