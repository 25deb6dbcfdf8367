/**
 * The `TaskStore` port: where tasks are kept between the call that made them and the client that reads their end,
 * across connections and (for a durable adapter) restarts. Adapters: `MemoryTaskStore` (any runtime) and
 * `LmdbTaskStore` (Node, durable). Both obey the same rules, kept here, and pass one parity suite
 * (test/tasks/task-store-parity.test.ts). The status moves are the lifecycle table's (`canMoveTask`): a final
 * task never changes again, whoever writes.
 */
import { canMoveTask, isFinalTaskStatus, TASK_MOVES } from '../../machines/task';
import { ErrorCode } from '../jsonrpc/errors';
import type { Clock } from '../core/clock';
import { MAX_ID_LENGTH } from './task-ids';
import type { TaskChange, TaskError, TaskOwner, TaskRecord, TaskStatus } from './types';

/** One page of an owner's tasks, ordered by task id; `nextCursor` continues it. */
export interface TaskPage {
  readonly tasks: TaskRecord[];
  readonly nextCursor?: string;
}

export interface TaskListOptions {
  /** From a previous page's `nextCursor`. */
  readonly cursor?: string;
  /** Page size, 1 to `MAX_TASK_PAGE` (default `DEFAULT_TASK_PAGE`). */
  readonly limit?: number;
}

export interface TaskStore {
  /** Keeps a new task; durable when it resolves. Refuses a taken id (`TaskExistsError`) and a full owner (`TaskLimitError`). */
  create(record: TaskRecord): Promise<void>;
  /** The task, or undefined when it is unknown, expired or another owner's (one answer: ids cannot be probed). */
  get(taskId: string, owner: TaskOwner): Promise<TaskRecord | undefined>;
  /**
   * Applies `change` against the stored status (compare-and-set): refuses a move the lifecycle table forbids
   * (`TaskTransitionError`), stamps `lastUpdatedAt`, drops `inputRequests` on leaving `input_required`.
   * Unknown or expired id: `TaskNotFoundError`. Resolves with the stored record.
   */
  update(taskId: string, change: TaskChange, now?: number): Promise<TaskRecord>;
  /** One page of the owner's live tasks, never another owner's. */
  list(owner: TaskOwner, options?: TaskListOptions): Promise<TaskPage>;
  /** How many tasks the owner holds (what `maxTasksPerOwner` bounds). */
  countOf(owner: TaskOwner): Promise<number>;
  /** At boot: fails every task that is not final and ran under another boot (its process died). Returns how many. */
  recover(bootEpoch: string, now?: number): Promise<number>;
  /** Deletes every task past its time to live. Returns how many. */
  purgeExpired(now?: number): Promise<number>;
  close(): Promise<void>;
}

/** What both adapters take. */
export interface TaskStoreOptions {
  /** The most tasks one owner may hold (expired ones are purged before refusing). Default 1000. */
  readonly maxTasksPerOwner?: number;
  /** Where `now` comes from when a call does not pass it. Default `Date.now`. */
  readonly clock?: Pick<Clock, 'now'>;
}

export const DEFAULT_MAX_TASKS_PER_OWNER = 1000;
export const DEFAULT_TASK_PAGE = 50;
export const MAX_TASK_PAGE = 200;

/** The error a task gets when the process that ran it died (`recover`). */
export const RESTART_TASK_ERROR: TaskError = {
  code: ErrorCode.InternalError,
  message: 'The server restarted while the task was running',
};

/** A store refused an operation. */
export abstract class TaskStoreError extends Error {}

export class TaskNotFoundError extends TaskStoreError {
  override readonly name = 'TaskNotFoundError';
  constructor(readonly taskId: string) {
    super(`Task not found: ${taskId.slice(0, MAX_ID_LENGTH)}`);
  }
}

export class TaskExistsError extends TaskStoreError {
  override readonly name = 'TaskExistsError';
  constructor(readonly taskId: string) {
    super(`A task with id ${taskId} already exists`);
  }
}

export class TaskTransitionError extends TaskStoreError {
  override readonly name = 'TaskTransitionError';
  constructor(
    readonly taskId: string,
    readonly from: TaskStatus,
    readonly to: TaskStatus,
  ) {
    super(`Task ${taskId} cannot move from ${from} to ${to}`);
  }
}

export class TaskLimitError extends TaskStoreError {
  override readonly name = 'TaskLimitError';
  constructor(readonly limit: number) {
    super(`The owner already holds ${limit} tasks, the most allowed; wait for some to expire`);
  }
}

/** The key a task's owner is counted and listed under: the principal when there is one, else the session, else anonymous. */
export function ownerKey(owner: TaskOwner): string | undefined {
  const key =
    typeof owner?.principalId === 'string'
      ? `p:${owner.principalId}`
      : typeof owner?.sessionId === 'string'
        ? `s:${owner.sessionId}`
        : owner?.anonymous === true
          ? ANONYMOUS_KEY
          : undefined;
  return key === ANONYMOUS_KEY || (key !== undefined && key.length > 2 && key.length <= MAX_ID_LENGTH + 2)
    ? key
    : undefined;
}

const ANONYMOUS_KEY = 'a:';

/** Whether `owner` may see `record` (the principal decides when the task has one). */
export function ownsTask(record: TaskRecord, owner: TaskOwner): boolean {
  const key = ownerKey(owner);
  return key !== undefined && key === ownerKey(record.owner);
}

export function isExpired(record: TaskRecord, now: number): boolean {
  return record.ttlMs !== null && record.createdAt + record.ttlMs <= now;
}

/** Whether a task id could be stored at all (anything else reads as unknown without touching the store). */
export function isTaskIdShape(taskId: unknown): taskId is string {
  return typeof taskId === 'string' && taskId.length > 0 && taskId.length <= MAX_ID_LENGTH;
}

/** Checks a record before it is created; throws `TypeError` naming the first thing wrong. Returns its owner key. */
export function checkNewTask(record: TaskRecord): string {
  if (typeof record !== 'object' || record === null) throw new TypeError('A task record must be an object');
  if (!isTaskIdShape(record.taskId)) throw new TypeError(`A task id must be 1 to ${MAX_ID_LENGTH} characters`);
  if (!(record.status in TASK_MOVES)) throw new TypeError(`Unknown task status: ${String(record.status)}`);
  const key = ownerKey(record.owner);
  if (key === undefined) throw new TypeError('A task needs an owner: a principalId, a sessionId or anonymous');
  if (!Number.isFinite(record.createdAt) || !Number.isFinite(record.lastUpdatedAt)) {
    throw new TypeError('A task needs finite createdAt and lastUpdatedAt times');
  }
  if (record.ttlMs !== null && !(Number.isFinite(record.ttlMs) && record.ttlMs >= 0)) {
    throw new TypeError('A task ttlMs must be null or a non-negative number');
  }
  if (typeof record.bootEpoch !== 'string') throw new TypeError('A task needs a bootEpoch');
  return key;
}

const CHANGEABLE: ReadonlySet<string> = new Set([
  'status',
  'statusMessage',
  'pollIntervalMs',
  'inputRequests',
  'result',
  'error',
]);

/**
 * The record `change` makes of `current` at `now`, or the refusal. Pure: both adapters run it inside their
 * write (the compare-and-set), so the check and the write see the same stored status.
 */
export function applyTaskChange(current: TaskRecord, change: TaskChange, now: number): TaskRecord {
  for (const key of Object.keys(change ?? {})) {
    if (!CHANGEABLE.has(key)) throw new TypeError(`A task update cannot change ${key}`);
  }
  const to = change.status ?? current.status;
  if (!(to in TASK_MOVES)) throw new TypeError(`Unknown task status: ${String(to)}`);
  if (!canMoveTask(current.status, to)) throw new TaskTransitionError(current.taskId, current.status, to);
  const next: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(change)) {
    if (value === undefined) delete next[key];
    else next[key] = value;
  }
  next.lastUpdatedAt = now;
  // Input requests belong to `input_required`: leaving it answers (or abandons) them.
  if (to !== 'input_required') delete next.inputRequests;
  return next as unknown as TaskRecord;
}

/** `current` failed because its boot died, or undefined when it is final, of this boot, or expired. */
export function recoveredTask(current: TaskRecord, bootEpoch: string, now: number): TaskRecord | undefined {
  if (isFinalTaskStatus(current.status) || current.bootEpoch === bootEpoch || isExpired(current, now)) return undefined;
  const error = RESTART_TASK_ERROR;
  return applyTaskChange(current, { status: 'failed', error, statusMessage: error.message }, now);
}

/** The page size asked for, checked: an integer from 1 to `MAX_TASK_PAGE`. */
export function pageLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_TASK_PAGE;
  if (!Number.isInteger(limit) || limit < 1) throw new TypeError('A task list limit must be a positive integer');
  return Math.min(limit, MAX_TASK_PAGE);
}
