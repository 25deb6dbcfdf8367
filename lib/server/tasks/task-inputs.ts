/**
 * What a task's handler asks the client (`ctx.elicit`, `ctx.createMessage`, `ctx.listRoots`), in each form:
 * the task reads `input_required`, with what it asks by key, until every ask is answered.
 * - 2026-07-28 (`ParkedInputs`): the asks wait in the task; the client reads them from `tasks/get`
 *   (`inputRequests`) and answers with `tasks/update`, one key or several at a time.
 * - 2025-11-25 (`SessionInputs`): each ask is a request to the client, carrying the task in its `_meta`, sent
 *   on the stream of a `tasks/result` waiting for the task (HTTP) or else on the session that made it.
 */
import type { RequestHost } from '../../core/request-context';
import { McpError } from '../../jsonrpc/errors';
import type { JsonObject, RequestId } from '../../jsonrpc/types';
import type { RunningTask } from '../../tasks/task-runner';
import { RELATED_TASK_META_KEY } from '../../tasks/task-wire';
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
  private publishing = false;

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
      this.schedulePublish();
    });
  }

  /** Answers the asks `responses` names (checked against their methods by `tasks/update`); other keys are ignored. */
  private answer(responses: JsonObject): void {
    let answered = false;
    for (const [key, value] of Object.entries(responses)) {
      const ask = this.pending.get(key);
      if (ask === undefined) continue;
      this.pending.delete(key);
      ask.resolve(value as JsonObject);
      answered = true;
    }
    if (answered) this.schedulePublish();
  }

  /**
   * Writes what is still asked once the handler had the chance to ask more at once (`Promise.all`) or to go
   * on after an answer: a later macrotask, after the microtasks now queued.
   */
  private schedulePublish(): void {
    if (this.publishing) return;
    this.publishing = true;
    setTimeout(() => {
      this.publishing = false;
      if (this.task.signal.aborted) return;
      if (this.pending.size === 0) void this.task.inputAnswered();
      else void this.task.needInput(this.openRequests());
    }, 0);
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

/** Where a 2025-11-25 task's request to the client goes: a connection, and the request whose stream carries it. */
export interface InputCarrier {
  readonly host: RequestHost;
  readonly relatedRequestId?: RequestId;
}

/** The 2025-11-25 form: each ask a request to the client, the task `input_required` while any is open. */
export class SessionInputs implements TaskInputs {
  private readonly open = new Map<string, InputRequest>();
  private readonly ranks: Record<string, number> = {};

  constructor(
    private readonly task: RunningTask,
    /** Where the next request goes (a waiting `tasks/result`'s stream, or the session). */
    private readonly carrier: () => InputCarrier,
  ) {}

  ask(
    method: string,
    params: JsonObject | undefined,
    key: string | undefined,
    signal?: AbortSignal,
  ): Promise<JsonObject> {
    const name = key ?? rankedKey(this.ranks, method.split('/')[0]!);
    this.open.set(name, params === undefined ? { method } : { method, params });
    void this.task.needInput(this.openRequests());
    const { host, relatedRequestId } = this.carrier();
    const meta = {
      ...(params?._meta as JsonObject | undefined),
      [RELATED_TASK_META_KEY]: { taskId: this.task.taskId },
    };
    const asked = host.request(
      method,
      { ...params, _meta: meta },
      { signal: signal ?? this.task.signal, ...(relatedRequestId !== undefined && { relatedRequestId }) },
    );
    const settled = () => {
      this.open.delete(name);
      if (this.task.signal.aborted) return;
      if (this.open.size === 0) void this.task.inputAnswered();
      else void this.task.needInput(this.openRequests());
    };
    asked.then(settled, settled);
    return asked;
  }

  private openRequests(): JsonObject {
    return Object.fromEntries(this.open) as unknown as JsonObject;
  }
}
