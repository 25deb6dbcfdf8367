/**
 * Runs tasks: each one made durable in the store before anyone hears of it, a lifecycle actor per live task in
 * the runtime's system (machines/task.ts decides every move, and its time to live), the work run after its
 * creation is answered, and every status written through to the store in order. Runtime-neutral; the wire
 * forms of both eras (lib/server) sit on top of it.
 */
import { createActor, type Actor } from 'xstate';
import {
  isFinalTaskStatus,
  taskMachine,
  type TaskEvent,
  type TaskHost,
  type TaskMove,
  type TaskStatus,
} from '../../machines/task';
import type { JsonObject } from '../jsonrpc/types';
import { ErrorCode } from '../jsonrpc/errors';
import type { Logger } from '../core/logger';
import { defaultLogger } from '../core/logger';
import type { Runtime } from '../core/runtime';
import { backgroundClock, type Clock } from '../core/clock';
import { onLaterTurn } from '../core/microtask';
import { newTaskId } from './task-ids';
import type { TaskListOptions, TaskPage, TaskStore } from './task-store';
import type { TaskChange, TaskError, TaskOwner, TaskRecord } from './types';

/** A task kept an hour unless it asks otherwise. */
export const DEFAULT_TASK_TTL_MS = 3_600_000;
/** The longest time to live a task may ask for (a day). */
export const MAX_TASK_TTL_MS = 86_400_000;
export const DEFAULT_POLL_INTERVAL_MS = 1_000;
/** How often the store is swept for tasks past their time to live. */
export const DEFAULT_PURGE_EVERY_MS = 60_000;

export interface TaskRunnerOptions {
  readonly store: TaskStore;
  /** Hosts the tasks' actors; its clock times them and stamps the records. */
  readonly runtime: Runtime;
  /** This process run: tasks of another that are not final died with it (`boot`). Default: a fresh id. */
  readonly bootEpoch?: string;
  readonly logger?: Logger;
  readonly pollIntervalMs?: number;
  /** Sweeps the store for expired tasks this often, on the runtime's clock (never holding the process open); 0: never. */
  readonly purgeEveryMs?: number;
  /** Hears every status a task enters, as stored (the 2025-11-25 form's `notifications/tasks/status`). */
  readonly onChange?: (record: TaskRecord) => void;
  /** A task stopped running here (final and stored, expired, or the runner closed), after its last `onChange`. */
  readonly onGone?: (taskId: string) => void;
}

/** What a task's work sees of its task. */
export interface RunningTask {
  readonly taskId: string;
  /** Aborted when the task is cancelled (or the runner closes). */
  readonly signal: AbortSignal;
  /** A status message for whoever polls the task. */
  report(message: string): Promise<void>;
  /** Parks the task in `input_required` with these open requests, by key (again, with a new map, when parked). */
  needInput(inputRequests: JsonObject): Promise<void>;
  /** Every open input request was answered: the task is `working` again. */
  inputAnswered(): Promise<void>;
  /**
   * Who hears the answers `tasks/update` brings for this task (`answerInput`); `answerInput` resolves once the
   * promise the listener returns does (the task's new open requests stored), so the next `tasks/get` shows them.
   */
  onInputResponses(listener: InputListener): void;
}

export interface TaskStartOptions {
  /** How long the task is kept after its creation (at most `MAX_TASK_TTL_MS`); null: as long as the store keeps anything. */
  readonly ttlMs?: number | null;
  /** Whether a result fails the task rather than completing it (the 2025-11-25 form: a tool error). */
  readonly resultFails?: (result: JsonObject) => boolean;
}

/** Takes `tasks/update`'s answers; resolves once what the task now asks is stored. */
export type InputListener = (responses: JsonObject) => void | Promise<void>;

/** The work of a task: resolves with the request's result; rejects with an error that has a code to fail it. */
export type TaskWork = (task: RunningTask) => Promise<JsonObject>;

interface LiveTask {
  readonly actor: Actor<typeof taskMachine>;
  readonly abort: AbortController;
  status: TaskStatus;
  /** What the next status entered writes besides the status. */
  change: TaskChange;
  /** The store writes of this task, in order. */
  writes: Promise<unknown>;
  /** Hears `answerInput`'s responses (set by the work). */
  inputListener: InputListener | undefined;
  /** Resolves once the task is final here, or its actor is gone. */
  readonly ended: Promise<void>;
  end(): void;
}

export class TaskRunner {
  readonly bootEpoch: string;
  private readonly store: TaskStore;
  private readonly runtime: Runtime;
  private readonly logger: Logger;
  private readonly pollIntervalMs: number;
  private readonly live = new Map<string, LiveTask>();
  private readonly purgeEveryMs: number;
  private readonly onChange: ((record: TaskRecord) => void) | undefined;
  private readonly onGone: ((taskId: string) => void) | undefined;
  /** The runtime's clock for the purge timer, which never holds the process open. */
  private readonly clock: Clock;
  private purgeTimer: unknown;
  private closed = false;

  constructor(options: TaskRunnerOptions) {
    this.store = options.store;
    this.runtime = options.runtime;
    this.logger = options.logger ?? defaultLogger;
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.bootEpoch = options.bootEpoch ?? newTaskId();
    this.purgeEveryMs = options.purgeEveryMs ?? DEFAULT_PURGE_EVERY_MS;
    this.onChange = options.onChange;
    this.onGone = options.onGone;
    this.clock = backgroundClock(options.runtime.clock);
    this.schedulePurge();
  }

  /** Before serving: the tasks an earlier run left working read `failed`. Resolves with how many. */
  boot(): Promise<number> {
    return this.store.recover(this.bootEpoch, this.runtime.clock.now());
  }

  /**
   * Creates a task for `method`/`params` owned by `owner` and resolves with its record once the store holds it;
   * `work` starts after that, on a later turn, so the creation is answered first.
   */
  async start(
    owner: TaskOwner,
    request: { readonly method: string; readonly params: JsonObject },
    work: TaskWork,
    options: TaskStartOptions = {},
  ): Promise<TaskRecord> {
    const { ttlMs = DEFAULT_TASK_TTL_MS, resultFails } = options;
    const now = this.runtime.clock.now();
    const record: TaskRecord = {
      taskId: newTaskId(),
      status: 'working',
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs: ttlMs === null ? null : Math.min(Math.max(1, Math.floor(ttlMs)), MAX_TASK_TTL_MS),
      pollIntervalMs: this.pollIntervalMs,
      owner,
      method: request.method,
      params: request.params,
      bootEpoch: this.bootEpoch,
    };
    await this.store.create(record);
    const task = this.spawn(record);
    // After the created task is answered: its work starts on a later turn.
    onLaterTurn(() => this.run(record.taskId, task, work, resultFails), undefined);
    return record;
  }

  /** The task as the store has it now, for `owner` (undefined: unknown, expired or someone else's). */
  get(owner: TaskOwner, taskId: string): Promise<TaskRecord | undefined> {
    return this.store.get(taskId, owner);
  }

  /**
   * Cancels the task: a live one moves to `cancelled` and its work's signal aborts; a final one stays as it
   * is (cancelling is idempotent). Resolves with the record after, or undefined when `owner` has no such task.
   */
  async cancel(owner: TaskOwner, taskId: string): Promise<TaskRecord | undefined> {
    const known = await this.store.get(taskId, owner);
    if (!known) return undefined;
    const task = this.live.get(taskId);
    if (!task) return known;
    this.move(task, 'cancel', {});
    task.abort.abort(new Error('The task was cancelled'));
    await task.writes;
    // Final now, whether or not its work heeds the signal: the actor goes (a late outcome is refused).
    if (isFinalTaskStatus(task.status)) dispose(task);
    return this.store.get(taskId, owner);
  }

  /**
   * Hands `responses` (the 2026-07-28 `tasks/update`) to the task's work, when it runs here, and resolves once
   * the task's store record shows their effect (the keys answered gone, or the task working again). Resolves
   * with the task as it was before, or undefined when `owner` has no such task.
   */
  async answerInput(owner: TaskOwner, taskId: string, responses: JsonObject): Promise<TaskRecord | undefined> {
    const known = await this.store.get(taskId, owner);
    if (!known) return undefined;
    const task = this.live.get(taskId);
    await task?.inputListener?.(responses);
    await task?.writes;
    return known;
  }

  /** One page of `owner`'s tasks. */
  list(owner: TaskOwner, options?: TaskListOptions): Promise<TaskPage> {
    return this.store.list(owner, options);
  }

  /**
   * The task once it is final (the 2025-11-25 `tasks/result` waits for it), or undefined when `owner` has no
   * such task or it expired meanwhile; rejects with `signal`'s reason when that aborts first. A task running
   * in another process is polled in the store at its poll interval.
   */
  async untilFinal(owner: TaskOwner, taskId: string, signal?: AbortSignal): Promise<TaskRecord | undefined> {
    for (;;) {
      signal?.throwIfAborted();
      const record = await this.store.get(taskId, owner);
      if (!record || isFinalTaskStatus(record.status)) return record;
      const live = this.live.get(taskId);
      await abortable(live ? live.ended : delay(record.pollIntervalMs ?? this.pollIntervalMs), signal);
    }
  }

  /** Tasks running in this process. */
  get liveCount(): number {
    return this.live.size;
  }

  /** Stops every live task's work (the tasks stay as the store has them). */
  async close(): Promise<void> {
    this.closed = true;
    this.clock.clearTimeout(this.purgeTimer);
    const tasks = [...this.live.values()];
    for (const task of tasks) {
      task.abort.abort(new Error('The task runner closed'));
      dispose(task);
    }
    this.live.clear();
    await Promise.allSettled(tasks.map((task) => task.writes));
  }

  /** The next sweep of expired tasks; each sweep schedules the one after it. */
  private schedulePurge(): void {
    if (this.purgeEveryMs <= 0 || this.closed) return;
    this.purgeTimer = this.clock.setTimeout(() => {
      this.store
        .purgeExpired(this.runtime.clock.now())
        .catch((error: unknown) => this.logger.warn('Could not purge expired tasks', error))
        .finally(() => this.schedulePurge());
    }, this.purgeEveryMs);
  }

  private spawn(record: TaskRecord): LiveTask {
    const { taskId } = record;
    // The machine decides every move; its host writes each status entered (with what came with it) to the store.
    const host: TaskHost = {
      entered: (status, event) => {
        if (event.type.startsWith('xstate.')) return; // the status the task was created (or read back) with
        this.write(taskId, task, status);
      },
      refused: (status, event) => this.logger.debug(`Task ${taskId} in ${status} refused ${event.type}`),
      expired: () => undefined, // the store purges expired records; see the actor's completion below
    };
    const actor = createActor(taskMachine, {
      input: { host, ttlMs: record.ttlMs, status: record.status },
      parent: this.runtime.root,
    });
    let end!: () => void;
    const ended = new Promise<void>((resolve) => (end = resolve));
    const task: LiveTask = {
      actor,
      abort: new AbortController(),
      status: record.status,
      change: {},
      writes: Promise.resolve(),
      inputListener: undefined,
      ended,
      end,
    };
    actor.subscribe({
      complete: () => {
        // Expired or disposed: nothing more will be written; the work, if still running, is stopped.
        if (!isFinalTaskStatus(task.status)) task.abort.abort(EXPIRED);
        this.live.delete(record.taskId);
        task.end();
        this.onGone?.(record.taskId);
      },
    });
    this.live.set(record.taskId, task);
    actor.start();
    return task;
  }

  private async run(
    taskId: string,
    task: LiveTask,
    work: TaskWork,
    resultFails: ((result: JsonObject) => boolean) | undefined,
  ): Promise<void> {
    if (task.abort.signal.aborted) return;
    const running: RunningTask = {
      taskId,
      signal: task.abort.signal,
      report: (message) => {
        this.move(task, 'report', { statusMessage: message });
        return task.writes.then(() => undefined);
      },
      needInput: (inputRequests) => {
        this.move(task, 'input.needed', { inputRequests });
        return task.writes.then(() => undefined);
      },
      inputAnswered: () => {
        this.move(task, 'input.answered', {});
        return task.writes.then(() => undefined);
      },
      onInputResponses: (listener) => {
        task.inputListener = listener;
      },
    };
    try {
      const result = await work(running);
      this.move(task, resultFails?.(result) ? 'fail' : 'complete', { result });
    } catch (error) {
      if (!task.abort.signal.aborted) this.move(task, 'fail', { error: taskErrorOf(error) });
    }
    await task.writes;
    // A final task needs no actor until its time to live: the store keeps it, and purges it then.
    if (isFinalTaskStatus(task.status)) dispose(task);
  }

  /** Tells the machine `type`, with what the move brings (`change`) should it allow it. */
  private move(task: LiveTask, type: TaskMove, change: TaskChange): void {
    if (task.actor.getSnapshot().status !== 'active') return;
    task.change = change;
    task.actor.send({ type } as TaskEvent);
    task.change = {};
  }

  /** Writes the status the machine entered, after the task's earlier writes. */
  private write(taskId: string, task: LiveTask, status: TaskStatus): void {
    task.status = status;
    const change = { ...task.change, status };
    const now = this.runtime.clock.now();
    const onChange = this.onChange;
    task.writes = task.writes
      .then(() => this.store.update(taskId, change, now))
      .then(onChange && ((stored) => onChange(stored)))
      .catch((error: unknown) => this.logger.warn(`Could not record task ${taskId} as ${status}`, error));
  }
}

/** Ends the task's actor, unless it ended already (a cancelled task's work ending after the cancel, an expiry). */
function dispose(task: LiveTask): void {
  if (task.actor.getSnapshot().status === 'active') task.actor.send({ type: 'dispose' });
}

/** Why the work of a task that outlived its time to live was stopped (one object: it carries nothing of the task). */
const EXPIRED = new Error('The task expired');

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** `promise`, or the rejection of `signal`'s reason should it abort first. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The protocol error a failed task keeps: the thrown error's code when it has one, an internal error otherwise. */
function taskErrorOf(error: unknown): TaskError {
  const { code, message, data } = (error ?? {}) as { code?: unknown; message?: unknown; data?: unknown };
  return {
    code: typeof code === 'number' && Number.isInteger(code) ? code : ErrorCode.InternalError,
    message: typeof message === 'string' ? message : String(error),
    ...(data !== undefined && { data }),
  };
}
