/**
 * A tool that gathers what it needs first and only then runs long: its handler starts in the request (it may
 * ask the client for input there: an `input_required` round in the stateless revision, a request to the client
 * in a handshake-era session) and hands the rest to `continueAsTask(work)`. Where the request can hold a task
 * (the tool supports tasks and the client asked for one, or declared the extension) the task is created then,
 * and `work` runs in it; elsewhere `work` runs at once in the request. A tool opts in with `taskStart: 'handler'`;
 * otherwise a task-capable call becomes a task before its handler runs.
 */
import type { CallToolResult } from '../../protocol/types';
import type { TaskRecord } from '../../tasks/types';
import type { ServerContext } from '../context';

/** What a handler returned to run the rest of its call as a task. */
export class TaskContinuation {
  constructor(readonly work: (context: ServerContext) => unknown) {}
}

/** The request became a task: what `tools/call` answers with (in its era's form). */
export class TaskCreated {
  constructor(readonly record: TaskRecord) {}
}

/**
 * Returned from a tool's handler: the rest of the call (`work`, given the context it then runs in: the task's,
 * or the request's own) runs as a task where the request can hold one. Typed as `work`'s result so that a
 * handler's return type is unchanged.
 */
export function continueAsTask<T>(work: (context: ServerContext) => T | Promise<T>): T {
  return new TaskContinuation(work) as unknown as T;
}

/** Makes a request a task that runs `run` (in the task's context); resolves once the task is durable. */
export type TaskStarter = (
  run: (context: ServerContext) => CallToolResult | Promise<CallToolResult>,
) => Promise<TaskCreated>;

const starters = new WeakMap<ServerContext, TaskStarter>();

/** @internal `tools/call` offers `context`'s request to become a task, should its handler continue as one. */
export function offerTask(context: ServerContext, start: TaskStarter): void {
  starters.set(context, start);
}

/** @internal How `context`'s request becomes a task, when it can. */
export function taskStarterOf(context: ServerContext): TaskStarter | undefined {
  return starters.get(context);
}
