/**
 * Opaque pagination cursors. A cursor names the offset of the next page, base64url-encoded with a tag so
 * that a cursor for one list is not mistaken for another's. Clients must not parse them.
 */
export function encodeCursor(list: string, offset: number): string {
  return btoa(`${list}:${offset}`).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The offset a cursor names, or undefined when it is not a valid cursor for `list` of this length. */
export function decodeCursor(list: string, cursor: unknown, length: number): number | undefined {
  if (typeof cursor !== 'string' || cursor.length === 0 || cursor.length > 64) return undefined;
  let text: string;
  try {
    text = atob(cursor.replace(/-/g, '+').replace(/_/g, '/'));
  } catch {
    return undefined;
  }
  const match = /^([a-z]+):(\d{1,9})$/.exec(text);
  if (!match || match[1] !== list) return undefined;
  const offset = Number(match[2]);
  return offset > 0 && offset <= length ? offset : undefined;
}
