/**
 * Tasks in the 2025-11-25 experimental form: `params.task: { ttl? }` on `tools/call` (answered `{ task }`),
 * `tasks/get`, `tasks/result` (waits for the end, then answers the tool's result or the error the task failed
 * with), `tasks/cancel`, `tasks/list`, and the optional `notifications/tasks/status`. The server offers them
 * for tool calls with the capability `tasks.requests.tools.call`.
 */
import { EMPTY, filter, mergeMap, of, type Observable } from 'rxjs';
import { isPlainObject } from '../../jsonrpc/classify';
import { McpError, ProtocolViolationError } from '../../jsonrpc/errors';
import type { JsonObject } from '../../jsonrpc/types';
import { hasCapability } from '../../protocol/capabilities';
import type { ClientRequestOptions } from '../client-connection';
import type { TaskCalls, TaskCallsHost, TaskCreation, TaskPage } from './task-calls';
import { handshakeView, toolResult, type TaskOutcome, type TaskSnapshot, type TaskStatusView } from './task-view';

const TOOL_CALL_TASKS = ['tasks', 'requests', 'tools', 'call'] as const;

export class HandshakeTaskCalls implements TaskCalls {
  readonly era = 'handshake';

  constructor(private readonly host: TaskCallsHost) {}

  get offered(): boolean {
    return hasCapability(this.host.serverCapabilities, TOOL_CALL_TASKS);
  }

  createParams(params: JsonObject, ttlMs: number | undefined): JsonObject {
    return { ...params, task: ttlMs === undefined ? {} : { ttl: ttlMs } };
  }

  created(result: JsonObject): TaskCreation {
    if (result.task === undefined) return { result: toolResult(result, 'The tools/call result') };
    return { view: handshakeView(result.task, 'The task tools/call created') };
  }

  async get(taskId: string, options?: ClientRequestOptions): Promise<TaskSnapshot> {
    return { view: handshakeView(await this.host.request('tasks/get', { taskId }, options), 'The tasks/get result') };
  }

  async cancel(taskId: string, options?: ClientRequestOptions): Promise<TaskSnapshot> {
    const answer = await this.host.request('tasks/cancel', { taskId }, options);
    return { view: handshakeView(answer, 'The tasks/cancel result') };
  }

  /** `tasks/result`, waiting as long as the task runs (no idle timeout: the server answers at its end). */
  async payload(taskId: string, signal: AbortSignal): Promise<TaskOutcome> {
    try {
      const options = { signal, timeout: 0, validateResult: false };
      return { result: toolResult(await this.host.request('tasks/result', { taskId }, options), 'tasks/result') };
    } catch (error) {
      if (error instanceof McpError) return { error };
      throw error;
    }
  }

  statusUpdates(taskId: string): Observable<TaskStatusView> {
    return this.host.serverNotifications$.pipe(
      filter(
        (message) =>
          message.method === 'notifications/tasks/status' &&
          isPlainObject(message.params) &&
          message.params.taskId === taskId,
      ),
      // A malformed notification is only a hint lost: the next poll tells the status.
      mergeMap((message) => {
        try {
          return of(handshakeView(message.params, 'notifications/tasks/status'));
        } catch {
          return EMPTY;
        }
      }),
    );
  }

  async list(cursor: string | undefined, options?: ClientRequestOptions): Promise<TaskPage> {
    const page = await this.host.request('tasks/list', cursor === undefined ? undefined : { cursor }, options);
    const tasks = Array.isArray(page.tasks) ? page.tasks : undefined;
    if (!tasks) throw new ProtocolViolationError('The tasks/list result has no tasks array');
    const nextCursor = page.nextCursor;
    return {
      tasks: tasks.map((task) => handshakeView(task, 'A task of tasks/list')),
      ...(typeof nextCursor === 'string' && { nextCursor }),
    };
  }
}
