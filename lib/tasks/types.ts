/**
 * A task as the runtime keeps it: one long-running request whose answer outlives the exchange that made it
 * (MCP tasks: the 2025-11-25 experimental form and the 2026-07-28 extension `io.modelcontextprotocol/tasks`,
 * one record for both). Times are milliseconds on the runtime's clock.
 */
import type { TaskStatus } from '../../machines/task';
import type { JsonObject } from '../jsonrpc/types';

export type { TaskStatus } from '../../machines/task';

/**
 * Who may see a task: the authenticated principal, else the session that made it, else (`anonymous`) anyone
 * unauthenticated who holds its unguessable id. Another owner gets "not found".
 */
export interface TaskOwner {
  readonly principalId?: string;
  readonly sessionId?: string;
  /** No principal and no session to bind to (an unauthenticated caller): the task id is the only key. */
  readonly anonymous?: true;
}

/** The owner of tasks made by callers nobody authenticated. */
export const ANONYMOUS_TASK_OWNER: TaskOwner = Object.freeze({ anonymous: true });

/** A protocol error that ended a task (`failed`). */
export interface TaskError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

export interface TaskRecord {
  /** Unguessable (128 random bits or more). */
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  readonly createdAt: number;
  readonly lastUpdatedAt: number;
  /** How long the task is kept after it was created; null: as long as the store keeps anything. */
  readonly ttlMs: number | null;
  /** How often a client should poll. */
  readonly pollIntervalMs?: number;
  readonly owner: TaskOwner;
  /** The request the task runs (`tools/call` and its params). */
  readonly method: string;
  readonly params: JsonObject;
  /** The process run (boot) that executes the task: a task of an earlier boot that is not final died with it. */
  readonly bootEpoch: string;
  /** While `input_required`: what the task asks, by key (the 2026-07-28 `inputRequests` map). */
  readonly inputRequests?: JsonObject;
  /** Once `completed`: the request's result (a tool error is a completed task whose result has `isError`). */
  readonly result?: JsonObject;
  /** Once `failed`: the protocol error. */
  readonly error?: TaskError;
}

/** What an update may change; `taskId`, `owner`, `createdAt`, the request and the boot never change. */
export type TaskChange = Partial<
  Pick<TaskRecord, 'status' | 'statusMessage' | 'pollIntervalMs' | 'inputRequests' | 'result' | 'error'>
>;
