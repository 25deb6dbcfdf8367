import { DEFAULT_MAX_DEPTH } from '../../jsonrpc/codec';

/**
 * Deterministic JSON: object members sorted by key (UTF-16 code units, as RFC 8785 sorts them), no
 * whitespace, numbers and strings as `JSON.stringify` writes them. For values that came from `JSON.parse`
 * the output is the RFC 8785 (JCS) form, so two requests carrying the same arguments in any member order
 * encode alike.
 *
 * The value may come from a hostile peer: a value nesting objects and arrays deeper than `maxDepth` (the top
 * level counts as 1, as in lib/jsonrpc's `exceedsDepth`) gives `undefined` before the walk goes deeper, so
 * the recursion is bounded by `maxDepth` (the codec's 128 by default); should a caller's `maxDepth` exceed
 * what the stack holds, the overflow counts as too deep too. A value JSON cannot carry (a bigint, or
 * `undefined` at the top) gives `undefined`. Members JSON omits (`undefined`, functions, symbols) are
 * omitted; in arrays they become `null`, and so do non-finite numbers. `toJSON` methods are not called.
 * Never throws.
 */
export function canonicalJson(value: unknown, maxDepth = DEFAULT_MAX_DEPTH): string | undefined {
  try {
    return encode(value, 0, maxDepth);
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}

/** `value`, held by a container at `depth` (0 for the top level), or undefined when it cannot be encoded. */
function encode(value: unknown, depth: number, maxDepth: number): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object':
      if (depth >= maxDepth) return undefined;
      return Array.isArray(value)
        ? encodeArray(value, depth + 1, maxDepth)
        : encodeObject(value as Record<string, unknown>, depth + 1, maxDepth);
    default:
      // A top-level undefined, bigint, function or symbol, or a bigint member.
      return undefined;
  }
}

function encodeArray(items: readonly unknown[], depth: number, maxDepth: number): string | undefined {
  let text = '[';
  for (let index = 0; index < items.length; index++) {
    const item = items[index];
    const encoded = omittedByJson(item) ? 'null' : encode(item, depth, maxDepth);
    if (encoded === undefined) return undefined;
    text += index === 0 ? encoded : `,${encoded}`;
  }
  return `${text}]`;
}

/** Members sorted by key; those JSON omits are left out. */
function encodeObject(members: Record<string, unknown>, depth: number, maxDepth: number): string | undefined {
  const keys = Object.keys(members).sort();
  let text = '{';
  for (const key of keys) {
    const member = members[key];
    if (omittedByJson(member)) continue;
    const encoded = encode(member, depth, maxDepth);
    if (encoded === undefined) return undefined;
    text += `${text.length === 1 ? '' : ','}${JSON.stringify(key)}:${encoded}`;
  }
  return `${text}}`;
}

/** Values `JSON.stringify` leaves out of objects (and writes as `null` in arrays). */
function omittedByJson(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}
