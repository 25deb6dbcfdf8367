/** Latency percentiles: every sample kept per key (8 bytes each), sorted once at the end. */

export interface LatencyRow {
  /** The method, or the upstream's name. */
  readonly key: string;
  readonly count: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

export class LatencyTable {
  private readonly samples = new Map<string, number[]>();

  add(key: string, ms: number): void {
    const list = this.samples.get(key);
    if (list) list.push(ms);
    else this.samples.set(key, [ms]);
  }

  /** One row per key, slowest p99 first. */
  rows(): LatencyRow[] {
    const rows: LatencyRow[] = [];
    for (const [key, list] of this.samples) {
      const sorted = Float64Array.from(list).sort();
      rows.push({
        key,
        count: sorted.length,
        p50: nearestRank(sorted, 50),
        p90: nearestRank(sorted, 90),
        p99: nearestRank(sorted, 99),
        max: sorted[sorted.length - 1]!,
      });
    }
    return rows.sort((a, b) => b.p99 - a.p99 || a.key.localeCompare(b.key));
  }
}

/** The nearest-rank percentile: the smallest sample with at least `p`% of them at or below it. */
export function nearestRank(sorted: ArrayLike<number>, p: number): number {
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1]!;
}
