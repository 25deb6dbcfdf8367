import { ProtocolViolationError } from '../jsonrpc/errors';
import type { JsonObject } from '../jsonrpc/types';
import { cacheHintsOf, type ResultCacheHints } from './list-cache';

/** Pages of a list followed at most this far by default: a server that keeps answering with cursors is broken. */
export const DEFAULT_MAX_LIST_PAGES = 10_000;

/**
 * Follows `nextCursor` through every page of a list and returns all its items. A cursor the server
 * already returned, or more than `maxPages` pages, rejects with `ProtocolViolationError`: a server
 * cannot keep a client paging forever. With `hints`, the cache hints of each page are added to it (a
 * stateless-revision listing: see `hintedListing`).
 */
export async function collectPages<T, K extends string>(
  method: string,
  key: K,
  fetchPage: (cursor: string | undefined) => Promise<Partial<Record<K, readonly T[]>> & { nextCursor?: string }>,
  maxPages = DEFAULT_MAX_LIST_PAGES,
  hints?: ResultCacheHints[],
): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const result = await fetchPage(cursor);
    const pageItems = result[key];
    if (!Array.isArray(pageItems)) throw new ProtocolViolationError(`${method} returned no "${key}" array`);
    hints?.push(cacheHintsOf(result as unknown as JsonObject));
    // One at a time: spreading a page of a few hundred thousand items into push() overflows the stack.
    for (const item of pageItems) items.push(item);
    cursor = result.nextCursor;
    if (cursor === undefined) return items;
    if (seen.has(cursor)) throw new ProtocolViolationError(`${method} returned a cursor it had returned before`);
    seen.add(cursor);
  }
  throw new ProtocolViolationError(`${method} returned more than ${maxPages} pages`);
}
