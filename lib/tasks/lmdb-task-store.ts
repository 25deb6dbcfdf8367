/**
 * A durable `TaskStore` on LMDB (the `lmdb` package) in a folder: tasks survive the process, a crash included
 * (LMDB commits are atomic; `create` resolves once its commit is flushed). Node only: import it from a Node entry.
 *
 * One database, three kinds of keys: `['t', taskId]` → the record (JSON: the wire's values round-trip exactly),
 * `['o', ownerKey, taskId]` → the owner index (lists and purges), `['c', ownerKey]` → the owner's task count.
 * Every write is one LMDB transaction that checks before it writes (an lmdb-js transaction callback that throws
 * still commits what it wrote), so the compare-and-set and the bound hold against racing writers.
 */
import { open, type RootDatabase } from 'lmdb';
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

export interface LmdbTaskStoreOptions extends TaskStoreOptions {
  /** The folder the store lives in (created if missing). One server process at a time. */
  readonly path: string;
}

type Key = (string | number)[];
/** Above every task id in the owner index (ids are ASCII). */
const END = '\uffff';

export class LmdbTaskStore implements TaskStore {
  private readonly db: RootDatabase<unknown, Key>;
  private readonly maxTasksPerOwner: number;
  private readonly now: () => number;

  constructor(options: LmdbTaskStoreOptions) {
    // Always a folder, even for a path with an extension (lmdb would make `tasks.db` one file).
    this.db = open<unknown, Key>({ path: options.path, encoding: 'json', noSubdir: false });
    this.maxTasksPerOwner = options.maxTasksPerOwner ?? DEFAULT_MAX_TASKS_PER_OWNER;
    const clock = options.clock;
    this.now = clock ? () => clock.now() : () => Date.now();
  }

  async create(record: TaskRecord): Promise<void> {
    const key = checkNewTask(record);
    const refusal = await this.db.transaction(() => {
      if (this.db.doesExist(['t', record.taskId])) return new TaskExistsError(record.taskId);
      let count = this.count(key);
      if (count >= this.maxTasksPerOwner) count -= this.purgeOwner(key, this.now());
      if (count >= this.maxTasksPerOwner) return new TaskLimitError(this.maxTasksPerOwner);
      this.db.put(['t', record.taskId], record);
      this.db.put(['o', key, record.taskId], 1);
      this.db.put(['c', key], count + 1);
      return undefined;
    });
    if (refusal !== undefined) throw refusal;
    await this.db.flushed;
  }

  async get(taskId: string, owner: TaskOwner): Promise<TaskRecord | undefined> {
    const record = this.live(taskId, this.now());
    return record !== undefined && ownsTask(record, owner) ? record : undefined;
  }

  async update(taskId: string, change: TaskChange, now = this.now()): Promise<TaskRecord> {
    const outcome = await this.db.transaction(() => {
      const current = this.live(taskId, now);
      if (current === undefined) return new TaskNotFoundError(String(taskId));
      try {
        const next = applyTaskChange(current, change, now);
        this.db.put(['t', taskId], next);
        return next;
      } catch (refusal) {
        return refusal as Error;
      }
    });
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  async list(owner: TaskOwner, options: TaskListOptions = {}): Promise<TaskPage> {
    const limit = pageLimit(options.limit);
    const after = options.cursor === undefined ? undefined : decodeTaskCursor(options.cursor);
    const key = ownerKey(owner);
    if (key === undefined) return { tasks: [] };
    const now = this.now();
    const tasks: TaskRecord[] = [];
    let more = false;
    for (const { key: indexKey } of this.db.getRange({ start: ['o', key, after ?? ''], end: ['o', key, END] })) {
      const taskId = String(indexKey[2]);
      if (taskId === after) continue;
      if (tasks.length === limit) {
        more = true;
        break;
      }
      const record = this.live(taskId, now);
      if (record !== undefined) tasks.push(record);
    }
    const last = tasks.at(-1);
    return more && last !== undefined ? { tasks, nextCursor: encodeTaskCursor(last.taskId) } : { tasks };
  }

  async countOf(owner: TaskOwner): Promise<number> {
    const key = ownerKey(owner);
    return key === undefined ? 0 : this.count(key);
  }

  async recover(bootEpoch: string, now = this.now()): Promise<number> {
    return this.db.transaction(() => {
      const failed: TaskRecord[] = [];
      for (const { value } of this.db.getRange({ start: ['t', ''], end: ['t', END] })) {
        const next = recoveredTask(value as TaskRecord, bootEpoch, now);
        if (next !== undefined) failed.push(next);
      }
      // Written after the scan: the cursor does not walk over its own writes.
      for (const next of failed) this.db.put(['t', next.taskId], next);
      return failed.length;
    });
  }

  async purgeExpired(now = this.now()): Promise<number> {
    return this.db.transaction(() => {
      const owners = new Set<string>();
      for (const { key } of this.db.getRange({ start: ['c', ''], end: ['c', END] })) owners.add(String(key[1]));
      let purged = 0;
      for (const key of owners) purged += this.purgeOwner(key, now);
      return purged;
    });
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  private count(key: string): number {
    return (this.db.get(['c', key]) as number | undefined) ?? 0;
  }

  private live(taskId: string, now: number): TaskRecord | undefined {
    if (!isTaskIdShape(taskId)) return undefined;
    const record = this.db.get(['t', taskId]) as TaskRecord | undefined;
    return record !== undefined && !isExpired(record, now) ? record : undefined;
  }

  /** Deletes one owner's expired tasks; call inside a write transaction. Returns how many. */
  private purgeOwner(key: string, now: number): number {
    const expired: string[] = [];
    for (const { key: indexKey } of this.db.getRange({ start: ['o', key, ''], end: ['o', key, END] })) {
      const taskId = String(indexKey[2]);
      const record = this.db.get(['t', taskId]) as TaskRecord | undefined;
      if (record === undefined || isExpired(record, now)) expired.push(taskId);
    }
    for (const taskId of expired) {
      this.db.remove(['t', taskId]);
      this.db.remove(['o', key, taskId]);
    }
    const left = this.count(key) - expired.length;
    if (left > 0) this.db.put(['c', key], left);
    else this.db.remove(['c', key]);
    return expired.length;
  }
}
