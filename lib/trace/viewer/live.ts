/**
 * The live view: the page served by `switchboard serve … --trace-ui` reads the runtime's trace as
 * Server-Sent Events (batches of events, the server's recent past first) and appends each batch to the view.
 * Above `maxRate` events a second it samples, whole requests at a time, and says so; it says when the server
 * dropped events it could not send in time, when the page is full, and when the server went away.
 */
import type { TraceEvent } from '../types';
import type { ViewerApp } from './app';
import { requestKey } from './model';

/** Events a second shown before the page samples (the page's `?max-rate=` changes it). */
export const DEFAULT_MAX_RATE = 10_000;
/** The most events a live page holds; later ones are counted, not shown (reloading starts again). */
export const MAX_LIVE_EVENTS = 200_000;
const WINDOW_MS = 1000;

/** One Server-Sent Events message of the trace UI's server (`event: batch`). */
export interface LiveBatch {
  /** The server's recent past, sent once to a page that connects: never sampled. */
  readonly replay?: boolean;
  /** Events the server dropped for this page so far (it did not read them in time). */
  readonly dropped?: number;
  readonly events: readonly TraceEvent[];
}

/**
 * Keeps 1 in `keepOneIn` requests (a power of two, so a sample at 1 in 8 holds every request of 1 in 16)
 * with all their events, once the events of the current second exceed `maxRate`; lifecycle changes always.
 */
export class LiveSampler {
  received = 0;
  shown = 0;
  keepOneIn = 1;
  private windowStart = Number.NEGATIVE_INFINITY;
  private windowCount = 0;
  private unkeyed = 0;

  constructor(
    readonly maxRate: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The events of `events` to show. */
  take(events: readonly TraceEvent[]): TraceEvent[] {
    const now = this.now();
    if (now - this.windowStart >= WINDOW_MS) {
      this.keepOneIn = powerOfTwoAtLeast(this.windowCount / this.maxRate);
      this.windowStart = now;
      this.windowCount = 0;
    }
    this.windowCount += events.length;
    this.keepOneIn = Math.max(this.keepOneIn, powerOfTwoAtLeast(this.windowCount / this.maxRate));
    this.received += events.length;
    const kept = this.keepOneIn === 1 ? [...events] : events.filter((event) => this.keeps(event));
    this.shown += kept.length;
    return kept;
  }

  /** All of `events`, counted as received and shown (the replayed past). */
  pass(events: readonly TraceEvent[]): TraceEvent[] {
    this.received += events.length;
    this.shown += events.length;
    return [...events];
  }

  private keeps(event: TraceEvent): boolean {
    if (event.kind === 'lifecycle') return true;
    const key = event.traceId ?? (event.id === undefined ? undefined : requestKey(event.connection, event.id));
    if (key === undefined) return this.unkeyed++ % this.keepOneIn === 0;
    return hash(key) % this.keepOneIn === 0;
  }
}

/** Reads the trace at `eventsPath` (with the page's `?token=`) into `app`, saying how it goes in the page. */
export function startLive(app: ViewerApp, eventsPath: string, page: Location): EventSource {
  const params = new URLSearchParams(page.search);
  const url = new URL(eventsPath, page.href);
  const token = params.get('token');
  if (token !== null) url.searchParams.set('token', token);
  const rate = Number(params.get('max-rate'));
  const sampler = new LiveSampler(Number.isFinite(rate) && rate > 0 ? rate : DEFAULT_MAX_RATE);
  const name = `live: ${page.host}`;
  const state = { dropped: 0, held: 0, overflow: 0, ended: undefined as string | undefined };
  const source = new EventSource(url);
  const say = () => app.showLiveStatus(liveStatusText(state, sampler, page.host));
  source.addEventListener('batch', (message) => {
    const batch = JSON.parse((message as MessageEvent<string>).data) as LiveBatch;
    state.dropped = batch.dropped ?? state.dropped;
    let kept = batch.replay ? sampler.pass(batch.events) : sampler.take(batch.events);
    const room = MAX_LIVE_EVENTS - state.held;
    if (kept.length > room) {
      state.overflow += kept.length - room;
      kept = kept.slice(0, room);
    }
    state.held += kept.length;
    app.append(kept, name);
    say();
  });
  source.addEventListener('end', () => {
    state.ended = 'The server stopped';
    source.close();
    say();
  });
  source.addEventListener('error', () => {
    state.ended ??= 'Lost the connection to the server';
    source.close();
    say();
  });
  say();
  return source;
}

/** The live status line: where from and whether still connected, then sampling, drops and overflow. */
export function liveStatusText(
  state: { readonly dropped: number; readonly overflow: number; readonly ended?: string },
  sampler: LiveSampler,
  host: string,
): string {
  const parts = [
    state.ended === undefined
      ? `Live from ${host}: ${sampler.received} events received.`
      : `${state.ended}: this page shows what it received and gets no more events.`,
  ];
  if (sampler.shown < sampler.received) {
    parts.push(
      `Sampling: ${sampler.shown} of ${sampler.received} events shown (above ${sampler.maxRate} events/s, ` +
        `1 in ${sampler.keepOneIn} requests kept).`,
    );
  }
  if (state.dropped > 0) parts.push(`The server dropped ${state.dropped} events this page did not read in time.`);
  if (state.overflow > 0) {
    parts.push(
      `The page holds ${MAX_LIVE_EVENTS} events: ${state.overflow} later ones not shown (reload for the latest).`,
    );
  }
  return parts.join(' ');
}

function powerOfTwoAtLeast(ratio: number): number {
  let power = 1;
  while (power < ratio && power < 2 ** 30) power *= 2;
  return power;
}

/** FNV-1a: a request's key to a number, the same in every page. */
function hash(text: string): number {
  let value = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    value ^= text.charCodeAt(index);
    value = Math.imul(value, 0x01000193);
  }
  return value >>> 0;
}
