/**
 * Standard Schema (https://standardschema.dev): the one interface zod 4, valibot, arktype and others implement.
 * We validate through `~standard.validate` (so refinements, defaults and transforms run) and publish the JSON
 * Schema the library's own converter writes (`~standard.jsonSchema`, the Standard JSON Schema interface).
 */
import type { StandardJSONSchemaV1, StandardSchemaV1 } from '@standard-schema/spec';
import { clipText } from '../jsonrpc/excerpt';
import type { JsonSchema } from '../protocol/types';

export type { StandardJSONSchemaV1, StandardSchemaV1 };

/** A Standard Schema whose library can also write it as JSON Schema (zod >= 4.2, arktype >= 2.1.28, ...). */
export type StandardSchemaWithJson<Input = unknown, Output = Input> = StandardSchemaV1<Input, Output> &
  StandardJSONSchemaV1<Input, Output>;

/** What a Standard Schema made of a value: the library's output, or readable problems. */
export type StandardVerdict =
  { readonly value: unknown; readonly problems?: undefined } | { readonly problems: string[] };

const MAX_REPORTED_ISSUES = 10;
const MAX_QUOTED_CHARS = 80;

/** Whether `value` implements Standard Schema v1 (a `~standard` object with `version: 1` and `validate`). */
export function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  const props = (value as { '~standard'?: unknown } | null | undefined)?.['~standard'] as
    Partial<StandardSchemaV1.Props> | undefined;
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof props === 'object' &&
    props !== null &&
    props.version === 1 &&
    typeof props.validate === 'function'
  );
}

/**
 * The JSON Schema of one side of `schema` (`input`: what a caller sends, so `.default()` fields stay
 * optional; `output`: what validation produces), written by the library's converter. Throws an Error saying
 * why when the library has no converter or cannot convert (a transform's output, a `Date`).
 */
export function standardToJsonSchema(schema: StandardSchemaV1, side: 'input' | 'output'): JsonSchema {
  const props = schema['~standard'] as Partial<StandardJSONSchemaV1.Props>;
  const converter = props.jsonSchema;
  if (typeof converter?.[side] !== 'function') {
    throw new Error(
      `this ${props.vendor ?? 'unknown'} schema cannot write itself as JSON Schema (no ~standard.jsonSchema): ` +
        'use zod >= 4.2 or arktype >= 2.1.28, wrap a valibot schema in toStandardJsonSchema from ' +
        '@valibot/to-json-schema, or pass a JSON Schema',
    );
  }
  const json = converter[side]({ target: 'draft-2020-12' });
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw new Error(`its ${props.vendor ?? ''} JSON Schema converter returned no object`);
  }
  return json;
}

/**
 * Runs `schema` on `value`. Synchronous when the library is (no promise, no extra microtask); a promise
 * when the library validates asynchronously.
 */
export function runStandardSchema(
  schema: StandardSchemaV1,
  value: unknown,
): StandardVerdict | Promise<StandardVerdict> {
  const result = schema['~standard'].validate(value);
  return typeof (result as Promise<unknown>).then === 'function'
    ? (result as Promise<StandardSchemaV1.Result<unknown>>).then(verdictOf)
    : verdictOf(result as StandardSchemaV1.Result<unknown>);
}

function verdictOf(result: StandardSchemaV1.Result<unknown>): StandardVerdict {
  return result.issues ? { problems: describeIssues(result.issues) } : result;
}

/** Issues as `path message` lines (the path is the caller's names: quoted as bounded excerpts), at most ten. */
export function describeIssues(issues: readonly StandardSchemaV1.Issue[]): string[] {
  const problems = issues.slice(0, MAX_REPORTED_ISSUES).map((issue) => {
    const path = (issue.path ?? []).map((segment) =>
      String(typeof segment === 'object' && segment !== null ? segment.key : segment),
    );
    const where = path.length === 0 ? 'the value' : clipText(`/${path.join('/')}`, MAX_QUOTED_CHARS);
    return `${where}: ${clipText(String(issue.message), MAX_QUOTED_CHARS * 2)}`;
  });
  if (issues.length > MAX_REPORTED_ISSUES) problems.push(`and ${issues.length - MAX_REPORTED_ISSUES} more`);
  return problems;
}
