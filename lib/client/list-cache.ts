import { catchError, concat, defer, EMPTY, from, Subject, throwError, type Observable } from 'rxjs';
import { systemClock, type Clock } from '../core/clock';
import type { JsonObject } from '../jsonrpc/types';
import type { CacheScope } from '../protocol/types';
import type { ClosedConnectionReason } from '../jsonrpc/errors';
import { isRetriedResult } from './input-required';
import { streamEndError } from './stream-end';

/** The cache hints of a 2026-07-28 result (`CacheableResult`): how long it may be reused, and by whom. */
export interface ResultCacheHints {
  readonly ttlMs?: number;
  readonly cacheScope?: CacheScope;
}

/** A listing with the hints its pages carried: what a modern list fetch gives a `ListCache`. */
export interface HintedList<T> extends ResultCacheHints {
  readonly items: readonly T[];
}

/**
 * The hints of one result. A result completed by a retry that carried `inputResponses` or `requestState`
 * answered that call alone: it is never reused (ttl 0), whatever it says.
 */
export function cacheHintsOf(result: JsonObject): ResultCacheHints {
  if (isRetriedResult(result)) return { ttlMs: 0 };
  const { ttlMs, cacheScope } = result;
  return {
    ...(typeof ttlMs === 'number' && ttlMs >= 0 && { ttlMs }),
    ...((cacheScope === 'public' || cacheScope === 'private') && { cacheScope }),
  };
}

/** The hints of a listing made of several pages: the shortest ttl, and private if any page is. */
export function mergeCacheHints(pages: readonly ResultCacheHints[]): ResultCacheHints {
  let ttlMs: number | undefined;
  let cacheScope: CacheScope | undefined;
  for (const page of pages) {
    if (page.ttlMs !== undefined) ttlMs = ttlMs === undefined ? page.ttlMs : Math.min(ttlMs, page.ttlMs);
    if (page.cacheScope !== undefined && cacheScope !== 'private') cacheScope = page.cacheScope;
  }
  return { ...(ttlMs !== undefined && { ttlMs }), ...(cacheScope !== undefined && { cacheScope }) };
}

/**
 * A listing with the merged hints of its pages: `list` adds the hints of each page it fetches to the array
 * it is given (as `collectPages` does).
 */
export async function hintedListing<T>(
  list: (hints: ResultCacheHints[]) => Promise<readonly T[]>,
): Promise<HintedList<T>> {
  const hints: ResultCacheHints[] = [];
  const items = await list(hints);
  return { items, ...mergeCacheHints(hints) };
}

/**
 * A server list (tools, resources, prompts) kept by the client: `get()` lists once and answers from the
 * cache until the server says the list changed; `changes$` emits the current list on subscription and a
 * fresh one after every change.
 *
 * A 2026-07-28 listing comes with cache hints (`fetch` gives a `HintedList`): a list older than its `ttlMs`
 * (timed on `clock` from when it arrived) is listed again by the next `get()`, and `ttlMs: 0` keeps it for
 * the callers of the listing in flight only. A list without a ttl (any handshake-era listing) is kept until
 * the list changes. `cacheScope` is kept for whoever shares lists (`scope`): one client is one
 * authorization context, so it reuses both. The list changed, by a `list_changed` notification on the
 * session or on a `subscriptions/listen` stream alike: `invalidate()`.
 *
 * Re-listing is bounded whatever the server sends: `list_changed` notifications in one tick cause one
 * re-list, and those that arrive while a re-list is in flight cause one more after it (its list may be
 * outdated, so it is not emitted), never one re-list per notification.
 */
export class ListCache<T> {
  private cached: Promise<readonly T[]> | undefined;
  /** When the cached list stops being reusable (on `clock`); Infinity until it arrives, or without a ttl. */
  private expiresAt = Infinity;
  private cachedScope: CacheScope | undefined;
  private refreshes: Subject<readonly T[]> | undefined;
  private refreshScheduled = false;
  private refreshing = false;
  /** The list changed again while a re-list was in flight. */
  private stale = false;
  /** The client's connection has ended (`close`). */
  private ended = false;

  constructor(
    private readonly fetch: () => Promise<readonly T[] | HintedList<T>>,
    private readonly onRefreshError: (error: unknown) => void,
    private readonly clock: Clock = systemClock,
  ) {}

  get(): Promise<readonly T[]> {
    const cached = this.cached;
    if (cached && (this.expiresAt === Infinity || this.clock.now() < this.expiresAt)) return cached;
    this.expiresAt = Infinity;
    const pending: Promise<readonly T[]> = this.fetch().then((listing) => this.arrived(pending, listing));
    this.cached = pending;
    // A failed listing is not cached: the next get() tries again.
    pending.catch(() => {
      if (this.cached === pending) this.cached = undefined;
    });
    return pending;
  }

  /** The `cacheScope` of the cached list, when the server gave one. */
  get scope(): CacheScope | undefined {
    return this.cachedScope;
  }

  /**
   * The current list, then every refreshed one. It completes when the client is closed with `close()`, and
   * errors with a `ConnectionClosedError` (its `quitReason` says why) when the connection ends otherwise.
   */
  get changes$(): Observable<readonly T[]> {
    const refreshes = (this.refreshes ??= new Subject());
    // After the end nothing can be listed: the list listed before, if any, then the end. A listing the end
    // cut short gives way to the end itself (a completion after `close()`, the connection's error otherwise).
    const current = defer(() => from(this.ended ? (this.cached ?? []) : this.get())).pipe(
      catchError((error: unknown) => (this.ended ? EMPTY : throwError(() => error))),
    );
    return concat(current, refreshes);
  }

  /** The server said the list changed. */
  invalidate(): void {
    this.cached = undefined;
    if (!this.refreshes?.observed) return;
    if (this.refreshing) {
      this.stale = true;
      return;
    }
    if (this.refreshScheduled) return;
    this.refreshScheduled = true;
    queueMicrotask(() => this.refresh());
  }

  /**
   * The client's connection ended (for `reason`, when given): subscribers of `changes$` (a stream named
   * `what` in the error) complete after `close()` or without a reason, and get the error of
   * `streamEndError` otherwise.
   */
  close(reason?: ClosedConnectionReason, what = 'The list stream'): void {
    const error = reason && streamEndError(what, reason);
    const refreshes = (this.refreshes ??= new Subject());
    this.ended = true;
    if (error) refreshes.error(error);
    else refreshes.complete();
  }

  /** A listing arrived: its items, with its hints recorded while it is still the cached one. */
  private arrived(pending: Promise<readonly T[]>, listing: readonly T[] | HintedList<T>): readonly T[] {
    if (isArray(listing)) return listing;
    if (this.cached === pending) {
      this.cachedScope = listing.cacheScope;
      if (listing.ttlMs !== undefined) this.expiresAt = this.clock.now() + listing.ttlMs;
    }
    return listing.items;
  }

  private refresh(): void {
    this.refreshScheduled = false;
    this.refreshing = true;
    this.stale = false;
    this.get().then(
      (list) => {
        this.refreshing = false;
        if (this.stale) this.invalidate();
        else this.refreshes?.next(list);
      },
      (error) => {
        this.refreshing = false;
        if (this.stale) this.invalidate();
        else this.onRefreshError(error);
      },
    );
  }
}

function isArray<T>(listing: readonly T[] | HintedList<T>): listing is readonly T[] {
  return Array.isArray(listing);
}
