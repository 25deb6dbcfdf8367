/**
 * A client's list caches (`Client.toolList`, `resourceList`, `promptList`): each made on first use, refreshed
 * after its `list_changed` and after a reconnection, closed with the client (lib/client/list-cache.ts).
 */
import type { QuitReason } from '../../machines/connection';
import type { Clock } from '../core/clock';
import type { Logger } from '../core/logger';
import type { ChangeableList } from '../protocol/list-changes';
import { ListCache, type HintedList, type ResultCacheHints } from './list-cache';

export interface ClientListsHost {
  readonly clock: Clock;
  readonly logger: Logger;
  /** A cache lives as long as the client: it needs list changes until then. */
  needListChanges(): void;
  /** The era's fetch of a listing (`ClientEra.listing`). */
  listing<T>(
    list: (hints: ResultCacheHints[] | undefined) => Promise<readonly T[]>,
  ): Promise<readonly T[] | HintedList<T>>;
  /** Why the client closed, once it has (a cache made after that is closed at once). */
  closedFor(): { readonly reason: QuitReason | undefined } | undefined;
}

export class ClientLists {
  private readonly caches: Partial<Record<ChangeableList, ListCache<unknown>>> = {};

  constructor(private readonly host: ClientListsHost) {}

  /** The cache of list `name`, made on first use with `list` as its fetch. */
  cache<T>(name: ChangeableList, list: (hints: ResultCacheHints[] | undefined) => Promise<readonly T[]>): ListCache<T> {
    const cached = this.caches[name] as ListCache<T> | undefined;
    if (cached) return cached;
    const host = this.host;
    host.needListChanges();
    const cache = new ListCache(
      () => host.listing(list),
      (error) => host.logger.warn(`Could not refresh the ${name} list after list_changed`, error),
      host.clock,
    );
    this.caches[name] = cache as ListCache<unknown>;
    const closed = host.closedFor();
    if (closed) cache.close(closed.reason, listStreamName(name));
    return cache;
  }

  /** List `name` changed: its cache lists again when next read. */
  invalidate(name: ChangeableList): void {
    this.caches[name]?.invalidate();
  }

  /** Every list may have changed (the client reconnected). */
  invalidateAll(): void {
    for (const cache of Object.values(this.caches)) cache.invalidate();
  }

  /** The client closed for `reason`: every cache's stream ends. */
  close(reason: QuitReason | undefined): void {
    for (const [name, cache] of Object.entries(this.caches)) cache.close(reason, listStreamName(name));
  }
}

/** What a list cache's `changes$` is called in the error that ends it. */
function listStreamName(list: string): string {
  return `The ${list} list stream`;
}
