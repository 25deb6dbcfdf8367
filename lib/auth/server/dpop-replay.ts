/**
 * The `jti` of every DPoP proof accepted within the proof window, so that a proof is accepted once
 * (RFC 9449 §11.1). Bounded in time (an entry goes once its `iat` left the window: the window refuses such a
 * proof anyway) and in entries. When full, the oldest entry goes and its `iat` becomes a floor: from then on
 * a proof issued at or before the floor is refused as too old. Whatever was evicted therefore stays refused
 * (a replayed proof keeps its signed `iat`), at the cost, under a flood of proofs, of a window that shrinks
 * for everyone until the floor falls out of it; a client makes a fresh proof for each request and is not hurt
 * unless more than `maxEntries` proofs arrive within one second.
 */

export const DEFAULT_DPOP_REPLAY_ENTRIES = 10_000;

export type ReplayVerdict = 'new' | 'replayed' | 'below-floor';

export class ProofReplayCache {
  /** `jti` -> `iat` (seconds), in the order accepted. */
  private readonly seen = new Map<string, number>();
  private floor = -Infinity;

  constructor(
    private readonly maxEntries: number,
    /** How long a proof stays acceptable after its `iat`, in seconds. */
    private readonly windowS: number,
  ) {}

  get size(): number {
    return this.seen.size;
  }

  /** Remembers the proof unless it was seen or is below the floor; `nowS` in seconds. */
  remember(jti: string, iat: number, nowS: number): ReplayVerdict {
    if (iat <= this.floor) return 'below-floor';
    if (this.seen.has(jti)) return 'replayed';
    this.forgetExpired(nowS);
    if (this.seen.size >= this.maxEntries) {
      const [oldest, oldestIat] = this.seen.entries().next().value!;
      this.seen.delete(oldest);
      this.floor = Math.max(this.floor, oldestIat);
      if (iat <= this.floor) return 'below-floor';
    }
    this.seen.set(jti, iat);
    return 'new';
  }

  /** Drops the entries at the front whose proofs the window refuses now (bounded by the map's size). */
  private forgetExpired(nowS: number): void {
    const limit = nowS - this.windowS;
    for (const [jti, iat] of this.seen) {
      if (iat >= limit) return;
      this.seen.delete(jti);
    }
  }
}
