/**
 * The validator for runtimes without `new Function` (`createInterpretingValidator`, @cfworker/json-schema):
 * the same verdicts as Ajv's on what tool arguments meet, problems that name where the value is wrong, each
 * dialect, and a server that uses it answering bad arguments as a tool error in both eras. Under workerd,
 * where it is the default, test/runtimes/workerd.test.ts runs it for real.
 */
import { describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { createInterpretingValidator } from '../../lib/validation/interpreting-validator';
import { codeGenerationAllowed, createAjvValidator, defaultValidator } from '../../lib/validation/json-schema';
import type { JsonSchema } from '../../lib/protocol/types';
import { createMemoryPair } from '../../transports/memory';

const SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    text: { type: 'string', minLength: 1 },
    count: { type: 'integer', minimum: 0 },
    colour: { enum: ['red', 'green'] },
    when: { type: 'string', format: 'date' },
  },
  required: ['text'],
  additionalProperties: false,
};

const CASES: readonly [string, unknown, boolean][] = [
  ['a whole value', { text: 'a', count: 2, colour: 'red', when: '2026-11-28' }, true],
  ['the least value', { text: 'a' }, true],
  ['a missing required property', {}, false],
  ['a wrong type', { text: 1 }, false],
  ['a number below its minimum', { text: 'a', count: -1 }, false],
  ['a value outside its enum', { text: 'a', colour: 'blue' }, false],
  ['a string not in its format', { text: 'a', when: 'yesterday' }, false],
  ['an extra property', { text: 'a', extra: true }, false],
  ['not an object', 'text', false],
];

describe('createInterpretingValidator', () => {
  const interpreting = createInterpretingValidator().compile(SCHEMA);
  const ajv = createAjvValidator().compile(SCHEMA);

  it.each(CASES)('agrees with Ajv on %s', (_what, value, valid) => {
    expect(interpreting(value) === undefined).toBe(valid);
    expect(ajv(value) === undefined).toBe(valid);
  });

  it('names where the value is wrong, not the schema keyword that holds it', () => {
    expect(interpreting({ text: 1, count: -1 })).toEqual([
      '/text: Instance type "number" is invalid. Expected "string".',
      '/count: -1 is less than 0.',
    ]);
    expect(interpreting({})).toEqual(['the value: Instance does not have required property "text".']);
  });

  it('follows the dialect a schema declares, and refuses one it does not know', () => {
    const draft07 = createInterpretingValidator().compile({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'array',
      items: [{ type: 'string' }],
      additionalItems: false,
    });
    expect(draft07(['a'])).toBeUndefined();
    expect(draft07(['a', 'b'])).toBeDefined();
    const unknown = createInterpretingValidator().compile({ $schema: 'https://example.com/mine', type: 'object' });
    expect(unknown({})![0]).toContain('is not supported');
  });

  it('is not the default where code can be generated (Node): Ajv is', () => {
    expect(codeGenerationAllowed()).toBe(true);
    const check = defaultValidator().compile(SCHEMA);
    // Ajv's words, not @cfworker's.
    expect(check({ text: 1 })).toEqual(['/text must be string']);
  });

  it.each(['handshake', 'modern'] as const)('answers bad arguments as a tool error in the %s era', async (era) => {
    const server = new Server(
      defineServer({
        name: 'v',
        version: '1',
        validator: createInterpretingValidator(),
        tools: [{ name: 'echo', inputSchema: SCHEMA, handler: (args: { text: string }) => args.text }],
      }),
    );
    const [clientSide, serverSide] = createMemoryPair();
    server.connect(serverSide);
    const client = await new Client({ name: 'c', version: '1' }, { era, eraCache: false }).connect(clientSide);
    try {
      expect((await client.callTool('echo', { text: 'ok' })).content).toEqual([{ type: 'text', text: 'ok' }]);
      const refused = await client.callTool('echo', { text: 'ok', extra: 1 });
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain('extra');
    } finally {
      await client.close();
      await server.close();
    }
  });
});
