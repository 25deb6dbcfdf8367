/**
 * One logical call that a 2026-07-28 server answered with `resultType: "input_required"` (a multi round-trip
 * request): the client answers the round's input requests, retries the call with the answers, and goes on
 * until the server answers for good, or the call fails.
 *
 * routing -> fulfilling (answer every input request of the round, in parallel) -> retrying (send the retry)
 * -> routing on another `input_required` round, -> done on a complete result; -> failed when an answer or
 * the retry fails, when the round cap is reached, or on `cancel` (from any state). A round with no input
 * requests (only a `requestState`) is retried at once the first time, after `paceMs` each further time
 * (`pacing`), so a server that keeps asking for nothing is not hammered.
 *
 * The machine only decides. The I/O comes with the input, as functions (`provide` would build a new machine
 * per call): `answer` (one input request; its signal aborts when the round is abandoned) and `retry` (the
 * retried call, already classified by the caller: a complete result or the next round; it throws on a
 * malformed one). Leaving a state stops its invoked actor, which aborts that actor's signal: a cancel, or
 * one failed answer, aborts every leg still running. What is sent is never kept past its round: each retry
 * carries the answers of its own round only (`inputResponses` are replaced, never merged) and the round's
 * `requestState` exactly as the server sent it (none when it sent none). The delays run on the actor's clock.
 * Output: done with the result, or failed with why and the error.
 */
import { assign, fromPromise, setup } from 'xstate';

/** One input request of a round, as the server sent it (`{ method, params }`). Opaque to the machine. */
export type InputRequestOf = unknown;

/** What the server asked for in one round: at least one of the two (the caller checks that). */
export interface InputRound {
  readonly inputRequests?: Readonly<Record<string, InputRequestOf>>;
  readonly requestState?: string;
}

/** What a retry carries: the round's answers by key, and its state verbatim. Either may be absent. */
export interface RetryInput {
  readonly inputResponses?: Readonly<Record<string, unknown>>;
  readonly requestState?: string;
}

/** The retried call's answer, classified by the caller. */
export type RetryOutcome =
  | { readonly kind: 'complete'; readonly result: unknown }
  | { readonly kind: 'input_required'; readonly round: InputRound };

export interface InputRequiredCallInput {
  /** The first `input_required` result's round. */
  readonly round: InputRound;
  readonly answer: (key: string, request: InputRequestOf, signal: AbortSignal) => Promise<unknown>;
  readonly retry: (retry: RetryInput, signal: AbortSignal) => Promise<RetryOutcome>;
  /** How many `input_required` results the call may get (the first one included) before it fails. */
  readonly maxRounds: number;
  /** The pause before retrying a state-only round that is not the call's first one. */
  readonly paceMs: number;
}

export type InputRequiredCallEvent = { type: 'cancel'; error: unknown };

/** Why a call failed: an answer or the retry threw, the cap was reached, or it was cancelled. */
export type InputRequiredFailure = 'answer' | 'retry' | 'cap' | 'cancelled';

export type InputRequiredCallOutput =
  | { readonly status: 'done'; readonly result: unknown; readonly rounds: number }
  | {
      readonly status: 'failed';
      readonly failure: InputRequiredFailure;
      readonly error: unknown;
      readonly rounds: number;
    };

interface InputRequiredCallContext {
  readonly answer: InputRequiredCallInput['answer'];
  readonly retry: InputRequiredCallInput['retry'];
  readonly maxRounds: number;
  readonly paceMs: number;
  /** The round being served. */
  readonly round: InputRound;
  /** `input_required` results received so far. */
  readonly rounds: number;
  /** State-only rounds retried so far: the second one on waits `paceMs`. */
  readonly stateOnlyRounds: number;
  /** The answers of the current round (none for a state-only round). */
  readonly inputResponses?: Readonly<Record<string, unknown>>;
  readonly result?: unknown;
  readonly failure?: InputRequiredFailure;
  readonly error?: unknown;
}

/**
 * Answers every input request of a round at once. The legs share one signal, aborted when the actor stops
 * (a cancel) and when one leg fails: a failed actor is not stopped, so the round aborts the rest itself.
 */
const answerRound = fromPromise<
  Record<string, unknown>,
  { requests: Readonly<Record<string, InputRequestOf>>; answer: InputRequiredCallInput['answer'] }
>(async ({ input, signal }) => {
  const legs = new AbortController();
  const abandon = () => legs.abort(signal.reason);
  signal.addEventListener('abort', abandon, { once: true });
  const keys = Object.keys(input.requests);
  try {
    const answers = await Promise.all(keys.map((key) => input.answer(key, input.requests[key], legs.signal)));
    const responses: Record<string, unknown> = {};
    keys.forEach((key, index) => (responses[key] = answers[index]));
    return responses;
  } catch (error) {
    legs.abort(error);
    throw error;
  } finally {
    signal.removeEventListener('abort', abandon);
  }
});

const sendRetry = fromPromise<RetryOutcome, { retry: InputRequiredCallInput['retry']; sent: RetryInput }>(
  ({ input, signal }) => input.retry(input.sent, signal),
);

/** The retry of the current round: its answers and its state, each only when there is one. */
function retryOf(context: InputRequiredCallContext): RetryInput {
  const { inputResponses } = context;
  const { requestState } = context.round;
  return {
    ...(inputResponses !== undefined && { inputResponses }),
    ...(requestState !== undefined && { requestState }),
  };
}

const hasRequests = (round: InputRound) =>
  round.inputRequests !== undefined && Object.keys(round.inputRequests).length > 0;

export const inputRequiredCallMachine = setup({
  types: {
    context: {} as InputRequiredCallContext,
    events: {} as InputRequiredCallEvent,
    input: {} as InputRequiredCallInput,
    output: {} as InputRequiredCallOutput,
  },
  actors: { answerRound, sendRetry },
  actions: {
    clearResponses: assign({ inputResponses: undefined }),
    countStateOnlyRound: assign({ stateOnlyRounds: ({ context }) => context.stateOnlyRounds + 1 }),
    recordResponses: assign({
      inputResponses: (_, responses: Record<string, unknown>) => responses,
    }),
    recordNextRound: assign({
      // Only reached after the `complete` guard said no: the outcome is another round.
      round: (_, outcome: RetryOutcome) => (outcome as Extract<RetryOutcome, { kind: 'input_required' }>).round,
      rounds: ({ context }) => context.rounds + 1,
    }),
    recordResult: assign({
      result: (_, outcome: RetryOutcome) => (outcome.kind === 'complete' ? outcome.result : undefined),
    }),
    recordFailure: assign({
      failure: (_, params: { failure: InputRequiredFailure; error: unknown }) => params.failure,
      error: (_, params: { failure: InputRequiredFailure; error: unknown }) => params.error,
    }),
  },
  guards: {
    roundHasRequests: ({ context }) => hasRequests(context.round),
    firstStateOnlyRound: ({ context }) => context.stateOnlyRounds === 0,
    complete: (_, outcome: RetryOutcome) => outcome.kind === 'complete',
    capReached: ({ context }) => context.rounds >= context.maxRounds,
  },
  delays: {
    pace: ({ context }) => context.paceMs,
  },
}).createMachine({
  id: 'inputRequiredCall',
  context: ({ input }) => ({
    answer: input.answer,
    retry: input.retry,
    maxRounds: input.maxRounds,
    paceMs: input.paceMs,
    round: input.round,
    rounds: 1,
    stateOnlyRounds: 0,
  }),
  initial: 'routing',
  on: {
    cancel: {
      target: '.failed',
      actions: {
        type: 'recordFailure',
        params: ({ event }) => ({ failure: 'cancelled' as const, error: event.error }),
      },
    },
  },
  states: {
    // Which way the round goes: answer its requests, or retry a state-only round (paced after the first).
    routing: {
      entry: 'clearResponses',
      always: [
        { guard: 'roundHasRequests', target: 'fulfilling' },
        { guard: 'firstStateOnlyRound', target: 'retrying', actions: 'countStateOnlyRound' },
        { target: 'pacing', actions: 'countStateOnlyRound' },
      ],
    },
    fulfilling: {
      invoke: {
        src: 'answerRound',
        input: ({ context }) => ({ requests: context.round.inputRequests!, answer: context.answer }),
        onDone: {
          target: 'retrying',
          actions: { type: 'recordResponses', params: ({ event }) => event.output },
        },
        onError: {
          target: 'failed',
          actions: {
            type: 'recordFailure',
            params: ({ event }) => ({ failure: 'answer' as const, error: event.error }),
          },
        },
      },
    },
    pacing: {
      after: { pace: 'retrying' },
    },
    retrying: {
      invoke: {
        src: 'sendRetry',
        input: ({ context }) => ({ retry: context.retry, sent: retryOf(context) }),
        onDone: [
          {
            guard: { type: 'complete', params: ({ event }) => event.output },
            target: 'done',
            actions: { type: 'recordResult', params: ({ event }) => event.output },
          },
          {
            guard: 'capReached',
            target: 'failed',
            actions: { type: 'recordFailure', params: { failure: 'cap', error: undefined } },
          },
          {
            target: 'routing',
            actions: { type: 'recordNextRound', params: ({ event }) => event.output },
          },
        ],
        onError: {
          target: 'failed',
          actions: {
            type: 'recordFailure',
            params: ({ event }) => ({ failure: 'retry' as const, error: event.error }),
          },
        },
      },
    },
    done: { type: 'final' },
    failed: { type: 'final' },
  },
  output: ({ context }) =>
    context.failure === undefined
      ? { status: 'done', result: context.result, rounds: context.rounds }
      : { status: 'failed', failure: context.failure, error: context.error, rounds: context.rounds },
});
