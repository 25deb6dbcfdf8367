/**
 * Writing a file so that a reader sees the old content or the new, never a part: a temporary file in the same
 * directory (same file system, so the rename is atomic), created with the final mode, flushed to disk, then
 * renamed over the target.
 */
import { randomBytes } from 'node:crypto';
import { open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { isProcessAlive } from './process-alive';

const TEMP_SUFFIX = '.tmp';

/** `<target>.<pid>.<random>.tmp`: next to the target, never mistaken for it. */
function tempPathFor(target: string): string {
  return `${target}.${process.pid}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`;
}

/** Replaces `target` with `content` atomically; the file is created with `mode` (the umask can only narrow it). */
export async function writeFileAtomic(target: string, content: string, mode: number): Promise<void> {
  const temp = tempPathFor(target);
  try {
    const handle = await open(temp, 'wx', mode);
    try {
      await handle.writeFile(content, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, target);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await syncDirectory(dirname(target));
}

/** Makes the rename itself durable. Best effort: some platforms (Windows) cannot open a directory. */
async function syncDirectory(directory: string): Promise<void> {
  try {
    const handle = await open(directory, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // not supported here: the rename is still atomic, only its durability across a power cut is weaker
  }
}

/** The temporary files `writeFileAtomic` left next to `target` (paths, with the writer's pid); none when unreadable. */
async function tempFilesOf(target: string): Promise<{ path: string; pid: number }[]> {
  const directory = dirname(target);
  const prefix = `${basename(target)}.`;
  let names: string[];
  try {
    names = await readdir(directory);
  } catch {
    return [];
  }
  return names
    .filter((name) => name.startsWith(prefix) && name.endsWith(TEMP_SUFFIX))
    .map((name) => ({ path: join(directory, name), pid: Number(name.slice(prefix.length).split('.', 1)[0]) }));
}

/**
 * Removes the temporary files a crash between write and rename left next to `target`. Call it only while
 * holding whatever serialises writers of `target`, or it may remove a writer's file before its rename.
 */
export async function removeStrayTempFiles(target: string): Promise<void> {
  for (const { path } of await tempFilesOf(target)) await unlink(path).catch(() => undefined);
}

/** How old a dead writer's temporary file must be before `removeOrphanedTempFiles` takes it. */
export const ORPHAN_MIN_AGE_MS = 60_000;

/**
 * Removes the temporary files that writers of `target` which died before their rename left behind, for
 * files written without a lock (there, `removeStrayTempFiles` could take a live writer's file). Safe without
 * one: a file is taken only when the pid in its name runs no process on this host (a dead writer renames
 * nothing) and it is older than `minAgeMs` (a writer on another host sharing the directory has a pid that
 * means nothing here; its write takes milliseconds). Best effort: what cannot be read or removed is left.
 */
export async function removeOrphanedTempFiles(
  target: string,
  minAgeMs = ORPHAN_MIN_AGE_MS,
  now = Date.now(),
): Promise<void> {
  for (const { path, pid } of await tempFilesOf(target)) {
    if (!Number.isSafeInteger(pid) || isProcessAlive(pid)) continue;
    const modified = await stat(path).then(
      (stats) => stats.mtimeMs,
      () => undefined,
    );
    if (modified !== undefined && now - modified >= minAgeMs) await unlink(path).catch(() => undefined);
  }
}

/** Removes `path`; already gone is fine. */
export async function unlinkIfPresent(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
