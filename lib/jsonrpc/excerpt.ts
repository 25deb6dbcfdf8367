/**
 * Bounded, non-recursive rendering of values a peer sent, for error messages, logs and traces. Whatever the
 * value's depth, size or shape (cycles included), `excerpt` uses a constant amount of stack and returns at
 * most `maxChars` characters: `JSON.stringify` would overflow the stack on a deep value and quote a large
 * one whole.
 */

/** How much of a peer's value an error message or log line quotes (characters). */
export const DEFAULT_EXCERPT_CHARS = 200;

const ELLIPSIS = '…';

interface Container {
  readonly value: Record<string, unknown> | readonly unknown[];
  /** Object keys; undefined for an array. */
  readonly keys: readonly string[] | undefined;
  readonly length: number;
  index: number;
  /** Members written so far (an object skips members JSON leaves out). */
  written: number;
}

/**
 * JSON-like text of `value`, cut to `maxChars` (ending in `…` when cut). Objects and arrays are walked with
 * an explicit stack and the walk stops as soon as the budget is spent, so a huge value costs no more than
 * its first `maxChars` characters (plus `Object.keys` of the objects it enters).
 */
export function excerpt(value: unknown, maxChars = DEFAULT_EXCERPT_CHARS): string {
  const budget = Math.max(1, maxChars);
  const stack: Container[] = [];
  let out = '';
  let next: unknown = value;
  let hasNext = true;
  while (out.length <= budget) {
    if (hasNext) {
      hasNext = false;
      next = withToJSON(next);
      if (next !== null && typeof next === 'object') {
        if (Array.isArray(next)) {
          out += '[';
          stack.push({ value: next, keys: undefined, length: next.length, index: 0, written: 0 });
        } else {
          const keys = Object.keys(next);
          out += '{';
          stack.push({ value: next as Record<string, unknown>, keys, length: keys.length, index: 0, written: 0 });
        }
      } else {
        out += scalar(next, budget - out.length + 1, stack.length > 0);
      }
      continue;
    }
    const top = stack[stack.length - 1];
    if (!top) break;
    if (top.index >= top.length) {
      out += top.keys ? '}' : ']';
      stack.pop();
      continue;
    }
    const index = top.index++;
    if (top.keys) {
      const key = top.keys[index]!;
      const member = (top.value as Record<string, unknown>)[key];
      if (isOmitted(member)) continue; // as JSON.stringify does
      out += `${top.written++ > 0 ? ',' : ''}${scalar(key, budget - out.length + 1, true)}:`;
      next = member;
    } else {
      if (top.written++ > 0) out += ',';
      next = (top.value as readonly unknown[])[index];
    }
    hasNext = true;
  }
  return out.length > budget ? out.slice(0, budget - 1) + ELLIPSIS : out;
}

/** `text` cut to `maxChars`, for quoting a peer's string (a method name, a tool name) in a message. */
export function clipText(text: string, maxChars = DEFAULT_EXCERPT_CHARS): string {
  return text.length > maxChars ? `${text.slice(0, Math.max(0, maxChars - 1))}${ELLIPSIS}` : text;
}

function isOmitted(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

/** What JSON would show of `value`: its `toJSON()` result when it has one (a Date, an `McpError`). */
function withToJSON(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON !== 'function') return value;
  try {
    return toJSON.call(value);
  } catch {
    return '[unserializable]';
  }
}

/** A non-container value as JSON would show it; a string is cut before quoting, so a huge one costs little. */
function scalar(value: unknown, room: number, nested: boolean): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value.length > room ? value.slice(0, room) : value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return String(value);
    case 'bigint':
      return `${value}n`;
    case 'undefined':
      return nested ? 'null' : 'undefined';
    case 'symbol':
    case 'function':
      return nested ? 'null' : String(typeof value);
    default:
      return 'null';
  }
}
