import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019.js';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { clipText, excerpt } from '../jsonrpc/excerpt';
import type { JsonSchema } from '../protocol/types';

/** Checks a value against one schema: undefined when valid, otherwise readable problems. */
export type SchemaCheck = (value: unknown) => readonly string[] | undefined;

/** The validation port: compile a JSON Schema into a check. Swap it for a runtime without `new Function`. */
export interface SchemaValidator {
  compile(schema: JsonSchema): SchemaCheck;
}

type Dialect = '2020-12' | '2019-09' | 'draft-07';

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

const MAX_REPORTED_PROBLEMS = 10;
/** How much of a key, path or allowed value one problem quotes. */
const MAX_QUOTED_CHARS = 80;

function describeProblems(errors: readonly ErrorObject[] | null | undefined): string[] {
  const problems = (errors ?? []).slice(0, MAX_REPORTED_PROBLEMS).map((error) => {
    // The path and the extra key are the caller's (often a peer's) names: quoted as bounded excerpts.
    const where = error.instancePath === '' ? 'the value' : clipText(error.instancePath, MAX_QUOTED_CHARS);
    const allowed = error.keyword === 'enum' ? `: ${excerpt(error.params.allowedValues, MAX_QUOTED_CHARS)}` : '';
    const extra =
      error.keyword === 'additionalProperties'
        ? ` (${excerpt(error.params.additionalProperty, MAX_QUOTED_CHARS)})`
        : '';
    return `${where} ${error.message ?? 'is invalid'}${allowed}${extra}`;
  });
  if ((errors?.length ?? 0) > MAX_REPORTED_PROBLEMS)
    problems.push(`and ${errors!.length - MAX_REPORTED_PROBLEMS} more`);
  return problems;
}

type AjvInstance = Pick<Ajv, 'compile' | 'validateSchema' | 'errors'>;

function newAjv(dialect: Dialect): AjvInstance {
  // Tool schemas in the wild carry unknown keywords and formats: strict mode would refuse them.
  const options = { strict: false, allErrors: true, validateFormats: true } as const;
  const ajv =
    dialect === '2020-12' ? new Ajv2020(options) : dialect === '2019-09' ? new Ajv2019(options) : new Ajv(options);
  addFormats(ajv as Ajv);
  return ajv;
}

/**
 * The default validator: Ajv, one instance per dialect for the whole process (the SDK builds one per
 * connection, about 0.5 ms and 19 KB each). Schemas compile lazily on first use and the compiled check is
 * cached by schema identity, with a bounded second cache by content for equal schemas from different
 * places (a gateway re-lists the same tools).
 */
export function createAjvValidator(options: { maxCachedSchemas?: number } = {}): SchemaValidator {
  const instances = new Map<Dialect, AjvInstance>();
  const byIdentity = new WeakMap<object, SchemaCheck>();
  const byContent = new Map<string, SchemaCheck>();
  const maxByContent = options.maxCachedSchemas ?? 1000;

  const instanceFor = (dialect: Dialect) => {
    let ajv = instances.get(dialect);
    if (!ajv) instances.set(dialect, (ajv = newAjv(dialect)));
    return ajv;
  };

  const build = (schema: JsonSchema): SchemaCheck => {
    const dialect = dialectOf(schema);
    if (!dialect) {
      const problem = [
        `the schema's dialect ${JSON.stringify(schema.$schema)} is not supported (use JSON Schema 2020-12, 2019-09 or draft-07)`,
      ];
      return () => problem;
    }
    let validate: ValidateFunction;
    try {
      validate = instanceFor(dialect).compile(schema);
    } catch (error) {
      // A schema whose $id clashes with one compiled before gets an instance of its own.
      try {
        validate = newAjv(dialect).compile(schema);
      } catch {
        const problem = [`the schema is invalid: ${(error as Error).message}`];
        return () => problem;
      }
    }
    return (value) => (validate(value) ? undefined : describeProblems(validate.errors));
  };

  const compileNow = (schema: JsonSchema): SchemaCheck => {
    const known = byIdentity.get(schema);
    if (known) return known;
    const key = contentKey(schema);
    let check = key === undefined ? undefined : byContent.get(key);
    if (!check) {
      check = build(schema);
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

const metaCheckers = new Map<Dialect, AjvInstance>();
/** Schemas found valid (a schema defined once and shared, or re-defined as the same object, is checked once). */
const validSchemas = new WeakSet<object>();

/**
 * Why `schema` is not a JSON Schema its dialect's meta-schema accepts (`"required": "a"`, a property that is
 * not a schema), or undefined when it is one. Checked at definition, so a broken schema fails there, naming
 * its tool, rather than on every call blaming the arguments. A runtime that cannot compile the meta-schema
 * (no `new Function`) skips the check: the validator it swapped in decides at the call.
 */
export function jsonSchemaProblem(schema: JsonSchema): string | undefined {
  if (validSchemas.has(schema)) return undefined;
  const problem = metaSchemaProblem(schema);
  if (problem === undefined) validSchemas.add(schema);
  return problem;
}

function metaSchemaProblem(schema: JsonSchema): string | undefined {
  const dialect = dialectOf(schema);
  if (!dialect)
    return `its dialect ${excerpt(schema.$schema)} is not supported (use JSON Schema 2020-12, 2019-09 or draft-07)`;
  let ajv = metaCheckers.get(dialect);
  if (!ajv) metaCheckers.set(dialect, (ajv = newAjv(dialect)));
  try {
    if (ajv.validateSchema(schema) === true) return undefined;
  } catch (error) {
    if (error instanceof EvalError) return undefined;
    return clipText((error as Error).message);
  }
  return describeProblems(ajv.errors)
    .join('; ')
    .replace(/^the value /, '');
}

let shared: SchemaValidator | undefined;

/** The process-wide default validator, created on first use. */
export function defaultValidator(): SchemaValidator {
  return (shared ??= createAjvValidator());
}
