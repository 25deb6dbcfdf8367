/**
 * A task as the client sees it, read from either wire form MCP gives it: the 2025-11-25 experimental `Task`
 * (`ttl`, `pollInterval`) and the 2026-07-28 extension `io.modelcontextprotocol/tasks` (flat, `ttlMs`,
 * `pollIntervalMs`, its end inlined in `tasks/get`). Whatever a server sends is checked here first: a
 * malformed task rejects with `ProtocolViolationError` naming the field, and nothing of it is kept.
 */
import { isPlainObject } from '../../jsonrpc/classify';
import { McpError, ProtocolViolationError } from '../../jsonrpc/errors';
import { excerpt } from '../../jsonrpc/excerpt';
import type { JsonObject } from '../../jsonrpc/types';
import { resultProblem } from '../../protocol/results';
import type { CallToolResult } from '../../protocol/types';
import type { TaskStatus } from '../../tasks/types';
import { roundOf, type InputRequest } from '../input-required';

export type { TaskStatus } from '../../tasks/types';

/** The longest task id a client accepts (a server's id is sent back in every call and may be stored in a ref). */
export const MAX_TASK_ID_LENGTH = 512;

/** One status of a task, in the same form for both eras. Times are ISO 8601 as the server sent them. */
export interface TaskStatusView {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  /** How long the server keeps the task from its creation, in ms; null: no limit. */
  readonly ttlMs: number | null;
  /** How often the server would like to be polled, in ms. */
  readonly pollIntervalMs?: number;
}

/** How a task ended: the tool's result (a tool error included), or the error the task failed or was cancelled with. */
export type TaskOutcome = { readonly result: CallToolResult } | { readonly error: Error };

/** What one look at a task shows: its status, and in the 2026-07-28 form its end or its open input requests. */
export interface TaskSnapshot {
  readonly view: TaskStatusView;
  readonly outcome?: TaskOutcome;
  readonly inputRequests?: Readonly<Record<string, InputRequest>>;
}

const STATUSES: ReadonlySet<unknown> = new Set<TaskStatus>([
  'working',
  'input_required',
  'completed',
  'failed',
  'cancelled',
]);

/** Whether a task in `status` is over (completed, failed or cancelled): it never changes again. */
export function isFinal(status: TaskStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** Where a wire form keeps its time to live and poll interval. */
interface FieldNames {
  readonly ttl: 'ttl' | 'ttlMs';
  readonly pollInterval: 'pollInterval' | 'pollIntervalMs';
}

const HANDSHAKE_FIELDS: FieldNames = { ttl: 'ttl', pollInterval: 'pollInterval' };
const MODERN_FIELDS: FieldNames = { ttl: 'ttlMs', pollInterval: 'pollIntervalMs' };

/** A 2025-11-25 `Task` (`tasks/get`, `tasks/cancel`, `tasks/list`, the status notification, `{ task }` on creation). */
export function handshakeView(value: unknown, where: string): TaskStatusView {
  return readView(value, where, HANDSHAKE_FIELDS);
}

/** The task fields of a 2026-07-28 result (the flat creation result, `tasks/get`). */
export function modernView(value: unknown, where: string): TaskStatusView {
  return readView(value, where, MODERN_FIELDS);
}

/**
 * A 2026-07-28 `tasks/get` result: the task, with its result once `completed` (checked as a `CallToolResult`),
 * its error once `failed`, its open input requests while `input_required`.
 */
export function modernSnapshot(result: JsonObject): TaskSnapshot {
  const view = modernView(result, 'The tasks/get result');
  switch (view.status) {
    case 'completed':
      return { view, outcome: { result: toolResult(result.result, 'The completed task of tasks/get') } };
    case 'failed':
      return { view, outcome: { error: taskError(result.error, view.taskId) } };
    case 'input_required': {
      if (result.inputRequests === undefined) return { view };
      const round = roundOf({ inputRequests: result.inputRequests }, 'tasks/get');
      return round.inputRequests
        ? { view, inputRequests: round.inputRequests as Record<string, InputRequest> }
        : { view };
    }
    default:
      return { view };
  }
}

/** `value` as a tool's result, or `ProtocolViolationError` saying what `where` got wrong. */
export function toolResult(value: unknown, where: string): CallToolResult {
  const problem = resultProblem('tools/call', value);
  if (problem) throw new ProtocolViolationError(`${where} has no valid tool result: ${problem.message}`);
  return value as unknown as CallToolResult;
}

/** The `{ code, message, data? }` a failed 2026-07-28 task carries, as the `McpError` its call fails with. */
function taskError(value: unknown, taskId: string): McpError {
  if (!isPlainObject(value) || !Number.isInteger(value.code) || typeof value.message !== 'string') {
    throw new ProtocolViolationError(
      `The failed task ${excerpt(taskId)} has no valid error ({ code, message }): ${excerpt(value)}`,
    );
  }
  return new McpError(value.code as number, value.message, value.data);
}

function readView(value: unknown, where: string, names: FieldNames): TaskStatusView {
  if (!isPlainObject(value)) throw broken(where, 'is not an object', value);
  const { taskId, status, statusMessage, createdAt, lastUpdatedAt } = value;
  const ttl = value[names.ttl];
  const pollInterval = value[names.pollInterval];
  if (typeof taskId !== 'string' || taskId === '' || taskId.length > MAX_TASK_ID_LENGTH) {
    throw broken(where, `has no valid taskId (a string of 1 to ${MAX_TASK_ID_LENGTH} characters)`, taskId);
  }
  if (!STATUSES.has(status)) throw broken(where, 'has an unknown status', status);
  if (statusMessage !== undefined && typeof statusMessage !== 'string') {
    throw broken(where, 'has a statusMessage that is not a string', statusMessage);
  }
  if (typeof createdAt !== 'string') throw broken(where, 'has no createdAt', createdAt);
  if (typeof lastUpdatedAt !== 'string') throw broken(where, 'has no lastUpdatedAt', lastUpdatedAt);
  if (ttl !== null && !isWholeMs(ttl, 0)) throw broken(where, `has no valid ${names.ttl} (ms, or null)`, ttl);
  if (pollInterval !== undefined && !isWholeMs(pollInterval, 1)) {
    throw broken(where, `has an invalid ${names.pollInterval}`, pollInterval);
  }
  return {
    taskId,
    status: status as TaskStatus,
    ...(statusMessage !== undefined && { statusMessage }),
    createdAt,
    lastUpdatedAt,
    ttlMs: ttl as number | null,
    ...(pollInterval !== undefined && { pollIntervalMs: pollInterval as number }),
  };
}

function isWholeMs(value: unknown, least: number): boolean {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= least;
}

function broken(where: string, what: string, value: unknown): ProtocolViolationError {
  return new ProtocolViolationError(`${where} ${what}: ${excerpt(value)}`);
}
