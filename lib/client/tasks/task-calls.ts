/**
 * The task requests of one era, as one object a client's tasks are followed through: the 2025-11-25
 * experimental form (lib/client/tasks/handshake-task-calls.ts) or the 2026-07-28 extension
 * (lib/client/tasks/modern-task-calls.ts). The follower (task-handle.ts) never asks which era it is in: what
 * one era has and the other lacks is an optional member (`payload`, `statusUpdates`, `update`, `list`).
 */
import type { Observable } from 'rxjs';
import type { JsonObject, JsonRpcNotification } from '../../jsonrpc/types';
import type { ClientCapabilities, ServerCapabilities } from '../../protocol/types';
import type { CallToolResult } from '../../protocol/types';
import type { ClientRequestOptions } from '../client-connection';
import type { TaskOutcome, TaskSnapshot, TaskStatusView } from './task-view';

/** What the task requests need of their client. */
export interface TaskCallsHost {
  request(method: string, params: JsonObject | undefined, options?: ClientRequestOptions): Promise<JsonObject>;
  readonly serverNotifications$: Observable<JsonRpcNotification>;
  readonly serverCapabilities: ServerCapabilities | undefined;
  readonly capabilities: ClientCapabilities;
}

/** What a server answered a `tools/call` that asked for a task: the task it made, or the result of a call it ran at once. */
export type TaskCreation = { readonly view: TaskStatusView } | { readonly result: CallToolResult };

/** A page of `tasks/list` (2025-11-25). */
export interface TaskPage {
  readonly tasks: TaskStatusView[];
  readonly nextCursor?: string;
}

export interface TaskCalls {
  readonly era: 'handshake' | 'modern';
  /** Whether the server makes tasks of tool calls at all (its capabilities say so). */
  readonly offered: boolean;
  /** The params of a `tools/call` that asks for a task (`ttlMs`: the time to live asked for, where the era has one). */
  createParams(params: JsonObject, ttlMs: number | undefined): JsonObject;
  /** The answer to such a call, checked. */
  created(result: JsonObject): TaskCreation;
  /** `tasks/get`. */
  get(taskId: string, options?: ClientRequestOptions): Promise<TaskSnapshot>;
  /** `tasks/cancel`: the task's new status where the era answers with it. */
  cancel(taskId: string, options?: ClientRequestOptions): Promise<TaskSnapshot | undefined>;
  /**
   * 2025-11-25: `tasks/result`, which waits for the end of the task (and carries its input requests meanwhile,
   * over HTTP). Given the status it ended in, what the task ended with.
   */
  payload?(taskId: string, signal: AbortSignal): Promise<TaskOutcome>;
  /** 2025-11-25: the task's `notifications/tasks/status` (a hint: polls stay the truth). */
  statusUpdates?(taskId: string): Observable<TaskStatusView>;
  /** 2026-07-28: `tasks/update` with answers to the task's input requests, by key. */
  update?(taskId: string, inputResponses: JsonObject, signal: AbortSignal): Promise<void>;
  /** 2025-11-25: one page of `tasks/list`. */
  list?(cursor: string | undefined, options?: ClientRequestOptions): Promise<TaskPage>;
}
