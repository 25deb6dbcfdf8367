import { ProtocolViolationError } from '../jsonrpc/errors';

/** Pages of a list followed at most this far: a server that keeps answering with cursors is broken. */
export const MAX_PAGES = 10_000;

/** Follows `nextCursor` through every page of a list and returns all its items. */
export async function collectPages<T, K extends string>(
  method: string,
  key: K,
  fetchPage: (cursor: string | undefined) => Promise<Partial<Record<K, readonly T[]>> & { nextCursor?: string }>,
): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await fetchPage(cursor);
    const pageItems = result[key];
    if (!Array.isArray(pageItems)) throw new ProtocolViolationError(`${method} returned no "${key}" array`);
    items.push(...pageItems);
    cursor = result.nextCursor;
    if (cursor === undefined) return items;
    if (seen.has(cursor)) throw new ProtocolViolationError(`${method} returned a cursor it had returned before`);
    seen.add(cursor);
  }
  throw new ProtocolViolationError(`${method} returned more than ${MAX_PAGES} pages`);
}
