import { invalidParams } from '../jsonrpc/errors';
import { shape, type ShapedType } from '../protocol/shape';
import { decodeCursor, encodeCursor } from './cursor';
import { grantsAll } from '../auth/server/scopes';

/** What a listing knows of a source item besides its wire form: the scopes a caller needs to use it. */
interface Scoped {
  readonly scopes?: readonly string[];
}

export interface Page<T> {
  readonly items: readonly T[];
  readonly nextCursor?: string;
}

/**
 * A list a server offers (`tools/list`, `resources/list`, ...): paged with opaque cursors and shaped per
 * protocol revision. The wire forms and each revision's shaped list are built on first use and then
 * shared by every connection.
 */
export class Listing<T extends object> {
  private wire: readonly T[] | undefined;
  private byVersion: Map<string, readonly T[]> | undefined;
  private anyScoped: boolean | undefined;

  constructor(
    /** Tags the cursors, so a cursor of one list is refused by another. */
    private readonly tag: string,
    private readonly type: ShapedType,
    private readonly source: readonly Scoped[],
    /** The wire form of one source item (a module-level function: no closure per listing). */
    private readonly toWire: (item: any) => T,
  ) {}

  get all(): readonly T[] {
    return (this.wire ??= this.source.map(this.toWire));
  }

  /**
   * Throws -32602 for a cursor this listing did not issue. With `granted` (the caller's scopes), only the
   * items it grants the `scopes` of are listed, filtered before paging: one caller's cursors stay consistent.
   */
  page(cursor: unknown, version: string, pageSize: number, granted?: readonly string[]): Page<T> {
    const all = granted === undefined ? this.shaped(version) : this.permitted(version, granted);
    let offset = 0;
    if (cursor !== undefined) {
      offset = decodeCursor(this.tag, cursor, all.length) ?? -1;
      if (offset < 0) throw invalidParams('unknown or expired cursor');
    }
    if (offset === 0 && all.length <= pageSize) return { items: all };
    const end = offset + pageSize;
    const items = all.slice(offset, end);
    return end < all.length ? { items, nextCursor: encodeCursor(this.tag, end) } : { items };
  }

  private permitted(version: string, granted: readonly string[]): readonly T[] {
    const all = this.shaped(version);
    this.anyScoped ??= this.source.some((item) => item.scopes !== undefined && item.scopes.length > 0);
    return this.anyScoped ? all.filter((_, index) => grantsAll(granted, this.source[index]!.scopes)) : all;
  }

  private shaped(version: string): readonly T[] {
    const byVersion = (this.byVersion ??= new Map());
    let shaped = byVersion.get(version);
    if (!shaped) byVersion.set(version, (shaped = this.all.map((item) => shape(this.type, item, version))));
    return shaped;
  }
}

/** A list result (`tools/list`, `prompts/list`, ...) from a page: `{ [key]: items, nextCursor? }`. */
export function listResult<K extends string, T>(
  key: K,
  page: Page<T>,
): Record<K, readonly T[]> & { nextCursor?: string } {
  const result = { [key]: page.items } as Record<K, readonly T[]> & { nextCursor?: string };
  if (page.nextCursor !== undefined) result.nextCursor = page.nextCursor;
  return result;
}
