/**
 * An `EraStore` on disk, for clients that start as a new process each time (`switchboard call`): one JSON
 * file, `<config dir>/era-cache.json` (config-dir.ts: `MCP_SWITCHBOARD_CONFIG_DIR` wins), mode 0600 in a
 * directory created 0700, replaced atomically on every save (atomic-file.ts), so a reader sees one whole
 * version or another. No lock: the cache reads the file again just before each save, and when two processes
 * save at once the last one wins, which for a cache costs at most one probe. A file that is missing, too
 * large or not JSON loads as nothing (and is replaced at the next save); its entries are checked by the
 * cache (lib/client/era-verdict.ts). The temporary file of a process killed mid-save is removed by a later
 * save, once its writer is gone (`removeOrphanedTempFiles`). Node only.
 */
import { mkdir, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { removeOrphanedTempFiles, writeFileAtomic } from '../../auth/node/atomic-file';
import { defaultConfigDir } from '../../auth/node/config-dir';
import type { EraStore } from '../era-cache';
import type { EraStoreDocument } from '../era-verdict';

export interface FileEraStoreOptions {
  /** The mcp-switchboard config directory the file goes in. Default: `defaultConfigDir()`. */
  readonly configDir?: string;
}

export const ERA_CACHE_FILE = 'era-cache.json';
const DIRECTORY_MODE = 0o700;
const FILE_MODE = 0o600;
/** A verdict takes a few hundred bytes: a bigger file is not ours to parse. */
const MAX_FILE_BYTES = 1024 * 1024;

export class FileEraStore implements EraStore {
  readonly path: string;

  constructor(options: FileEraStoreOptions = {}) {
    this.path = join(options.configDir ?? defaultConfigDir(), ERA_CACHE_FILE);
  }

  async load(): Promise<unknown> {
    const text = await readSmallFile(this.path);
    if (text === undefined) return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return undefined;
    }
  }

  async save(document: EraStoreDocument): Promise<void> {
    await mkdir(dirname(this.path), { recursive: true, mode: DIRECTORY_MODE });
    await writeFileAtomic(this.path, `${JSON.stringify(document, null, 2)}\n`, FILE_MODE);
    // A process killed between its write and its rename left its temporary file: tidy up after it.
    await removeOrphanedTempFiles(this.path);
  }
}

/** The file's text; undefined when it does not exist or is larger than a cache file can be. */
async function readSmallFile(path: string): Promise<string | undefined> {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    if ((await handle.stat()).size > MAX_FILE_BYTES) return undefined;
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}
