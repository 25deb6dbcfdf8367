/**
 * What `Client.callToolAsTask` and `Client.reopenTask` give: one task as the caller follows it, whatever the
 * era. `status$` replays the latest status and completes once the task is final; `result` is the tool's
 * result (a tool error included), or rejects with the `McpError` the task failed with, a `TaskCancelledError`
 * when it was cancelled, or what ended the following (the connection, a broken answer from the server).
 * The follower (task-follower.ts) drives it.
 */
import { ReplaySubject, type Observable } from 'rxjs';
import { SwitchboardError } from '../../jsonrpc/errors';
import { excerpt } from '../../jsonrpc/excerpt';
import type { CallToolResult } from '../../protocol/types';
import type { TaskRef } from './task-ref';
import type { TaskOutcome, TaskStatusView } from './task-view';

/** A task that was cancelled (by this client, another one, or the server): it has no result. */
export class TaskCancelledError extends SwitchboardError {
  override readonly name = 'TaskCancelledError';
  readonly code = 'REQUEST_CANCELLED';

  constructor(
    readonly taskId: string,
    readonly statusMessage?: string,
  ) {
    super(`The task ${excerpt(taskId)} was cancelled${statusMessage ? `: ${statusMessage}` : ''}`);
  }
}

export class TaskHandle {
  /** The statuses, the latest replayed to each subscriber. */
  readonly status$: Observable<TaskStatusView>;
  readonly result: Promise<CallToolResult>;
  private readonly statuses = new ReplaySubject<TaskStatusView>(1);
  private latest: TaskStatusView | undefined;
  private resolve!: (result: CallToolResult) => void;
  private reject!: (error: Error) => void;
  private settled = false;

  /** @internal Made by the client's tasks (lib/client/tasks/client-tasks.ts). */
  constructor(
    /** The server's id of the task; undefined when the server ran the call at once (see `isTask`). */
    readonly taskId: string | undefined,
    /** What `Client.reopenTask` takes to follow the task again, from another client (undefined without a task). */
    readonly ref: TaskRef | undefined,
    private readonly cancelTask: () => Promise<void>,
  ) {
    this.status$ = this.statuses.asObservable();
    this.result = new Promise<CallToolResult>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // The caller may follow `status$` only: a failure it never awaits is not an unhandled rejection.
    this.result.catch(() => undefined);
  }

  /**
   * False when the server did not make a task (a tool without task support, a server without tasks): the call
   * ran at once, `result` holds its result and `status$` completes without a status.
   */
  get isTask(): boolean {
    return this.taskId !== undefined;
  }

  /** The latest status seen, if any. */
  get status(): TaskStatusView | undefined {
    return this.latest;
  }

  /**
   * Asks the server to cancel the task (`tasks/cancel`); the handle then ends as the task does (a
   * `TaskCancelledError` once it reads cancelled). Rejects with the server's refusal (a task already final).
   */
  cancel(): Promise<void> {
    return this.cancelTask();
  }

  /** @internal A status seen; an older one (by `lastUpdatedAt`) than the latest is left out. */
  next(view: TaskStatusView): void {
    const latest = this.latest;
    if (this.settled || (latest !== undefined && (sameStatus(latest, view) || isOlder(view, latest)))) return;
    this.latest = view;
    this.statuses.next(view);
  }

  /** @internal The task ended: its final status was shown; `outcome` is what `result` settles with. */
  finish(outcome: TaskOutcome): void {
    if (this.settled) return;
    this.settled = true;
    if ('result' in outcome) this.resolve(outcome.result);
    else this.reject(outcome.error);
    this.statuses.complete();
  }

  /**
   * @internal Following the task ended before the task did: `result` rejects with `error`; `status$` errors with
   * `streamError` (or completes when that is undefined: the client was closed).
   */
  abandon(error: Error, streamError: Error | undefined): void {
    if (this.settled) return;
    this.settled = true;
    this.reject(error);
    if (streamError) this.statuses.error(streamError);
    else this.statuses.complete();
  }
}

function sameStatus(a: TaskStatusView, b: TaskStatusView): boolean {
  return a.status === b.status && a.statusMessage === b.statusMessage && a.lastUpdatedAt === b.lastUpdatedAt;
}

/** Whether `view` was updated before `latest` (a poll answered after a later notification); unknown times are not. */
function isOlder(view: TaskStatusView, latest: TaskStatusView): boolean {
  const at = Date.parse(view.lastUpdatedAt);
  const latestAt = Date.parse(latest.lastUpdatedAt);
  return Number.isFinite(at) && Number.isFinite(latestAt) && at < latestAt;
}
