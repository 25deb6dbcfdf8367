/**
 * Following a task to its end, for `call --task` and `task result`: each status the handle sees goes to stderr
 * as a person reads it (`task working: build: 3 of 10 steps`), then the tool's result to stdout as `call`
 * prints one. How the task ended decides the exit code: completed 0 (a tool error included, as for `call`),
 * failed or cancelled 1, and 130 when Ctrl-C cancelled it (`call --task`) or stopped following (`task result`).
 */
import type { TaskHandle } from '../client/tasks/task-handle';
import { TaskCancelledError } from '../client/tasks/task-handle';
import type { TaskStatusView } from '../client/tasks/task-view';
import { isPlainObject } from '../jsonrpc/classify';
import { McpError } from '../jsonrpc/errors';
import { interrupted, messageOf } from './connect';
import { CliFailure, EXIT_INTERRUPTED, EXIT_OK } from './errors';
import { printable } from './form-fields';
import type { CliIo } from './io';

/** What Ctrl-C does while a task is followed: cancel it (the caller made it), or only stop following. */
export type OnInterrupt = 'cancel' | 'leave';

/** How each status reads: a task's state in words, then the server's message. */
const STATUS_WORDS: Readonly<Record<TaskStatusView['status'], string>> = {
  working: 'working',
  input_required: 'waiting for input',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'cancelled',
};

/** `task working: build: 3 of 10 steps` (control characters of the server's text escaped). */
export function statusLine(view: TaskStatusView): string {
  const message = view.statusMessage ? `: ${printable(view.statusMessage)}` : '';
  return `task ${STATUS_WORDS[view.status]}${message}`;
}

/** A time to live as a person reads it: `3600000 ms`, or `no limit`. */
export function describeTtl(ttlMs: number | null | undefined): string {
  return ttlMs === null ? 'no limit' : ttlMs === undefined ? 'not said' : `${ttlMs} ms`;
}

/**
 * Follows `handle` to its end and prints its result; resolves with the exit code, or rejects with a
 * `CliFailure` saying how the task ended. `signal` is the command's interrupt: Ctrl-C, or a question the
 * command could not answer (its reason then the `CliFailure` that says so).
 */
export async function followToEnd(
  handle: TaskHandle,
  io: CliIo,
  signal: AbortSignal,
  onInterrupt: OnInterrupt,
): Promise<number> {
  const id = printable(handle.taskId ?? '');
  const statuses = handle.status$.subscribe({ next: (view) => io.err(statusLine(view)), error: () => undefined });
  let stop!: () => void;
  const stopped = new Promise<'stopped'>((resolve) => (stop = () => resolve('stopped')));
  const onAbort = () => {
    // The client cancels the task it made when the call's signal aborts: the task's end tells how that went.
    if (onInterrupt === 'cancel' && !(signal.reason instanceof CliFailure)) io.err(`cancelling task ${id} ...`);
    else stop();
  };
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  try {
    const outcome = await Promise.race([handle.result, stopped]);
    if (outcome === 'stopped') throw stoppedFollowing(id, signal.reason);
    io.out(JSON.stringify(outcome, null, 2));
    return EXIT_OK;
  } catch (error) {
    throw endedFailure(error, id, handle, signal);
  } finally {
    signal.removeEventListener('abort', onAbort);
    statuses.unsubscribe();
  }
}

/** Following stopped before the task ended: the question that could not be answered, or Ctrl-C. */
function stoppedFollowing(id: string, reason: unknown): CliFailure {
  if (reason instanceof CliFailure) return reason;
  return new CliFailure(`Interrupted: stopped following task ${id}, which the server runs on`, [], {
    exitCode: EXIT_INTERRUPTED,
  });
}

/** How the task (or following it) ended, as the command reports it. */
function endedFailure(error: unknown, id: string, handle: TaskHandle, signal: AbortSignal): CliFailure {
  if (error instanceof CliFailure) return error;
  if (error instanceof TaskCancelledError) {
    if (signal.aborted && !(signal.reason instanceof CliFailure)) return interrupted(`task ${id}`, error);
    const why = error.statusMessage ? `: ${printable(error.statusMessage)}` : '';
    return new CliFailure(`Task ${id} was cancelled${why}`, [], { cause: error });
  }
  if (error instanceof McpError && handle.status?.status === 'failed') {
    // A 2025-11-25 tool error fails the task, keeping the tool's result: its text says why.
    const kept = isPlainObject(error.data) ? error.data.result : undefined;
    const why = handle.status?.statusMessage ?? textOf(kept) ?? error.message;
    if (kept !== undefined) {
      return new CliFailure(`Task ${id} failed: ${printable(why)}`, [`result: ${printable(JSON.stringify(kept))}`], {
        cause: error,
      });
    }
    const data = error.data === undefined ? [] : [`data: ${printable(JSON.stringify(error.data))}`];
    return new CliFailure(`Task ${id} failed (error ${error.code}): ${printable(why)}`, data, { cause: error });
  }
  // The server refused a request about the task (an id it does not know), or following it broke.
  const why =
    error instanceof McpError ? `the server answered with error ${error.code}: ${error.message}` : messageOf(error);
  return new CliFailure(`Could not follow task ${id} to its end: ${printable(why)}`, [], { cause: error });
}

/** The text blocks of a tool's result, joined; undefined when it has none. */
function textOf(result: unknown): string | undefined {
  const content = isPlainObject(result) && Array.isArray(result.content) ? result.content : [];
  const texts = content.flatMap((block: unknown) =>
    isPlainObject(block) && block.type === 'text' && typeof block.text === 'string' ? [block.text] : [],
  );
  return texts.length === 0 ? undefined : texts.join(' ');
}
