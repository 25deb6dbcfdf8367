/**
 * A task on the wire, in each form MCP gives it: the 2025-11-25 experimental `Task` (`ttl`, `pollInterval`,
 * a `{ task }` wrapper on creation, the result fetched apart with `tasks/result`) and the 2026-07-28 extension
 * `io.modelcontextprotocol/tasks` (flat, `ttlMs`, `pollIntervalMs`, `resultType`, the end inlined by
 * `tasks/get`). One record (`TaskRecord`), two renderings; times as ISO 8601.
 */
import type { JsonObject } from '../jsonrpc/types';
import type { TaskRecord } from './types';

/** The 2026-07-28 extension's name, in capabilities and `_meta`. */
export const TASKS_EXTENSION_ID = 'io.modelcontextprotocol/tasks';

/** Where the 2025-11-25 form says which task a message belongs to (`_meta` key). */
export const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** The status fields both forms share. */
function statusFields(record: TaskRecord): JsonObject {
  return {
    taskId: record.taskId,
    status: record.status,
    ...(record.statusMessage !== undefined && { statusMessage: record.statusMessage }),
    createdAt: iso(record.createdAt),
    lastUpdatedAt: iso(record.lastUpdatedAt),
  };
}

/** The 2025-11-25 `Task`: `tasks/get`, `tasks/cancel`, `tasks/list` entries, the status notification. */
export function handshakeTask(record: TaskRecord): JsonObject {
  return {
    ...statusFields(record),
    ttl: record.ttlMs,
    ...(record.pollIntervalMs !== undefined && { pollInterval: record.pollIntervalMs }),
  };
}

/** The 2025-11-25 answer to a task-augmented request. */
export function handshakeCreateResult(record: TaskRecord): JsonObject {
  return { task: handshakeTask(record) };
}

/** The 2026-07-28 task fields. */
function modernTask(record: TaskRecord): JsonObject {
  return {
    ...statusFields(record),
    ttlMs: record.ttlMs,
    ...(record.pollIntervalMs !== undefined && { pollIntervalMs: record.pollIntervalMs }),
  };
}

/** The 2026-07-28 answer to a task-augmented request: flat, `resultType: 'task'`, nothing of its end. */
export function modernCreateResult(record: TaskRecord): JsonObject {
  return { resultType: 'task', ...modernTask(record) };
}

/**
 * The 2026-07-28 `tasks/get` answer: the task, and what its status holds: the result once `completed` (a
 * tool error included), the error once `failed`, the open input requests while `input_required`.
 */
export function modernGetResult(record: TaskRecord): JsonObject {
  return {
    resultType: 'complete',
    ...modernTask(record),
    ...(record.status === 'completed' && record.result !== undefined && { result: record.result }),
    ...(record.status === 'failed' && record.error !== undefined && { error: { ...record.error } as JsonObject }),
    ...(record.status === 'input_required' &&
      record.inputRequests !== undefined && { inputRequests: record.inputRequests }),
  };
}

/** The 2026-07-28 acknowledgement of `tasks/cancel` and `tasks/update`: nothing but that it is done. */
export const MODERN_TASK_ACK: JsonObject = Object.freeze({ resultType: 'complete' });
