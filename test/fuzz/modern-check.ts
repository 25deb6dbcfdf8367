/**
 * Compares what came back for a planned duplex case with the plan: each request answered exactly as planned,
 * in the order its id was used; the id-less errors; every error bounded; every notification one the plan
 * calls for (an acknowledgement per listen stream, the changes it heard, a `wait`'s progress), as many times
 * as it calls for; and every message valid against the 2026-07-28 schema.
 */
import { expect } from 'vitest';
import { STATIC_URI } from './modern-arbitraries';
import type { CasePlan, PlannedRequest } from './modern-plan';
import { idKey, MAX_ERROR_MESSAGE_CHARS } from './oracle';

/** The answers a plan still waits for, by id key: how many responses each id must get. */
export function expectedResponseCounts(plan: CasePlan): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of plan.requests) {
    if (request.answer.kind === 'open') continue;
    counts.set(idKey(request.id), (counts.get(idKey(request.id)) ?? 0) + 1);
  }
  return counts;
}

/**
 * Checks what came back for a case: each request answered exactly as planned, in the order its id was
 * used (an id may be used again once free), the id-less errors, every error bounded, and every notification
 * one the plan calls for, each as many times as it calls for. `validate` checks each message against the
 * 2026-07-28 schema, given the method it answers.
 */
export function checkAnswers(
  plan: CasePlan,
  received: readonly any[],
  validate: (method: string, message: any) => string[],
): void {
  const problems: string[] = [];
  const responses = received.filter((message) => !('method' in message));
  const notifications = received.filter((message) => 'method' in message);
  for (const response of responses) {
    expect(response, 'a JSON-RPC 2.0 response').toMatchObject({ jsonrpc: '2.0' });
    expect('result' in response !== 'error' in response, 'a result or an error').toBe(true);
    if (response.error) {
      expect(typeof response.error.message).toBe('string');
      expect(response.error.message.length, 'a bounded error message').toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS);
    }
  }
  const idless = responses.filter((response) => !('id' in response) || response.id === null);
  expect(idless.map((response) => response.error?.code).sort(), 'the id-less errors').toEqual(
    [...plan.idlessCodes].sort(),
  );
  for (const response of idless) problems.push(...validate('(unreadable)', response));

  const byId = new Map<string, PlannedRequest[]>();
  for (const request of plan.requests) byId.set(idKey(request.id), [...(byId.get(idKey(request.id)) ?? []), request]);
  const answeredById = new Map<string, any[]>();
  for (const response of responses) {
    if (!('id' in response) || response.id === null) continue;
    const key = idKey(response.id);
    expect(byId.has(key), `a response with id ${key} answers a request`).toBe(true);
    answeredById.set(key, [...(answeredById.get(key) ?? []), response]);
  }
  for (const [key, requests] of byId) {
    const answering = requests.filter((request) => request.answer.kind !== 'open');
    const got = answeredById.get(key) ?? [];
    const what = `the answers to id ${key.slice(0, 60)} (${requests.map((r) => r.text.slice(0, 200)).join(' | ')})`;
    expect(
      got.map((response) => (response.error ? response.error.code : response.result?.resultType)),
      what,
    ).toEqual(
      answering.map(({ answer }) =>
        answer.kind === 'error' ? answer.code : answer.kind === 'input_required' ? 'input_required' : 'complete',
      ),
    );
    answering.forEach((request, index) => {
      const response = got[index];
      problems.push(...validate(request.method, response));
      const answer = request.answer;
      if (answer.kind === 'error') answer.check?.(response.error);
      else if (answer.kind === 'result') answer.check?.(response.result);
      else if (answer.kind === 'input_required') {
        expect(typeof response.result.requestState, 'a round carries its state').toBe('string');
        expect(response.result.inputRequests?.name?.method, 'a round asks for the name').toBe('elicitation/create');
      }
    });
  }
  checkNotifications(plan, notifications, validate, problems);
  expect(problems, 'every message valid against the 2026-07-28 schema').toEqual([]);
}

function checkNotifications(
  plan: CasePlan,
  notifications: readonly any[],
  validate: (method: string, message: any) => string[],
  problems: string[],
): void {
  const streams = new Map(
    plan.requests.filter((request) => request.listens).map((request) => [idKey(request.id), request]),
  );
  const expected = new Map<string, number>();
  const bump = (key: string, by = 1) => by > 0 && expected.set(key, (expected.get(key) ?? 0) + by);
  for (const [key, stream] of streams) {
    bump(`ack ${key}`);
    bump(`notifications/tools/list_changed ${key}`, stream.heard.tools);
    bump(`notifications/resources/list_changed ${key}`, stream.heard.resources);
    bump(`notifications/resources/updated ${key}`, stream.heard.static);
  }
  for (const request of plan.requests)
    if (request.progressToken !== undefined) bump(`progress ${JSON.stringify(request.progressToken)}`);
  const got = new Map<string, number>();
  for (const notification of notifications) {
    problems.push(...validate('(stream)', notification));
    const subscription = notification.params?._meta?.['io.modelcontextprotocol/subscriptionId'];
    let key: string;
    if (notification.method === 'notifications/progress')
      key = `progress ${JSON.stringify(notification.params.progressToken)}`;
    else if (notification.method === 'notifications/subscriptions/acknowledged') {
      key = `ack ${idKey(subscription)}`;
      const stream = streams.get(idKey(subscription));
      if (stream?.listens) {
        expect(notification.params.notifications.toolsListChanged === true, 'the ack says tools are heard').toBe(
          stream.listens.tools,
        );
        expect(
          notification.params.notifications.resourcesListChanged === true,
          'the ack says resources are heard',
        ).toBe(stream.listens.resources);
        expect(notification.params.notifications.resourceSubscriptions, 'the ack names the resources followed').toEqual(
          stream.listens.static ? [STATIC_URI] : undefined,
        );
      }
    } else {
      key = `${notification.method} ${idKey(subscription)}`;
      if (notification.method === 'notifications/resources/updated')
        expect(notification.params.uri, 'the updated resource').toBe(STATIC_URI);
    }
    got.set(key, (got.get(key) ?? 0) + 1);
  }
  expect(Object.fromEntries(got), 'the notifications').toEqual(Object.fromEntries(expected));
}
