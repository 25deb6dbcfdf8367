/**
 * A `TokenStore` on disk: one JSON file per server and client under `<config dir>/auth/` (see config-dir.ts),
 * directory mode 0700, files mode 0600, each write atomic (atomic-file.ts). `update` runs its change holding
 * the key's lock file (file-lock.ts), so two processes refreshing the same token at once take turns, and the
 * second sees what the first stored; inside one process, changes to one key queue without touching the lock.
 *
 * A file is named `<server host>-<hash of server and client>.json`: a user can tell which server it is for,
 * and the client's name does not appear. It holds `{ format, version, server, client, record }`.
 */
import { KeyedQueue } from '../keyed-queue';
import { createHash } from 'node:crypto';
import { chmod, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { defaultLogger } from '../../core/logger';
import type { AuthKey, AuthRecord, TokenStore } from '../token-store';
import { removeStrayTempFiles, unlinkIfPresent, writeFileAtomic } from './atomic-file';
import { parseAuthRecord } from './auth-record-shape';
import { defaultConfigDir } from './config-dir';
import { withFileLock } from './file-lock';

export interface FileTokenStoreOptions {
  /** The mcp-switchboard config directory; records go in its `auth/` folder. Default: `defaultConfigDir()`. */
  readonly configDir?: string;
  /** How long `update` and `delete` wait for another process's lock before failing (default 10 s). */
  readonly lockTimeoutMs?: number;
  /** A lock with no sign of life for longer than this is broken (default 30 s). */
  readonly staleLockMs?: number;
  /** Told about records that could not be read (never their content). Default: the stderr logger. */
  readonly logger?: { warn(message: string): void };
}

const FILE_FORMAT = 'mcp-switchboard/auth-record';
const FILE_VERSION = 1;
const DIRECTORY_MODE = 0o700;
const FILE_MODE = 0o600;

/** What `TokenStore.update` runs on the current record: what it returns is stored. */
export type Change = Parameters<TokenStore['update']>[1];

/** The last change queued per record file in this process, shared by every store: the next one waits for it. */
const queues = new KeyedQueue();

export class FileTokenStore implements TokenStore {
  /** Where the record files are: `<config dir>/auth`. */
  readonly directory: string;
  private readonly lockOptions: { timeoutMs: number; staleMs: number };
  private readonly logger: { warn(message: string): void };

  constructor(options: FileTokenStoreOptions = {}) {
    this.directory = join(options.configDir ?? defaultConfigDir(), 'auth');
    this.lockOptions = { timeoutMs: options.lockTimeoutMs ?? 10_000, staleMs: options.staleLockMs ?? 30_000 };
    this.logger = options.logger ?? defaultLogger;
  }

  /** The file that holds `key`'s record (it may not exist). */
  pathFor(key: AuthKey): string {
    return join(this.directory, recordFileName(key));
  }

  /** The lock file `update` and `delete` hold for `key` (a leftover one names its holder's pid). */
  lockPathFor(key: AuthKey): string {
    return lockPathFor(this.pathFor(key));
  }

  async load(key: AuthKey): Promise<AuthRecord | undefined> {
    return this.read(this.pathFor(key), key);
  }

  update(key: AuthKey, change: Change): Promise<AuthRecord | undefined> {
    const path = this.pathFor(key);
    return this.exclusively(path, async () => {
      const next = await change(await this.read(path, key));
      if (next === undefined) await unlinkIfPresent(path);
      else await writeFileAtomic(path, serialize(key, next), FILE_MODE);
      return next;
    });
  }

  async delete(key: AuthKey): Promise<void> {
    const path = this.pathFor(key);
    await this.exclusively(path, () => unlinkIfPresent(path));
  }

  /** Runs `work` after the changes queued before it in this process, holding the record's lock file. */
  private exclusively<T>(path: string, work: () => Promise<T>): Promise<T> {
    return queues.run(path, async () => {
      await this.ensureDirectory();
      return withFileLock(lockPathFor(path), this.lockOptions, async () => {
        await removeStrayTempFiles(path); // a crash between a write and its rename left them; we hold the lock
        return work();
      });
    });
  }

  private async ensureDirectory(): Promise<void> {
    await mkdir(this.directory, { recursive: true, mode: DIRECTORY_MODE });
    // mkdir's mode applies only when it creates the folder: tighten one that was there already.
    if (process.platform !== 'win32') await chmod(this.directory, DIRECTORY_MODE);
  }

  /** The record in `path`, or undefined for a missing, unreadable or malformed file (told to the logger). */
  private async read(path: string, key: AuthKey): Promise<AuthRecord | undefined> {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT') this.ignoring(path, `it could not be read (${code ?? 'unknown error'})`);
      return undefined;
    }
    let stored: unknown;
    try {
      stored = JSON.parse(text);
    } catch {
      this.ignoring(path, 'it is not JSON (truncated or corrupt)');
      return undefined;
    }
    const problem = describeEnvelopeProblem(stored, key);
    if (problem) {
      this.ignoring(path, problem);
      return undefined;
    }
    const record = parseAuthRecord((stored as { record: unknown }).record);
    if (!record) this.ignoring(path, 'its record does not have the shape of an auth record');
    return record;
  }

  private ignoring(path: string, reason: string): void {
    this.logger.warn(`Ignoring the auth record file ${path}: ${reason}; the next update will replace it`);
  }
}

/** `<host slug>-<hash>.json`. */
export function recordFileName(key: AuthKey): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([key.server, key.client]))
    .digest('hex')
    .slice(0, 20);
  return `${hostSlug(key.server)}-${hash}.json`;
}

/** The server's host (and port) in characters every file system accepts, or `server` when it has none. */
function hostSlug(server: string): string {
  let host = '';
  try {
    host = new URL(server).host.toLowerCase();
  } catch {
    // not a URL: the hash alone names it
  }
  const slug = host
    .replace(/[^a-z0-9.-]+/g, '_')
    .replace(/^[._-]+|[._-]+$/g, '')
    .slice(0, 64);
  return slug || 'server';
}

function lockPathFor(recordPath: string): string {
  return recordPath.replace(/\.json$/, '.lock');
}

function serialize(key: AuthKey, record: AuthRecord): string {
  const checked = parseAuthRecord(record);
  if (!checked) throw new TypeError('FileTokenStore.update: the change returned something that is not an AuthRecord');
  const file = { format: FILE_FORMAT, version: FILE_VERSION, server: key.server, client: key.client, record: checked };
  return `${JSON.stringify(file, null, 2)}\n`;
}

/** Why the file's envelope is not a record of this version for `key`, or undefined when it is. */
function describeEnvelopeProblem(stored: unknown, key: AuthKey): string | undefined {
  if (typeof stored !== 'object' || stored === null || Array.isArray(stored)) return 'it is not a JSON object';
  const file = stored as Record<string, unknown>;
  if (file['format'] !== FILE_FORMAT) return `its format is not ${FILE_FORMAT}`;
  if (file['version'] !== FILE_VERSION) return `its version is not ${FILE_VERSION}`;
  if (file['server'] !== key.server || file['client'] !== key.client) return 'it belongs to another server or client';
  return undefined;
}
