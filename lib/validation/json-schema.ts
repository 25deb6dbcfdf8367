import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019.js';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { clipText, excerpt } from '../jsonrpc/excerpt';
import type { JsonSchema } from '../protocol/types';
import { createInterpretingValidator } from './interpreting-validator';
import {
  cachedValidator,
  dialectOf,
  type CacheOptions,
  type Dialect,
  type SchemaCheck,
  type SchemaValidator,
} from './validator-cache';

export { dialectOf, type CacheOptions, type SchemaCheck, type SchemaValidator } from './validator-cache';

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
 * The default validator where code may be generated: Ajv, one instance per dialect for the whole process (the
 * SDK builds one per connection, about 0.5 ms and 19 KB each), cached as `cachedValidator` says.
 */
export function createAjvValidator(options: CacheOptions = {}): SchemaValidator {
  const instances = new Map<Dialect, AjvInstance>();
  const instanceFor = (dialect: Dialect) => {
    let ajv = instances.get(dialect);
    if (!ajv) instances.set(dialect, (ajv = newAjv(dialect)));
    return ajv;
  };
  return cachedValidator((schema, dialect) => {
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
  }, options);
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

/**
 * The process-wide default validator, created on first use: Ajv, or where code cannot be generated from
 * strings (Cloudflare Workers, a page under a strict Content-Security-Policy) the interpreting validator of
 * `@cfworker/json-schema`, so a server runs there unchanged.
 */
export function defaultValidator(): SchemaValidator {
  return (shared ??= adaptiveValidator());
}

/**
 * Ajv or the interpreting validator, chosen as each schema is first used rather than when the validator is
 * made: workerd lets a Worker generate code while its module loads (where a server's definition is made) and
 * refuses it in requests (where schemas compile).
 */
function adaptiveValidator(): SchemaValidator {
  let ajv: SchemaValidator | undefined;
  let interpreting: SchemaValidator | undefined;
  const chosen = () =>
    codeGenerationAllowed() ? (ajv ??= createAjvValidator()) : (interpreting ??= createInterpretingValidator());
  return {
    compile(schema) {
      let check: SchemaCheck | undefined;
      return (value) => (check ??= chosen().compile(schema))(value);
    },
  };
}

/** Whether `new Function` works here (Ajv compiles every schema to one). */
export function codeGenerationAllowed(): boolean {
  try {
    return new Function('return true')() === true;
  } catch {
    return false;
  }
}
