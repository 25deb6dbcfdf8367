/**
 * Allow and deny lists for what a hub takes from an upstream. Patterns match the names (or resource URIs)
 * the upstream gives, before any renaming, so a prefix or a rename can never let a denied tool through;
 * `*` matches any run of characters.
 */

export interface NameFilter {
  /** Only these (default: everything). */
  readonly allow?: readonly string[];
  /** Never these, even when allowed. */
  readonly deny?: readonly string[];
}

/** A compiled filter: whether an upstream name passes. */
export type NamePredicate = (name: string) => boolean;

const passAll: NamePredicate = () => true;

function globToRegExp(pattern: string): RegExp {
  const body = pattern
    .split('*')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${body}$`, 's');
}

function anyOf(patterns: readonly string[], where: string): (name: string) => boolean {
  if (!Array.isArray(patterns) || patterns.some((pattern) => typeof pattern !== 'string')) {
    throw new TypeError(`${where} must be a list of strings`);
  }
  const exact = new Set(patterns.filter((pattern) => !pattern.includes('*')));
  const globs = patterns.filter((pattern) => pattern.includes('*')).map(globToRegExp);
  return (name) => exact.has(name) || globs.some((glob) => glob.test(name));
}

/** Compiles a filter; throws a TypeError naming `where` for a malformed one. */
export function compileFilter(filter: NameFilter | undefined, where: string): NamePredicate {
  if (filter === undefined) return passAll;
  if (typeof filter !== 'object' || filter === null) throw new TypeError(`${where} must be an object`);
  const allowed = filter.allow === undefined ? undefined : anyOf(filter.allow, `${where}.allow`);
  const denied = filter.deny === undefined ? undefined : anyOf(filter.deny, `${where}.deny`);
  return (name) => (allowed === undefined || allowed(name)) && (denied === undefined || !denied(name));
}
