/**
 * A server's tasks: the runner over its store (lib/tasks), who owns each task, and what each era's requests
 * do with them. One implementation for both wire forms; the handlers (task-handlers.ts) render its records
 * in the form of the request's era. A tool call becomes a task here: made durable, answered with at once,
 * and run on in a context of its own (task-context.ts).
 */
import type { Logger } from '../../core/logger';
import type { RequestContext } from '../../core/request-context';
import type { Runtime } from '../../core/runtime';
import { ErrorCode, invalidParams, McpError } from '../../jsonrpc/errors';
import type { JsonObject } from '../../jsonrpc/types';
import type { CallToolResult } from '../../protocol/types';
import { MemoryTaskStore } from '../../tasks/memory-task-store';
import { isTaskIdShape, TaskLimitError, type TaskStore } from '../../tasks/task-store';
import { TaskRunner, type RunningTask } from '../../tasks/task-runner';
import { handshakeTask } from '../../tasks/task-wire';
import { ANONYMOUS_TASK_OWNER, type TaskOwner, type TaskRecord } from '../../tasks/types';
import type { ServerContext } from '../context';
import type { ServerHandlersHost } from '../handler-host';
import type { TaskService } from './task-service';
import { TaskCreated } from './continuation';
import { TaskContext, TaskHost } from './task-context';
import { ParkedInputs, type TaskInputs } from './task-inputs';
import { SessionInputs, type InputCarrier } from './session-inputs';

/** How a server keeps and runs its tasks (`ServerOptions.tasks`). */
export interface TaskServingOptions {
  /**
   * Where tasks are kept. Default: in memory (gone with the process). `LmdbTaskStore` (Node) keeps them on
   * disk: a finished task's result survives a restart, and one that was running reads `failed`. The server
   * does not close a store it is given.
   */
  readonly store?: TaskStore;
  /** A task's time to live when its client asks for none (default `DEFAULT_TASK_TTL_MS`, an hour). */
  readonly defaultTtlMs?: number;
  /** How often clients should poll a task (default 1 s). */
  readonly pollIntervalMs?: number;
  /** How often expired tasks are purged from the store (default a minute; 0: never). */
  readonly purgeEveryMs?: number;
  /** This process run's id (default: a fresh one); tasks of another run that are not final read `failed`. */
  readonly bootEpoch?: string;
}

/** The most tasks of a session `tasks/list` shows an unauthenticated caller (the newest). */
const MAX_SESSION_TASKS = 1000;

export class ServerTasks implements TaskService {
  private readonly runner: TaskRunner;
  private readonly ownStore: TaskStore | undefined;
  /** Recovers what an earlier run left working, before any task is served. */
  private readonly ready: Promise<unknown>;
  /** Handshake-era sessions that made live tasks: they hear `notifications/tasks/status`. */
  private readonly watchers = new Map<string, ServerHandlersHost>();
  /** A `tasks/result` waiting on a task: its stream carries the task's requests to the client. */
  private readonly waiters = new Map<string, RequestContext<any>>();
  /** The asks of the handshake-era tasks running here, which a new `tasks/result` takes over. */
  private readonly sessionInputs = new Map<string, SessionInputs>();
  /** The tasks each handshake-era session made, for `tasks/list` without a principal. */
  private readonly sessionTasks = new WeakMap<object, string[]>();

  constructor(
    private readonly options: TaskServingOptions,
    runtime: Runtime,
    private readonly logger: Logger,
  ) {
    // The runtime's clock times the tasks (stamps, time to live): the store it makes reads the same one.
    this.ownStore = options.store ? undefined : new MemoryTaskStore({ clock: runtime.clock });
    this.runner = new TaskRunner({
      store: options.store ?? this.ownStore!,
      runtime,
      logger,
      pollIntervalMs: options.pollIntervalMs,
      purgeEveryMs: options.purgeEveryMs,
      bootEpoch: options.bootEpoch,
      onChange: (record) => this.changed(record),
      onGone: (taskId) => this.watchers.delete(taskId),
    });
    this.ready = this.runner.boot().then(
      (failed) => failed > 0 && logger.info(`${failed} task(s) of an earlier run failed: their process ended`),
      (error: unknown) => logger.error('Could not recover the tasks of an earlier run', error),
    );
  }

  /** Who owns what `context`'s caller makes: its principal, or (unauthenticated) nobody but the id's holder. */
  ownerOf(context: RequestContext<any>): TaskOwner {
    const principal = context.auth?.id;
    return principal === undefined ? ANONYMOUS_TASK_OWNER : { principalId: principal };
  }

  /**
   * Makes `context`'s `tools/call` a task that runs `run` in a task context, and resolves once the store holds
   * it. The 2025-11-25 form takes the client's `task.ttl`; its tool errors fail the task.
   */
  async start(
    context: ServerContext,
    run: (taskContext: ServerContext) => CallToolResult | Promise<CallToolResult>,
  ): Promise<TaskCreated> {
    await this.ready;
    const origin = context.connection as unknown as ServerHandlersHost;
    const handshake = origin.era === 'handshake';
    const params = context.params ?? {};
    const owner = this.ownerOf(context);
    let record: TaskRecord;
    try {
      record = await this.runner.start(
        owner,
        { method: 'tools/call', params: { name: params.name ?? null, arguments: params.arguments ?? {} } },
        (task) => this.work(context, origin, task, run),
        {
          ttlMs: ttlAsked(handshake ? params.task : undefined) ?? this.options.defaultTtlMs,
          resultFails: handshake ? (result) => result.isError === true : undefined,
        },
      );
    } catch (error) {
      if (error instanceof TaskLimitError) throw new McpError(ErrorCode.InvalidRequest, error.message);
      throw error;
    }
    if (handshake) {
      this.watchers.set(record.taskId, origin);
      if (owner === ANONYMOUS_TASK_OWNER) this.rememberFor(origin, record.taskId);
    }
    return new TaskCreated(record);
  }

  /** The task `taskId` of `context`'s caller; -32602 when it has none by that id (unknown, expired, another's). */
  async find(context: RequestContext<any>, taskId: unknown): Promise<TaskRecord> {
    await this.ready;
    const record = isTaskIdShape(taskId) ? await this.runner.get(this.ownerOf(context), taskId) : undefined;
    if (record === undefined) throw unknownTask(taskId);
    return record;
  }

  /** Cancels the task (nothing changes on a final one); resolves with it after. */
  async cancel(context: RequestContext<any>, taskId: unknown): Promise<TaskRecord> {
    await this.ready;
    const after = isTaskIdShape(taskId) ? await this.runner.cancel(this.ownerOf(context), taskId) : undefined;
    if (after === undefined) throw unknownTask(taskId);
    return after;
  }

  /** Hands the 2026-07-28 `tasks/update` answers to the task (its open asks take theirs; other keys are ignored). */
  async answer(context: RequestContext<any>, taskId: unknown, responses: JsonObject): Promise<void> {
    await this.ready;
    const known = isTaskIdShape(taskId) && (await this.runner.answerInput(this.ownerOf(context), taskId, responses));
    if (!known) throw unknownTask(taskId);
  }

  /** The task once final (`tasks/result`); its requests to the client go on `context`'s stream meanwhile. */
  async final(context: RequestContext<any>, taskId: unknown): Promise<TaskRecord> {
    await this.find(context, taskId);
    const id = taskId as string;
    this.waiters.set(id, context);
    this.sessionInputs.get(id)?.redirect({ host: context.connection, relatedRequestId: context.id });
    try {
      const record = await this.runner.untilFinal(this.ownerOf(context), id, context.signal);
      if (record === undefined) throw unknownTask(taskId);
      return record;
    } finally {
      if (this.waiters.get(id) === context) this.waiters.delete(id);
    }
  }

  /** One page of the caller's tasks: its principal's, or without one the tasks this session made. */
  async list(context: RequestContext<any>, cursor: unknown): Promise<{ tasks: TaskRecord[]; nextCursor?: string }> {
    await this.ready;
    if (cursor !== undefined && typeof cursor !== 'string') throw invalidParams('"cursor" must be a string');
    const owner = this.ownerOf(context);
    if (owner !== ANONYMOUS_TASK_OWNER) {
      try {
        return await this.runner.list(owner, { cursor });
      } catch (error) {
        if (error instanceof TypeError) throw invalidParams(error.message);
        throw error;
      }
    }
    if (cursor !== undefined) throw invalidParams('Invalid cursor');
    const ids = this.sessionTasks.get(context.connection) ?? [];
    const found = await Promise.all(ids.map((id) => this.runner.get(owner, id)));
    return { tasks: found.filter((record): record is TaskRecord => record !== undefined) };
  }

  /** Stops the tasks running here (their records stay as stored) and closes the store it made. */
  async close(): Promise<void> {
    await this.runner.close();
    await this.ownStore?.close();
  }

  /** A task's work: the handler's run in a context of the task's own, cancelled with the task. */
  private async work(
    request: ServerContext,
    origin: ServerHandlersHost,
    task: RunningTask,
    run: (taskContext: ServerContext) => CallToolResult | Promise<CallToolResult>,
  ): Promise<JsonObject> {
    let inputs: TaskInputs;
    if (origin.era === 'handshake') {
      const session = new SessionInputs(task, () => this.carrierOf(task.taskId, origin));
      this.sessionInputs.set(task.taskId, session);
      inputs = session;
    } else {
      inputs = new ParkedInputs(task, origin.peerCapabilities ?? {});
    }
    const context = new TaskContext(new TaskHost(origin, inputs), task, request.id, request.params);
    const onAbort = () => context.cancel(task.signal.reason as Error);
    task.signal.addEventListener('abort', onAbort, { once: true });
    try {
      return (await run(context)) as unknown as JsonObject;
    } finally {
      task.signal.removeEventListener('abort', onAbort);
      this.sessionInputs.delete(task.taskId);
      context.finish();
    }
  }

  private carrierOf(taskId: string, origin: ServerHandlersHost): InputCarrier {
    const waiter = this.waiters.get(taskId);
    return waiter ? { host: waiter.connection, relatedRequestId: waiter.id } : { host: origin };
  }

  /** A task's status changed (as stored): the session that made it hears it, while the task runs here. */
  private changed(record: TaskRecord): void {
    const session = this.watchers.get(record.taskId);
    if (session === undefined) return;
    const state = (session as { state?: string }).state;
    if (state !== undefined && state !== 'ready') return;
    session
      .notify('notifications/tasks/status', handshakeTask(record))
      .catch((error: unknown) => this.logger.debug('Could not send notifications/tasks/status', error));
  }

  private rememberFor(session: object, taskId: string): void {
    const ids = this.sessionTasks.get(session) ?? [];
    ids.push(taskId);
    if (ids.length > MAX_SESSION_TASKS) ids.shift();
    this.sessionTasks.set(session, ids);
  }
}

/** -32602 for a task id the caller has no task by. */
export function unknownTask(taskId: unknown): McpError {
  return invalidParams(
    typeof taskId === 'string' ? `Unknown task: ${taskId.slice(0, 64)}` : 'params.taskId must be a string',
  );
}

/** The `task.ttl` a 2025-11-25 client asked for (ms), when it asked one that makes sense. */
function ttlAsked(task: unknown): number | undefined {
  const ttl = (task as { ttl?: unknown } | undefined)?.ttl;
  return typeof ttl === 'number' && Number.isFinite(ttl) && ttl > 0 ? ttl : undefined;
}
