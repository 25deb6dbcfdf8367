/**
 * What the server's handlers ask of its tasks (implemented by `ServerTasks`): a port, so that the handlers'
 * host can name it without importing the class that imports that host.
 */
import type { RequestContext } from '../../core/request-context';
import type { JsonObject } from '../../jsonrpc/types';
import type { CallToolResult } from '../../protocol/types';
import type { TaskOwner, TaskRecord } from '../../tasks/types';
import type { ServerContext } from '../context';
import type { TaskCreated } from './continuation';

export interface TaskService {
  /** Who owns what the caller of `context` makes. */
  ownerOf(context: RequestContext<any>): TaskOwner;
  /** Makes `context`'s `tools/call` a task that runs `run` in the task's context; resolves once it is durable. */
  start(
    context: ServerContext,
    run: (taskContext: ServerContext) => CallToolResult | Promise<CallToolResult>,
  ): Promise<TaskCreated>;
  /** The caller's task `taskId`; -32602 when it has none by that id. */
  find(context: RequestContext<any>, taskId: unknown): Promise<TaskRecord>;
  /** Cancels the task (an ended one stays as it is); resolves with it after. */
  cancel(context: RequestContext<any>, taskId: unknown): Promise<TaskRecord>;
  /** Hands `tasks/update`'s answers to the task's open input requests. */
  answer(context: RequestContext<any>, taskId: unknown, responses: JsonObject): Promise<void>;
  /** The task once it has ended (`tasks/result`); its requests to the client go on `context`'s stream meanwhile. */
  final(context: RequestContext<any>, taskId: unknown): Promise<TaskRecord>;
  /** One page of the caller's tasks. */
  list(context: RequestContext<any>, cursor: unknown): Promise<{ tasks: TaskRecord[]; nextCursor?: string }>;
}
