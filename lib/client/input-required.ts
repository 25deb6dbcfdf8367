/**
 * The client side of MCP 2026-07-28's multi round-trip requests. A server answers `tools/call`, `prompts/get`
 * or `resources/read` with `{resultType: "input_required", inputRequests?, requestState?}`; the client answers
 * each input request with the handler the application registered (sampling, elicitation, roots), and retries
 * the same request (a new JSON-RPC id) with `inputResponses` (the round's answers, bare results by key) and
 * `requestState` echoed exactly (omitted when the server sent none), until a complete result comes.
 *
 * `needsInput(result)` says whether a result starts that dance (a property read: the plain path costs
 * nothing more); `completeInputRequired` runs it, one `inputRequiredCallMachine` actor per logical call.
 * `inputAnswerer` answers input requests with a client's `ClientFeatures`, through the same request handlers
 * and capability checks that answer the handshake era's server->client requests.
 */
import { isPlainObject } from '../jsonrpc/classify';
import { createActor, toPromise } from 'xstate';
import {
  inputRequiredCallMachine,
  type InputRequiredCallOutput,
  type InputRound,
  type RetryInput,
  type RetryOutcome,
} from '../../machines/input-required-call';
import type { Clock } from '../core/clock';
import { RequestContext } from '../core/request-context';
import {
  LimitExceededError,
  McpError,
  ProtocolViolationError,
  RequestCancelledError,
  SwitchboardError,
  type LocalErrorCode,
} from '../jsonrpc/errors';
import { excerpt } from '../jsonrpc/excerpt';
import type { JsonObject } from '../jsonrpc/types';
import { describeCapability, hasCapability } from '../protocol/capabilities';
import { methodSpec } from '../protocol/methods';
import { FIRST_MODERN_PROTOCOL_VERSION } from '../protocol/modern';
import type { ClientFeatures, ClientHost, FeatureMethod } from './features';

export type { RetryInput } from '../../machines/input-required-call';

/** One input request of an `input_required` result. */
export interface InputRequest {
  readonly method: string;
  readonly params?: JsonObject;
}

/** Answers one input request with a bare result (`ElicitResult`, `CreateMessageResult`, `ListRootsResult`). */
export type InputAnswerer = (request: InputRequest, signal: AbortSignal, key: string) => Promise<JsonObject>;

export interface InputRequiredOptions {
  /** The request being completed (`tools/call`, ...): named in errors. */
  readonly method: string;
  readonly answer: InputAnswerer;
  /** Sends the retry: the original request with these fields (see `retryParams`), under a new id. */
  readonly retry: (retry: RetryInput, signal: AbortSignal) => Promise<JsonObject>;
  /** How many `input_required` results one call may get, the first included (default 10). */
  readonly maxRounds?: number;
  /** Cancels the call: every answer in progress and the retry in flight. */
  readonly signal?: AbortSignal;
  /** Times the pause between state-only rounds (default: the system's timers). */
  readonly clock?: Clock;
  /** The pause before each state-only round after the first (default 250 ms). */
  readonly paceMs?: number;
}

export const DEFAULT_MAX_INPUT_ROUNDS = 10;
export const STATE_ONLY_PACE_MS = 250;

/** Results a retry completed: they answer one call's rounds and are never cached (see list-cache.ts). */
const retriedResults = new WeakSet<object>();

/** Whether `result` completed a call through retries that carried `inputResponses` or `requestState`. */
export function isRetriedResult(result: object): boolean {
  return retriedResults.has(result);
}

/** Marks a copy of a retried result (the caller's view of it) as retried too. */
export function markRetried(result: object): void {
  retriedResults.add(result);
}

/**
 * Whether `result` asks for input (`resultType: "input_required"`); false for a complete one (`resultType`
 * absent, as from an older server, or `"complete"`). Any other `resultType` throws `ProtocolViolationError`.
 */
export function needsInput(result: JsonObject, method: string): boolean {
  const resultType = result.resultType;
  // A task (the tasks extension) is final here: the task itself is followed apart (lib/client/tasks).
  if (resultType === undefined || resultType === 'complete' || resultType === 'task') return false;
  if (resultType === 'input_required') return true;
  throw new ProtocolViolationError(`The ${method} result has an unknown resultType ${excerpt(resultType)}`);
}

/**
 * The complete result of a call whose first result is `first`: `first` itself when it is complete, else the
 * result of answering and retrying, round after round. Rejects with `ProtocolViolationError` (a malformed
 * round, an unknown `resultType`, an input request this client cannot answer), the answerer's error,
 * the retry's error, `LimitExceededError` (more rounds than `maxRounds`) or `RequestCancelledError`.
 */
export function completeInputRequired(first: JsonObject, options: InputRequiredOptions): Promise<JsonObject> {
  const { method, signal } = options;
  let round: InputRound;
  try {
    if (!needsInput(first, method)) return Promise.resolve(first);
    round = roundOf(first, method);
  } catch (error) {
    return Promise.reject(error);
  }
  if (signal?.aborted) return Promise.reject(new RequestCancelledError(method, signal.reason));
  const actor = createActor(inputRequiredCallMachine, {
    input: {
      round,
      answer: (key, request, legSignal) => options.answer(request as InputRequest, legSignal, key),
      retry: async (sent, retrySignal) => outcomeOf(await options.retry(sent, retrySignal), method),
      maxRounds: options.maxRounds ?? DEFAULT_MAX_INPUT_ROUNDS,
      paceMs: options.paceMs ?? STATE_ONLY_PACE_MS,
    },
    ...(options.clock && { clock: options.clock }),
  });
  const cancel = () => actor.send({ type: 'cancel', error: signal!.reason });
  signal?.addEventListener('abort', cancel, { once: true });
  return toPromise(actor.start())
    .finally(() => signal?.removeEventListener('abort', cancel))
    .then((output) => settle(output, options));
}

function settle(output: InputRequiredCallOutput, options: InputRequiredOptions): JsonObject {
  if (output.status === 'done') {
    const result = output.result as JsonObject;
    retriedResults.add(result);
    return result;
  }
  switch (output.failure) {
    case 'cap':
      throw new LimitExceededError(
        `${options.method} still asked for input after ${output.rounds} rounds, the most a call may take (maxRounds)`,
      );
    case 'cancelled':
      throw new RequestCancelledError(options.method, output.error);
    default:
      throw output.error;
  }
}

/** A retry's answer for the machine: complete, or the next round (checked). */
function outcomeOf(result: JsonObject, method: string): RetryOutcome {
  return needsInput(result, method)
    ? { kind: 'input_required', round: roundOf(result, method) }
    : { kind: 'complete', result };
}

/**
 * The round an `input_required` result asks for. `inputRequests` must be an object of `{method, params?}`
 * objects, `requestState` a string, and one of them must be there (an empty `inputRequests` counts as none).
 */
export function roundOf(result: JsonObject, method: string): InputRound {
  const { inputRequests, requestState } = result;
  if (requestState !== undefined && typeof requestState !== 'string') {
    throw new ProtocolViolationError(
      `The ${method} input_required result has a requestState that is not a string: ${excerpt(requestState)}`,
    );
  }
  if (inputRequests !== undefined) checkInputRequests(inputRequests, method);
  const asks = inputRequests !== undefined && Object.keys(inputRequests as object).length > 0;
  if (!asks && requestState === undefined) {
    throw new ProtocolViolationError(`The ${method} input_required result has neither inputRequests nor requestState`);
  }
  return {
    ...(asks && { inputRequests: inputRequests as Record<string, InputRequest> }),
    ...(requestState !== undefined && { requestState }),
  };
}

function checkInputRequests(inputRequests: unknown, method: string): void {
  if (!isPlainObject(inputRequests)) {
    throw new ProtocolViolationError(
      `The ${method} input_required result has inputRequests that is not an object: ${excerpt(inputRequests)}`,
    );
  }
  for (const [key, request] of Object.entries(inputRequests)) {
    const broken = !isPlainObject(request)
      ? 'is not an object'
      : typeof request.method !== 'string'
        ? 'has no method'
        : request.params !== undefined && !isPlainObject(request.params)
          ? 'has params that are not an object'
          : undefined;
    if (broken) {
      throw new ProtocolViolationError(
        `The ${method} input_required result's input request ${excerpt(key)} ${broken}: ${excerpt(request)}`,
      );
    }
  }
}

/**
 * The params of a retry: the original request's, with this round's `inputResponses` and `requestState` in
 * place of any earlier ones (each only when present; the state exactly as the server sent it).
 */
export function retryParams(params: JsonObject | undefined, retry: RetryInput): JsonObject {
  const { inputResponses: _earlierResponses, requestState: _earlierState, ...rest } = params ?? {};
  return {
    ...rest,
    ...(retry.inputResponses !== undefined && { inputResponses: retry.inputResponses as JsonObject }),
    ...(retry.requestState !== undefined && { requestState: retry.requestState }),
  };
}

// ---- answering with the client's features ------------------------------------------------------------

/** An answer that failed in the application's handler (its error is the `cause`). */
export class InputRequestError extends SwitchboardError {
  override readonly name = 'InputRequestError';
  readonly code: LocalErrorCode = 'INPUT_REQUEST_FAILED';

  constructor(
    readonly key: string,
    readonly method: string,
    cause: unknown,
  ) {
    super(`The ${method} input request ${excerpt(key)} failed: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
  }
}

/**
 * The context an application's handler gets for an input request: there is no inbound request (the ask
 * came inside a result), so its id is the input request's key, and its revision the modern one it came in.
 * Aborting the round cancels it (`signal`, `onCancel`), as a handshake-era server's `notifications/cancelled` would.
 */
class InputRequestContext extends RequestContext<ClientHost> {
  constructor(
    host: ClientHost,
    key: string,
    method: string,
    params: JsonObject | undefined,
    private readonly version: string,
  ) {
    super(host, key, method, params, 0, undefined, undefined);
  }

  override get protocolVersion(): string {
    return this.version;
  }
}

/**
 * Answers input requests with `features` (the client's registered sampling, elicitation and roots handlers):
 * the handshake era's request handlers, under the capability checks of its gate. An input request for another
 * method, or for a feature this client did not declare, or whose params break the protocol, rejects with
 * `ProtocolViolationError`; a handler's failure with `InputRequestError`.
 */
export function inputAnswerer(
  features: ClientFeatures,
  host: ClientHost,
  version: string = FIRST_MODERN_PROTOCOL_VERSION,
): InputAnswerer {
  const handlers = features.requestHandlers();
  const declared = features.capabilities(undefined, version);
  return async (request, signal, key) => {
    const method = request.method;
    const spec = methodSpec(method, 'stateless');
    const capability = spec?.inputRequest ? spec.capability : undefined;
    if (!capability) {
      throw new ProtocolViolationError(
        `The server asked for input ${excerpt(key)} with ${excerpt(method)}, which is not an input request ` +
          '(elicitation/create, sampling/createMessage or roots/list)',
      );
    }
    if (!hasCapability(declared, capability)) {
      throw new ProtocolViolationError(
        `The server asked for input ${excerpt(key)} with ${method}, but this client did not declare the ` +
          `${describeCapability(capability)} capability`,
      );
    }
    const context = new InputRequestContext(host, key, method, request.params, version);
    const cancel = () => context.cancel(new RequestCancelledError(method, signal.reason));
    signal.addEventListener('abort', cancel, { once: true });
    try {
      return (await handlers[method as FeatureMethod](context, request.params)) as JsonObject;
    } catch (error) {
      throw answerFailure(key, method, error);
    } finally {
      signal.removeEventListener('abort', cancel);
      context.finish();
    }
  };
}

/** A protocol break in the server's ask stays one; anything else is the handler's failure. */
function answerFailure(key: string, method: string, error: unknown): Error {
  if (error instanceof McpError) {
    return new ProtocolViolationError(
      `The server's ${method} input request ${excerpt(key)} is invalid: ${error.message}`,
      { cause: error },
    );
  }
  if (error instanceof SwitchboardError) return error;
  return new InputRequestError(key, method, error);
}
