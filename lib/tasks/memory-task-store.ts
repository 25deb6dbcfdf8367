/**
 * A `TaskStore` in this process's memory (any runtime): nothing survives the process. Tests, short-lived servers.
 * Records are immutable, as messages are: the store freezes what it keeps (the caller's params and result
 * included) and hands out those same frozen objects, never copies.
 */
import { deepFreeze } from '../core/freeze';
import { decodeTaskCursor, encodeTaskCursor } from './task-ids';
import {
  applyTaskChange,
  checkNewTask,
  DEFAULT_MAX_TASKS_PER_OWNER,
  isExpired,
  isTaskIdShape,
  ownerKey,
  ownsTask,
  pageLimit,
  recoveredTask,
  TaskExistsError,
  TaskLimitError,
  TaskNotFoundError,
  type TaskListOptions,
  type TaskPage,
  type TaskStore,
  type TaskStoreOptions,
} from './task-store';
import type { TaskChange, TaskOwner, TaskRecord } from './types';

export class MemoryTaskStore implements TaskStore {
  private readonly tasks = new Map<string, TaskRecord>();
  /** Owner key → that owner's task ids. */
  private readonly byOwner = new Map<string, Set<string>>();
  private readonly maxTasksPerOwner: number;
  private readonly now: () => number;

  constructor(options: TaskStoreOptions = {}) {
    this.maxTasksPerOwner = options.maxTasksPerOwner ?? DEFAULT_MAX_TASKS_PER_OWNER;
    const clock = options.clock;
    this.now = clock ? () => clock.now() : () => Date.now();
  }

  async create(record: TaskRecord): Promise<void> {
    const key = checkNewTask(record);
    if (this.tasks.has(record.taskId)) throw new TaskExistsError(record.taskId);
    const ids = this.byOwner.get(key) ?? new Set<string>();
    if (ids.size >= this.maxTasksPerOwner) this.purgeIds(ids, this.now());
    if (ids.size >= this.maxTasksPerOwner) throw new TaskLimitError(this.maxTasksPerOwner);
    this.tasks.set(record.taskId, deepFreeze({ ...record }));
    ids.add(record.taskId);
    this.byOwner.set(key, ids);
  }

  async get(taskId: string, owner: TaskOwner): Promise<TaskRecord | undefined> {
    const record = this.live(taskId, this.now());
    return record !== undefined && ownsTask(record, owner) ? record : undefined;
  }

  async update(taskId: string, change: TaskChange, now = this.now()): Promise<TaskRecord> {
    const current = this.live(taskId, now);
    if (current === undefined) throw new TaskNotFoundError(String(taskId));
    const next = deepFreeze(applyTaskChange(current, change, now));
    this.tasks.set(taskId, next);
    return next;
  }

  async list(owner: TaskOwner, options: TaskListOptions = {}): Promise<TaskPage> {
    const limit = pageLimit(options.limit);
    const after = options.cursor === undefined ? '' : decodeTaskCursor(options.cursor);
    const key = ownerKey(owner);
    const ids = [...((key !== undefined && this.byOwner.get(key)) || [])].filter((id) => id > after).sort();
    const now = this.now();
    const tasks: TaskRecord[] = [];
    let index = 0;
    for (; index < ids.length && tasks.length < limit; index++) {
      const record = this.live(ids[index]!, now);
      if (record !== undefined) tasks.push(record);
    }
    const last = tasks.at(-1);
    return index < ids.length && last !== undefined ? { tasks, nextCursor: encodeTaskCursor(last.taskId) } : { tasks };
  }

  async countOf(owner: TaskOwner): Promise<number> {
    const key = ownerKey(owner);
    return key === undefined ? 0 : (this.byOwner.get(key)?.size ?? 0);
  }

  async recover(bootEpoch: string, now = this.now()): Promise<number> {
    let failed = 0;
    for (const [taskId, record] of this.tasks) {
      const next = recoveredTask(record, bootEpoch, now);
      if (next === undefined) continue;
      this.tasks.set(taskId, deepFreeze(next));
      failed++;
    }
    return failed;
  }

  async purgeExpired(now = this.now()): Promise<number> {
    let purged = 0;
    for (const ids of this.byOwner.values()) purged += this.purgeIds(ids, now);
    return purged;
  }

  async close(): Promise<void> {
    this.tasks.clear();
    this.byOwner.clear();
  }

  /** The stored task unless it is unknown or expired. */
  private live(taskId: string, now: number): TaskRecord | undefined {
    if (!isTaskIdShape(taskId)) return undefined;
    const record = this.tasks.get(taskId);
    return record !== undefined && !isExpired(record, now) ? record : undefined;
  }

  /** Deletes the expired tasks among one owner's `ids`; returns how many. */
  private purgeIds(ids: Set<string>, now: number): number {
    let purged = 0;
    for (const taskId of ids) {
      const record = this.tasks.get(taskId);
      if (record !== undefined && !isExpired(record, now)) continue;
      this.tasks.delete(taskId);
      ids.delete(taskId);
      purged++;
    }
    return purged;
  }
}
