/**
 * Reading one hub config file: typed reads of its values that collect every problem (with where it is and
 * the file) instead of stopping at the first, unknown keys named with the closest known one, and `${VAR}`
 * expansion from the environment.
 */
import { isPlainObject } from '../jsonrpc/classify';
import { ERA_CHOICES, eraChoiceOf, type EraChoice } from '../client/era-choice';
import { LOGGING_LEVELS, type LoggingLevel } from '../protocol/types';
import type { NameFilter } from './name-filter';
import { namingPolicy, type CollisionPolicy, type NamingOptions } from './naming';
import { closest } from './suggest';
import type { ForwardedFeatures, UpstreamInstance } from './upstream';

const FORWARD_KEYS = ['sampling', 'elicitation', 'roots'] as const;
const INSTANCES: readonly UpstreamInstance[] = ['shared', 'per-client'];
const COLLISIONS: readonly CollisionPolicy[] = ['error', 'first-wins', 'rename'];

export type Json = Record<string, unknown>;

/** Collects problems and warnings while reading one file. */
export class Reader {
  readonly problems: string[] = [];
  readonly warnings: string[] = [];

  constructor(
    private readonly env: Readonly<Record<string, string | undefined>>,
    private readonly file: string | undefined,
  ) {}

  fail(where: string, message: string): undefined {
    this.problems.push(`${where} ${message}`);
    return undefined;
  }

  string(value: unknown, where: string, options: { expand?: boolean } = {}): string | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'string') return this.fail(where, `must be a string, got ${describe(value)}`);
    return options.expand ? this.expand(value, where) : value;
  }

  requiredString(value: unknown, where: string, options: { expand?: boolean } = {}): string | undefined {
    if (value === undefined) return this.fail(where, 'is required');
    const text = this.string(value, where, options);
    if (text === '') return this.fail(where, 'must not be empty');
    return text;
  }

  boolean(value: unknown, where: string): boolean | undefined {
    if (value === undefined || typeof value === 'boolean') return value;
    return this.fail(where, `must be true or false, got ${describe(value)}`);
  }

  /** A whole number of milliseconds (or a count) from `min`. */
  integer(value: unknown, where: string, min = 0): number | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
      return this.fail(where, `must be a whole number of at least ${min}, got ${describe(value)}`);
    }
    return value;
  }

  strings(value: unknown, where: string, options: { expand?: boolean } = {}): string[] | undefined {
    if (value === undefined) return undefined;
    if (!Array.isArray(value) || value.some((item) => typeof item !== 'string')) {
      return this.fail(where, `must be a list of strings, got ${describe(value)}`);
    }
    return value.map((item, index) => (options.expand ? (this.expand(item, `${where}[${index}]`) ?? item) : item));
  }

  stringMap(value: unknown, where: string): Record<string, string> | undefined {
    if (value === undefined) return undefined;
    if (!isPlainObject<Json>(value)) return this.fail(where, `must be an object of strings, got ${describe(value)}`);
    const map: Record<string, string> = {};
    for (const [key, item] of Object.entries(value)) {
      // Numbers and booleans in env blocks are a common slip: they mean their text.
      if (typeof item === 'number' || typeof item === 'boolean') map[key] = String(item);
      else {
        const text = this.string(item, `${where}.${key}`, { expand: true });
        if (text !== undefined) map[key] = text;
      }
    }
    return map;
  }

  filter(value: unknown, where: string): NameFilter | undefined {
    if (value === undefined) return undefined;
    if (Array.isArray(value)) {
      const allow = this.strings(value, where);
      return allow && { allow };
    }
    if (!isPlainObject<Json>(value))
      return this.fail(where, `must be a list of names to allow or { "allow": [...], "deny": [...] }`);
    this.unknownKeys(value, new Set(['allow', 'deny']), where);
    const allow = this.strings(value.allow, `${where}.allow`);
    const deny = this.strings(value.deny, `${where}.deny`);
    return { ...(allow && { allow }), ...(deny && { deny }) };
  }

  collision(value: unknown, where: string): CollisionPolicy | undefined {
    return this.oneOf(value, where, COLLISIONS);
  }

  /** `value` when it is one of `choices` (undefined when absent); else a problem listing them. */
  oneOf<T extends string>(value: unknown, where: string, choices: readonly T[]): T | undefined {
    if (value === undefined) return undefined;
    if (!choices.includes(value as T)) {
      return this.fail(
        where,
        `must be one of ${choices.map((choice) => `"${choice}"`).join(', ')}, got ${describe(value)}`,
      );
    }
    return value as T;
  }

  /** The naming policy's own checks (prefix and separator characters, the length range). */
  naming(naming: NamingOptions, where: string): void {
    try {
      namingPolicy(naming);
    } catch (error) {
      this.fail(where, (error as Error).message.replace(/^Naming: /, 'naming: '));
    }
  }

  /**
   * Each key of `value` not in `known` (nor `ignored`) is a mistake, with the closest of `suggestions`
   * (default `known`) when one is close: `Unknown key "comand" in mcpServers.files of hub.json: did you
   * mean "command"?`.
   */
  unknownKeys(
    value: Json,
    known: ReadonlySet<string>,
    where: string,
    options: {
      ignored?: ReadonlySet<string>;
      suggestions?: Iterable<string>;
      /** Why a key known elsewhere does not belong here. */
      misplaced?: (key: string) => string | undefined;
    } = {},
  ): void {
    for (const key of Object.keys(value)) {
      if (known.has(key) || options.ignored?.has(key)) continue;
      const place = `${where}${this.file ? ` of ${this.file}` : ''}`;
      const misplaced = options.misplaced?.(key);
      const suggestion = misplaced === undefined ? closest(key, options.suggestions ?? known) : undefined;
      const hint = misplaced ?? (suggestion === undefined ? undefined : `did you mean "${suggestion}"?`);
      this.problems.push(`Unknown key ${describe(key)} in ${place}${hint === undefined ? '' : `: ${hint}`}`);
    }
  }

  forward(value: unknown, where: string): Partial<ForwardedFeatures> | undefined {
    if (value === undefined) return undefined;
    if (!isPlainObject<Json>(value))
      return this.fail(where, `must be an object of true or false by feature, got ${describe(value)}`);
    this.unknownKeys(value, new Set(FORWARD_KEYS), where);
    const forward: Partial<Record<(typeof FORWARD_KEYS)[number], boolean>> = {};
    for (const key of FORWARD_KEYS) {
      const flag = this.boolean(value[key], `${where}.${key}`);
      if (flag !== undefined) forward[key] = flag;
    }
    return forward;
  }

  /** Which protocol era the hub speaks to a server (`"legacy"`, deprecated, reads as `"handshake"`). */
  era(value: unknown, where: string): EraChoice | undefined {
    return this.oneOf(eraChoiceOf(value) ?? value, where, ERA_CHOICES);
  }

  logLevel(value: unknown, where: string): LoggingLevel | undefined {
    return this.oneOf(value, where, LOGGING_LEVELS);
  }

  instance(value: unknown, where: string): UpstreamInstance | undefined {
    if (value === undefined) return undefined;
    if (!INSTANCES.includes(value as UpstreamInstance)) {
      return this.fail(where, `must be "shared" or "per-client", got ${describe(value)}`);
    }
    return value as UpstreamInstance;
  }

  /** An environment variable's value (undefined when unset). */
  variable(name: string): string | undefined {
    return this.env[name];
  }

  /** `${VAR}` and `${env:VAR}` from the environment; an unset variable is a problem. */
  private expand(text: string, where: string): string | undefined {
    let missing: string | undefined;
    const expanded = text.replace(/\$\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string) => {
      const value = this.env[name];
      if (value === undefined) missing ??= name;
      return value ?? '';
    });
    if (missing !== undefined) return this.fail(where, `uses \${${missing}}, which is not set in the environment`);
    return expanded;
  }
}

export function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const json = JSON.stringify(value);
  return json === undefined ? typeof value : json.length > 40 ? `${json.slice(0, 37)}...` : json;
}

export function isUrl(text: string): boolean {
  try {
    new URL(text);
    return true;
  } catch {
    return false;
  }
}
