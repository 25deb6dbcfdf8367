/**
 * The era verdicts a client has learnt, by the transport's `eraKey` (an HTTP endpoint, a stdio command
 * line): a second client to the same server skips the probe. Bounded (least recently used first out), in
 * memory only; a modern connection whose request later gets a legacy-looking answer forgets its entry, so
 * the next connection probes again.
 */
import type { DiscoverInfo } from './era-probe';

export type EraVerdict =
  | { readonly era: 'legacy' }
  /** With what discovery said, so a new connection adopts it without a round trip. */
  | { readonly era: 'modern'; readonly version: string; readonly discover: DiscoverInfo };

export const DEFAULT_ERA_CACHE_SIZE = 256;

export class EraCache {
  private readonly verdicts = new Map<string, EraVerdict>();

  constructor(readonly maxEntries = DEFAULT_ERA_CACHE_SIZE) {}

  get size(): number {
    return this.verdicts.size;
  }

  get(key: string): EraVerdict | undefined {
    const verdict = this.verdicts.get(key);
    if (verdict !== undefined) {
      // Most recently used goes last: the first entry is the one to evict.
      this.verdicts.delete(key);
      this.verdicts.set(key, verdict);
    }
    return verdict;
  }

  set(key: string, verdict: EraVerdict): void {
    this.verdicts.delete(key);
    this.verdicts.set(key, verdict);
    while (this.verdicts.size > this.maxEntries) this.verdicts.delete(this.verdicts.keys().next().value!);
  }

  delete(key: string): void {
    this.verdicts.delete(key);
  }

  clear(): void {
    this.verdicts.clear();
  }
}

let processCache: EraCache | undefined;

/** The cache clients share unless given their own (`ClientOptions.eraCache`). */
export function defaultEraCache(): EraCache {
  return (processCache ??= new EraCache());
}
