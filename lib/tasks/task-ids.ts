/**
 * Task ids and list cursors. Runtime-neutral: only `globalThis.crypto`, `btoa` and `atob` (Node 20, Deno, Bun,
 * browsers, workers).
 */

/** A task id: 128 random bits (a version 4 UUID), so ids cannot be guessed or counted. */
export function newTaskId(): string {
  return globalThis.crypto.randomUUID();
}

/** The longest task id or owner id a store accepts: longer ones read as unknown (and cannot bloat a key). */
export const MAX_ID_LENGTH = 256;

/** The opaque cursor that continues a list after `taskId`. */
export function encodeTaskCursor(taskId: string): string {
  return btoa(JSON.stringify({ after: taskId }))
    .replaceAll('+', '-')
    .replaceAll('/', '_')
    .replaceAll('=', '');
}

/** The task id a cursor continues after; throws `TypeError` for anything `encodeTaskCursor` did not make. */
export function decodeTaskCursor(cursor: string): string {
  const after = readCursor(cursor);
  if (typeof after !== 'string' || after.length === 0 || after.length > MAX_ID_LENGTH) {
    throw new TypeError('Invalid task list cursor');
  }
  return after;
}

function readCursor(cursor: string): unknown {
  if (typeof cursor !== 'string' || cursor.length > 4 * MAX_ID_LENGTH || !/^[\w-]*$/.test(cursor)) return undefined;
  try {
    const parsed: unknown = JSON.parse(atob(cursor.replaceAll('-', '+').replaceAll('_', '/')));
    return typeof parsed === 'object' && parsed !== null ? (parsed as { after?: unknown }).after : undefined;
  } catch {
    return undefined;
  }
}
