/**
 * Era verdicts that outlive the process (lib/client/era-cache.ts with an `EraStore`, and the file store of
 * lib/client/node/file-era-store.ts): what is saved comes back, expires, stays bounded, is kept apart per
 * authorization context, and a file that is corrupt or edited by hand is never trusted.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_ERA_MAX_AGE_MS, EraCache, type EraCacheOptions, type EraVerdict } from '../../lib/client/era-cache';
import { FileEraStore } from '../../lib/client/node/file-era-store';
import { principalOf } from '../../lib/cli/call-era-cache';
import type { CallCommand } from '../../lib/cli/args';

const ENDPOINT = 'http:127.0.0.1:3000/mcp';
const MODERN: EraVerdict = {
  era: 'modern',
  version: '2026-07-28',
  discover: {
    supportedVersions: ['2026-07-28'],
    capabilities: { tools: { listChanged: true } },
    serverInfo: { name: 'notes', version: '1.2.0' },
    instructions: 'Read notes as resources.',
  },
};
const HANDSHAKE: EraVerdict = { era: 'handshake' };

let configDir: string;
beforeEach(() => {
  configDir = mkdtempSync(join(tmpdir(), 'switchboard-era-'));
});
afterEach(() => rmSync(configDir, { recursive: true, force: true }));

const fileOf = () => join(configDir, 'era-cache.json');

/** A cache over the file in `configDir`, as a new process would make it. */
function processCache(options: EraCacheOptions = {}): EraCache {
  return new EraCache({ store: new FileEraStore({ configDir }), ...options });
}

/** Saves `verdict` for `endpoint` from one "process" and waits for the file. */
async function saved(verdict: EraVerdict, options: EraCacheOptions = {}, endpoint = ENDPOINT): Promise<void> {
  const cache = processCache(options);
  cache.set(endpoint, verdict);
  await cache.flush();
}

function storedDocument(): any {
  return JSON.parse(readFileSync(fileOf(), 'utf8'));
}

describe('a persisted verdict', () => {
  it('comes back in a new cache, modern with its discovery info', async () => {
    await saved(MODERN);
    expect(await processCache().recall(ENDPOINT)).toEqual(MODERN);
  });

  it('comes back in a new cache, handshake', async () => {
    await saved(HANDSHAKE);
    expect(await processCache().recall(ENDPOINT)).toEqual(HANDSHAKE);
  });

  it('is written to a file readable only by its owner', async () => {
    await saved(MODERN);
    expect(statSync(fileOf()).mode & 0o777).toBe(0o600);
  });

  it('creates the config directory readable only by its owner', async () => {
    const nested = join(configDir, 'new');
    const cache = new EraCache({ store: new FileEraStore({ configDir: nested }) });
    cache.set(ENDPOINT, HANDSHAKE);
    await cache.flush();
    expect(statSync(nested).mode & 0o777).toBe(0o700);
  });

  it('is not loaded by a cache without a store', async () => {
    await saved(MODERN);
    expect(await new EraCache().recall(ENDPOINT)).toBeUndefined();
  });

  it('is gone from the store once the cache deletes it (a verdict that failed)', async () => {
    await saved(MODERN);
    const cache = processCache();
    expect(await cache.recall(ENDPOINT)).toEqual(MODERN);
    cache.delete(ENDPOINT);
    await cache.flush();
    expect(await processCache().recall(ENDPOINT)).toBeUndefined();
  });

  it('is replaced by a new verdict for the same endpoint', async () => {
    await saved(MODERN);
    await saved(HANDSHAKE);
    expect(storedDocument().entries).toHaveLength(1);
    expect(await processCache().recall(ENDPOINT)).toEqual(HANDSHAKE);
  });

  it("keeps another process's entries when it writes its own", async () => {
    const first = processCache();
    const second = processCache();
    await first.recall(ENDPOINT); // both loaded the (empty) file before either wrote
    await second.recall(ENDPOINT);
    first.set('http:a/mcp', HANDSHAKE);
    await first.flush();
    second.set('http:b/mcp', MODERN);
    await second.flush();
    const fresh = processCache();
    expect([await fresh.recall('http:a/mcp'), await fresh.recall('http:b/mcp')]).toEqual([HANDSHAKE, MODERN]);
  });
});

describe('a file written before the handshake era was renamed', () => {
  /** What such a build wrote: the same format and version, the handshake era named "legacy". */
  function writeOldFile(savedAt: number): void {
    const modern = {
      endpoint: 'http:modern/mcp',
      principal: '',
      savedAt,
      era: 'modern',
      version: '2026-07-28',
      discover: {
        supportedVersions: ['2026-07-28'],
        capabilities: {},
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'm', version: '1' } },
      },
    };
    const entries = [{ endpoint: ENDPOINT, principal: '', savedAt, era: 'legacy' }, modern];
    writeFileSync(fileOf(), JSON.stringify({ format: 'mcp-switchboard/era-cache', version: 1, entries }));
  }

  it('loads, its "legacy" entries as the handshake era', async () => {
    writeOldFile(Date.now() - 1_000);
    const cache = processCache();
    expect([await cache.recall(ENDPOINT), (await cache.recall('http:modern/mcp'))?.era]).toEqual([HANDSHAKE, 'modern']);
  });

  it('is rewritten with "handshake" at the next write, in the same format version', async () => {
    writeOldFile(Date.now() - 1_000);
    await saved(MODERN, {}, 'http:other/mcp');
    const document = storedDocument();
    expect([document.version, document.entries.map((entry: { era: string }) => entry.era)]).toEqual([
      1,
      ['handshake', 'modern', 'modern'],
    ]);
  });
});

describe('expiry, with an injected clock', () => {
  const at = (time: number) => ({ now: () => time });

  it('is trusted until a day has passed', async () => {
    await saved(MODERN, at(1_000));
    expect(await processCache(at(1_000 + DEFAULT_ERA_MAX_AGE_MS - 1)).recall(ENDPOINT)).toEqual(MODERN);
  });

  it('is not trusted once a day has passed', async () => {
    await saved(MODERN, at(1_000));
    expect(await processCache(at(1_000 + DEFAULT_ERA_MAX_AGE_MS)).recall(ENDPOINT)).toBeUndefined();
  });

  it('follows maxAgeMs', async () => {
    await saved(HANDSHAKE, at(1_000));
    expect(await processCache({ ...at(1_500), maxAgeMs: 500 }).recall(ENDPOINT)).toBeUndefined();
  });

  it('is not trusted when saved in the future (a clock set back, a hand-edited time)', async () => {
    await saved(HANDSHAKE, at(5_000));
    expect(await processCache(at(4_000)).recall(ENDPOINT)).toBeUndefined();
  });

  it('expires in memory too, once loaded', async () => {
    await saved(HANDSHAKE, at(1_000));
    let now = 2_000;
    const cache = processCache({ now: () => now });
    expect(await cache.recall(ENDPOINT)).toEqual(HANDSHAKE);
    now = 1_000 + DEFAULT_ERA_MAX_AGE_MS;
    expect(cache.get(ENDPOINT)).toBeUndefined();
  });

  it('drops expired entries from the file at the next write', async () => {
    await saved(HANDSHAKE, at(1_000), 'http:old/mcp');
    await saved(MODERN, at(1_000 + DEFAULT_ERA_MAX_AGE_MS), 'http:new/mcp');
    expect(storedDocument().entries.map((entry: any) => entry.endpoint)).toEqual(['http:new/mcp']);
  });

  it('never happens without a store, as before', () => {
    let now = 0;
    const cache = new EraCache({ now: () => now });
    cache.set(ENDPOINT, HANDSHAKE);
    now = 10 * DEFAULT_ERA_MAX_AGE_MS;
    expect(cache.get(ENDPOINT)).toEqual(HANDSHAKE);
  });
});

describe('the bound', () => {
  it('keeps the newest maxEntries entries in the file', async () => {
    for (const [index, endpoint] of ['http:a/mcp', 'http:b/mcp', 'http:c/mcp'].entries()) {
      await saved(HANDSHAKE, { maxEntries: 2, now: () => 1_000 + index }, endpoint);
    }
    expect(storedDocument().entries.map((entry: any) => entry.endpoint)).toEqual(['http:b/mcp', 'http:c/mcp']);
  });

  it('keeps the newest maxEntries entries when loading', async () => {
    for (const [index, endpoint] of ['http:a/mcp', 'http:b/mcp', 'http:c/mcp'].entries()) {
      await saved(HANDSHAKE, { now: () => 1_000 + index }, endpoint);
    }
    const cache = processCache({ maxEntries: 2, now: () => 2_000 });
    await cache.recall(ENDPOINT);
    expect([cache.size, cache.get('http:a/mcp')]).toEqual([2, undefined]);
  });
});

describe('the authorization context (principal)', () => {
  it("is not shared: another principal's verdict for the same endpoint is not loaded", async () => {
    await saved(MODERN, { principal: 'login:alice' });
    expect(await processCache({ principal: 'login:bob' }).recall(ENDPOINT)).toBeUndefined();
  });

  it("keeps each principal's entry for one endpoint side by side", async () => {
    await saved(MODERN, { principal: 'login:alice' });
    await saved(HANDSHAKE, { principal: 'login:bob' });
    expect(await processCache({ principal: 'login:alice' }).recall(ENDPOINT)).toEqual(MODERN);
  });

  describe("switchboard call's principal", () => {
    const http = (headers: Record<string, string> = {}, clientName?: string): CallCommand => ({
      kind: 'call',
      target: { kind: 'http', url: new URL('http://127.0.0.1:3000/mcp') },
      method: 'ping',
      headers,
      timeoutMs: 1000,
      eraCache: true,
      verbose: false,
      trace: false,
      all: false,
      ...(clientName !== undefined && { clientName }),
    });

    it('is none for a stdio server', () => {
      expect(principalOf({ ...http(), target: { kind: 'stdio', command: 'node', args: ['s.js'] } })).toBe('none');
    });

    it('names the stored login it uses', () => {
      expect([principalOf(http()), principalOf(http({}, 'work'))]).toEqual(['login:mcp-switchboard', 'login:work']);
    });

    it('differs for two Authorization headers', () => {
      expect(principalOf(http({ Authorization: 'Bearer a' }))).not.toBe(
        principalOf(http({ Authorization: 'Bearer b' })),
      );
    });

    it('is the same for one Authorization header, whatever the case of its name', () => {
      expect(principalOf(http({ Authorization: 'Bearer a' }))).toBe(principalOf(http({ authorization: 'Bearer a' })));
    });

    it('never contains a header value', () => {
      expect(principalOf(http({ Authorization: 'Bearer s3cret', 'X-Api-Key': 'k3y' }))).not.toMatch(/s3cret|k3y/);
    });

    it('keeps the stored login when the headers carry no Authorization', () => {
      expect(principalOf(http({ 'X-Api-Key': 'k' }, 'work'))).toMatch(/^login:work headers:[0-9a-f]{16}$/);
    });
  });
});

describe('a file that cannot be trusted', () => {
  it('is ignored when it is not JSON', async () => {
    writeFileSync(fileOf(), '{"format": "mcp-switch');
    expect(await processCache().recall(ENDPOINT)).toBeUndefined();
  });

  it('is replaced by a valid one at the next write when it is not JSON', async () => {
    writeFileSync(fileOf(), 'garbage');
    await saved(HANDSHAKE);
    expect(storedDocument().entries).toHaveLength(1);
  });

  it('is ignored when it is of another format', async () => {
    await saved(HANDSHAKE);
    writeFileSync(fileOf(), JSON.stringify({ ...storedDocument(), format: 'something-else' }));
    expect(await processCache().recall(ENDPOINT)).toBeUndefined();
  });

  /** The saved document with its one entry changed by `edit`. */
  async function handEdited(edit: (entry: any) => void): Promise<void> {
    await saved(MODERN);
    const document = storedDocument();
    edit(document.entries[0]);
    writeFileSync(fileOf(), JSON.stringify(document));
  }

  it.each<[string, (entry: any) => void]>([
    ['capabilities that are not an object', (entry) => (entry.discover.capabilities = 'all')],
    ['no capabilities', (entry) => delete entry.discover.capabilities],
    ['supportedVersions that are not strings', (entry) => (entry.discover.supportedVersions = [20260728])],
    ['a version the server did not list', (entry) => (entry.discover.supportedVersions = ['2027-01-01'])],
    ['a version this client does not speak', (entry) => (entry.version = '2099-01-01')],
    ['an unknown era', (entry) => (entry.era = 'future')],
    ['a savedAt that is not a number', (entry) => (entry.savedAt = 'yesterday')],
    ['an endpoint that is not a string', (entry) => (entry.endpoint = 42)],
    ['no principal', (entry) => delete entry.principal],
  ])('drops a modern entry with %s', async (_what, edit) => {
    await handEdited(edit);
    expect(await processCache().recall(ENDPOINT)).toBeUndefined();
  });

  it('keeps the valid entries next to a broken one', async () => {
    await saved(HANDSHAKE, {}, 'http:good/mcp');
    const document = storedDocument();
    writeFileSync(fileOf(), JSON.stringify({ ...document, entries: [null, 'x', ...document.entries] }));
    expect(await processCache().recall('http:good/mcp')).toEqual(HANDSHAKE);
  });

  it('reads a server identity that is not an object as an empty one', async () => {
    await handEdited((entry) => (entry.discover._meta['io.modelcontextprotocol/serverInfo'] = 'evil'));
    const verdict = await processCache().recall(ENDPOINT);
    expect(verdict?.era === 'modern' && verdict.discover.serverInfo).toEqual({});
  });

  it('is ignored when larger than a cache file can be', async () => {
    await saved(HANDSHAKE);
    const document = storedDocument();
    writeFileSync(fileOf(), JSON.stringify({ ...document, padding: 'x'.repeat(2 * 1024 * 1024) }));
    expect(await processCache().recall(ENDPOINT)).toBeUndefined();
  });
});

describe('a store that fails', () => {
  it('is reported to onStoreError, and the cache keeps working in memory', async () => {
    writeFileSync(join(configDir, 'not-a-directory'), '');
    const errors: Error[] = [];
    const cache = new EraCache({
      store: new FileEraStore({ configDir: join(configDir, 'not-a-directory') }),
      onStoreError: (error) => errors.push(error),
    });
    cache.set(ENDPOINT, HANDSHAKE);
    await cache.flush();
    expect([errors.length > 0, cache.get(ENDPOINT)]).toEqual([true, HANDSHAKE]);
  });
});

describe('temporary files a killed process left', () => {
  /** The pid of a process that has exited (pids are not reused at once). */
  function deadPid(): number {
    const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    });
    return Number(child.stdout);
  }

  /** A temporary file of the writer `pid`, as writeFileAtomic names it, last modified `ageMs` ago. */
  function tempFile(pid: number, ageMs: number): string {
    const path = `${fileOf()}.${pid}.0123456789ab.tmp`;
    writeFileSync(path, '{"half": ');
    const then = new Date(Date.now() - ageMs);
    utimesSync(path, then, then);
    return path;
  }

  it('are removed at the next save once their writer is gone', async () => {
    const orphan = tempFile(deadPid(), 5 * 60_000);
    await saved(HANDSHAKE);
    expect(existsSync(orphan)).toBe(false);
  });

  it('are kept while their writer runs (the save may be under way)', async () => {
    const live = tempFile(process.pid, 5 * 60_000);
    await saved(HANDSHAKE);
    expect(existsSync(live)).toBe(true);
  });

  it('are kept for their first minute even when no process here has their pid (a writer on another host)', async () => {
    const fresh = tempFile(deadPid(), 1_000);
    await saved(HANDSHAKE);
    expect(existsSync(fresh)).toBe(true);
  });

  it('leave files that are not temporary files of the cache alone', async () => {
    const other = join(configDir, `notes.json.${deadPid()}.0123456789ab.tmp`);
    writeFileSync(other, 'x');
    utimesSync(other, new Date(0), new Date(0));
    await saved(HANDSHAKE);
    expect(existsSync(other)).toBe(true);
  });
});
