/**
 * The timeline (waterfall) of one request, worked out when a person selects it: its bar from the request to
 * its answer (or to its cancellation, its connection's close, the end of the trace), its progress ticks, its
 * cancellation or timeout, its error, and the bars of the requests made for it (`cause`), theirs too, on the
 * same time scale. One pass over the rows: O(events) per selection, nothing at load.
 */
import { isTimeoutReason } from '../cancel-reason';
import type { TraceCause } from '../types';
import { record, requestKey, type Row, type TraceModel } from './model';

/** How a bar ends: its answer, its sender giving up (cancelled, timed out), or nothing seen (drawn open). */
export type BarEnd = 'answer' | 'cancelled' | 'timed-out' | 'closed' | 'trace-end';

/** Something that happened to a request during its bar, at `time`. */
export interface BarMark {
  readonly kind: 'progress' | 'cancelled' | 'timed-out';
  readonly time: number;
  /** `progress 1 of 3: started`, `cancelled: the user gave up`. */
  readonly text: string;
  /** The row of the notification that says so. */
  readonly row: number;
}

/** One request of the timeline: the selected one (depth 0) or one made for it. */
export interface WaterfallBar {
  /** The request's row. */
  readonly row: number;
  readonly depth: number;
  /** How it came from its parent bar (absent for the selected request). */
  readonly causeKind?: TraceCause['kind'];
  readonly start: number;
  end: number;
  ended: BarEnd;
  /** The answer's row, when it came. */
  answerRow?: number;
  readonly marks: BarMark[];
}

export interface Waterfall {
  /** The selected request first, then the requests made for it in the order they were made. */
  readonly bars: readonly WaterfallBar[];
  /** The time scale: from the selected request (or anything drawn earlier) to the last thing drawn. */
  readonly start: number;
  readonly end: number;
  /** The row of the request the selected one was made for, when the trace holds it. */
  readonly parentRow?: number;
}

/** A cancellation's reason that says its sender's timeout gave up (as `trace check` reads it). */

/**
 * The request a selected row stands for: a request (with an id), or the request an answer answers.
 * Other rows (notifications, lifecycle changes) have no timeline.
 */
export function requestRowOf(model: TraceModel, row: Row): Row | undefined {
  const { kind, id } = row.event;
  if (kind === 'request' && id !== undefined) return row;
  if ((kind === 'result' || kind === 'error') && row.pairRow !== undefined) return model.rows[row.pairRow];
  return undefined;
}

/** The timeline of the request `selected` stands for, or undefined when it stands for none. */
export function waterfallOf(model: TraceModel, selected: Row): Waterfall | undefined {
  const root = requestRowOf(model, selected);
  if (!root) return undefined;
  const timeline = new TimelineBuilder(model, root.index);
  timeline.add(root, 0, undefined);
  // From the first row: a live trace may show a request made for the root before the root itself.
  for (const row of model.rows) if (row !== root) timeline.see(row);
  return timeline.finish(root);
}

/** Collects the bars of a request and its descendants while the rows after it go by. */
class TimelineBuilder {
  private readonly bars: WaterfallBar[] = [];
  private readonly barOfRow = new Map<number, WaterfallBar>();
  /** Cancellations find their bar by the request's connection, direction and id. */
  private readonly barOfRequest = new Map<string, WaterfallBar>();
  /** Progress finds its bar by its connection, the way it travels (against the request) and its token. */
  private readonly barOfToken = new Map<string, WaterfallBar>();
  /** Bars whose cancellation is marked (a repeated one is not). */
  private readonly givenUp = new Set<WaterfallBar>();
  /** The connections that have a bar, and the first close seen of each. */
  private readonly connections = new Set<string>();
  private readonly closedAt = new Map<string, number>();
  private last = 0;

  constructor(
    private readonly model: TraceModel,
    /** The selected request's row: a close before it is not its end. */
    private readonly root: number,
  ) {}

  add(row: Row, depth: number, causeKind: TraceCause['kind'] | undefined): void {
    const { event } = row;
    const bar: WaterfallBar = {
      row: row.index,
      depth,
      ...(causeKind && { causeKind }),
      start: event.time,
      end: event.time,
      ended: 'trace-end',
      marks: [],
    };
    this.bars.push(bar);
    this.barOfRow.set(row.index, bar);
    this.connections.add(event.connection);
    this.barOfRequest.set(directed(event.connection, event.direction, event.id), bar);
    const token = record(record(record(event.message)?.params)?._meta)?.progressToken;
    if (token !== undefined) this.barOfToken.set(directed(event.connection, opposite(event.direction), token), bar);
    if (row.pairRow !== undefined && row.pairRow > row.index) {
      bar.answerRow = row.pairRow;
      bar.ended = 'answer';
      bar.end = this.model.rows[row.pairRow]!.event.time;
    }
    this.last = Math.max(this.last, event.time);
  }

  see(row: Row): void {
    const { event } = row;
    if (event.time > this.last) this.last = event.time;
    if (event.kind === 'request') {
      const parent = row.causeRow === undefined ? undefined : this.barOfRow.get(row.causeRow);
      if (parent && event.id !== undefined) this.add(row, parent.depth + 1, event.cause!.kind);
    } else if (event.kind === 'notification') {
      if (event.method === 'notifications/progress') this.progress(row);
      else if (event.method === 'notifications/cancelled') this.cancelled(row);
    } else if (
      event.kind === 'lifecycle' &&
      event.to === 'closed' &&
      event.actor === undefined &&
      row.index > this.root
    ) {
      if (!this.closedAt.has(event.connection) && this.connections.has(event.connection)) {
        this.closedAt.set(event.connection, event.time);
      }
    }
  }

  finish(root: Row): Waterfall {
    // Another connection's clock may run behind: the scale holds every bar and mark, whatever the clocks say.
    let [start, end] = [root.event.time, root.event.time];
    for (const bar of this.bars) {
      if (bar.ended === 'trace-end') {
        const closed = this.closedAt.get(this.connectionOf(bar));
        if (closed !== undefined) [bar.ended, bar.end] = ['closed', closed];
        else bar.end = this.last;
      }
      [start, end] = [Math.min(start, bar.start, bar.end), Math.max(end, bar.start, bar.end)];
      for (const mark of bar.marks) [start, end] = [Math.min(start, mark.time), Math.max(end, mark.time)];
    }
    const parentRow = root.causeRow === root.index ? undefined : root.causeRow;
    return { bars: this.bars, start, end, parentRow };
  }

  private progress(row: Row): void {
    const params = record(record(row.event.message)?.params);
    if (params?.progressToken === undefined) return;
    const bar = this.barOfToken.get(directed(row.event.connection, row.event.direction, params.progressToken));
    if (!bar || row.index < bar.row || (bar.answerRow !== undefined && row.index > bar.answerRow)) return;
    bar.marks.push({ kind: 'progress', time: row.event.time, text: progressText(params), row: row.index });
  }

  private cancelled(row: Row): void {
    const params = record(record(row.event.message)?.params);
    if (params?.requestId === undefined) return;
    // A cancellation travels the way its request did.
    const bar = this.barOfRequest.get(directed(row.event.connection, row.event.direction, params.requestId));
    if (!bar || row.index < bar.row || this.givenUp.has(bar)) return;
    this.givenUp.add(bar);
    const reason = typeof params.reason === 'string' ? params.reason : 'no reason given';
    const kind = isTimeoutReason(reason) ? 'timed-out' : 'cancelled';
    bar.marks.push({
      kind,
      time: row.event.time,
      text: `${kind === 'timed-out' ? 'timed out' : kind}: ${reason}`,
      row: row.index,
    });
    if (bar.ended === 'trace-end') [bar.ended, bar.end] = [kind, row.event.time];
  }

  private connectionOf(bar: WaterfallBar): string {
    return this.model.rows[bar.row]!.event.connection;
  }
}

/** `progress 1 of 3: started`. */
function progressText(params: Record<string, unknown>): string {
  const total = params.total === undefined ? '' : ` of ${String(params.total)}`;
  const message = typeof params.message === 'string' ? `: ${params.message}` : '';
  return `progress ${String(params.progress)}${total}${message}`;
}

function directed(connection: string, direction: 'in' | 'out' | undefined, id: unknown): string {
  return `${direction ?? ''}\u0000${requestKey(connection, id)}`;
}

function opposite(direction: 'in' | 'out' | undefined): 'in' | 'out' | undefined {
  return direction === 'in' ? 'out' : direction === 'out' ? 'in' : undefined;
}
