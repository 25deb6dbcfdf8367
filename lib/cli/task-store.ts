/**
 * `serve --task-store <dir>`: the served server keeps its tasks on disk, in an `LmdbTaskStore` in `<dir>`
 * (created if missing), so that a finished task's result outlives the process and a task that was running when
 * it ended reads `failed` after a restart. The store is loaded only for this flag: LMDB is a native module.
 */
import { mkdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { TaskStore } from '../tasks/task-store';
import { CliFailure } from './errors';

/** A store the command closes once serving has ended. */
export interface ClosableTaskStore extends TaskStore {
  close(): Promise<void>;
}

/** The store in `dir`, or a `CliFailure` saying why that folder cannot hold one. */
export async function openTaskStore(dir: string): Promise<ClosableTaskStore> {
  const path = resolve(dir);
  let LmdbTaskStore: typeof import('../tasks/lmdb-task-store').LmdbTaskStore;
  try {
    ({ LmdbTaskStore } = await import('../tasks/lmdb-task-store'));
  } catch (error) {
    throw new CliFailure(`--task-store needs the lmdb package, which did not load: ${(error as Error).message}`, [], {
      cause: error,
    });
  }
  try {
    await mkdir(path, { recursive: true });
    return new LmdbTaskStore({ path });
  } catch (error) {
    throw new CliFailure(`Cannot keep tasks in ${dir}: ${(error as Error).message}`, [], { cause: error });
  }
}
