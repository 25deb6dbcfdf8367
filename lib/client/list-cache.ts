import { concat, defer, from, Subject, type Observable } from 'rxjs';

/**
 * A server list (tools, resources, prompts) kept by the client: `get()` lists once and answers from the
 * cache until the server says the list changed; `changes$` emits the current list on subscription and a
 * fresh one after every change.
 *
 * Re-listing is bounded whatever the server sends: `list_changed` notifications in one tick cause one
 * re-list, and those that arrive while a re-list is in flight cause one more after it (its list may be
 * outdated, so it is not emitted), never one re-list per notification.
 */
export class ListCache<T> {
  private cached: Promise<readonly T[]> | undefined;
  private refreshes: Subject<readonly T[]> | undefined;
  private refreshScheduled = false;
  private refreshing = false;
  /** The list changed again while a re-list was in flight. */
  private stale = false;

  constructor(
    private readonly fetch: () => Promise<readonly T[]>,
    private readonly onRefreshError: (error: unknown) => void,
  ) {}

  get(): Promise<readonly T[]> {
    if (!this.cached) {
      const pending = this.fetch();
      this.cached = pending;
      // A failed listing is not cached: the next get() tries again.
      pending.catch(() => {
        if (this.cached === pending) this.cached = undefined;
      });
    }
    return this.cached;
  }

  /** The current list, then every refreshed one. */
  get changes$(): Observable<readonly T[]> {
    const refreshes = (this.refreshes ??= new Subject());
    return defer(() => concat(from(this.get()), refreshes));
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

  /** The client closed: subscribers of `changes$` complete. */
  close(): void {
    this.refreshes?.complete();
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
