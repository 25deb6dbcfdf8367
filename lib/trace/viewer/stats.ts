/** Latency percentiles of the answered requests, per method and per upstream. */
import type { Row, TraceModel } from './model';

export interface LatencyLine {
  /** The method, or the upstream's lane label. */
  readonly key: string;
  readonly count: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

export interface LatencyTables {
  readonly byMethod: readonly LatencyLine[];
  readonly byUpstream: readonly LatencyLine[];
}

/**
 * Percentiles (nearest rank) of the requests' durations, each request counted once, on the side that sent it
 * (an outgoing request): the same call seen by both ends of an in-process pair is not counted twice.
 */
export function latencyTables(model: TraceModel): LatencyTables {
  const byMethod = new Map<string, number[]>();
  const byUpstream = new Map<string, number[]>();
  for (const row of model.rows) {
    if (!isTimedOutgoingRequest(row)) continue;
    push(byMethod, row.event.method ?? '(no method)', row.durationMs!);
    const lane = model.lanes[row.lane]!;
    if (lane.upstream !== undefined) push(byUpstream, lane.upstream, row.durationMs!);
  }
  return { byMethod: linesOf(byMethod), byUpstream: linesOf(byUpstream) };
}

function isTimedOutgoingRequest(row: Row): boolean {
  return row.event.kind === 'request' && row.event.direction === 'out' && row.durationMs !== undefined;
}

function push(groups: Map<string, number[]>, key: string, value: number): void {
  const values = groups.get(key);
  if (values) values.push(value);
  else groups.set(key, [value]);
}

function linesOf(groups: Map<string, number[]>): LatencyLine[] {
  return [...groups]
    .map(([key, values]) => {
      values.sort((a, b) => a - b);
      return {
        key,
        count: values.length,
        p50: percentile(values, 50),
        p90: percentile(values, 90),
        p99: percentile(values, 99),
        max: values[values.length - 1]!,
      };
    })
    .sort((a, b) => a.key.localeCompare(b.key));
}

/** The nearest-rank percentile of sorted `values` (not empty). */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
