/**
 * Tasks on the wire, both forms from one implementation (server-tasks.ts): `tools/call` becoming a task, and
 * the `tasks/*` methods. Which form a request gets follows its era: a handshake-era session speaks the
 * 2025-11-25 experimental form (`params.task` asks for a task; `tasks/get`, `tasks/result`, `tasks/list`,
 * `tasks/cancel`), a stateless request the 2026-07-28 extension (declared per request in its envelope; the
 * server decides; `tasks/get` inlines the end, `tasks/update` answers input, `tasks/cancel` acknowledges).
 */
import { isPlainObject } from '../../jsonrpc/classify';
import { ErrorCode, invalidParams, McpError } from '../../jsonrpc/errors';
import type { JsonObject } from '../../jsonrpc/types';
import type { RequestContext } from '../../core/request-context';
import { hasCapability } from '../../protocol/capabilities';
import type { CallToolResult } from '../../protocol/types';
import { TASKS_EXTENSION } from '../../protocol/method-table';
import { resultProblem } from '../../protocol/results';
import { isAtLeast } from '../../protocol/versions';
import { isFinalTaskStatus } from '../../../machines/task';
import {
  handshakeCreateResult,
  handshakeTask,
  MODERN_TASK_ACK,
  modernCreateResult,
  modernGetResult,
  RELATED_TASK_META_KEY,
} from '../../tasks/task-wire';
import type { TaskRecord } from '../../tasks/types';
import { taskSupportOf } from '../definition';
import type { ServerHandlersHost } from '../handler-host';
import { ANSWER_REVISION } from '../modern/input-round';
import { unknownTool, type CallOutcome } from '../tools';
import { offerTask, TaskCreated } from './continuation';
import type { TaskService } from './task-service';

type Context = RequestContext<ServerHandlersHost>;

/** `tools/call`: a task when the tool supports one and the request can hold it, else the call itself. */
export function callTool(context: Context, params: JsonObject | undefined): unknown {
  const catalog = context.connection.definition.tools;
  if (!catalog) throw unknownTool(params?.name);
  const name = params?.name;
  const tool = typeof name === 'string' ? catalog.definitionOf(name) : undefined;
  const support = tool === undefined ? 'forbidden' : taskSupportOf(tool);
  const tasks = context.connection.tasks;
  if (support === 'forbidden' || tasks === undefined || !asksForTask(context, params, support)) {
    return catalog.call(params, context);
  }
  if (tool!.taskStart === 'handler') {
    // The handler runs here first; it makes the rest a task with continueAsTask.
    offerTask(context, (run) => tasks.start(context, run));
    return answerOutcome(context, catalog.call(params, context));
  }
  return tasks
    .start(context, (taskContext) => catalog.call(params, taskContext) as CallToolResult | Promise<CallToolResult>)
    .then((created) => createResult(context, created.record));
}

/**
 * Whether this call becomes a task. 2025-11-25: when it asks (`params.task`); a required tool asked without
 * one is -32601. 2026-07-28: when the request's envelope declares the extension (the server decides; a
 * client's legacy `task` param changes nothing); a required tool without it is -32021.
 */
function asksForTask(context: Context, params: JsonObject | undefined, support: string): boolean {
  if (context.connection.era === 'modern') {
    if (declaresTasks(context)) return true;
    if (support === 'required') throw extensionRequired('tools/call of this tool');
    return false;
  }
  const version = context.protocolVersion;
  if (version !== undefined && isAtLeast(version, '2025-11-25') && isPlainObject(params?.task)) return true;
  if (support === 'required') {
    throw new McpError(
      ErrorCode.MethodNotFound,
      `Tool ${String(params?.name)} runs only as a task: call it with params.task (tasks need protocol version 2025-11-25)`,
    );
  }
  return false;
}

function answerOutcome(context: Context, outcome: CallOutcome): unknown {
  if (outcome instanceof Promise) return outcome.then((settled) => answerOutcome(context, settled));
  return outcome instanceof TaskCreated ? createResult(context, outcome.record) : outcome;
}

function createResult(context: Context, record: TaskRecord): JsonObject {
  return context.connection.era === 'modern' ? modernCreateResult(record) : handshakeCreateResult(record);
}

/** Whether a stateless request's envelope declares the tasks extension. */
function declaresTasks(context: Context): boolean {
  return hasCapability(context.peerCapabilities, ['extensions', TASKS_EXTENSION]);
}

/** -32021: the request needs the tasks extension, which its envelope did not declare. */
function extensionRequired(what: string): McpError {
  return new McpError(
    ErrorCode.MissingRequiredClientCapability,
    `Missing required client capability: ${what} needs the ${TASKS_EXTENSION} extension, which the request's clientCapabilities did not declare`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  );
}

/** The server's tasks, or -32601 when it serves none. */
function tasksOf(context: Context, method: string): TaskService {
  const tasks = context.connection.tasks;
  if (tasks === undefined) throw new McpError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
  return tasks;
}

// ---- 2025-11-25: the handshake era's tasks --------------------------------------------------------------

export const HANDSHAKE_TASK_HANDLERS = {
  'tasks/get': async (context: Context, params: JsonObject | undefined) =>
    handshakeTask(await tasksOf(context, 'tasks/get').find(context, params?.taskId)),

  /** Waits for the task's end; answers what the call itself would have (its result, or its error). */
  'tasks/result': async (context: Context, params: JsonObject | undefined) => {
    const record = await tasksOf(context, 'tasks/result').final(context, params?.taskId);
    const related = { [RELATED_TASK_META_KEY]: { taskId: record.taskId } };
    if (record.result !== undefined) {
      return { ...record.result, _meta: { ...(record.result._meta as JsonObject | undefined), ...related } };
    }
    if (record.error !== undefined) throw new McpError(record.error.code, record.error.message, record.error.data);
    throw new McpError(ErrorCode.InternalError, `Task ${record.taskId} was ${record.status}: it has no result`);
  },

  'tasks/list': async (context: Context, params: JsonObject | undefined) => {
    const page = await tasksOf(context, 'tasks/list').list(context, params?.cursor);
    return {
      tasks: page.tasks.map(handshakeTask),
      ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }),
    };
  },

  /** A task that has ended cannot be cancelled (-32602); a live one is `cancelled` before the answer. */
  'tasks/cancel': async (context: Context, params: JsonObject | undefined) => {
    const tasks = tasksOf(context, 'tasks/cancel');
    const record = await tasks.find(context, params?.taskId);
    if (isFinalTaskStatus(record.status)) {
      throw invalidParams(`Task ${record.taskId} is already ${record.status}: it cannot be cancelled`);
    }
    return handshakeTask(await tasks.cancel(context, record.taskId));
  },
};

// ---- 2026-07-28: the tasks extension -------------------------------------------------------------------

/** The extension's methods need it declared in the request's envelope (-32021 otherwise). */
function modernTasksOf(context: Context, method: string): TaskService {
  if (!declaresTasks(context)) throw extensionRequired(method);
  return tasksOf(context, method);
}

export const MODERN_TASK_HANDLERS = {
  'tasks/get': async (context: Context, params: JsonObject | undefined) =>
    modernGetResult(await modernTasksOf(context, 'tasks/get').find(context, params?.taskId)),

  /** Answers some or all of a task's open input requests; keys it did not ask are ignored. */
  'tasks/update': async (context: Context, params: JsonObject | undefined) => {
    const tasks = modernTasksOf(context, 'tasks/update');
    const responses = params?.inputResponses;
    if (!isPlainObject(responses))
      throw invalidParams('tasks/update needs an "inputResponses" object of answers by key');
    const record = await tasks.find(context, params?.taskId);
    const asked = (record.inputRequests ?? {}) as Record<string, { method?: unknown }>;
    for (const [key, answer] of Object.entries(responses)) {
      const method = asked[key]?.method;
      if (typeof method !== 'string') continue;
      const problem = resultProblem(method, answer, ANSWER_REVISION);
      if (problem)
        throw invalidParams(`inputResponses["${key.slice(0, 64)}"] is not an answer to ${method}: ${problem.message}`);
    }
    await tasks.answer(context, record.taskId, responses);
    return MODERN_TASK_ACK;
  },

  /** Acknowledged whatever the task's status: cancelling an ended task changes nothing. */
  'tasks/cancel': async (context: Context, params: JsonObject | undefined) => {
    await modernTasksOf(context, 'tasks/cancel').cancel(context, params?.taskId);
    return MODERN_TASK_ACK;
  },
};
