/**
 * How a hub names the tools and prompts of its upstreams: a per-upstream policy (prefix, separator, a
 * maximum length with a stable hash suffix, a collision policy) and the assignment of final names over
 * the whole catalog. Pure functions: the same upstream catalogs always give the same names.
 *
 * Every name we produce follows the 2025-11-25 tool-name rules (1 to 128 characters of A-Z a-z 0-9 _ - .):
 * other characters become `_`, and a name over the limit keeps its start and ends with `_` plus a hash of
 * the whole untruncated name, so two long names that share a start stay apart and a name never changes
 * between runs.
 */
import { excerpt } from '../jsonrpc/excerpt';
import { TOOL_NAME_PATTERN } from '../server/tools';

export type CollisionPolicy = 'error' | 'first-wins' | 'rename';

export interface NamingOptions {
  /** Put before every name of this upstream (default none: names are kept as the upstream gives them). */
  readonly prefix?: string;
  /** Between the prefix and the name (default `__`). */
  readonly separator?: string;
  /** Longest name produced, 16 to 128 (default 64, the limit of several model APIs). */
  readonly maxLength?: number;
  /**
   * When a name is already taken by an upstream listed earlier: `error` leaves this one out and reports
   * an error (the default: nothing changes meaning silently), `first-wins` serves the earlier one while it
   * is up and this one otherwise, `rename` serves this one under `<upstream><separator><name>`.
   */
  readonly collision?: CollisionPolicy;
}

export interface NamingPolicy {
  readonly prefix: string | undefined;
  readonly separator: string;
  readonly maxLength: number;
  readonly collision: CollisionPolicy;
}

export const DEFAULT_NAMING: NamingPolicy = Object.freeze({
  prefix: undefined,
  separator: '__',
  maxLength: 64,
  collision: 'error',
});

const MIN_LENGTH = 16;
const MAX_LENGTH = 128;
const HASH_LENGTH = 7;
const COLLISION_POLICIES: readonly CollisionPolicy[] = ['error', 'first-wins', 'rename'];
const INVALID_CHARACTERS = /[^A-Za-z0-9_.-]/g;
const encoder = new TextEncoder();

/** `options` over `defaults`, checked: a bad option is a TypeError naming it. */
export function namingPolicy(options: NamingOptions = {}, defaults: NamingPolicy = DEFAULT_NAMING): NamingPolicy {
  const policy: NamingPolicy = {
    prefix: options.prefix ?? defaults.prefix,
    separator: options.separator ?? defaults.separator,
    maxLength: options.maxLength ?? defaults.maxLength,
    collision: options.collision ?? defaults.collision,
  };
  const { prefix, separator, maxLength, collision } = policy;
  if (prefix !== undefined && (typeof prefix !== 'string' || !TOOL_NAME_PATTERN.test(prefix))) {
    throw new TypeError(`Naming: prefix ${JSON.stringify(prefix)} must be 1 to 128 characters of A-Z a-z 0-9 _ - .`);
  }
  if (typeof separator !== 'string' || (separator !== '' && !TOOL_NAME_PATTERN.test(separator))) {
    throw new TypeError(`Naming: separator ${JSON.stringify(separator)} may only use the characters A-Z a-z 0-9 _ - .`);
  }
  if (!Number.isInteger(maxLength) || maxLength < MIN_LENGTH || maxLength > MAX_LENGTH) {
    throw new TypeError(`Naming: maxLength must be an integer from ${MIN_LENGTH} to ${MAX_LENGTH}, got ${maxLength}`);
  }
  if (!COLLISION_POLICIES.includes(collision)) {
    throw new TypeError(`Naming: collision must be one of ${COLLISION_POLICIES.join(', ')}, got ${String(collision)}`);
  }
  return Object.freeze(policy);
}

/** FNV-1a (32 bits) of the UTF-8 bytes, in base 36, always `HASH_LENGTH` characters: stable across runs and platforms. */
export function stableHash(text: string): string {
  let hash = 0x811c9dc5;
  for (const byte of encoder.encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(36).padStart(HASH_LENGTH, '0');
}

/** `raw` as a valid name of at most `maxLength` characters (see the module comment). */
export function fitName(raw: string, maxLength: number): string {
  const valid = raw.replace(INVALID_CHARACTERS, '_');
  if (valid.length <= maxLength) return valid;
  return `${valid.slice(0, maxLength - HASH_LENGTH - 1)}_${stableHash(raw)}`;
}

/** The name an upstream's `name` gets under `policy` when nothing collides. */
export function formatName(policy: NamingPolicy, name: string): string {
  return fitName(policy.prefix === undefined ? name : `${policy.prefix}${policy.separator}${name}`, policy.maxLength);
}

/** What `rename` gives a colliding name: the upstream's name in front (after the prefix, if there is one). */
export function renamedName(policy: NamingPolicy, upstream: string, name: string): string {
  return formatName(policy, `${upstream}${policy.separator}${name}`);
}

/** One upstream item that wants a name. Candidates are given in priority order (the upstreams' order). */
export interface NameCandidate<T> {
  readonly upstream: string;
  readonly policy: NamingPolicy;
  /** The name the upstream gave. */
  readonly original: string;
  readonly item: T;
  /** Whether its upstream serves entries now; the names of the others stay reserved. */
  readonly serving: boolean;
}

export interface AssignedName<T> {
  readonly name: string;
  readonly candidate: NameCandidate<T>;
}

export interface NamingProblem {
  readonly severity: 'error' | 'warning' | 'info';
  readonly upstream: string;
  readonly original: string;
  readonly name: string;
  readonly message: string;
}

export interface NameAssignment<T> {
  /** What to serve, each under its final name, in priority order. */
  readonly served: readonly AssignedName<T>[];
  readonly problems: readonly NamingProblem[];
}

/**
 * Final names for every candidate. Names are computed over every upstream whose catalog is known, served or
 * not, so a name does not move to another upstream's tool because the first one went down (except under
 * `first-wins`, which asks for exactly that). The first candidate of a name owns it; the others follow
 * their own upstream's collision policy.
 */
export function assignNames<T>(kind: string, candidates: readonly NameCandidate<T>[]): NameAssignment<T> {
  const groups = new Map<string, NameCandidate<T>[]>();
  for (const candidate of candidates) {
    const name = formatName(candidate.policy, candidate.original);
    const group = groups.get(name);
    if (group) group.push(candidate);
    else groups.set(name, [candidate]);
  }
  const taken = new Set(groups.keys());
  const named: { name: string; candidate: NameCandidate<T> }[] = [];
  const problems: NamingProblem[] = [];
  const report = (severity: NamingProblem['severity'], candidate: NameCandidate<T>, name: string, message: string) =>
    problems.push({ severity, upstream: candidate.upstream, original: candidate.original, name, message });

  for (const [name, [owner, ...others]] of groups) {
    let holder: NameCandidate<T> | undefined = owner!.serving ? owner : undefined;
    for (const candidate of others) {
      const { policy, upstream, original } = candidate;
      const clash = `${kind} ${excerpt(original)} of ${upstream} would be named ${name}, which ${owner!.upstream} already uses`;
      if (policy.collision === 'error') {
        report('error', candidate, name, `${clash}: it is left out (choose a prefix or another collision policy)`);
      } else if (policy.collision === 'first-wins') {
        if (!holder && candidate.serving) holder = candidate;
        else report('warning', candidate, name, `${clash}: the first one wins while it is up`);
      } else {
        const renamed = firstFree(
          taken,
          () => renamedName(policy, upstream, original),
          () => fitName(`${name}_${stableHash(`${upstream}/${original}`)}`, policy.maxLength),
        );
        if (renamed === undefined) {
          report('error', candidate, name, `${clash}, and every other name for it is taken too: it is left out`);
          continue;
        }
        taken.add(renamed);
        report('info', candidate, renamed, `${clash}: it is served as ${renamed}`);
        if (candidate.serving) named.push({ name: renamed, candidate });
      }
    }
    if (holder) named.push({ name, candidate: holder });
  }
  const order = new Map(candidates.map((candidate, index) => [candidate, index]));
  named.sort((a, b) => order.get(a.candidate)! - order.get(b.candidate)!);
  return { served: named, problems };
}

/** The first of the (lazily computed) options not in `taken`. */
function firstFree(taken: ReadonlySet<string>, ...options: (() => string)[]): string | undefined {
  for (const option of options) {
    const name = option();
    if (!taken.has(name)) return name;
  }
  return undefined;
}
