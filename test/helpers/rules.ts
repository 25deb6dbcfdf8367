/** Assertions shared by the tests of the client feature rules (sampling, elicitation, roots). */
import { expect } from 'vitest';
import { ErrorCode, McpError } from '../../lib/jsonrpc/errors';
import { createAjv, officialSchema } from './ajv';

const ajv = createAjv('2025-11-25');
ajv.addSchema(officialSchema('2025-11-25'), 'mcp');

/** Whether the official 2025-11-25 schema accepts `value` as a `definition`. */
export function specAccepts(definition: string, value: unknown): boolean {
  const validate = ajv.getSchema(`mcp#/$defs/${definition}`);
  if (!validate) throw new Error(`no ${definition} in the schema`);
  return validate(value) as boolean;
}

export function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

/** A protocol violation by the server: McpError -32602 whose message names the offending part. */
export function expectInvalidParams(fn: () => unknown, ...fragments: string[]): void {
  const error = thrown(fn);
  expect(error).toBeInstanceOf(McpError);
  expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
  for (const fragment of fragments) expect((error as McpError).message).toContain(fragment);
}

/** A mistake by the application: a TypeError (never an McpError) whose message names the offending part. */
export function expectTypeError(fn: () => unknown, ...fragments: string[]): void {
  const error = thrown(fn);
  expect(error).toBeInstanceOf(TypeError);
  expect(error).not.toBeInstanceOf(McpError);
  for (const fragment of fragments) expect((error as TypeError).message).toContain(fragment);
}

/** Compiles any JSON Schema with the same Ajv (2020-12 and formats) the official-schema checks use. */
export function compileWithAjv(schema: object): (value: unknown) => boolean {
  const validate = ajv.compile(schema);
  return (value) => validate(value) as boolean;
}
