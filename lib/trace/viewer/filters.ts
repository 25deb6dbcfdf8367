/** What the filters and the search keep of a trace's rows. */
import type { Row, RowStatus, TraceModel } from './model';

export interface RowFilter {
  /** A lane's index, or all. */
  readonly lane?: number;
  readonly method?: string;
  readonly tool?: string;
  readonly status?: RowStatus;
  /** Rows of requests (and their answers) that took at least this long; rows without a duration go. */
  readonly minDurationMs?: number;
  /** A request id, trace id or span id: the rows that carry it (as their id, or their cause's id). */
  readonly search?: string;
}

/** The indexes of the rows `filter` keeps, in order (of the rows from `from` on: the live view's new ones). */
export function filterRows(model: TraceModel, filter: RowFilter, from = 0): number[] {
  const search = filter.search?.trim().replace(/^#/, '');
  const kept: number[] = [];
  for (let index = from; index < model.rows.length; index++) {
    const row = model.rows[index]!;
    if (filter.lane !== undefined && row.lane !== filter.lane) continue;
    if (filter.method !== undefined && row.event.method !== filter.method) continue;
    if (filter.tool !== undefined && row.tool !== filter.tool) continue;
    if (filter.status !== undefined && row.status !== filter.status) continue;
    if (filter.minDurationMs !== undefined && !((row.durationMs ?? -1) >= filter.minDurationMs)) continue;
    if (search && !carries(row, search)) continue;
    kept.push(row.index);
  }
  return kept;
}

function carries(row: Row, search: string): boolean {
  const { event } = row;
  return (
    (event.id !== undefined && String(event.id) === search) ||
    event.traceId === search ||
    event.spanId === search ||
    (event.cause !== undefined && String(event.cause.id) === search)
  );
}

/** Adds the methods and tools of the rows from `from` on to the filters' menus (the sets); true when either grew. */
export function addChoices(model: TraceModel, from: number, methods: Set<string>, tools: Set<string>): boolean {
  const sizes = methods.size + tools.size;
  for (let index = from; index < model.rows.length; index++) {
    const row = model.rows[index]!;
    if (row.event.method !== undefined) methods.add(row.event.method);
    if (row.tool !== undefined) tools.add(row.tool);
  }
  return methods.size + tools.size !== sizes;
}
