/**
 * A reference to a task that outlives the client that started it: plain JSON to store anywhere, naming the
 * task, the era it was made in, and the endpoint that holds it (the server's name and the transport's target:
 * an HTTP endpoint's URL, a stdio server's command line). `Client.reopenTask` checks it against its own
 * connection before it sends anything, so a reference used against another server fails closed.
 */
import { isPlainObject } from '../../jsonrpc/classify';
import { SwitchboardError } from '../../jsonrpc/errors';
import { excerpt } from '../../jsonrpc/excerpt';
import { MAX_TASK_ID_LENGTH } from './task-view';

/** The current layout of a `TaskRef` (a later one may add fields; an unknown layout is refused). */
export const TASK_REF_VERSION = 1;

export interface TaskRef {
  readonly version: typeof TASK_REF_VERSION;
  readonly taskId: string;
  readonly era: 'handshake' | 'modern';
  /** The server's `serverInfo.name`. */
  readonly server: string;
  /**
   * Where the server is reached, as the transport names it (`Transport.eraKey`: `http:` or `https:` with host
   * and path, `stdio:` with the command line); absent for an in-process transport, which names none.
   */
  readonly endpoint?: string;
}

/** The connection a task is made on, or reopened on: what a `TaskRef` must match. */
export type TaskEndpoint = Pick<TaskRef, 'era' | 'server' | 'endpoint'>;

/** A task reference that cannot be used here: malformed, or naming another endpoint. Nothing was sent. */
export class TaskRefError extends SwitchboardError {
  override readonly name = 'TaskRefError';
  readonly code = 'TASK_REF_REFUSED';
}

/** The reference of task `taskId` on `endpoint`. */
export function taskRefOf(taskId: string, endpoint: TaskEndpoint): TaskRef {
  return {
    version: TASK_REF_VERSION,
    taskId,
    era: endpoint.era,
    server: endpoint.server,
    ...(endpoint.endpoint !== undefined && { endpoint: endpoint.endpoint }),
  };
}

/**
 * `ref` (an object, or its JSON text) checked against `here`: the task id it names, or `TaskRefError` when it
 * is malformed or names another era, server or endpoint.
 */
export function checkTaskRef(ref: unknown, here: TaskEndpoint): string {
  const parsed = typeof ref === 'string' ? parseRef(ref) : ref;
  if (!isPlainObject(parsed) || parsed.version !== TASK_REF_VERSION) {
    throw new TaskRefError(`Not a task reference (version ${TASK_REF_VERSION}): ${excerpt(ref)}`);
  }
  const { taskId, era, server, endpoint } = parsed;
  if (typeof taskId !== 'string' || taskId === '' || taskId.length > MAX_TASK_ID_LENGTH) {
    throw new TaskRefError(`The task reference has no valid taskId: ${excerpt(taskId)}`);
  }
  if (typeof server !== 'string' || (endpoint !== undefined && typeof endpoint !== 'string')) {
    throw new TaskRefError(`The task reference names no valid server and endpoint: ${excerpt(ref)}`);
  }
  const differs =
    era !== here.era
      ? `era ${excerpt(era)}, not ${here.era}`
      : server !== here.server
        ? `server ${excerpt(server)}, not ${excerpt(here.server)}`
        : endpoint !== here.endpoint
          ? `endpoint ${excerpt(endpoint ?? 'in process')}, not ${excerpt(here.endpoint ?? 'in process')}`
          : undefined;
  if (differs !== undefined) {
    throw new TaskRefError(`The task ${excerpt(taskId)} belongs elsewhere: its reference names ${differs}`);
  }
  return taskId;
}

function parseRef(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new TaskRefError(`Not a task reference: ${excerpt(text)}`);
  }
}
