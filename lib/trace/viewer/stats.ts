/** Latency percentiles of the answered requests, per method and per upstream. */
import { LatencyTable, type LatencyRow } from '../analysis/latency';
import type { Row, TraceModel } from './model';

/** A line of a latency table: the method or the upstream's lane label, and its percentiles. */
export type LatencyLine = LatencyRow;

export interface LatencyTables {
  readonly byMethod: readonly LatencyLine[];
  readonly byUpstream: readonly LatencyLine[];
}

/**
 * Percentiles (nearest rank, as `switchboard trace check` computes them) of the requests' durations, each
 * request counted once, on the side that sent it (an outgoing request): the same call seen by both ends of an
 * in-process pair is not counted twice. Ordered by key, as a person scans a table.
 */
export function latencyTables(model: TraceModel): LatencyTables {
  const byMethod = new LatencyTable();
  const byUpstream = new LatencyTable();
  for (const row of model.rows) {
    if (!isTimedOutgoingRequest(row)) continue;
    byMethod.add(row.event.method ?? '(no method)', row.durationMs!);
    const lane = model.lanes[row.lane]!;
    if (lane.upstream !== undefined) byUpstream.add(lane.upstream, row.durationMs!);
  }
  return { byMethod: byKey(byMethod.rows()), byUpstream: byKey(byUpstream.rows()) };
}

function isTimedOutgoingRequest(row: Row): boolean {
  return row.event.kind === 'request' && row.event.direction === 'out' && row.durationMs !== undefined;
}

function byKey(rows: LatencyRow[]): LatencyRow[] {
  return rows.sort((a, b) => a.key.localeCompare(b.key));
}
