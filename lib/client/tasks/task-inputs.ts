/**
 * The input requests of a 2026-07-28 task (`input_required`, `inputRequests` in `tasks/get`), answered by the
 * client's registered elicitation, sampling and roots handlers (the same `InputAnswerer` that answers a
 * multi round-trip call, lib/client/input-required.ts) and sent back with `tasks/update`, each key as soon as
 * its answer is ready: a slow answer (a person filling in a form) does not hold the others back.
 */
import { LimitExceededError } from '../../jsonrpc/errors';
import type { JsonObject } from '../../jsonrpc/types';
import type { InputAnswerer, InputRequest } from '../input-required';

/** The most input requests a task may have open at once: beyond it, the task is given up (a handler each). */
export const MAX_OPEN_TASK_INPUTS = 100;

export class TaskInputs {
  /** Keys being answered, or answered and sent: each is answered once. */
  private readonly answered = new Set<string>();

  constructor(
    private readonly answer: InputAnswerer,
    private readonly update: (inputResponses: JsonObject) => Promise<void>,
    /** Aborted when the task is no longer followed: every answer in progress is cancelled. */
    private readonly signal: AbortSignal,
    /** An answer or its `tasks/update` failed: the task cannot go on as asked. */
    private readonly failed: (error: unknown) => void,
  ) {}

  /** Answers the requests not answered yet; forgets the keys the server no longer asks (it dropped answered ones). */
  serve(requests: Readonly<Record<string, InputRequest>>): void {
    for (const key of this.answered) if (!Object.hasOwn(requests, key)) this.answered.delete(key);
    const keys = Object.keys(requests);
    if (keys.length > MAX_OPEN_TASK_INPUTS) {
      this.failed(
        new LimitExceededError(`The task asks for ${keys.length} inputs at once (at most ${MAX_OPEN_TASK_INPUTS})`),
      );
      return;
    }
    for (const key of keys) {
      if (this.answered.has(key)) continue;
      this.answered.add(key);
      this.answer(requests[key]!, this.signal, key)
        .then((result) => this.update({ [key]: result }))
        .catch((error: unknown) => {
          if (!this.signal.aborted) this.failed(error);
        });
    }
  }
}
