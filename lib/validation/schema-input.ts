/**
 * The schemas a definition accepts, for types and at run time: a Standard Schema (zod 4, valibot, arktype)
 * or a JSON Schema object. The types infer what a handler gets (a Standard Schema's output; `FromSchema` of a
 * JSON Schema literal written `as const`); `resolveSchema` checks one at definition and gives the JSON Schema
 * to publish and, for a Standard Schema, the schema that validates.
 */
import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { JsonObject } from '../jsonrpc/types';
import type { JsonSchema } from '../protocol/types';
import { jsonSchemaProblem } from './json-schema';
import { isStandardSchema, standardToJsonSchema, type StandardSchemaV1 } from './standard-schema';

/** A schema as a definition may give it: a Standard Schema, or a JSON Schema (an object literal). */
export type SchemaInput = StandardSchemaV1 | JsonSchema;

/** A JSON Schema literal of an object, as `as const` (or a `const` type parameter) writes one: what `FromSchema` reads. */
export type ObjectSchemaLiteral = { readonly type: 'object' } & JSONSchema;

/**
 * Whether schema type `S` says nothing of the value: no schema (`undefined`, `unknown`) or a JSON Schema typed
 * only as `JsonSchema` (a record of anything), as a definition built at run time has.
 */
export type IsUntypedSchema<S> = unknown extends S
  ? true
  : [S] extends [undefined]
    ? true
    : S extends StandardSchemaV1
      ? false
      : string extends keyof S
        ? true
        : false;

/**
 * Whether `S` is the type of a schema (a Standard Schema, a JSON Schema literal of an object, an untyped
 * schema) rather than of the value it describes (`defineTool<{ text: string }>` names the arguments' type).
 */
export type IsSchemaType<S> = S extends StandardSchemaV1
  ? true
  : S extends ObjectSchemaLiteral
    ? true
    : IsUntypedSchema<S>;

/** The type a schema field accepts: `S` when it is a schema type, any schema otherwise (none given, or `Args`). */
export type SchemaSlot<S> = [S] extends [undefined]
  ? SchemaInput
  : unknown extends S
    ? SchemaInput
    : IsSchemaType<S> extends true
      ? S
      : SchemaInput;

/**
 * What validation makes of a value for schema `S`: a Standard Schema's output type, `FromSchema` of a JSON
 * Schema literal typed `as const`, `JsonObject` for a schema whose type says nothing (`JsonSchema`, no
 * schema). Any other type is taken as the value's own type (`defineTool<Args>`).
 */
export type SchemaOutput<S> =
  IsUntypedSchema<S> extends true
    ? JsonObject
    : S extends StandardSchemaV1
      ? StandardSchemaV1.InferOutput<S>
      : S extends ObjectSchemaLiteral
        ? FromSchema<S>
        : S;

/** What a value must be before validation for schema `S` (a caller's arguments; a handler's structured result). */
export type SchemaInputValue<S> =
  IsUntypedSchema<S> extends true
    ? JsonObject
    : S extends StandardSchemaV1
      ? StandardSchemaV1.InferInput<S>
      : S extends ObjectSchemaLiteral
        ? FromSchema<S>
        : S;

/** One schema of a definition, checked: the JSON Schema to publish, and the Standard Schema that validates. */
export interface ResolvedSchema {
  readonly json: JsonSchema;
  readonly standard: StandardSchemaV1 | undefined;
}

/**
 * Checks `value` as the schema `field` of `owner` (for example `Tool add`) and returns its JSON Schema (the
 * `side` of a Standard Schema). Throws a TypeError naming the owner, the field and the problem for anything
 * else: a class instance that is no Standard Schema, a schema whose library cannot write JSON Schema, a
 * JSON Schema its meta-schema refuses, or (with `objectOnly`) a schema not of type `object`.
 */
export function resolveSchema(
  owner: string,
  field: string,
  value: unknown,
  side: 'input' | 'output',
  objectOnly = true,
): ResolvedSchema {
  const refuse = (problem: string) => new TypeError(`${owner}: ${field} ${problem}`);
  let json: JsonSchema;
  let standard: StandardSchemaV1 | undefined;
  if (isStandardSchema(value)) {
    standard = value;
    try {
      json = standardToJsonSchema(value, side);
    } catch (error) {
      throw refuse(`cannot be published as JSON Schema: ${(error as Error).message}`);
    }
  } else if (isPlainObject(value)) {
    json = value;
  } else {
    throw refuse(`must be a Standard Schema (zod, valibot, arktype) or a JSON Schema object, not ${describe(value)}`);
  }
  if (objectOnly && json.type !== 'object') {
    throw refuse(
      `must describe an object ("type": "object"), not ${json.type === undefined ? 'any value' : JSON.stringify(json.type)}`,
    );
  }
  const problem = jsonSchemaProblem(json);
  if (problem !== undefined) throw refuse(`is not a valid JSON Schema: ${problem}`);
  return { json, standard };
}

function isPlainObject(value: unknown): value is JsonSchema {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value !== 'object') return `a ${typeof value}`;
  const name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } } | null)?.constructor?.name;
  return typeof name === 'string' && name !== '' ? `an instance of ${name.slice(0, 60)}` : 'an object with a prototype';
}
