/**
 * The file token store on real files in a temp directory: round trips, modes, atomic writes, unreadable files,
 * and the lock: in one process, between processes (real child processes racing on one record), stale locks
 * and the timeout.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { createInterface } from 'node:readline';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { LockTimeoutError } from '../../lib/auth/node/file-lock';
import { FileTokenStore, type FileTokenStoreOptions } from '../../lib/auth/node/file-token-store';
import type { AuthKey, AuthRecord } from '../../lib/auth/token-store';
import { cleanups } from '../helpers/cleanups';
import { tsxCommand } from '../helpers/cli-process';
import { fixturePath } from '../helpers/paths';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WORKER = fixturePath('auth/token-store-worker.ts');

const KEY: AuthKey = { server: 'https://mcp.example.com/mcp', client: 'switchboard-test' };
const RECORD: AuthRecord = {
  client: { issuer: 'https://auth.example.com', clientId: 'client-1', redirectUris: ['http://127.0.0.1:1/callback'] },
  tokens: { accessToken: 'access-secret-1', tokenType: 'Bearer', refreshToken: 'refresh-secret-1', expiresAt: 1 },
};

let configDir: string;
let warnings: string[];

beforeEach(async () => {
  configDir = await mkdtemp(join(tmpdir(), 'switchboard-tokens-'));
  warnings = [];
  cleanups.push(() => rm(configDir, { recursive: true, force: true }));
});

function newStore(options: FileTokenStoreOptions = {}): FileTokenStore {
  return new FileTokenStore({ configDir, logger: { warn: (message) => warnings.push(message) }, ...options });
}

const storeRecord = (store: FileTokenStore, record: AuthRecord, key = KEY) => store.update(key, () => record);

/** The counter the concurrency tests keep in the access token. */
const counterOf = (record: AuthRecord | undefined) => Number(record?.tokens?.accessToken ?? '0');
const increment = (record: AuthRecord | undefined): AuthRecord => ({
  tokens: { accessToken: String(counterOf(record) + 1), tokenType: 'Bearer' },
});

describe('FileTokenStore: records', () => {
  it('loads what update stored', async () => {
    const store = newStore();
    await storeRecord(store, RECORD);
    expect(await store.load(KEY)).toEqual(RECORD);
  });

  it('loads a record another store instance on the same directory stored', async () => {
    await storeRecord(newStore(), RECORD);
    expect(await newStore().load(KEY)).toEqual(RECORD);
  });

  it('loads undefined when there is no record, and warns about nothing', async () => {
    expect(await newStore().load(KEY)).toBeUndefined();
    expect(warnings).toEqual([]);
  });

  it('resolves update with the stored record', async () => {
    expect(await storeRecord(newStore(), RECORD)).toEqual(RECORD);
  });

  it('gives change the record stored before', async () => {
    const store = newStore();
    await storeRecord(store, RECORD);
    let seen: AuthRecord | undefined;
    await store.update(KEY, (current) => (seen = current));
    expect(seen).toEqual(RECORD);
  });

  it('deletes the record when change returns undefined', async () => {
    const store = newStore();
    await storeRecord(store, RECORD);
    await store.update(KEY, () => undefined);
    expect(await store.load(KEY)).toBeUndefined();
  });

  it('forgets the record and its file on delete', async () => {
    const store = newStore();
    await storeRecord(store, RECORD);
    await store.delete(KEY);
    await expect(stat(store.pathFor(KEY))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('deletes a record that is not there without an error', async () => {
    await expect(newStore().delete(KEY)).resolves.toBeUndefined();
  });

  it('keeps the record unchanged when change throws, and rejects with its error', async () => {
    const store = newStore();
    await storeRecord(store, RECORD);
    await expect(
      store.update(KEY, () => {
        throw new Error('refresh failed');
      }),
    ).rejects.toThrow('refresh failed');
    expect(await store.load(KEY)).toEqual(RECORD);
  });

  it('refuses to store something that is not an AuthRecord, keeping the old record', async () => {
    const store = newStore();
    await storeRecord(store, RECORD);
    const broken = { tokens: { accessToken: 42, tokenType: 'Bearer' } } as unknown as AuthRecord;
    await expect(store.update(KEY, () => broken)).rejects.toThrow(TypeError);
    expect(await store.load(KEY)).toEqual(RECORD);
  });

  it('keeps two keys of one server in two files', async () => {
    const store = newStore();
    const other: AuthKey = { server: KEY.server, client: 'another-client' };
    await storeRecord(store, RECORD);
    await storeRecord(store, { tokens: { accessToken: 'other', tokenType: 'Bearer' } }, other);
    expect(await readdir(store.directory)).toHaveLength(2);
  });

  it('gives each of two keys its own record', async () => {
    const store = newStore();
    const other: AuthKey = { server: 'https://other.example.com/mcp', client: KEY.client };
    const otherRecord: AuthRecord = { tokens: { accessToken: 'other', tokenType: 'Bearer' } };
    await storeRecord(store, RECORD);
    await storeRecord(store, otherRecord, other);
    expect([await store.load(KEY), await store.load(other)]).toEqual([RECORD, otherRecord]);
  });

  it('names the file after the server host, without the client name', () => {
    const name = basename(newStore().pathFor({ server: 'https://MCP.Example.com:8443/mcp', client: 'my-agent' }));
    expect(name).toMatch(/^mcp\.example\.com_8443-[0-9a-f]{20}\.json$/);
  });

  it('keeps its files under MCP_SWITCHBOARD_CONFIG_DIR when no config directory is given', () => {
    vi.stubEnv('MCP_SWITCHBOARD_CONFIG_DIR', configDir);
    cleanups.push(() => void vi.unstubAllEnvs());
    expect(new FileTokenStore().directory).toBe(join(configDir, 'auth'));
  });

  it('keeps the files in the auth folder of the config directory', () => {
    expect(
      newStore()
        .pathFor(KEY)
        .startsWith(join(configDir, 'auth') + '/'),
    ).toBe(true);
  });
});

describe('FileTokenStore: file modes', () => {
  /** Runs `work` with umask 0 (every permission a mode asks for is granted), restoring the umask after. */
  async function withPermissiveUmask(work: () => Promise<void>): Promise<void> {
    const previous = process.umask(0);
    try {
      await work();
    } finally {
      process.umask(previous);
    }
  }

  it('writes the record file with mode 0600 under umask 0', async () => {
    const store = newStore();
    await withPermissiveUmask(() => storeRecord(store, RECORD).then(() => undefined));
    expect((await stat(store.pathFor(KEY))).mode & 0o777).toBe(0o600);
  });

  it('creates the auth folder with mode 0700 under umask 0', async () => {
    const store = newStore();
    await withPermissiveUmask(() => storeRecord(store, RECORD).then(() => undefined));
    expect((await stat(store.directory)).mode & 0o777).toBe(0o700);
  });

  it('narrows an auth folder that already existed to 0700', async () => {
    const store = newStore();
    await withPermissiveUmask(() =>
      mkdir(store.directory, { mode: 0o777 })
        .then(() => storeRecord(store, RECORD))
        .then(() => undefined),
    );
    expect((await stat(store.directory)).mode & 0o777).toBe(0o700);
  });

  it('keeps mode 0600 when it replaces a record', async () => {
    const store = newStore();
    await withPermissiveUmask(async () => {
      await storeRecord(store, RECORD);
      await storeRecord(store, { tokens: { accessToken: 'second', tokenType: 'Bearer' } });
    });
    expect((await stat(store.pathFor(KEY))).mode & 0o777).toBe(0o600);
  });
});

describe('FileTokenStore: atomic writes', () => {
  /** What a crash between writing the temporary file and renaming it leaves behind. */
  async function leaveStrayTempFile(store: FileTokenStore): Promise<string> {
    const stray = `${store.pathFor(KEY)}.99999.0123456789ab.tmp`;
    await writeFile(stray, JSON.stringify({ half: 'written' }), { mode: 0o600 });
    return stray;
  }

  it('loads the old record when a write crashed before its rename', async () => {
    const store = newStore();
    await storeRecord(store, RECORD);
    await leaveStrayTempFile(store);
    expect(await store.load(KEY)).toEqual(RECORD);
  });

  it('removes the temporary file a crashed write left, on the next update', async () => {
    const store = newStore();
    await storeRecord(store, RECORD);
    const stray = await leaveStrayTempFile(store);
    await storeRecord(store, RECORD);
    await expect(stat(stray)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('leaves no temporary or lock file behind after an update', async () => {
    const store = newStore();
    await storeRecord(store, RECORD);
    expect(await readdir(store.directory)).toEqual([basename(store.pathFor(KEY))]);
  });
});

describe('FileTokenStore: unreadable files', () => {
  const valid = (key: AuthKey, record: unknown) =>
    JSON.stringify({
      format: 'mcp-switchboard/auth-record',
      version: 1,
      server: key.server,
      client: key.client,
      record,
    });
  const cases: [string, string][] = [
    ['not JSON', 'this is not { json'],
    ['truncated', valid(KEY, RECORD).slice(0, 60)],
    ['a token of the wrong type', valid(KEY, { tokens: { accessToken: 42, tokenType: 'Bearer' } })],
    ['a client without its id', valid(KEY, { client: { issuer: 'https://auth.example.com' } })],
    ['an array', '[1, 2, 3]'],
    ['another format version', valid(KEY, RECORD).replace('"version":1', '"version":99')],
    ['another key', valid({ server: KEY.server, client: 'someone-else' }, RECORD)],
  ];

  async function writeRecordFile(store: FileTokenStore, content: string): Promise<void> {
    await mkdir(store.directory, { recursive: true });
    await writeFile(store.pathFor(KEY), content);
  }

  it.each(cases)('loads undefined for a file holding %s', async (_, content) => {
    const store = newStore();
    await writeRecordFile(store, content);
    expect(await store.load(KEY)).toBeUndefined();
  });

  it.each(cases)('warns, naming the file, about one holding %s', async (_, content) => {
    const store = newStore();
    await writeRecordFile(store, content);
    await store.load(KEY);
    expect(warnings).toEqual([expect.stringContaining(store.pathFor(KEY))]);
  });

  it.each(cases)('replaces a file holding %s on update', async (_, content) => {
    const store = newStore();
    await writeRecordFile(store, content);
    await storeRecord(store, RECORD);
    expect(await store.load(KEY)).toEqual(RECORD);
  });

  it('gives change undefined for an unreadable file', async () => {
    const store = newStore();
    await writeRecordFile(store, 'garbage');
    let seen: AuthRecord | undefined | 'not called' = 'not called';
    await store.update(KEY, (current) => (seen = current));
    expect(seen).toBeUndefined();
  });

  it('never puts a token in a warning', async () => {
    const store = newStore();
    await writeRecordFile(store, valid(KEY, RECORD).replace('"expiresAt":1', '"expiresAt":"soon"'));
    await store.load(KEY);
    expect(warnings.join('\n')).not.toMatch(/secret/);
  });
});

describe('FileTokenStore: one process', () => {
  it('loses none of 100 concurrent read-modify-write updates', async () => {
    const store = newStore();
    await Promise.all(
      Array.from({ length: 100 }, () =>
        store.update(KEY, async (current) => {
          const next = increment(current);
          await nextTurn(); // let the other updates run before this one writes
          return next;
        }),
      ),
    );
    expect(counterOf(await store.load(KEY))).toBe(100);
  });

  it('loses none of the updates two store instances on one directory run at once', async () => {
    const stores = [newStore(), newStore()];
    await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        stores[index % 2]!.update(KEY, async (current) => {
          const next = increment(current);
          await nextTurn();
          return next;
        }),
      ),
    );
    expect(counterOf(await newStore().load(KEY))).toBe(40);
  });

  it('runs the next update after a change that threw', async () => {
    const store = newStore();
    const failing = store.update(KEY, () => {
      throw new Error('boom');
    });
    const next = store.update(KEY, () => RECORD);
    await expect(failing).rejects.toThrow('boom');
    expect(await next).toEqual(RECORD);
  });
});

describe('FileTokenStore: the lock file', () => {
  async function writeLock(store: FileTokenStore, holder: { pid: number; acquiredAt: number }): Promise<string> {
    await mkdir(store.directory, { recursive: true });
    const lockPath = store.lockPathFor(KEY);
    await writeFile(lockPath, JSON.stringify({ ...holder, hostname: hostname(), nonce: 'someone-else' }));
    return lockPath;
  }

  /** The pid of a process that has exited. */
  async function deadPid(): Promise<number> {
    const child = spawn(process.execPath, ['-e', '']);
    await once(child, 'exit');
    return child.pid!;
  }

  it('breaks a lock whose holder has exited', async () => {
    const store = newStore({ lockTimeoutMs: 5000 });
    await writeLock(store, { pid: await deadPid(), acquiredAt: Date.now() });
    await storeRecord(store, RECORD);
    expect(await store.load(KEY)).toEqual(RECORD);
  });

  it('breaks a lock of a live process that has shown no sign of life for longer than the stale limit', async () => {
    const store = newStore({ lockTimeoutMs: 5000, staleLockMs: 30_000 });
    const longAgo = Date.now() - 60_000;
    const lockPath = await writeLock(store, { pid: process.pid, acquiredAt: longAgo });
    await utimes(lockPath, longAgo / 1000, longAgo / 1000);
    await storeRecord(store, RECORD);
    expect(await store.load(KEY)).toEqual(RECORD);
  });

  it('fails with a LockTimeoutError naming the lock file while a live lock is held', async () => {
    const store = newStore({ lockTimeoutMs: 200 });
    const lockPath = await writeLock(store, { pid: process.pid, acquiredAt: Date.now() });
    const error = await storeRecord(store, RECORD).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockTimeoutError);
    expect((error as Error).message).toContain(lockPath);
  });

  it('does not run the change when it cannot take the lock', async () => {
    const store = newStore({ lockTimeoutMs: 100 });
    await writeLock(store, { pid: process.pid, acquiredAt: Date.now() });
    let ran = false;
    await store.update(KEY, () => ((ran = true), RECORD)).catch(() => undefined);
    expect(ran).toBe(false);
  });

  it('leaves a live lock it timed out on in place', async () => {
    const store = newStore({ lockTimeoutMs: 100 });
    const lockPath = await writeLock(store, { pid: process.pid, acquiredAt: Date.now() });
    await storeRecord(store, RECORD).catch(() => undefined);
    expect(JSON.parse(await readFile(lockPath, 'utf8'))).toMatchObject({ nonce: 'someone-else' });
  });
});

describe('FileTokenStore: several processes on one record', () => {
  interface Worker {
    readonly ready: Promise<void>;
    readonly output: Promise<unknown>;
    go(): void;
  }

  /** A worker process (test/fixtures/auth/token-store-worker.ts), killed after the test if still running. */
  function startWorker(...args: string[]): Worker {
    const [command, ...rest] = tsxCommand(WORKER, configDir, KEY.server, ...args);
    const child = spawn(command!, rest, { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    cleanups.push(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const lines = createInterface({ input: child.stdout });
    const exited = once(child, 'exit').then(([code]) => {
      if (code !== 0) throw new Error(`worker exited with ${String(code)}: ${stderr}`);
    });
    const ready = Promise.race([once(lines, 'line').then(() => undefined), exited.then(() => undefined)]);
    const output = ready.then(() => once(lines, 'line')).then(([line]) => JSON.parse(line as string));
    return { ready, output: Promise.all([output, exited]).then(([value]) => value), go: () => child.stdin.end('go\n') };
  }

  /** Starts the workers, lets them loose at once, and returns what each printed. */
  async function race(workers: Worker[]): Promise<unknown[]> {
    await Promise.all(workers.map((worker) => worker.ready));
    for (const worker of workers) worker.go();
    return Promise.all(workers.map((worker) => worker.output));
  }

  it('loses none of the read-modify-write updates three processes make at once', async () => {
    const perWorker = 15;
    await race([1, 2, 3].map(() => startWorker('increment', String(perWorker))));
    const record = await new FileTokenStore({ configDir }).load({ server: KEY.server, client: 'token-store-worker' });
    expect(counterOf(record)).toBe(3 * perWorker);
  }, 60_000);

  it('refreshes an expired token exactly once when two processes find it expired at once', async () => {
    const key = { server: KEY.server, client: 'token-store-worker' };
    await newStore().update(key, () => ({
      tokens: { accessToken: 'expired', tokenType: 'Bearer', refreshToken: 'refresh-0', expiresAt: Date.now() - 1000 },
    }));
    const outputs = await race([startWorker('refresh'), startWorker('refresh')]);
    expect(outputs.filter((output) => (output as { refreshed: boolean }).refreshed)).toHaveLength(1);
  }, 60_000);
});
