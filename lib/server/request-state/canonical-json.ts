import { DEFAULT_MAX_DEPTH } from '../../jsonrpc/codec';

/**
 * Deterministic JSON: object members sorted by key (UTF-16 code units, as RFC 8785 sorts them), no
 * whitespace, numbers and strings as `JSON.stringify` writes them. For values that came from `JSON.parse`
 * the output is the RFC 8785 (JCS) form, so two requests carrying the same arguments in any member order
 * encode alike.
 *
 * Walked with an explicit stack, never recursion, because the value may come from a hostile peer: a value
 * nesting objects and arrays deeper than `maxDepth` (the top level counts as 1, as in lib/jsonrpc's
 * `exceedsDepth`) gives `undefined`, and so does a value JSON cannot carry (a bigint, or `undefined` at the
 * top). Members JSON omits (`undefined`, functions, symbols) are omitted; in arrays they become `null`, and
 * so do non-finite numbers. `toJSON` methods are not called. Never throws.
 */
export function canonicalJson(value: unknown, maxDepth = DEFAULT_MAX_DEPTH): string | undefined {
  const output: string[] = [];
  // A string on the stack is punctuation to copy out; a `Pending` is a value still to encode.
  const stack: (string | Pending)[] = [new Pending(value, 0)];
  while (stack.length > 0) {
    const step = stack.pop()!;
    if (typeof step === 'string') {
      output.push(step);
      continue;
    }
    const { value: current, depth } = step;
    if (current === null) {
      output.push('null');
      continue;
    }
    switch (typeof current) {
      case 'string':
        output.push(JSON.stringify(current));
        break;
      case 'number':
        output.push(Number.isFinite(current) ? String(current) : 'null');
        break;
      case 'boolean':
        output.push(current ? 'true' : 'false');
        break;
      case 'object':
        if (depth >= maxDepth) return undefined;
        if (Array.isArray(current)) pushArray(stack, current, depth + 1);
        else pushObject(stack, current as Record<string, unknown>, depth + 1);
        break;
      default:
        // Only reachable for a top-level undefined, bigint, function or symbol, or a bigint member.
        return undefined;
    }
  }
  return output.join('');
}

/** A value waiting on the stack, with the depth of the container holding it (0 for the top level). */
class Pending {
  constructor(
    readonly value: unknown,
    readonly depth: number,
  ) {}
}

/** Pushes an array's parts so that they pop in order: `[`, items separated by commas, `]`. */
function pushArray(stack: (string | Pending)[], items: readonly unknown[], depth: number): void {
  stack.push(']');
  for (let index = items.length - 1; index >= 0; index--) {
    const item = items[index];
    stack.push(omittedByJson(item) ? 'null' : new Pending(item, depth));
    if (index > 0) stack.push(',');
  }
  stack.push('[');
}

/** Pushes an object's members, sorted by key, so that they pop in order. */
function pushObject(stack: (string | Pending)[], members: Record<string, unknown>, depth: number): void {
  const keys = Object.keys(members)
    .filter((key) => !omittedByJson(members[key]))
    .sort();
  stack.push('}');
  for (let index = keys.length - 1; index >= 0; index--) {
    const key = keys[index]!;
    stack.push(new Pending(members[key], depth));
    stack.push(`${index > 0 ? ',' : ''}${JSON.stringify(key)}:`);
  }
  stack.push('{');
}

/** Values `JSON.stringify` leaves out of objects (and writes as `null` in arrays). */
function omittedByJson(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}
