/**
 * Follows one task to its end for a `TaskHandle`, in either era: polls `tasks/get` at the server's poll
 * interval (kept within `MIN_POLL_MS` .. `MAX_POLL_MS`), one request at a time; in 2025-11-25 also hears
 * `notifications/tasks/status` (sooner than a poll) and calls `tasks/result` once the task needs input or is
 * over (the server sends its input requests on that request's stream over HTTP, and answers it at the end);
 * in 2026-07-28 reads the end inlined in `tasks/get` and answers input requests with `tasks/update`.
 *
 * Every exit goes through `stop`: the timer is cleared, requests in flight and answers in progress are
 * aborted, the notification subscription ends and the client forgets the follower.
 */
import type { Subscription } from 'rxjs';
import type { QuitReason } from '../../../machines/connection';
import type { Clock } from '../../core/clock';
import { ConnectionClosedError, McpError, ProtocolViolationError, RequestTimeoutError } from '../../jsonrpc/errors';
import { DEFAULT_EXCERPT_CHARS, excerpt } from '../../jsonrpc/excerpt';
import type { CallToolResult } from '../../protocol/types';
import type { InputAnswerer } from '../input-required';
import { streamEndError } from '../stream-end';
import type { TaskCalls } from './task-calls';
import { TaskCancelledError, type TaskHandle } from './task-handle';
import { TaskInputs } from './task-inputs';
import { isFinal, type TaskOutcome, type TaskSnapshot, type TaskStatus, type TaskStatusView } from './task-view';

export const MIN_POLL_MS = 50;
export const MAX_POLL_MS = 60_000;
export const DEFAULT_POLL_MS = 1_000;
/** Polls in a row that may fail locally (a timeout) before the task is given up. */
export const MAX_POLL_FAILURES = 3;

export interface FollowerOptions {
  readonly calls: TaskCalls;
  readonly clock: Clock;
  /** The poll interval when the server suggests none. */
  readonly pollIntervalMs: number | undefined;
  /** Answers 2026-07-28 input requests (the client's handlers). */
  readonly answer: InputAnswerer | undefined;
  /** Checks the tool's result as `callTool` would (its `outputSchema`). */
  readonly check?: (result: CallToolResult) => Promise<CallToolResult>;
  /** The follower is done: the client forgets it. */
  readonly done: (follower: TaskFollower) => void;
}

export class TaskFollower {
  private readonly abort = new AbortController();
  private readonly inputs: TaskInputs | undefined;
  private timer: unknown;
  private polling = false;
  /** Poll again as soon as the one in flight is answered (a cancel was acknowledged meanwhile). */
  private pollAgain = false;
  private payloadAsked = false;
  private failures = 0;
  private notifications: Subscription | undefined;
  private stopped = false;

  constructor(
    private readonly handle: TaskHandle,
    private readonly taskId: string,
    private readonly options: FollowerOptions,
  ) {
    const { calls, answer } = options;
    if (calls.update && answer) {
      const update = calls.update.bind(calls);
      this.inputs = new TaskInputs(
        answer,
        (responses) => update(taskId, responses, this.abort.signal),
        this.abort.signal,
        (error) => this.inputFailed(error),
      );
    }
  }

  /** Starts from `first` (what creating the task answered), or with a poll. */
  start(first: TaskSnapshot | undefined): void {
    this.notifications = this.options.calls.statusUpdates?.(this.taskId).subscribe((view) => this.saw({ view }));
    if (first) this.saw(first);
    else this.poll();
  }

  /** `tasks/cancel`, then the task's status as the server tells it. */
  async cancel(): Promise<void> {
    const snapshot = await this.options.calls.cancel(this.taskId);
    if (snapshot) this.saw(snapshot);
    else this.pollNow();
  }

  /** The connection ended: the handle's streams end as the client's others do (lib/client/stream-end.ts). */
  connectionEnded(reason: QuitReason): void {
    if (this.stopped) return;
    const what = `The task ${excerpt(this.taskId)}`;
    const streamError = streamEndError(`${what}'s status stream`, reason);
    const error = streamError ?? new ConnectionClosedError(`${what} is no longer followed: the client was closed`);
    this.stop();
    this.handle.abandon(error, streamError);
  }

  private saw(snapshot: TaskSnapshot): void {
    if (this.stopped) return;
    const { view } = snapshot;
    this.handle.next(view);
    if (isFinal(view.status)) return this.ending(snapshot);
    if (view.status === 'input_required') {
      if (snapshot.inputRequests) this.inputs?.serve(snapshot.inputRequests);
      if (this.options.calls.payload) this.askPayload();
    }
    this.schedule(view);
  }

  private ending(snapshot: TaskSnapshot): void {
    const { view, outcome } = snapshot;
    this.clearTimer();
    if (outcome) return this.finish(outcome, view);
    if (view.status === 'cancelled') return this.finish({ error: cancelled(view) }, view);
    if (this.options.calls.payload) return this.askPayload();
    this.broke(new ProtocolViolationError(`The ${view.status} task ${excerpt(this.taskId)} came without its end`));
  }

  /** 2025-11-25: `tasks/result`, asked once; its answer ends the task. */
  private askPayload(): void {
    if (this.payloadAsked) return;
    this.payloadAsked = true;
    this.options.calls.payload!(this.taskId, this.abort.signal).then(
      (outcome) => this.payloadArrived(outcome),
      (error: unknown) => this.requestFailed(error),
    );
  }

  /** The task is over: its final status is read once more unless already seen, so `status$` ends on it. */
  private payloadArrived(outcome: TaskOutcome): void {
    if (this.stopped) return;
    const seen = this.handle.status;
    if (seen && isFinal(seen.status)) return this.finish(outcome, seen);
    this.options.calls.get(this.taskId, { signal: this.abort.signal }).then(
      (snapshot) => {
        this.handle.next(snapshot.view);
        this.finish(outcome, snapshot.view);
      },
      () => this.finish(outcome, undefined),
    );
  }

  private finish(outcome: TaskOutcome, view: TaskStatusView | undefined): void {
    if (this.stopped) return;
    this.stop();
    const ended = settled(outcome, view, this.taskId);
    const check = this.options.check;
    if (!check || !('result' in ended)) return this.handle.finish(ended);
    check(ended.result).then(
      (result) => this.handle.finish({ result }),
      (error: Error) => this.handle.finish({ error }),
    );
  }

  private schedule(view: TaskStatusView): void {
    if (this.stopped || this.polling || this.timer !== undefined) return;
    const interval = pollInterval(view.pollIntervalMs ?? this.options.pollIntervalMs);
    this.timer = this.options.clock.setTimeout(() => {
      this.timer = undefined;
      this.poll();
    }, interval);
  }

  private pollNow(): void {
    if (this.stopped) return;
    if (this.polling) this.pollAgain = true;
    else {
      this.clearTimer();
      this.poll();
    }
  }

  private poll(): void {
    if (this.stopped) return;
    this.polling = true;
    this.options.calls.get(this.taskId, { signal: this.abort.signal }).then(
      (snapshot) => {
        this.polling = false;
        this.failures = 0;
        this.saw(snapshot);
        if (this.pollAgain) {
          this.pollAgain = false;
          this.pollNow();
        }
      },
      (error: unknown) => {
        this.polling = false;
        if (isTransient(error) && ++this.failures < MAX_POLL_FAILURES && this.handle.status) {
          this.schedule(this.handle.status);
        } else this.requestFailed(error);
      },
    );
  }

  /** A request about the task failed: the server's refusal or a broken answer ends the following. */
  private requestFailed(error: unknown): void {
    // A closed connection ends every follower at once, with its quit reason (`connectionEnded`).
    if (this.stopped || error instanceof ConnectionClosedError) return;
    this.broke(error instanceof Error ? error : new Error(String(error)));
  }

  /** An input request could not be answered: the task cannot go on as asked, so it is cancelled (best effort). */
  private inputFailed(error: unknown): void {
    if (this.stopped) return;
    this.options.calls.cancel(this.taskId).catch(() => undefined);
    this.requestFailed(error);
  }

  private broke(error: Error): void {
    this.stop();
    this.handle.abandon(error, error);
  }

  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.clearTimer();
    this.abort.abort();
    this.notifications?.unsubscribe();
    this.options.done(this);
  }

  private clearTimer(): void {
    if (this.timer === undefined) return;
    this.options.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** The interval between polls: the server's suggestion (or the caller's default), kept within bounds. */
export function pollInterval(suggested: number | undefined): number {
  return Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, suggested ?? DEFAULT_POLL_MS));
}

/** Failures a later poll may not meet: a poll that timed out. */
function isTransient(error: unknown): boolean {
  return error instanceof RequestTimeoutError;
}

function cancelled(view: TaskStatusView | undefined, taskId = view?.taskId ?? ''): TaskCancelledError {
  return new TaskCancelledError(taskId, view?.statusMessage);
}

/**
 * What `result` settles with, given the status the task ended in: a 2025-11-25 server may answer `tasks/result`
 * of a failed task with a result rather than an error, and the call fails all the same.
 */
function settled(outcome: TaskOutcome, view: TaskStatusView | undefined, taskId: string): TaskOutcome {
  const status: TaskStatus | undefined = view?.status;
  if (status === 'cancelled') return { error: cancelled(view, taskId) };
  if (status !== 'failed' || 'error' in outcome) return outcome;
  const why = view?.statusMessage ?? textOf(outcome.result) ?? 'no reason given';
  return { error: new McpError(-32603, `The task ${excerpt(taskId)} failed: ${why}`, { taskId, ...outcome }) };
}

/** The text of a tool's result (a tool error says why there), cut to an excerpt's length; undefined without text. */
function textOf(result: CallToolResult): string | undefined {
  const texts = result.content.flatMap((block) => (block.type === 'text' ? [block.text] : []));
  if (texts.length === 0) return undefined;
  const text = texts.join(' ');
  return text.length > DEFAULT_EXCERPT_CHARS ? `${text.slice(0, DEFAULT_EXCERPT_CHARS)}…` : text;
}
