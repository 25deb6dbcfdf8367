/**
 * Compact structural checks for what a peer sends: built once from small combinators, then each check
 * walks a value without allocating anything unless it finds a problem. A check returns undefined for a
 * valid value, or the first problem with a JSON pointer to it (`/content/0/text must be a string`).
 *
 * Objects are open (unknown keys pass) and an optional key holding `undefined` counts as absent, as in
 * the MCP schemas. Recursion follows the shape of the rules, never the depth of the value.
 */

import { isPlainObject } from '../jsonrpc/classify';

export interface RuleProblem {
  /** A JSON pointer to the value at fault ('' for the value itself). */
  readonly path: string;
  readonly message: string;
}

export type Rule = (value: unknown) => RuleProblem | undefined;

/** A problem with the value itself. */
export function problem(message: string): RuleProblem {
  return { path: '', message };
}

/** How much of a key a path quotes: keys come from the peer and may be megabytes long. */
const MAX_KEY_CHARS = 80;

/** The same problem seen from one level up: `key` is prepended to its path. */
function under(key: string | number, inner: RuleProblem): RuleProblem {
  let segment = typeof key === 'number' ? String(key) : key;
  if (segment.length > MAX_KEY_CHARS) segment = `${segment.slice(0, MAX_KEY_CHARS)}…`;
  segment = segment.replace(/~/g, '~0').replace(/\//g, '~1');
  return { path: `/${segment}${inner.path}`, message: inner.message };
}

export const string: Rule = (value) => (typeof value === 'string' ? undefined : problem('must be a string'));

export const boolean: Rule = (value) => (typeof value === 'boolean' ? undefined : problem('must be a boolean'));

export const number: Rule = (value) =>
  typeof value === 'number' && Number.isFinite(value) ? undefined : problem('must be a number');

export const integer: Rule = (value) => (Number.isInteger(value) ? undefined : problem('must be an integer'));

/** Any JSON object, keys unchecked. */
export const anyObject: Rule = (value) => (isPlainObject(value) ? undefined : problem('must be an object'));

export function oneOf(values: readonly string[]): Rule {
  const allowed = new Set(values);
  const message = `must be one of ${values.map((value) => JSON.stringify(value)).join(', ')}`;
  return (value) => (typeof value === 'string' && allowed.has(value) ? undefined : problem(message));
}

export function constant(expected: string): Rule {
  const message = `must be ${JSON.stringify(expected)}`;
  return (value) => (value === expected ? undefined : problem(message));
}

export function arrayOf(item: Rule): Rule {
  return (value) => {
    if (!Array.isArray(value)) return problem('must be an array');
    for (let index = 0; index < value.length; index++) {
      const found = item(value[index]);
      if (found) return under(index, found);
    }
    return undefined;
  };
}

/** An object whose every value follows `values` (a map with free keys). */
export function recordOf(values: Rule): Rule {
  return (value) => {
    if (!isPlainObject(value)) return problem('must be an object');
    for (const key in value) {
      if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
      const found = values(value[key]);
      if (found) return under(key, found);
    }
    return undefined;
  };
}

export interface Fields {
  readonly required?: Readonly<Record<string, Rule>>;
  readonly optional?: Readonly<Record<string, Rule>>;
}

/** An open object: `required` keys must be there and valid, `optional` ones valid when present. */
export function object(fields: Fields): Rule {
  // Parallel arrays rather than entries: no destructuring on the per-message path.
  const requiredKeys = Object.keys(fields.required ?? {});
  const requiredRules = Object.values(fields.required ?? {});
  const optionalKeys = Object.keys(fields.optional ?? {});
  const optionalRules = Object.values(fields.optional ?? {});
  return (value) => {
    if (!isPlainObject(value)) return problem('must be an object');
    for (let index = 0; index < requiredKeys.length; index++) {
      const field = value[requiredKeys[index]!];
      if (field === undefined) return under(requiredKeys[index]!, problem('is required'));
      const found = requiredRules[index]!(field);
      if (found) return under(requiredKeys[index]!, found);
    }
    for (let index = 0; index < optionalKeys.length; index++) {
      const field = value[optionalKeys[index]!];
      if (field === undefined) continue;
      const found = optionalRules[index]!(field);
      if (found) return under(optionalKeys[index]!, found);
    }
    return undefined;
  };
}

/** Objects told apart by a string `type` member, each variant with its own rule. */
export function byType(variants: Readonly<Record<string, Rule>>): Rule {
  const table = Object.assign(Object.create(null) as Record<string, Rule>, variants);
  const message = `must be one of ${Object.keys(table)
    .map((type) => JSON.stringify(type))
    .join(', ')}`;
  return (value) => {
    if (!isPlainObject(value)) return problem('must be an object');
    const type = value.type;
    const rule = typeof type === 'string' ? table[type] : undefined;
    if (!rule) return under('type', problem(message));
    return rule(value);
  };
}

/** The first rule for arrays, the second for everything else (a value or a list of values). */
export function singleOrArray(single: Rule): Rule {
  const many = arrayOf(single);
  return (value) => (Array.isArray(value) ? many(value) : single(value));
}

/** Either rule; the problem reported is `message` at the value itself. */
export function either(first: Rule, second: Rule, message: string): Rule {
  return (value) => (first(value) === undefined || second(value) === undefined ? undefined : problem(message));
}

/**
 * `full`, with a shortcut: values `quick` vouches for pass without the full walk. `quick` must accept only
 * values `full` accepts (a subset: the common shapes of per-call results); everything else, and every
 * problem message, comes from `full`.
 */
export function withShortcut(quick: (value: unknown) => boolean, full: Rule): Rule {
  return (value) => (quick(value) ? undefined : full(value));
}

/** A number in [min, max]. */
export function numberBetween(min: number, max: number): Rule {
  const message = `must be a number from ${min} to ${max}`;
  return (value) => (typeof value === 'number' && value >= min && value <= max ? undefined : problem(message));
}
