/**
 * A task belongs to the principal that made it, over real HTTP on 127.0.0.1 with a JWT-verifying `auth`
 * endpoint: principal B gets -32602 (exactly what an unknown id gets) for A's task on every tasks method of
 * each era, never sees it listed, and cannot cancel it; A, on a second session with a new token, sees it,
 * reads its end and cancels it; a task made in one era is the principal's in the other too.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { defineServer } from '../../lib/server/definition';
import { modernPeer, openSession, type TaskPeer } from '../fixtures/tasks/http-task-peers';
import { TASK_TOOLS } from '../fixtures/tasks/task-tools';
import { startTestIssuer, type TestIssuer } from '../helpers/jwt-issuer';
import { serveProtected, type ProtectedEndpoint } from '../helpers/protected-endpoint';
import { eventually, within } from '../helpers/wait';

const definition = defineServer({ name: 'task-isolation', version: '1.0.0', tools: [...TASK_TOOLS] });
/** Shaped like a task id, held by nobody. */
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

let issuer: TestIssuer;
let endpoint: ProtectedEndpoint;
beforeEach(async () => {
  issuer = await startTestIssuer();
  endpoint = await serveProtected(
    definition,
    (url) => ({ resource: url, authorizationServers: [issuer.issuer], jwks: issuer.jwksUrl }),
    { server: { tasks: { pollIntervalMs: 50 } } },
  );
});

/** A bearer token of `subject`; `nonce` makes another token of the same principal. */
async function bearer(subject: string, nonce = 'first'): Promise<{ headers: Record<string, string> }> {
  const token = await issuer.sign(endpoint.url, { sub: subject, jti: `${subject}-${nonce}` });
  return { headers: { authorization: `Bearer ${token}` } };
}

/** The error answering `method` for `taskId`, with the id in the message replaced (to compare two answers). */
async function refusal(peer: TaskPeer, method: string, params: Record<string, unknown>) {
  const answer = await within(peer.request(method, params), `the answer to ${method}`);
  expect(answer.result, `${method} answered a result`).toBeUndefined();
  const { code, message } = answer.error as { code: number; message: string };
  return { code, message: message.replaceAll(String(params.taskId), '<id>') };
}

describe('task isolation between principals, 2025-11-25 sessions', () => {
  it("refuses A's task to B on every tasks method as if unknown, lists it only to A, A's new token sees it", async () => {
    const alice = await openSession(endpoint.url, await bearer('alice'));
    const running = (await alice.request('tools/call', { name: 'slow_compute', arguments: { seconds: 60 }, task: {} }))
      .result.task.taskId;
    const done = (await alice.request('tools/call', { name: 'slow_compute', arguments: { seconds: 0 }, task: {} }))
      .result.task.taskId;

    const bob = await openSession(endpoint.url, await bearer('bob'));
    for (const method of ['tasks/get', 'tasks/cancel', 'tasks/result']) {
      for (const taskId of [running, done]) {
        const refused = await refusal(bob, method, { taskId });
        expect(refused.code, method).toBe(-32602);
        expect(refused, `${method}: B learns nothing an unknown id would not tell`).toEqual(
          await refusal(bob, method, { taskId: UNKNOWN }),
        );
      }
    }
    expect((await bob.request('tasks/list', {})).result.tasks).toEqual([]);
    // B's own task is B's alone: A does not see it listed either.
    const bobs = (await bob.request('tools/call', { name: 'slow_compute', arguments: { seconds: 0 }, task: {} })).result
      .task.taskId;
    expect((await bob.request('tasks/list', {})).result.tasks.map((task: any) => task.taskId)).toEqual([bobs]);

    const aliceAgain = await openSession(endpoint.url, await bearer('alice', 'second'));
    expect((await aliceAgain.request('tasks/get', { taskId: running })).result.status).toBe('working');
    const listed = (await aliceAgain.request('tasks/list', {})).result.tasks.map((task: any) => task.taskId);
    expect(listed.sort()).toEqual([running, done].sort());
    const result = await within(aliceAgain.request('tasks/result', { taskId: done }), 'the result of done');
    expect(result.result.content).toEqual([{ type: 'text', text: 'Computed job in 0 s' }]);
    expect((await aliceAgain.request('tasks/cancel', { taskId: running })).result.status).toBe('cancelled');
  });
});

describe('task isolation between principals, 2026-07-28 requests', () => {
  it("refuses A's task to B on tasks/get, tasks/update and tasks/cancel as if unknown; A's new token sees it", async () => {
    const alice = modernPeer(endpoint.url, await bearer('alice'));
    const asking = (await alice.request('tools/call', { name: 'confirm_delete', arguments: { filename: 'x' } })).result
      .taskId;
    await eventually(
      async () => (await alice.request('tasks/get', { taskId: asking })).result.status === 'input_required',
      'the task to ask for input',
    );

    const bob = modernPeer(endpoint.url, await bearer('bob'));
    const answers = { inputResponses: { 'elicitation-1': { action: 'accept', content: { confirm: true } } } };
    for (const method of ['tasks/get', 'tasks/update', 'tasks/cancel']) {
      const refused = await refusal(bob, method, { taskId: asking, ...answers });
      expect(refused.code, method).toBe(-32602);
      expect(refused, `${method}: B learns nothing an unknown id would not tell`).toEqual(
        await refusal(bob, method, { taskId: UNKNOWN, ...answers }),
      );
    }
    // B's update did not answer A's question, nor did its cancel end the task.
    const aliceAgain = modernPeer(endpoint.url, await bearer('alice', 'second'));
    const seen = (await aliceAgain.request('tasks/get', { taskId: asking })).result;
    expect(seen).toMatchObject({ status: 'input_required', inputRequests: { 'elicitation-1': expect.any(Object) } });

    await aliceAgain.request('tasks/update', { taskId: asking, ...answers });
    await eventually(
      async () => (await aliceAgain.request('tasks/get', { taskId: asking })).result.status === 'completed',
      'the answered task to complete',
    );
    expect((await aliceAgain.request('tasks/get', { taskId: asking })).result.result.content).toEqual([
      { type: 'text', text: 'Deleted x' },
    ]);
  });

  it("binds a task to its principal across eras: A's 2025 task is A's in 2026, and still not B's", async () => {
    const session = await openSession(endpoint.url, await bearer('alice'));
    const taskId = (await session.request('tools/call', { name: 'slow_compute', arguments: { seconds: 60 }, task: {} }))
      .result.task.taskId;
    const aliceModern = modernPeer(endpoint.url, await bearer('alice', 'modern'));
    expect((await aliceModern.request('tasks/get', { taskId })).result).toMatchObject({ taskId, status: 'working' });
    const bobModern = modernPeer(endpoint.url, await bearer('bob'));
    expect((await bobModern.request('tasks/cancel', { taskId })).error.code).toBe(-32602);
    expect((await aliceModern.request('tasks/cancel', { taskId })).result.resultType).toBe('complete');
    expect((await session.request('tasks/get', { taskId })).result.status).toBe('cancelled');
  });
});
