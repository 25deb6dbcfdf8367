/**
 * A JSON Schema validator that interprets schemas instead of compiling them to code: `@cfworker/json-schema`,
 * for runtimes that forbid `new Function` (Cloudflare Workers; a page under a strict Content-Security-Policy),
 * where Ajv cannot run. Slower than Ajv's compiled checks, so the default only where Ajv cannot work.
 */
import { Validator, type OutputUnit, type SchemaDraft } from '@cfworker/json-schema';
import { clipText } from '../jsonrpc/excerpt';
import type { JsonSchema } from '../protocol/types';
import { cachedValidator, type CacheOptions, type Dialect, type SchemaValidator } from './validator-cache';

const DRAFTS: Readonly<Record<Dialect, SchemaDraft>> = { '2020-12': '2020-12', '2019-09': '2019-09', 'draft-07': '7' };

/** Keywords whose error only says that one beneath them failed: that one is reported instead. */
const SUMMARIES = new Set(['properties', 'patternProperties', 'items', 'prefixItems', 'allOf', '$ref', 'false']);

const MAX_REPORTED_PROBLEMS = 10;
const MAX_QUOTED_CHARS = 80;

/** The interpreting validator, cached as `cachedValidator` says. */
export function createInterpretingValidator(options: CacheOptions = {}): SchemaValidator {
  return cachedValidator((schema: JsonSchema, dialect: Dialect) => {
    const validator = new Validator(schema as object, DRAFTS[dialect], false);
    return (value) => {
      const outcome = validator.validate(value);
      return outcome.valid ? undefined : describe(outcome.errors);
    };
  }, options);
}

function describe(errors: readonly OutputUnit[]): string[] {
  const reported = errors.filter((unit) => !SUMMARIES.has(unit.keyword));
  const shown = (reported.length > 0 ? reported : errors).slice(0, MAX_REPORTED_PROBLEMS);
  const problems = shown.map((unit) => {
    // The location is the caller's (often a peer's) names: quoted as a bounded excerpt.
    const where =
      unit.instanceLocation === '#' ? 'the value' : clipText(unit.instanceLocation.slice(1), MAX_QUOTED_CHARS);
    return `${where}: ${clipText(unit.error, 2 * MAX_QUOTED_CHARS)}`;
  });
  if (reported.length > MAX_REPORTED_PROBLEMS) problems.push(`and ${reported.length - MAX_REPORTED_PROBLEMS} more`);
  return problems;
}
