/**
 * What every JSON Schema validator of the package shares: the port (`SchemaValidator`), the dialects, and the
 * caches of compiled checks.
 */
import type { JsonSchema } from '../protocol/types';

/** Checks a value against one schema: undefined when valid, otherwise readable problems. */
export type SchemaCheck = (value: unknown) => readonly string[] | undefined;

/** The validation port: compile a JSON Schema into a check. Swap it for a runtime without `new Function`. */
export interface SchemaValidator {
  compile(schema: JsonSchema): SchemaCheck;
}

export type Dialect = '2020-12' | '2019-09' | 'draft-07';

/** MCP 2025-11-25: a schema without `$schema` is 2020-12. Older peers send draft-07. */
export function dialectOf(schema: JsonSchema): Dialect | undefined {
  const declared = schema.$schema;
  if (declared === undefined) return '2020-12';
  if (typeof declared !== 'string') return undefined;
  const url = declared.replace(/#$/, '').replace(/^http:/, 'https:');
  if (url === 'https://json-schema.org/draft/2020-12/schema') return '2020-12';
  if (url === 'https://json-schema.org/draft/2019-09/schema') return '2019-09';
  if (url === 'https://json-schema.org/draft-07/schema') return 'draft-07';
  return undefined;
}

export interface CacheOptions {
  /** Compiled checks kept by schema content (default 1000). */
  readonly maxCachedSchemas?: number;
}

/**
 * A validator from `build`, which compiles one schema of a known dialect. Schemas compile lazily on first use
 * and the compiled check is cached by schema identity, with a bounded second cache by content for equal
 * schemas from different places (a gateway re-lists the same tools). A schema of another dialect fails every
 * check, saying so.
 */
export function cachedValidator(
  build: (schema: JsonSchema, dialect: Dialect) => SchemaCheck,
  options: CacheOptions = {},
): SchemaValidator {
  const byIdentity = new WeakMap<object, SchemaCheck>();
  const byContent = new Map<string, SchemaCheck>();
  const maxByContent = options.maxCachedSchemas ?? 1000;

  const buildChecked = (schema: JsonSchema): SchemaCheck => {
    const dialect = dialectOf(schema);
    if (dialect) return build(schema, dialect);
    const problem = [
      `the schema's dialect ${JSON.stringify(schema.$schema)} is not supported (use JSON Schema 2020-12, 2019-09 or draft-07)`,
    ];
    return () => problem;
  };

  const compileNow = (schema: JsonSchema): SchemaCheck => {
    const known = byIdentity.get(schema);
    if (known) return known;
    const key = contentKey(schema);
    let check = key === undefined ? undefined : byContent.get(key);
    if (!check) {
      check = buildChecked(schema);
      if (key !== undefined) {
        if (byContent.size >= maxByContent) byContent.delete(byContent.keys().next().value!);
        byContent.set(key, check);
      }
    }
    byIdentity.set(schema, check);
    return check;
  };

  return {
    compile(schema) {
      let check: SchemaCheck | undefined;
      return (value) => (check ??= compileNow(schema))(value);
    },
  };
}

/** The schema's JSON as a cache key, or undefined for one JSON cannot write (nested too deep for the stack). */
function contentKey(schema: JsonSchema): string | undefined {
  try {
    return JSON.stringify(schema);
  } catch {
    return undefined;
  }
}
