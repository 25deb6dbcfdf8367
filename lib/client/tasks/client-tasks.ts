/**
 * A client's tasks (`Client.callToolAsTask`, `reopenTask`, `getTask`, `cancelTask`, `listTasks`): the same calls
 * in both eras, the wire form picked by the era the client connected in (2025-11-25 experimental tasks in the
 * handshake era, the `io.modelcontextprotocol/tasks` extension in 2026-07-28). It keeps the followers of the
 * client's handles, and ends them all when the connection ends.
 */
import type { QuitReason } from '../../../machines/connection';
import { MethodRemovedError, NotReadyError } from '../../jsonrpc/errors';
import type { JsonObject } from '../../jsonrpc/types';
import type { CallToolResult } from '../../protocol/types';
import type { ClientRequestOptions } from '../client-connection';
import type { ClientFeatures, ClientHost } from '../features';
import { inputAnswerer } from '../input-required';
import { collectPages } from '../pages';
import { HandshakeTaskCalls } from './handshake-task-calls';
import { ModernTaskCalls } from './modern-task-calls';
import type { TaskCalls, TaskCallsHost } from './task-calls';
import { TaskFollower } from './task-follower';
import { TaskHandle } from './task-handle';
import { checkTaskRef, taskRefOf, type TaskEndpoint, type TaskRef } from './task-ref';
import type { TaskSnapshot, TaskStatusView } from './task-view';

export interface TaskCallOptions extends Omit<ClientRequestOptions, 'signal' | 'validateResult'> {
  /** How long the server should keep the task, in ms (2025-11-25 `task.ttl`; in 2026-07-28 the server decides). */
  readonly ttlMs?: number;
  /**
   * Aborting it cancels the call: the request while the task is being made, then the task (`tasks/cancel`).
   */
  readonly signal?: AbortSignal;
  /** The poll interval when the server suggests none, in ms (default 1000; always kept within 50 ms .. 60 s). */
  readonly pollIntervalMs?: number;
}

/** The client as its tasks use it (`Client` is one). */
export interface TaskClient extends TaskCallsHost, Omit<ClientHost, 'request'> {
  readonly features: ClientFeatures;
  readonly connectedEra: 'handshake' | 'modern' | undefined;
  readonly closed: Promise<QuitReason>;
  /** The transport's endpoint (`Transport.eraKey`), named in task references. */
  readonly taskEndpoint: string | undefined;
}

/** What a client's tasks need. */
export interface ClientTasksHost {
  readonly client: TaskClient;
  readonly maxListPages: number;
  /** A listed tool's task support (`forbidden` when it declares none); undefined for a tool not listed. */
  taskSupportOf(name: string): 'forbidden' | 'optional' | 'required' | undefined;
  /** The tool's result, checked as `callTool` checks it (its `outputSchema`). */
  checkedResult(name: string, result: CallToolResult): Promise<CallToolResult>;
}

export class ClientTasks {
  private readonly followers = new Set<TaskFollower>();
  private calls: TaskCalls | undefined;
  private ended: QuitReason | undefined;

  constructor(private readonly host: ClientTasksHost) {
    void host.client.closed.then((reason) => {
      this.ended = reason;
      for (const follower of [...this.followers]) follower.connectionEnded(reason);
    });
  }

  /** @internal How many tasks are followed now (each has at most one timer and one request in flight). */
  get followed(): number {
    return this.followers.size;
  }

  /** See `Client.callToolAsTask`. */
  async callTool(name: string, args: JsonObject | undefined, options: TaskCallOptions = {}): Promise<TaskHandle> {
    const calls = this.era();
    const { ttlMs, signal, pollIntervalMs: _poll, ...requestOptions } = options;
    const params: JsonObject = args === undefined ? { name } : { name, arguments: args };
    const support = this.host.taskSupportOf(name);
    const asTask = calls.offered && support !== 'forbidden';
    const sent = asTask ? calls.createParams(params, ttlMs) : params;
    const answer = await this.host.client.request('tools/call', sent, {
      ...requestOptions,
      signal,
      validateResult: false,
    });
    const creation = calls.created(answer);
    if ('result' in creation) {
      // Nothing to cancel: the call is over.
      const handle = new TaskHandle(undefined, undefined, () => Promise.resolve());
      handle.finish({ result: await this.host.checkedResult(name, creation.result) });
      return handle;
    }
    const handle = this.follow(calls, creation.view.taskId, { view: creation.view }, options, name);
    if (signal) {
      const cancel = () => void handle.cancel().catch(() => undefined);
      if (signal.aborted) cancel();
      else signal.addEventListener('abort', cancel, { once: true });
      void handle.result.finally(() => signal.removeEventListener('abort', cancel)).catch(() => undefined);
    }
    return handle;
  }

  /** See `Client.reopenTask`. */
  async reopen(ref: TaskRef | string, options: Pick<TaskCallOptions, 'pollIntervalMs'> = {}): Promise<TaskHandle> {
    const calls = this.era();
    const taskId = checkTaskRef(ref, this.endpoint(calls));
    return this.follow(calls, taskId, undefined, options, undefined);
  }

  /** `tasks/get`: the task's status now. */
  async get(taskId: string, options?: ClientRequestOptions): Promise<TaskStatusView> {
    return (await this.era().get(taskId, options)).view;
  }

  /** `tasks/cancel`. */
  async cancel(taskId: string, options?: ClientRequestOptions): Promise<void> {
    await this.era().cancel(taskId, options);
  }

  /** Every task `tasks/list` shows (2025-11-25; the 2026-07-28 extension has no list). */
  async list(options?: ClientRequestOptions): Promise<TaskStatusView[]> {
    const calls = this.era();
    const list = calls.list?.bind(calls);
    if (!list) throw new MethodRemovedError('tasks/list', this.host.client.protocolVersion ?? '', TASKS_HAVE_NO_LIST);
    const page = (cursor: string | undefined) => list(cursor, options);
    return collectPages('tasks/list', 'tasks', page, this.host.maxListPages);
  }

  private follow(
    calls: TaskCalls,
    taskId: string,
    first: TaskSnapshot | undefined,
    options: Pick<TaskCallOptions, 'pollIntervalMs'>,
    toolName: string | undefined,
  ): TaskHandle {
    let follower: TaskFollower | undefined;
    const handle = new TaskHandle(taskId, taskRefOf(taskId, this.endpoint(calls)), () => follower!.cancel());
    const { client, checkedResult } = this.host;
    follower = new TaskFollower(handle, taskId, {
      calls,
      clock: client.clock,
      pollIntervalMs: options.pollIntervalMs,
      answer: calls.update ? inputAnswerer(client.features, client, client.protocolVersion) : undefined,
      done: (done) => this.followers.delete(done),
      ...(toolName !== undefined && { check: (result: CallToolResult) => checkedResult(toolName, result) }),
    });
    this.followers.add(follower);
    follower.start(first);
    return handle;
  }

  /** The task requests of the era the client connected in; refused before it is connected or after it closed. */
  private era(): TaskCalls {
    const era = this.host.client.connectedEra;
    if (this.ended || era === undefined) throw new NotReadyError('Tasks need a connected client');
    if (this.calls?.era !== era) {
      const client = this.host.client;
      this.calls = era === 'modern' ? new ModernTaskCalls(client) : new HandshakeTaskCalls(client);
    }
    return this.calls;
  }

  private endpoint(calls: TaskCalls): TaskEndpoint {
    const { taskEndpoint: endpoint, serverInfo } = this.host.client;
    return {
      era: calls.era,
      server: serverInfo?.name ?? '',
      ...(endpoint !== undefined && { endpoint }),
    };
  }
}

const TASKS_HAVE_NO_LIST = 'the io.modelcontextprotocol/tasks extension lists no tasks: keep the references of yours';
