/**
 * A lock between processes on one machine (or sharing one home directory), held as a file created with
 * `open(path, 'wx')`: creating it succeeds for exactly one process. The file holds the holder's pid, host,
 * the time it took the lock, and a nonce that lets it remove only its own lock.
 *
 * Waiters retry with a short, growing, jittered backoff until a timeout, then fail naming the lock file. A lock
 * whose holder has exited (same host, pid gone) or that shows no sign of life for longer than the stale limit
 * is broken. The holder touches the file's mtime every third of the stale limit, so a long but live hold
 * is not mistaken for a stale one. Breaking goes through a second file (`<lock>.break`, also `wx`) so that two
 * waiters who both judged a lock stale cannot both remove it, the second one removing the lock the first
 * one's successor just took.
 */
import { randomBytes } from 'node:crypto';
import { open, unlink, utimes } from 'node:fs/promises';
import { hostname } from 'node:os';
import { unlinkIfPresent } from './atomic-file';
import { isProcessAlive } from './process-alive';
import { SwitchboardError, type LocalErrorCode } from '../../jsonrpc/errors';

export interface FileLockOptions {
  /** How long to wait for the lock before failing. */
  readonly timeoutMs: number;
  /** A lock with no sign of life (its timestamp and mtime) for longer than this is broken. */
  readonly staleMs: number;
}

/** What a lock file holds. */
export interface LockHolder {
  readonly pid: number;
  readonly hostname: string;
  /** Epoch milliseconds. */
  readonly acquiredAt: number;
  readonly nonce: string;
}

/** The lock stayed held by someone else for the whole timeout. */
export class LockTimeoutError extends SwitchboardError {
  override readonly name = 'LockTimeoutError';
  readonly code: LocalErrorCode = 'LOCK_TIMEOUT';
  constructor(
    readonly lockPath: string,
    timeoutMs: number,
    holder: LockHolder | undefined,
  ) {
    const by = holder
      ? ` (held by pid ${holder.pid} on ${holder.hostname} since ${new Date(holder.acquiredAt).toISOString()})`
      : '';
    super(
      `Timed out after ${timeoutMs} ms waiting for the lock file ${lockPath}${by}; ` +
        `if no process holds it, remove the file`,
    );
  }
}

/** Runs `work` while holding the lock at `lockPath`; the lock is released however `work` ends. */
export async function withFileLock<T>(lockPath: string, options: FileLockOptions, work: () => Promise<T>): Promise<T> {
  const held = await acquire(lockPath, options);
  const heartbeat = setInterval(() => void touch(lockPath), Math.max(1, options.staleMs / 3));
  heartbeat.unref();
  try {
    return await work();
  } finally {
    clearInterval(heartbeat);
    await release(lockPath, held);
  }
}

const FIRST_BACKOFF_MS = 5;
const MAX_BACKOFF_MS = 100;

async function acquire(lockPath: string, options: FileLockOptions): Promise<LockHolder> {
  const deadline = Date.now() + options.timeoutMs;
  for (let attempt = 0; ; attempt++) {
    const held = await tryCreate(lockPath);
    if (held) return held;
    const seen = await inspect(lockPath, options.staleMs);
    if (seen.state === 'absent') continue; // released between our attempt and the look: try again now
    if (seen.state === 'stale' && (await breakStale(lockPath, options.staleMs))) continue;
    const now = Date.now();
    if (now >= deadline) throw new LockTimeoutError(lockPath, options.timeoutMs, seen.holder);
    const backoff = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.min(attempt, 5));
    await sleep(Math.min(deadline - now, backoff * (0.5 + Math.random() / 2)));
  }
}

/** Takes the lock if nobody holds it: the holder on success, undefined when the file exists. */
async function tryCreate(lockPath: string): Promise<LockHolder | undefined> {
  const holder: LockHolder = {
    pid: process.pid,
    hostname: hostname(),
    acquiredAt: Date.now(),
    nonce: randomBytes(8).toString('hex'),
  };
  let handle;
  try {
    handle = await open(lockPath, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw error;
  }
  try {
    await handle.writeFile(JSON.stringify(holder), 'utf8');
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(lockPath).catch(() => undefined);
    throw error;
  }
  await handle.close();
  return holder;
}

type LockState =
  { readonly state: 'absent' } | { readonly state: 'live' | 'stale'; readonly holder: LockHolder | undefined };

/** Whether the lock is held, and by a holder that still shows signs of life. */
async function inspect(lockPath: string, staleMs: number): Promise<LockState> {
  let handle;
  try {
    handle = await open(lockPath, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'absent' };
    throw error;
  }
  let holder: LockHolder | undefined;
  let modifiedAt: number;
  try {
    modifiedAt = (await handle.stat()).mtimeMs;
    holder = parseHolder(await handle.readFile('utf8')); // undefined: empty while its creator writes it
  } finally {
    await handle.close();
  }
  if (holder && holder.hostname === hostname() && !isProcessAlive(holder.pid)) return { state: 'stale', holder };
  const lastSignOfLife = Math.max(modifiedAt, holder?.acquiredAt ?? 0);
  return { state: Date.now() - lastSignOfLife > staleMs ? 'stale' : 'live', holder };
}

/**
 * Removes a stale lock, holding `<lock>.break` while it looks again and removes it. False when another
 * waiter is breaking it right now (then wait as for a live lock).
 */
async function breakStale(lockPath: string, staleMs: number): Promise<boolean> {
  const breakerPath = `${lockPath}.break`;
  const breaker = await tryCreate(breakerPath);
  if (!breaker) {
    // A breaker that died holding `.break` would block breaking for ever: it is stale after the same limit.
    const seen = await inspect(breakerPath, staleMs);
    if (seen.state === 'stale') await unlink(breakerPath).catch(() => undefined);
    return false;
  }
  try {
    if ((await inspect(lockPath, staleMs)).state === 'stale') await unlinkIfPresent(lockPath);
  } finally {
    await release(breakerPath, breaker);
  }
  return true;
}

/** Removes the lock file if it is still ours (a stale-broken lock may have been taken by another since). */
async function release(lockPath: string, held: LockHolder): Promise<void> {
  const current = await readHolder(lockPath);
  if (current?.nonce === held.nonce) await unlinkIfPresent(lockPath);
}

async function readHolder(lockPath: string): Promise<LockHolder | undefined> {
  let handle;
  try {
    handle = await open(lockPath, 'r');
  } catch {
    return undefined;
  }
  try {
    return parseHolder(await handle.readFile('utf8'));
  } finally {
    await handle.close();
  }
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockHolder> | null;
    if (
      typeof value === 'object' &&
      value !== null &&
      Number.isInteger(value.pid) &&
      typeof value.hostname === 'string' &&
      typeof value.acquiredAt === 'number' &&
      typeof value.nonce === 'string'
    )
      return value as LockHolder;
  } catch {
    // empty (being written) or not ours
  }
  return undefined;
}

async function touch(path: string): Promise<void> {
  const now = new Date();
  await utimes(path, now, now).catch(() => undefined);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
