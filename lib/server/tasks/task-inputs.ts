/**
 * What a task's handler asks the client (`ctx.elicit`, `ctx.createMessage`, `ctx.listRoots`), in each form:
 * the task reads `input_required`, with what it asks by key, until every ask is answered.
 * - 2026-07-28 (`ParkedInputs`): the asks wait in the task; the client reads them from `tasks/get`
 *   (`inputRequests`) and answers with `tasks/update`, one key or several at a time.
 * - 2025-11-25 (`SessionInputs`, session-inputs.ts): each ask is a request to the client, carrying the task in
 *   its `_meta`, on the stream of a `tasks/result` waiting for the task (HTTP) or else on the session.
 */
import { McpError } from '../../jsonrpc/errors';
import type { JsonObject } from '../../jsonrpc/types';
import type { RunningTask } from '../../tasks/task-runner';
import { inputKindOf, rankedKey, type InputRequest } from '../modern/input-round';

export interface TaskInputs {
  /** The answer to one ask (`key` names it; by default its kind and rank: `elicitation-1`). */
  ask(
    method: string,
    params: JsonObject | undefined,
    key: string | undefined,
    signal?: AbortSignal,
  ): Promise<JsonObject>;
}

interface ParkedAsk {
  readonly request: InputRequest;
  resolve(answer: JsonObject): void;
  reject(reason: unknown): void;
}

/** The 2026-07-28 form: asks parked in the task until `tasks/update` answers them. */
export class ParkedInputs implements TaskInputs {
  private readonly pending = new Map<string, ParkedAsk>();
  private readonly ranks: Record<string, number> = {};
  /** The publication scheduled and not yet stored: resolves once it is. */
  private publishing: Promise<void> | undefined;

  constructor(
    private readonly task: RunningTask,
    /** What the request that made the task declared. */
    private readonly clientCapabilities: Readonly<Record<string, unknown>>,
  ) {
    task.onInputResponses((responses) => this.answer(responses));
    task.signal.addEventListener('abort', () => this.abandon(task.signal.reason), { once: true });
  }

  ask(method: string, params: JsonObject | undefined, key: string | undefined): Promise<JsonObject> {
    const kind = inputKindOf(method, this.clientCapabilities);
    if (kind instanceof McpError) return Promise.reject(kind);
    if (this.task.signal.aborted) return Promise.reject(this.task.signal.reason);
    const name = key ?? rankedKey(this.ranks, kind);
    return new Promise<JsonObject>((resolve, reject) => {
      this.pending.get(name)?.reject(new Error(`Input "${name}" was asked again`));
      this.pending.set(name, { request: params === undefined ? { method } : { method, params }, resolve, reject });
      void this.schedulePublish();
    });
  }

  /**
   * Answers the asks `responses` names (checked against their methods by `tasks/update`); other keys are ignored.
   * Resolves once what is still asked is stored, so that the `tasks/update` acknowledged after it is seen.
   */
  private answer(responses: JsonObject): Promise<void> {
    let answered = false;
    for (const [key, value] of Object.entries(responses)) {
      const ask = this.pending.get(key);
      if (ask === undefined) continue;
      this.pending.delete(key);
      ask.resolve(value as JsonObject);
      answered = true;
    }
    return answered ? this.schedulePublish() : Promise.resolve();
  }

  /**
   * Writes what is still asked once the handler had the chance to ask more at once (`Promise.all`) or to go
   * on after an answer: a later macrotask, after the microtasks now queued. Resolves once written.
   */
  private schedulePublish(): Promise<void> {
    return (this.publishing ??= new Promise<void>((resolve) => {
      setTimeout(() => {
        this.publishing = undefined;
        if (this.task.signal.aborted) return resolve();
        const written = this.pending.size === 0 ? this.task.inputAnswered() : this.task.needInput(this.openRequests());
        written.then(resolve, resolve);
      }, 0);
    }));
  }

  private openRequests(): JsonObject {
    const requests: Record<string, InputRequest> = {};
    for (const [key, ask] of this.pending) requests[key] = ask.request;
    return requests as unknown as JsonObject;
  }

  private abandon(reason: unknown): void {
    const asks = [...this.pending.values()];
    this.pending.clear();
    for (const ask of asks) ask.reject(reason);
  }
}
