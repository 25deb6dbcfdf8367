/**
 * Input from the client on a modern (2026-07-28) request, which has no way to send the client a request:
 * what a handler asks with `ctx.elicit`, `ctx.createMessage` or `ctx.listRoots` is answered from the
 * request's `inputResponses` (and what earlier rounds answered, carried in the sealed `requestState`) when
 * it can be; otherwise the ask is collected, and the request is answered with an `input_required` result
 * listing every collected ask. The client retries with the answers and the handler runs again from the
 * start, now finding them: one handler style for both eras, and no server memory between rounds.
 */
import { isPlainObject } from '../../jsonrpc/classify';
import { ErrorCode, McpError } from '../../jsonrpc/errors';
import { clipText } from '../../jsonrpc/excerpt';
import type { JsonObject } from '../../jsonrpc/types';
import { resultProblem } from '../../protocol/results';

/** The kinds of input a modern request may ask for, with the client capability each needs. */
const INPUT_KINDS: Readonly<Record<string, { readonly kind: string; readonly capability: string }>> = {
  'elicitation/create': { kind: 'elicitation', capability: 'elicitation' },
  'sampling/createMessage': { kind: 'sampling', capability: 'sampling' },
  'roots/list': { kind: 'roots', capability: 'roots' },
};

/** The result revision whose schemas check answers: the bare results are the same in 2026-07-28. */
export const ANSWER_REVISION = '2025-11-25';

/** The default key of an ask: its kind and its rank among the asks of that kind (`elicitation-1`, ...). */
export function rankedKey(ranks: Record<string, number>, kind: string): string {
  return `${kind}-${(ranks[kind] = (ranks[kind] ?? 0) + 1)}`;
}

/**
 * The kind of input `method` asks of a 2026-07-28 client (`elicitation`, `sampling`, `roots`), or why it
 * cannot be asked: -32601 for a method no such client answers, -32021 when the envelope did not declare it.
 */
export function inputKindOf(method: string, clientCapabilities: Readonly<Record<string, unknown>>): string | McpError {
  const spec = INPUT_KINDS[method];
  if (spec === undefined) {
    return new McpError(
      ErrorCode.MethodNotFound,
      `${clipText(method)} cannot be asked of a client on a 2026-07-28 request: only elicitation/create, sampling/createMessage and roots/list can`,
    );
  }
  return isPlainObject(clientCapabilities[spec.capability]) ? spec.kind : missingCapability(spec.capability);
}

/** What a round hands on in its sealed state: the answers the handler used, and how many rounds went by. */
export interface CarriedInputs {
  readonly answers: Readonly<Record<string, unknown>>;
  readonly round: number;
}

export interface InputRequest {
  readonly method: string;
  readonly params?: JsonObject;
}

/** Rejects the asks still waiting when the round goes out: the handler's run ends there. */
type Rejector = (reason: Error) => void;

/** One run of a handler: the answers it may use, and what it asked that has no answer yet. */
export class InputRound {
  private asked: Record<string, InputRequest> | undefined;
  private used: Record<string, unknown> | undefined;
  private waiting: Rejector[] | undefined;
  private readonly ranks: Record<string, number> = {};

  constructor(
    /** The request's `inputResponses` over the carried answers; undefined when there are none. */
    private readonly answers: Readonly<Record<string, unknown>> | undefined,
    /** Rounds already answered with `input_required` for this request. */
    readonly round: number,
    /** The capabilities the request's envelope declared. */
    private readonly clientCapabilities: Readonly<Record<string, unknown>>,
    /** Called once, on the first ask without an answer. */
    private readonly onFirstAsk: () => void,
  ) {}

  /** Whether the handler asked for something this round cannot answer. */
  get pending(): boolean {
    return this.asked !== undefined;
  }

  /** The answer to an ask, a -32021 / -32602 / -32601 refusal, or a promise that waits for the round to go out. */
  ask(method: string, params: JsonObject | undefined, key: string | undefined): Promise<JsonObject> {
    const kind = inputKindOf(method, this.clientCapabilities);
    if (kind instanceof McpError) return Promise.reject(kind);
    const name = key ?? rankedKey(this.ranks, kind);
    const answer = this.answers?.[name];
    if (answer !== undefined) {
      const problem = resultProblem(method, answer, ANSWER_REVISION);
      if (problem) {
        return Promise.reject(
          new McpError(
            ErrorCode.InvalidParams,
            `Invalid params: inputResponses["${clipText(name)}"] is not a ${method} result: ${problem.message}`,
          ),
        );
      }
      (this.used ??= {})[name] = answer;
      return Promise.resolve(answer as JsonObject);
    }
    const first = this.asked === undefined;
    (this.asked ??= {})[name] = params === undefined ? { method } : { method, params };
    if (first) this.onFirstAsk();
    return new Promise<JsonObject>((_resolve, reject) => (this.waiting ??= []).push(reject));
  }

  /** The round's `inputRequests`. */
  get inputRequests(): Readonly<Record<string, InputRequest>> {
    return this.asked ?? {};
  }

  /** What the next round's state carries: the answers used so far (extra keys are dropped) and the count. */
  carried(): CarriedInputs {
    return { answers: this.used ?? {}, round: this.round + 1 };
  }

  /** The round went out: every ask still waiting fails with `reason`, so the handler's run ends. */
  abandon(reason: Error): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) for (const reject of waiting) reject(reason);
  }
}

/** The answers a retried request brings: its `inputResponses` over what earlier rounds carried. */
export function answersOf(
  carried: CarriedInputs | undefined,
  inputResponses: Readonly<Record<string, unknown>> | undefined,
): Readonly<Record<string, unknown>> | undefined {
  if (carried === undefined || Object.keys(carried.answers).length === 0) return inputResponses;
  return inputResponses === undefined ? carried.answers : { ...carried.answers, ...inputResponses };
}

/** Reads the state a sealed `requestState` carried; undefined when it is not one of ours. */
export function carriedOf(state: unknown): CarriedInputs | undefined {
  if (!isPlainObject(state)) return undefined;
  const { answers, round } = state;
  if (!isPlainObject(answers) || !Number.isSafeInteger(round) || (round as number) < 1) return undefined;
  return { answers, round: round as number };
}

/** -32021: the request needs a capability its envelope did not declare. */
export function missingCapability(capability: string): McpError {
  return new McpError(
    ErrorCode.MissingRequiredClientCapability,
    `Missing required client capability: this request needs "${capability}", which the request's clientCapabilities did not declare`,
    { requiredCapabilities: { [capability]: {} } },
  );
}
