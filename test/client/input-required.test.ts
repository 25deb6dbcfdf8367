/**
 * The client's multi round-trip driver (MCP 2026-07-28, `resultType: "input_required"`): the per-call machine's
 * table on its own, then `completeInputRequired` (what each retry carries, rounds, the cap, cancellation,
 * malformed rounds, isolation of parallel calls) and `inputAnswerer` (the client's registered features answer,
 * under the legacy era's checks). Retry params and answers are validated against the official 2026 schema.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import {
  inputRequiredCallMachine,
  type InputRequiredCallInput,
  type RetryInput,
  type RetryOutcome,
} from '../../machines/input-required-call';
import { ClientFeatures, type ClientFeatureOptions, type ClientHost } from '../../lib/client/features';
import {
  completeInputRequired,
  InputRequestError,
  inputAnswerer,
  isRetriedResult,
  needsInput,
  retryParams,
  type InputAnswerer,
  type InputRequest,
  type InputRequiredOptions,
} from '../../lib/client/input-required';
import { systemClock } from '../../lib/core/clock';
import { silentLogger } from '../../lib/core/logger';
import { LimitExceededError, ProtocolViolationError, RequestCancelledError } from '../../lib/jsonrpc/errors';
import type { JsonObject } from '../../lib/jsonrpc/types';
import { META } from '../../lib/protocol/modern';
import { createAjv } from '../helpers/ajv';

// ---- helpers ---------------------------------------------------------------------------------------------

/** A promise settled from outside. */
function gate<T = unknown>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((ok, fail) => ((resolve = ok), (reject = fail)));
  return { promise, resolve, reject };
}

const flush = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

const SCHEMA_ID = 'schema-2026-07-28';
const ajv = createAjv('2025-11-25');
ajv.addSchema(
  JSON.parse(readFileSync(new URL('../schemas/schema-2026-07-28.json', import.meta.url), 'utf8')),
  SCHEMA_ID,
);
/** Schema problems of `value` as definition `name` of the 2026-07-28 schema (empty when valid). */
function problems(name: string, value: unknown): unknown[] {
  const validate = ajv.getSchema(`${SCHEMA_ID}#/$defs/${name}`)!;
  return validate(value) ? [] : (validate.errors ?? []);
}

const ENVELOPE = {
  [META.protocolVersion]: '2026-07-28',
  [META.clientCapabilities]: { elicitation: { form: {} } },
  [META.clientInfo]: { name: 'test-client', version: '1.0.0' },
};

const elicitName: InputRequest = {
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message: 'Your name?',
    requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  },
};
const listRoots: InputRequest = { method: 'roots/list' };
const accepted = (name: string) => ({ action: 'accept' as const, content: { name } });
const complete = (text: string): JsonObject => ({ resultType: 'complete', content: [{ type: 'text', text }] });
const inputRequired = (inputRequests?: Record<string, InputRequest>, requestState?: string): JsonObject => ({
  resultType: 'input_required',
  ...(inputRequests && { inputRequests: inputRequests as unknown as JsonObject }),
  ...(requestState !== undefined && { requestState }),
});

/** A scripted server: each retry gets the next answer; every retry (and its signal) is recorded. */
function scriptedServer(...answers: (JsonObject | Error)[]) {
  const retries: RetryInput[] = [];
  const signals: AbortSignal[] = [];
  const retry = (sent: RetryInput, signal: AbortSignal) => {
    retries.push(sent);
    signals.push(signal);
    const next = answers.shift();
    if (!next) return Promise.reject(new Error('the script ran out'));
    return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
  };
  return { retries, signals, retry };
}

/** An answerer that answers elicitations with `name` and records the keys it was asked. */
function answering(name = 'Alice') {
  const asked: string[] = [];
  const answer: InputAnswerer = async (request, _signal, key) => {
    asked.push(key);
    return request.method === 'roots/list' ? { roots: [] } : accepted(name);
  };
  return { asked, answer };
}

const drive = (first: JsonObject, options: Partial<InputRequiredOptions> & Pick<InputRequiredOptions, 'retry'>) =>
  completeInputRequired(first, { method: 'tools/call', answer: answering().answer, ...options });

// ---- the machine -----------------------------------------------------------------------------------------

describe('the input-required call machine', () => {
  /** A machine whose answers and retries wait for the test to settle them. */
  function controlled(round: InputRequiredCallInput['round'], extra: Partial<InputRequiredCallInput> = {}) {
    const answers: { key: string; settle: ReturnType<typeof gate>; signal: AbortSignal }[] = [];
    const retries: { sent: RetryInput; settle: ReturnType<typeof gate<RetryOutcome>>; signal: AbortSignal }[] = [];
    const clock = new SimulatedClock();
    const actor = createActor(inputRequiredCallMachine, {
      clock,
      input: {
        round,
        maxRounds: 3,
        paceMs: 250,
        answer: (key, _request, signal) => {
          const settle = gate();
          answers.push({ key, settle, signal });
          return settle.promise;
        },
        retry: (sent, signal) => {
          const settle = gate<RetryOutcome>();
          retries.push({ sent, settle, signal });
          return settle.promise;
        },
        ...extra,
      },
    }).start();
    return { actor, answers, retries, clock, state: () => actor.getSnapshot().value };
  }
  const asks = { inputRequests: { a: elicitName, b: listRoots } };

  it('starts fulfilling when the first round has input requests', () => {
    expect(controlled(asks).state()).toBe('fulfilling');
  });

  it('starts retrying when the first round carries only a requestState', () => {
    expect(controlled({ requestState: 's' }).state()).toBe('retrying');
  });

  it('asks for every input request of the round at once', () => {
    expect(controlled(asks).answers.map((leg) => leg.key)).toEqual(['a', 'b']);
  });

  it('moves from fulfilling to retrying once every answer is in', async () => {
    const call = controlled(asks);
    call.answers[0]!.settle.resolve(accepted('x'));
    await flush();
    expect(call.state()).toBe('fulfilling');
    call.answers[1]!.settle.resolve({ roots: [] });
    await flush();
    expect(call.state()).toBe('retrying');
  });

  it('moves from fulfilling to failed when an answer fails, aborting the other legs', async () => {
    const call = controlled(asks);
    call.answers[0]!.settle.reject(new Error('no'));
    await flush();
    expect([call.state(), call.answers[1]!.signal.aborted]).toEqual(['failed', true]);
  });

  it('moves from retrying to done on a complete result, with that result as output', async () => {
    const call = controlled({ requestState: 's' });
    const result = complete('ok');
    call.retries[0]!.settle.resolve({ kind: 'complete', result });
    await flush();
    expect(call.actor.getSnapshot().output).toEqual({ status: 'done', result, rounds: 1 });
  });

  it('moves from retrying back to fulfilling on another round', async () => {
    const call = controlled({ requestState: 's' });
    call.retries[0]!.settle.resolve({ kind: 'input_required', round: asks });
    await flush();
    expect([call.state(), call.actor.getSnapshot().context.rounds]).toEqual(['fulfilling', 2]);
  });

  it('moves from retrying to failed when the retry fails', async () => {
    const call = controlled({ requestState: 's' });
    call.retries[0]!.settle.reject(new Error('gone'));
    await flush();
    expect(call.actor.getSnapshot().output).toMatchObject({ status: 'failed', failure: 'retry' });
  });

  it('fails with the cap once maxRounds rounds were answered and the server asks again', async () => {
    const call = controlled({ requestState: 's' }, { paceMs: 0 });
    for (let i = 0; i < 3; i++) {
      call.retries[i]!.settle.resolve({ kind: 'input_required', round: { requestState: `s${i}` } });
      await flush();
      call.clock.increment(0);
      await flush();
    }
    expect(call.actor.getSnapshot().output).toMatchObject({ status: 'failed', failure: 'cap', rounds: 3 });
  });

  it('paces a second state-only round: no retry before paceMs on the clock', async () => {
    const call = controlled({ requestState: 's1' });
    call.retries[0]!.settle.resolve({ kind: 'input_required', round: { requestState: 's2' } });
    await flush();
    call.clock.increment(249);
    expect([call.state(), call.retries.length]).toEqual(['pacing', 1]);
  });

  it('retries a paced round once paceMs has passed', async () => {
    const call = controlled({ requestState: 's1' });
    call.retries[0]!.settle.resolve({ kind: 'input_required', round: { requestState: 's2' } });
    await flush();
    call.clock.increment(250);
    expect([call.state(), call.retries[1]?.sent]).toEqual(['retrying', { requestState: 's2' }]);
  });

  for (const [name, setUp] of [
    ['fulfilling', () => controlled(asks)],
    ['retrying', () => controlled({ requestState: 's' })],
  ] as const) {
    it(`moves from ${name} to failed on cancel, aborting what was in flight`, () => {
      const call = setUp();
      const reason = new Error('stop');
      call.actor.send({ type: 'cancel', error: reason });
      const signals = [...call.answers, ...call.retries].map((leg) => leg.signal.aborted);
      expect([call.actor.getSnapshot().output, signals.every(Boolean)]).toEqual([
        { status: 'failed', failure: 'cancelled', error: reason, rounds: 1 },
        true,
      ]);
    });
  }

  it('moves from pacing to failed on cancel, and never retries', async () => {
    const call = controlled({ requestState: 's1' });
    call.retries[0]!.settle.resolve({ kind: 'input_required', round: { requestState: 's2' } });
    await flush();
    call.actor.send({ type: 'cancel', error: new Error('stop') });
    call.clock.increment(1000);
    expect([call.state(), call.retries.length]).toEqual(['failed', 1]);
  });
});

// ---- the driver ------------------------------------------------------------------------------------------

describe('completeInputRequired', () => {
  it('returns a complete first result itself, without answering or retrying', async () => {
    const first = complete('plain');
    const server = scriptedServer();
    const { asked, answer } = answering();
    await expect(drive(first, { retry: server.retry, answer })).resolves.toBe(first);
    expect([asked, server.retries]).toEqual([[], []]);
  });

  it('takes a result without resultType as complete (no retry)', async () => {
    const first: JsonObject = { content: [{ type: 'text', text: 'old server' }] };
    const server = scriptedServer();
    await expect(drive(first, { retry: server.retry })).resolves.toBe(first);
    expect(server.retries).toEqual([]);
  });

  it('says a result without resultType needs no input', () => {
    expect(needsInput({ content: [] }, 'tools/call')).toBe(false);
  });

  it('rejects an unknown resultType with ProtocolViolationError, without retrying', async () => {
    const server = scriptedServer();
    await expect(drive({ resultType: 'partial' }, { retry: server.retry })).rejects.toThrow(
      new ProtocolViolationError('The tools/call result has an unknown resultType "partial"'),
    );
    expect(server.retries).toEqual([]);
  });

  it('rejects an unknown resultType in a retry result', async () => {
    const server = scriptedServer({ resultType: 'later' });
    await expect(drive(inputRequired(undefined, 's'), { retry: server.retry })).rejects.toBeInstanceOf(
      ProtocolViolationError,
    );
  });

  it('answers every input request of a round before any answer is in (in parallel)', async () => {
    const started: string[] = [];
    const release = gate();
    const answer: InputAnswerer = async (_request, _signal, key) => {
      started.push(key);
      await release.promise;
      return accepted(key);
    };
    const server = scriptedServer(complete('done'));
    const call = drive(inputRequired({ a: elicitName, b: elicitName, c: elicitName }), { retry: server.retry, answer });
    await flush();
    expect(started).toEqual(['a', 'b', 'c']);
    release.resolve(undefined);
    await call;
  });

  it('retries with every answer of the round under its key', async () => {
    const server = scriptedServer(complete('done'));
    await drive(inputRequired({ user_name: elicitName, roots: listRoots }), { retry: server.retry });
    expect(server.retries).toEqual([{ inputResponses: { user_name: accepted('Alice'), roots: { roots: [] } } }]);
  });

  it('resolves with the complete result of the last retry', async () => {
    const last = complete('done');
    const server = scriptedServer(last);
    await expect(drive(inputRequired({ k: elicitName }), { retry: server.retry })).resolves.toBe(last);
  });

  it('echoes a JSON-string requestState byte for byte', async () => {
    const state = '{"step": 1,  "nonce":"\\u00e9\u00e9", "list":[1,2 ,3]}\n';
    const server = scriptedServer(complete('done'));
    await drive(inputRequired({ k: elicitName }, state), { retry: server.retry });
    expect(server.retries[0]!.requestState).toBe(state);
  });

  it('omits requestState when the server sent none', async () => {
    const server = scriptedServer(complete('done'));
    await drive(inputRequired({ k: elicitName }), { retry: server.retry });
    expect(Object.keys(server.retries[0]!)).toEqual(['inputResponses']);
  });

  it('sends each round its own inputResponses, never merged with the last round', async () => {
    const server = scriptedServer(inputRequired({ second: listRoots }, 'r2'), complete('done'));
    await drive(inputRequired({ first: elicitName }, 'r1'), { retry: server.retry });
    expect(server.retries[1]).toEqual({ inputResponses: { second: { roots: [] } }, requestState: 'r2' });
  });

  it("echoes each round's own requestState", async () => {
    const server = scriptedServer(inputRequired({ k: elicitName }, 'r2'), complete('done'));
    await drive(inputRequired({ k: elicitName }, 'r1'), { retry: server.retry });
    expect(server.retries.map((sent) => sent.requestState)).toEqual(['r1', 'r2']);
  });

  it('retries a state-only round at once, without inputResponses', async () => {
    const server = scriptedServer(complete('done'));
    await drive(inputRequired(undefined, 'only-state'), { retry: server.retry });
    expect(server.retries).toEqual([{ requestState: 'only-state' }]);
  });

  it('paces the second state-only round on the injected clock', async () => {
    const clock = new SimulatedClock();
    const server = scriptedServer(inputRequired(undefined, 's2'), complete('done'));
    const call = drive(inputRequired(undefined, 's1'), { retry: server.retry, clock });
    await flush();
    clock.increment(249);
    await flush();
    const before = server.retries.length;
    clock.increment(1);
    await call;
    expect([before, server.retries.length]).toEqual([1, 2]);
  });

  it('gives up with LimitExceededError after maxRounds rounds', async () => {
    const again = () => inputRequired({ k: elicitName }, 'again');
    const server = scriptedServer(again(), again(), again(), again());
    const call = drive(again(), { retry: server.retry, maxRounds: 3 });
    await expect(call).rejects.toBeInstanceOf(LimitExceededError);
    expect(server.retries.length).toBe(3);
  });

  it('stops at 10 rounds by default', async () => {
    const again = () => inputRequired({ k: elicitName }, 'again');
    const server = scriptedServer(...Array.from({ length: 20 }, again));
    await expect(drive(again(), { retry: server.retry })).rejects.toBeInstanceOf(LimitExceededError);
    expect(server.retries.length).toBe(10);
  });

  it('aborting mid-round aborts every answer in progress and rejects with RequestCancelledError', async () => {
    const legs: AbortSignal[] = [];
    const answer: InputAnswerer = (_request, signal) => {
      legs.push(signal);
      return new Promise(() => {});
    };
    const controller = new AbortController();
    const server = scriptedServer();
    const call = drive(inputRequired({ a: elicitName, b: elicitName }), {
      retry: server.retry,
      answer,
      signal: controller.signal,
    });
    await flush();
    controller.abort(new Error('user left'));
    await expect(call).rejects.toBeInstanceOf(RequestCancelledError);
    expect([legs.length, legs.every((leg) => leg.aborted), server.retries.length]).toEqual([2, true, 0]);
  });

  it('aborting while a retry is in flight aborts that retry', async () => {
    const controller = new AbortController();
    const signals: AbortSignal[] = [];
    const retry = (_sent: RetryInput, signal: AbortSignal) => {
      signals.push(signal);
      return new Promise<JsonObject>(() => {});
    };
    const call = drive(inputRequired(undefined, 's'), { retry, signal: controller.signal });
    await flush();
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(RequestCancelledError);
    expect(signals[0]!.aborted).toBe(true);
  });

  it('rejects at once when the signal is already aborted', async () => {
    const server = scriptedServer();
    const call = drive(inputRequired({ k: elicitName }), { retry: server.retry, signal: AbortSignal.abort() });
    await expect(call).rejects.toBeInstanceOf(RequestCancelledError);
  });

  it("rejects with the answerer's error when an answer fails", async () => {
    const failure = new Error('the user closed the dialog');
    const server = scriptedServer();
    const call = drive(inputRequired({ k: elicitName }), {
      retry: server.retry,
      answer: () => Promise.reject(failure),
    });
    await expect(call).rejects.toBe(failure);
  });

  it("rejects with the retry's error when the retry fails", async () => {
    const failure = new Error('-32602 bad state');
    const server = scriptedServer(failure);
    await expect(drive(inputRequired(undefined, 's'), { retry: server.retry })).rejects.toBe(failure);
  });

  for (const [name, result, message] of [
    ['neither inputRequests nor requestState', inputRequired(), 'neither inputRequests nor requestState'],
    ['an empty inputRequests and no state', inputRequired({}), 'neither inputRequests nor requestState'],
    ['inputRequests that is an array', { resultType: 'input_required', inputRequests: [] }, 'not an object'],
    ['a requestState that is a number', { resultType: 'input_required', requestState: 7 }, 'not a string'],
    ['an input request without method', inputRequired({ k: { params: {} } as never }), '"k" has no method'],
    [
      'an input request with array params',
      inputRequired({ k: { method: 'roots/list', params: [] as never } }),
      'params',
    ],
  ] as const) {
    it(`rejects a round with ${name} as malformed`, async () => {
      const server = scriptedServer();
      const call = drive(result as JsonObject, { retry: server.retry });
      await expect(call).rejects.toThrow(ProtocolViolationError);
      await expect(call).rejects.toThrow(message);
    });
  }

  it('keeps parallel calls apart: each retry carries only its own answers and state', async () => {
    const one = scriptedServer(complete('one'));
    const two = scriptedServer(complete('two'));
    const unrelated = scriptedServer();
    await Promise.all([
      drive(inputRequired({ a: elicitName }, 'state-1'), { retry: one.retry, answer: answering('One').answer }),
      drive(inputRequired({ b: elicitName }, 'state-2'), { retry: two.retry, answer: answering('Two').answer }),
      drive(complete('plain'), { retry: unrelated.retry }),
    ]);
    expect([one.retries, two.retries, unrelated.retries]).toEqual([
      [{ inputResponses: { a: accepted('One') }, requestState: 'state-1' }],
      [{ inputResponses: { b: accepted('Two') }, requestState: 'state-2' }],
      [],
    ]);
  });

  it('marks a result completed by retries, and not a plain one', async () => {
    const retried = complete('after');
    const plain = complete('plain');
    await drive(inputRequired(undefined, 's'), { retry: scriptedServer(retried).retry });
    await drive(plain, { retry: scriptedServer().retry });
    expect([isRetriedResult(retried), isRetriedResult(plain)]).toEqual([true, false]);
  });
});

describe('retryParams', () => {
  const responses = { user_name: accepted('Alice') };

  it('adds inputResponses and requestState to the original params', () => {
    expect(retryParams({ name: 't', arguments: { x: 1 } }, { inputResponses: responses, requestState: 's' })).toEqual({
      name: 't',
      arguments: { x: 1 },
      inputResponses: responses,
      requestState: 's',
    });
  });

  it("replaces an earlier round's inputResponses and drops its state when the new round has none", () => {
    const earlier = { name: 't', inputResponses: { old: accepted('x') }, requestState: 'old' };
    expect(retryParams(earlier, { inputResponses: responses })).toEqual({ name: 't', inputResponses: responses });
  });

  for (const [definition, params] of [
    ['CallToolRequestParams', { name: 'test_mrtr_echo_state', arguments: {} }],
    ['GetPromptRequestParams', { name: 'test_input_required_result_prompt' }],
    ['ReadResourceRequestParams', { uri: 'test://resource' }],
  ] as const) {
    it(`builds a retry that is a valid ${definition}`, () => {
      const sent = retryParams({ ...params, _meta: ENVELOPE }, { inputResponses: responses, requestState: '{"a":1}' });
      expect(problems(definition, sent)).toEqual([]);
    });
  }

  it('builds a tools/call retry request that is valid as a whole', () => {
    const params = retryParams({ name: 't', _meta: ENVELOPE }, { inputResponses: { r: { roots: [] } } });
    expect(problems('CallToolRequest', { jsonrpc: '2.0', id: 2, method: 'tools/call', params })).toEqual([]);
  });
});

// ---- answering with the client's features ----------------------------------------------------------------

describe('inputAnswerer', () => {
  const host: ClientHost = {
    role: 'client',
    state: 'ready',
    serverInfo: undefined,
    serverCapabilities: undefined,
    clock: systemClock,
    logger: silentLogger,
    protocolVersion: undefined,
    peerCapabilities: undefined,
    supportsProgressMessage: true,
    request: () => Promise.reject(new Error('no requests in this test')),
    notify: () => Promise.resolve(),
    log: () => Promise.resolve(),
    streamCloser: () => undefined,
  };
  const answererOf = (options: ClientFeatureOptions) => inputAnswerer(new ClientFeatures(options), host);
  const never = new AbortController().signal;
  const sampleRequest: InputRequest = {
    method: 'sampling/createMessage',
    params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 10 },
  };
  const modelAnswer = { role: 'assistant', content: { type: 'text', text: 'hello' }, model: 'm' } as const;

  it('answers an elicitation with the form handler, defaults applied as on the legacy path', async () => {
    const answer = answererOf({ elicitation: { form: () => ({ action: 'accept', content: {} }) } });
    const withDefault = {
      method: 'elicitation/create',
      params: {
        message: 'Age?',
        requestedSchema: { type: 'object', properties: { age: { type: 'integer', default: 42 } } },
      },
    };
    await expect(answer(withDefault, never, 'k')).resolves.toEqual({ action: 'accept', content: { age: 42 } });
  });

  it('answers sampling with the sampling handler', async () => {
    const answer = answererOf({ sampling: () => modelAnswer });
    await expect(answer(sampleRequest, never, 'k')).resolves.toEqual(modelAnswer);
  });

  it('answers roots/list with the declared roots', async () => {
    const answer = answererOf({ roots: [{ uri: 'file:///work', name: 'work' }] });
    await expect(answer(listRoots, never, 'k')).resolves.toEqual({ roots: [{ uri: 'file:///work', name: 'work' }] });
  });

  it('gives answers that are valid InputResponses', async () => {
    const answer = answererOf({
      sampling: () => modelAnswer,
      elicitation: { form: () => accepted('Alice') },
      roots: [{ uri: 'file:///work' }],
    });
    const inputResponses = {
      e: await answer(elicitName, never, 'e'),
      s: await answer(sampleRequest, never, 's'),
      r: await answer(listRoots, never, 'r'),
    };
    expect(problems('InputResponses', inputResponses)).toEqual([]);
  });

  it('hands the handler a context of the modern revision', async () => {
    let seen: string | undefined;
    const answer = answererOf({
      elicitation: {
        form: (_params, context) => {
          seen = context.protocolVersion;
          return accepted('x');
        },
      },
    });
    await answer(elicitName, never, 'k');
    expect(seen).toBe('2026-07-28');
  });

  it("aborts the handler's context when the round is abandoned", async () => {
    const controller = new AbortController();
    const reached = gate<AbortSignal>();
    const answer = answererOf({
      elicitation: {
        form: (_params, context) => {
          reached.resolve(context.signal);
          return new Promise(() => {});
        },
      },
    });
    void answer(elicitName, controller.signal, 'k').catch(() => undefined);
    const handlerSignal = await reached.promise;
    controller.abort();
    expect(handlerSignal.aborted).toBe(true);
  });

  it('refuses an input request for a feature the client did not declare', async () => {
    const answer = answererOf({ elicitation: { form: () => accepted('x') } });
    const call = answer(sampleRequest, never, 'model');
    await expect(call).rejects.toThrow(ProtocolViolationError);
    await expect(call).rejects.toThrow('did not declare the sampling capability');
  });

  it('refuses a method that is not an input request', async () => {
    const answer = answererOf({ roots: [] });
    const call = answer({ method: 'tools/list' }, never, 'odd');
    await expect(call).rejects.toThrow(ProtocolViolationError);
    await expect(call).rejects.toThrow('"tools/list", which is not an input request');
  });

  it("refuses an elicitation whose params break the protocol, naming the server's request", async () => {
    const answer = answererOf({ elicitation: { form: () => accepted('x') } });
    const call = answer({ method: 'elicitation/create', params: { message: 'no schema' } }, never, 'bad');
    await expect(call).rejects.toThrow(ProtocolViolationError);
    await expect(call).rejects.toThrow('elicitation/create input request "bad" is invalid');
  });

  it("reports a handler's failure as InputRequestError with the handler's error as cause", async () => {
    const failure = new Error('the dialog crashed');
    const answer = answererOf({
      elicitation: {
        form: () => {
          throw failure;
        },
      },
    });
    const error = await answer(elicitName, never, 'user_name').catch((caught: unknown) => caught);
    expect([error instanceof InputRequestError, (error as Error).cause, (error as Error).message]).toEqual([
      true,
      failure,
      'The elicitation/create input request "user_name" failed: the dialog crashed',
    ]);
  });

  it('drives a whole call with the features: the retry carries what the handlers answered', async () => {
    const answer = answererOf({ elicitation: { form: () => accepted('Alice') }, roots: [] });
    const server = scriptedServer(complete('done'));
    await completeInputRequired(inputRequired({ user_name: elicitName, roots: listRoots }, 'st'), {
      method: 'tools/call',
      answer,
      retry: server.retry,
    });
    expect(server.retries).toEqual([
      { inputResponses: { user_name: accepted('Alice'), roots: { roots: [] } }, requestState: 'st' },
    ]);
  });
});
