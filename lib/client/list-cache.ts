import { concat, defer, from, Subject, type Observable } from 'rxjs';

/**
 * A server list (tools, resources, prompts) kept by the client: `get()` lists once and answers from the
 * cache until the server says the list changed; `changes$` emits the current list on subscription and a
 * fresh one after every change (several `list_changed` in one tick cause one re-list).
 */
export class ListCache<T> {
  private cached: Promise<readonly T[]> | undefined;
  private refreshes: Subject<readonly T[]> | undefined;
  private refreshScheduled = false;

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
    if (this.refreshScheduled || !this.refreshes?.observed) return;
    this.refreshScheduled = true;
    queueMicrotask(() => {
      this.refreshScheduled = false;
      this.get().then(
        (list) => this.refreshes?.next(list),
        (error) => this.onRefreshError(error),
      );
    });
  }

  /** The client closed: subscribers of `changes$` complete. */
  close(): void {
    this.refreshes?.complete();
  }
}
