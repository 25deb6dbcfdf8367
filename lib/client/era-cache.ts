/**
 * The era verdicts a client has learnt, by the transport's `eraKey` (an HTTP endpoint, a stdio command
 * line): a second client to the same server skips the probe. Bounded (least recently used first out); a
 * modern connection whose request later gets a handshake-era answer forgets its entry, so the next
 * connection probes again.
 *
 * In memory only, unless given an `EraStore` (the spec's "clients MAY persist the verdict"): then verdicts
 * outlive the process (`switchboard call` keeps them in a file, lib/client/node/file-era-store.ts). With a
 * store, entries expire (`maxAgeMs`, 24 h), the first `recall` loads the stored ones of the cache's
 * `principal`, and every `set` and `delete` is written through: the store's current content is read again,
 * changed for that one entry, pruned (expired entries out, then the oldest beyond `maxEntries`) and saved.
 * Two processes writing at once: the last writer wins, which at worst costs a probe. A store that fails is
 * reported to `onStoreError` and otherwise ignored: the cache then works in memory.
 */
import {
  eraStoreDocument,
  persistedEras,
  type EraStoreDocument,
  type EraVerdict,
  type PersistedEra,
} from './era-verdict';

export type { EraVerdict } from './era-verdict';

/** Where an `EraCache` keeps verdicts beyond the process: one document, read whole and replaced whole. */
export interface EraStore {
  /** What was saved last, as it is (the cache checks every entry); undefined when nothing was. */
  load(): Promise<unknown>;
  save(document: EraStoreDocument): Promise<void>;
}

export interface EraCacheOptions {
  /** Entries kept (default 256), in memory and in the store. */
  readonly maxEntries?: number;
  /** Keeps verdicts beyond the process (default: none, memory only). */
  readonly store?: EraStore;
  /** How long a verdict is trusted, in ms (default: 24 h with a store, for ever without one). */
  readonly maxAgeMs?: number;
  /**
   * The authorization context the verdicts are reached in: a server may answer principals differently, so
   * stored entries are keyed by endpoint and principal, and a cache loads only its own principal's. Give
   * each context its own cache (`switchboard call`: `none`, `login:<client name>`, or a digest of the
   * `--header`s). Default: `''`.
   */
  readonly principal?: string;
  /** Wall-clock time in ms since the epoch (default `Date.now`): when a verdict is saved, and its age. */
  readonly now?: () => number;
  /** Told when the store could not be read or written. */
  readonly onStoreError?: (error: Error) => void;
}

export const DEFAULT_ERA_CACHE_SIZE = 256;
/** How long a persisted verdict is trusted by default: a day. */
export const DEFAULT_ERA_MAX_AGE_MS = 24 * 60 * 60 * 1000;

interface Entry {
  readonly verdict: EraVerdict;
  readonly savedAt: number;
}

export class EraCache {
  readonly maxEntries: number;
  readonly maxAgeMs: number;
  readonly principal: string;
  private readonly entries = new Map<string, Entry>();
  private readonly store: EraStore | undefined;
  private readonly now: () => number;
  private readonly onStoreError: (error: Error) => void;
  /** The one load of the store, on the first `recall`. */
  private loading: Promise<void> | undefined;
  /** The last write queued: writes go one after the other. */
  private writing: Promise<void> = Promise.resolve();

  /** `new EraCache(16)` is `new EraCache({ maxEntries: 16 })`. */
  constructor(options: number | EraCacheOptions = {}) {
    const settings = typeof options === 'number' ? { maxEntries: options } : options;
    this.maxEntries = settings.maxEntries ?? DEFAULT_ERA_CACHE_SIZE;
    this.store = settings.store;
    this.maxAgeMs = settings.maxAgeMs ?? (this.store ? DEFAULT_ERA_MAX_AGE_MS : Number.POSITIVE_INFINITY);
    this.principal = settings.principal ?? '';
    this.now = settings.now ?? Date.now;
    this.onStoreError = settings.onStoreError ?? ignore;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The verdict kept in memory for `key`; `recall` also looks in the store. */
  get(key: string): EraVerdict | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    if (this.isExpired(entry.savedAt)) return undefined;
    // Most recently used goes last: the first entry is the one to evict.
    this.entries.set(key, entry);
    return entry.verdict;
  }

  /** The verdict for `key`, once the store's entries (if any) have been loaded. */
  async recall(key: string): Promise<EraVerdict | undefined> {
    if (this.store) await (this.loading ??= this.load(this.store));
    return this.get(key);
  }

  set(key: string, verdict: EraVerdict): void {
    const entry = { verdict, savedAt: this.now() };
    this.remember(key, entry);
    this.write(key, entry);
  }

  /** Forgets `key`, in the store too. */
  delete(key: string): void {
    this.entries.delete(key);
    this.write(key, undefined);
  }

  /** Forgets every verdict held in memory (the store keeps its own). */
  clear(): void {
    this.entries.clear();
  }

  /** Resolves once every write queued so far is done (a process about to exit awaits it). */
  flush(): Promise<void> {
    return this.writing;
  }

  private remember(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Older than `maxAgeMs`, or saved in the future (a clock set back, a hand-edited file): not trusted. */
  private isExpired(savedAt: number): boolean {
    if (this.maxAgeMs === Number.POSITIVE_INFINITY) return false;
    const age = this.now() - savedAt;
    return age < 0 || age >= this.maxAgeMs;
  }

  /** The stored entries of our principal, older than anything this process learnt itself. */
  private async load(store: EraStore): Promise<void> {
    let stored: PersistedEra[];
    try {
      stored = persistedEras(await store.load());
    } catch (error) {
      this.onStoreError(asError(error));
      return;
    }
    const learnt = [...this.entries];
    this.entries.clear();
    for (const { endpoint, principal, savedAt, verdict } of oldestFirst(stored)) {
      if (principal === this.principal && !this.isExpired(savedAt)) this.remember(endpoint, { verdict, savedAt });
    }
    for (const [key, entry] of learnt) this.remember(key, entry);
  }

  private write(key: string, entry: Entry | undefined): void {
    const store = this.store;
    if (!store) return;
    this.writing = this.writing
      .then(() => this.writeThrough(store, key, entry))
      .catch((error: unknown) => this.onStoreError(asError(error)));
  }

  /** Reads the store again (another process may have written since), changes `key`'s entry and saves. */
  private async writeThrough(store: EraStore, key: string, entry: Entry | undefined): Promise<void> {
    const others = persistedEras(await store.load()).filter(
      (stored) => !(stored.endpoint === key && stored.principal === this.principal) && !this.isExpired(stored.savedAt),
    );
    const mine = entry && { endpoint: key, principal: this.principal, ...entry };
    const kept = oldestFirst(mine ? [...others, mine] : others);
    await store.save(eraStoreDocument(kept.slice(Math.max(0, kept.length - this.maxEntries))));
  }
}

function oldestFirst(entries: readonly PersistedEra[]): PersistedEra[] {
  return [...entries].sort((a, b) => a.savedAt - b.savedAt);
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function ignore(): void {}

let processCache: EraCache | undefined;

/** The cache clients share unless given their own (`ClientOptions.eraCache`). */
export function defaultEraCache(): EraCache {
  return (processCache ??= new EraCache());
}
