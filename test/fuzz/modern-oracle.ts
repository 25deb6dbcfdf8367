/**
 * What a dual-era server must answer on a duplex connection (stdio, in memory) to a generated case, from the
 * 2026-07-28 rules alone, read off the text sent (parsed, own members only, as JSON defines them) and not
 * from our code: the era latches on the first served request that is not a `server/discover` probe; a
 * request with the envelope climbs the rejection ladder (nesting past the limit -32600; a claim that is not a
 * non-empty string -32602; a revision not served -32022 `{supported, requested}`; `clientCapabilities`
 * missing or malformed, or another envelope key malformed -32602; a removed or unserved method -32601); a
 * served one gets its method's outcome (`resultType` on every result, -32021 `{requiredCapabilities}` for an
 * ask the client did not declare, -32602 for bad params, an `input_required` round); once latched, a request
 * without the envelope is refused (-32022 for `initialize`, -32602 otherwise). A cancelled request is never
 * answered; a listen stream is acknowledged once and hears each list change it asked for.
 *
 * `planCase` turns a case into the steps to run and the answers to expect; `checkAnswers` compares.
 */
import { expect } from 'vitest';
import { CAPABILITIES_KEY, CLAIM_KEY, MODERN_VERSION } from './arbitraries';
import {
  CLIENT_INFO_KEY,
  LOG_LEVEL_KEY,
  legacyRequestText,
  modernRequestText,
  plainEnvelope,
  STATIC_URI,
  type DuplexCase,
  type ModernRequestSpec,
  type RetryVariant,
} from './modern-arbitraries';
import { depthOf, expectationForLine, idKey, MAX_DEPTH, MAX_ERROR_MESSAGE_CHARS, type RequestId } from './oracle';

export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const MISSING_CAPABILITY = -32021;
export const UNSUPPORTED_VERSION = -32022;

/** What one request must get back. */
export type Answer =
  | { readonly kind: 'result'; readonly check?: (result: any) => void }
  | { readonly kind: 'error'; readonly code: number; readonly check?: (error: any) => void }
  | { readonly kind: 'input_required' }
  /** A long-lived request (a listen stream, a `wait`): answered only if the server closes it, which it does not here. */
  | { readonly kind: 'open'; readonly stream: 'listen' | 'wait' };

export interface PlannedRequest {
  readonly id: RequestId;
  readonly method: string;
  readonly text: string;
  answer: Answer;
  /** Cancelled while open: it must never be answered. */
  cancelled?: true;
  /** Answered after a macrotask or a promise (an input round, a sealed state): a cancel or a reused id would race it. */
  readonly deferred: boolean;
  /** A listen stream: which changes it honours (list changes, updates of the static resource). */
  readonly listens?: { readonly tools: boolean; readonly resources: boolean; readonly static: boolean };
  /** Change notifications this stream must get, by change. */
  readonly heard: { tools: number; resources: number; static: number };
  /** A `wait` with a valid progress token: the one progress notification it sends. */
  readonly progressToken?: string | number;
}

export type Step =
  | { readonly kind: 'send'; readonly text: string }
  /** Wait for the answer to `round`, then send the retry built from its `requestState`. */
  | { readonly kind: 'retry'; readonly round: PlannedRequest; readonly build: (requestState: string) => string }
  | { readonly kind: 'publish'; readonly change: 'tools' | 'resources' | 'static' }
  /** Everything sent so far is served: the connection must still be in `state`. */
  | { readonly kind: 'checkpoint'; readonly state: 'uninitialized' | 'modern' };

export interface CasePlan {
  readonly steps: readonly Step[];
  readonly requests: readonly PlannedRequest[];
  readonly idlessCodes: readonly number[];
  /** Requests open when the case ends: the harness cancels them, then checks their ids are free. */
  readonly openAtEnd: readonly PlannedRequest[];
  /** Ids of requests that were open at some point (their ids must be free after the case). */
  readonly longLivedIds: readonly RequestId[];
}

const LOGGING_LEVELS = new Set(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']);
const CAPABILITY_FAMILIES = ['experimental', 'extensions', 'roots', 'sampling', 'elicitation', 'tasks'];
/** Methods 2026-07-28 removed (spec: the handshake, ping, logging/setLevel, resource subscriptions, tasks). */
const REMOVED = new Set([
  'initialize',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
  'tasks/result',
  'tasks/list',
]);
/** What the fuzz server declares: tools and resources (with list changes and subscriptions), nothing else. */
const SERVED = new Set([
  'server/discover',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'subscriptions/listen',
]);
const TOOLS = new Set(['echo', 'wait', 'ask']);

const isPlain = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
/** A member as JSON defines it: own, never inherited (`{"__proto__":…}` is an own member named `__proto__`). */
const own = (value: unknown, key: string): unknown =>
  isPlain(value) && Object.prototype.hasOwnProperty.call(value, key) ? value[key] : undefined;

const error = (code: number, check?: (error: any) => void): Answer => ({ kind: 'error', code, check });
const result = (check?: (result: any) => void): Answer => ({ kind: 'result', check });

/** The verdict of the ladder on a claimed request: an error, or served (and whether it latches the era). */
type LadderVerdict = { readonly refused: Answer } | { readonly served: true };

function ladder(message: Record<string, unknown>, text: string): LadderVerdict {
  if (depthOf(text) > MAX_DEPTH) return { refused: error(INVALID_REQUEST) };
  const meta = own(own(message, 'params'), '_meta');
  const claim = own(meta, CLAIM_KEY);
  if (typeof claim !== 'string' || claim === '') return { refused: error(INVALID_PARAMS) };
  if (claim !== MODERN_VERSION) {
    return {
      refused: error(UNSUPPORTED_VERSION, (e) => {
        expect(e.data?.supported, '-32022 names the revisions served').toContain(MODERN_VERSION);
        expect(e.data?.requested, '-32022 names the revision requested').toBe(claim);
      }),
    };
  }
  const capabilities = own(meta, CAPABILITIES_KEY);
  if (!isPlain(capabilities)) return { refused: error(INVALID_PARAMS) };
  for (const family of CAPABILITY_FAMILIES) {
    const declared = own(capabilities, family);
    if (declared !== undefined && !isPlain(declared)) return { refused: error(INVALID_PARAMS) };
  }
  const info = own(meta, CLIENT_INFO_KEY);
  if (info !== undefined && !(typeof own(info, 'name') === 'string' && typeof own(info, 'version') === 'string'))
    return { refused: error(INVALID_PARAMS) };
  const level = own(meta, LOG_LEVEL_KEY);
  if (level !== undefined && !(typeof level === 'string' && LOGGING_LEVELS.has(level)))
    return { refused: error(INVALID_PARAMS) };
  const token = own(meta, 'progressToken');
  if (token !== undefined && !(typeof token === 'string' || Number.isInteger(token)))
    return { refused: error(INVALID_PARAMS) };
  const method = message.method as string;
  if (REMOVED.has(method) || !SERVED.has(method)) return { refused: error(METHOD_NOT_FOUND) };
  return { served: true };
}

interface Served {
  readonly answer: Answer;
  readonly deferred: boolean;
  readonly listens?: { tools: boolean; resources: boolean; static: boolean };
}

/** The outcome of a request the ladder let through, by its method. */
function servedOutcome(message: Record<string, unknown>): Served {
  const params = own(message, 'params');
  const method = message.method as string;
  const now = (answer: Answer): Served => ({ answer, deferred: false });
  switch (method) {
    case 'server/discover':
      return now(
        result((r) => {
          expect(r.supportedVersions).toContain(MODERN_VERSION);
          expect(r._meta?.['io.modelcontextprotocol/serverInfo']?.name).toBe('fuzz-modern');
          expectCacheHint(r);
        }),
      );
    case 'tools/list':
      if (own(params, 'cursor') !== undefined) return now(error(INVALID_PARAMS));
      return now(
        result((r) => {
          expect(r.tools.map((tool: { name: string }) => tool.name).sort()).toEqual(['ask', 'echo', 'wait']);
          expectCacheHint(r);
        }),
      );
    case 'resources/list':
      return now(result((r) => expect(r.resources.map((resource: any) => resource.uri)).toEqual([STATIC_URI])));
    case 'resources/templates/list':
      return now(result());
    case 'resources/read':
      return now(readOutcome(own(params, 'uri')));
    case 'subscriptions/listen':
      return listenOutcome(own(params, 'notifications'));
    case 'tools/call':
      return callOutcome(params);
    default:
      throw new Error(`The oracle has no rule for ${method}`);
  }
}

function expectCacheHint(r: any): void {
  expect(Number.isSafeInteger(r.ttlMs) && r.ttlMs >= 0, 'ttlMs').toBe(true);
  expect(['public', 'private'], 'cacheScope').toContain(r.cacheScope);
}

function readOutcome(uri: unknown): Answer {
  if (typeof uri !== 'string') return error(INVALID_PARAMS);
  if (uri === STATIC_URI)
    return result((r) => {
      expect(r.contents).toEqual([expect.objectContaining({ uri: STATIC_URI, text: 'static' })]);
      expectCacheHint(r);
    });
  // 2026-07-28: an unknown resource is -32602 naming the URI (a bounded excerpt of a long one).
  return error(INVALID_PARAMS, (e) => {
    if (uri.length <= 1024) expect(e.data?.uri, 'data.uri').toBe(uri);
    else expect(typeof e.data?.uri === 'string' && e.data.uri.length <= 1100, 'a bounded data.uri').toBe(true);
  });
}

function listenOutcome(filter: unknown): Served {
  const refuse: Served = { answer: error(INVALID_PARAMS), deferred: false };
  if (!isPlain(filter)) return refuse;
  for (const kind of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'])
    if (own(filter, kind) !== undefined && typeof own(filter, kind) !== 'boolean') return refuse;
  const uris = own(filter, 'resourceSubscriptions');
  if (uris !== undefined && !(Array.isArray(uris) && uris.every((uri) => typeof uri === 'string'))) return refuse;
  return {
    answer: { kind: 'open', stream: 'listen' },
    deferred: false,
    listens: {
      tools: own(filter, 'toolsListChanged') === true,
      resources: own(filter, 'resourcesListChanged') === true,
      static: Array.isArray(uris) && uris.includes(STATIC_URI),
    },
  };
}

/** An elicitation answer as the ElicitResult schema has it: an action, and content of primitive values. */
function isElicitResult(value: unknown): value is { action: string; content?: Record<string, unknown> } {
  if (!isPlain(value) || !['accept', 'decline', 'cancel'].includes(own(value, 'action') as string)) return false;
  const content = own(value, 'content');
  return (
    content === undefined ||
    (isPlain(content) && Object.values(content).every((v) => ['string', 'number', 'boolean'].includes(typeof v)))
  );
}

function callOutcome(params: unknown): Served {
  const now = (answer: Answer): Served => ({ answer, deferred: false });
  const inputResponses = own(params, 'inputResponses');
  if (inputResponses !== undefined && !isPlain(inputResponses)) return now(error(INVALID_PARAMS));
  const requestState = own(params, 'requestState');
  if (requestState !== undefined) {
    // Not one the server sealed (the retries, which carry one, are planned apart): refused before the handler.
    return { answer: error(INVALID_PARAMS), deferred: typeof requestState === 'string' };
  }
  const name = own(params, 'name');
  const args = own(params, 'arguments') ?? {};
  if (typeof name !== 'string' || !isPlain(args) || !TOOLS.has(name)) return now(error(INVALID_PARAMS));
  if (name === 'echo') return now(result((r) => expect(r.content[0].text, 'echo').toBe(JSON.stringify(args))));
  if (name === 'wait') return now({ kind: 'open', stream: 'wait' });
  // `ask` is an async handler: whatever it answers comes a few promise hops after it is read.
  const later = (answer: Answer): Served => ({ answer, deferred: true });
  const capabilities = own(own(own(params, '_meta'), CAPABILITIES_KEY) as unknown, 'elicitation');
  if (!isPlain(capabilities))
    return later(
      error(MISSING_CAPABILITY, (e) =>
        expect(e.data?.requiredCapabilities, '-32021 names what is required').toHaveProperty('elicitation'),
      ),
    );
  const answer = own(inputResponses, 'name');
  if (answer === undefined) return later({ kind: 'input_required' });
  if (!isElicitResult(answer)) return later(error(INVALID_PARAMS));
  return later(result((r) => expect(r.content[0].text).toBe(askText(answer))));
}

function askText(answer: { action: string; content?: Record<string, unknown> }): string {
  return answer.action === 'accept' ? `Hi, ${String(own(answer.content, 'name'))}` : answer.action;
}

// ---- planning ---------------------------------------------------------------------------------------------

/** Turns a case into the steps to send and the answers they call for. */
export function planCase(testCase: DuplexCase): CasePlan {
  const steps: Step[] = [];
  const requests: PlannedRequest[] = [];
  const idlessCodes: number[] = [];
  const open = new Map<string, PlannedRequest>();
  const rounds: PlannedRequest[] = [];
  const longLived: RequestId[] = [];
  let n = 0;
  const nextId = (): [RequestId, string] => {
    const id: RequestId = n % 3 === 0 ? n : `q${n}`;
    n++;
    return [id, JSON.stringify(id)];
  };
  const planned = (id: RequestId, method: string, text: string, served: Served, token?: unknown): PlannedRequest => {
    const request: PlannedRequest = {
      id,
      method,
      text,
      answer: served.answer,
      deferred: served.deferred,
      listens: served.listens,
      heard: { tools: 0, resources: 0, static: 0 },
      ...(served.answer.kind === 'open' &&
        served.answer.stream === 'wait' &&
        token !== undefined && { progressToken: token as string | number }),
    };
    requests.push(request);
    steps.push({ kind: 'send', text });
    if (served.answer.kind === 'open') {
      open.set(idKey(id), request);
      longLived.push(id);
    }
    if (served.answer.kind === 'input_required') rounds.push(request);
    return request;
  };
  let latched = false;
  const sendModern = (spec: ModernRequestSpec, id: RequestId, idText: string): PlannedRequest => {
    const text = modernRequestText(spec, idText);
    const message = JSON.parse(text);
    const verdict = ladder(message, text);
    if ('refused' in verdict) return planned(id, spec.method, text, { answer: verdict.refused, deferred: false });
    if (spec.method !== 'server/discover') latched = true;
    const token = own(own(message.params, '_meta'), 'progressToken');
    if (open.has(idKey(id))) {
      // The id of a request in flight: refused, the other request untouched.
      return planned(id, spec.method, text, { answer: error(INVALID_REQUEST), deferred: false });
    }
    return planned(id, spec.method, text, servedOutcome(message), token);
  };
  const sendLine = (text: string) => {
    steps.push({ kind: 'send', text });
    const expectation = expectationForLine(Buffer.from(text), 'messages', Number.MAX_SAFE_INTEGER);
    if (expectation.kind === 'idless') idlessCodes.push(expectation.code);
    else if (expectation.kind === 'answer')
      requests.push({
        id: expectation.id,
        method: 'unknown',
        text,
        answer: error(expectation.outcomes[0] as number),
        deferred: false,
        heard: { tools: 0, resources: 0, static: 0 },
      });
    else if (expectation.kind !== 'silent') throw new Error(`A line with no era-free answer: ${text}`);
  };

  for (const item of testCase.prefix) {
    if (item.kind === 'line') sendLine(item.text);
    else sendModern(item.spec, ...nextId());
    if (latched) throw new Error(`A prefix item latched the era: ${JSON.stringify(item)}`);
  }
  steps.push({ kind: 'checkpoint', state: 'uninitialized' });
  sendModern(testCase.latch, ...nextId());
  if (!latched) throw new Error('The latch request did not latch');

  /** Requests whose outcome is settled when they are read: a cancel or a reused id cannot race them. */
  const settled = () => requests.filter((request) => !request.deferred && request.method !== 'unknown');
  for (const item of testCase.body) {
    switch (item.kind) {
      case 'request':
        sendModern(item.spec, ...nextId());
        break;
      case 'legacy': {
        const [id, idText] = nextId();
        const requested = own(item.params === undefined ? undefined : JSON.parse(item.params), 'protocolVersion');
        const answer =
          item.method === 'initialize'
            ? error(UNSUPPORTED_VERSION, (e) => {
                expect(e.data?.supported).toContain(MODERN_VERSION);
                expect(e.data?.requested).toBe(typeof requested === 'string' ? requested : '');
              })
            : error(INVALID_PARAMS);
        planned(id, item.method, legacyRequestText(item.method, item.params, idText), { answer, deferred: false });
        break;
      }
      case 'cancel': {
        const candidates = item.open ? [...open.values()] : settled();
        const target =
          item.target === 'unknown' || candidates.length === 0
            ? undefined
            : candidates[item.target % candidates.length]!;
        const idText = target === undefined ? JSON.stringify(`never-${n}`) : JSON.stringify(target.id);
        steps.push({
          kind: 'send',
          text: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${idText},"reason":"fuzz"}}`,
        });
        // A cancel names an id: it ends whatever request is in flight with that id now.
        const inFlight = target && open.get(idKey(target.id));
        if (inFlight) {
          open.delete(idKey(inFlight.id));
          inFlight.cancelled = true;
        }
        break;
      }
      case 'line':
        sendLine(item.text);
        break;
      case 'publish':
        steps.push({ kind: 'publish', change: item.change });
        for (const stream of open.values()) if (stream.listens?.[item.change]) stream.heard[item.change]++;
        break;
      case 'duplicate': {
        const candidates = settled();
        if (candidates.length === 0) break;
        const target = candidates[item.target % candidates.length]!;
        const spec: ModernRequestSpec = {
          envelope: plainEnvelope(),
          method: 'tools/call',
          params: [
            ['name', '"echo"'],
            ['arguments', '{"duplicate":true}'],
          ],
        };
        sendModern(spec, target.id, JSON.stringify(target.id));
        break;
      }
      case 'retry': {
        if (rounds.length === 0) break;
        const round = rounds[item.target % rounds.length]!;
        const [id, idText] = nextId();
        const { build, answer } = retryOf(round, item.variant, idText);
        requests.push({
          id,
          method: 'tools/call',
          text: `retry of ${String(round.id)} (${item.variant})`,
          answer,
          deferred: true,
          heard: { tools: 0, resources: 0, static: 0 },
        });
        steps.push({ kind: 'retry', round, build });
        break;
      }
    }
  }
  steps.push({ kind: 'checkpoint', state: 'modern' });
  return { steps, requests, idlessCodes, openAtEnd: [...open.values()], longLivedIds: longLived };
}

/** A retry of an `input_required` round of `ask`: the text from the round's state, and what it must get. */
function retryOf(
  round: PlannedRequest,
  variant: RetryVariant,
  idText: string,
): { build: (requestState: string) => string; answer: Answer } {
  const responses: Record<RetryVariant, string> = {
    accept: '{"name":{"action":"accept","content":{"name":"Ada"}}}',
    decline: '{"name":{"action":"decline"}}',
    'wrong-kind': '{"name":{"roots":[]}}',
    'tampered-state': '{"name":{"action":"decline"}}',
    'other-arguments': '{"name":{"action":"decline"}}',
  };
  const args = variant === 'other-arguments' ? '{"other":1}' : '{}';
  const build = (requestState: string) => {
    const state = variant === 'tampered-state' ? tamper(requestState) : requestState;
    return modernRequestText(
      {
        envelope: plainEnvelope(),
        method: 'tools/call',
        params: [
          ['name', '"ask"'],
          ['arguments', args],
          ['inputResponses', responses[variant]],
          ['requestState', JSON.stringify(state)],
        ],
      },
      idText,
    );
  };
  const answer =
    variant === 'accept'
      ? result((r) => expect(r.content[0].text).toBe('Hi, Ada'))
      : variant === 'decline'
        ? result((r) => expect(r.content[0].text).toBe('decline'))
        : error(INVALID_PARAMS);
  void round;
  return { build, answer };
}

/** The state with one character in its middle changed (every bit of a middle character counts). */
function tamper(state: string): string {
  const at = Math.floor(state.length / 2);
  const replacement = state[at] === 'A' ? 'B' : 'A';
  return state.slice(0, at) + replacement + state.slice(at + 1);
}

// ---- checking ---------------------------------------------------------------------------------------------

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
