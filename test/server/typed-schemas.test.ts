/**
 * Standard Schemas (zod 4, valibot, arktype) as tool and prompt schemas: published as the library's JSON
 * Schema, validated by the library (refinements, defaults and transforms run), in both eras; and what is
 * refused when a tool or prompt is defined.
 */
import { type } from 'arktype';
import * as v from 'valibot';
import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { StandardSchemaV1 } from '@standard-schema/spec';
import { McpError } from '../../lib/jsonrpc/errors';
import { defineServer } from '../../lib/server/definition';
import { definePrompt } from '../../lib/server/prompts';
import { defineTool, toolSchemaProblem } from '../../lib/server/tools';
import { connectPair } from '../helpers/pair';

const ERAS = ['handshake', 'modern'] as const;

const order = z.object({
  item: z.string().min(1),
  quantity: z.number().int().positive().default(1),
  coupon: z
    .string()
    .optional()
    .refine((code) => code === undefined || code.startsWith('SAVE'), 'coupons start with SAVE'),
  note: z.string().transform((text) => text.trim().toUpperCase()),
});

const server = defineServer({
  name: 'typed',
  version: '1',
  tools: [
    {
      name: 'order',
      inputSchema: order,
      outputSchema: z.object({ line: z.string(), total: z.number(), currency: z.string().default('EUR') }),
      handler: ({ item, quantity, note }) => ({ line: `${quantity} x ${item} (${note})`, total: quantity * 2.5 }),
    },
    {
      name: 'shout',
      inputSchema: toStandardJsonSchema(
        v.object({
          word: v.pipe(
            v.string(),
            v.transform((w) => w.toUpperCase()),
          ),
        }),
      ),
      handler: ({ word }) => `${word}!`,
    },
    {
      name: 'flip',
      inputSchema: type({ flag: 'boolean' }),
      handler: ({ flag }) => String(!flag),
    },
  ],
  prompts: [
    {
      name: 'review',
      description: 'Review code',
      arguments: z.object({
        code: z.string().describe('The code to review'),
        level: z.enum(['gentle', 'strict']).default('gentle'),
      }),
      get: ({ code, level }) => [{ role: 'user', content: { type: 'text', text: `${level}: ${code}` } }],
    },
  ],
});

describe.each(ERAS)('Standard Schemas, %s era', (era) => {
  it('publishes the input side of a zod schema (a default stays optional) and the output side of its output', async () => {
    const { client } = await connectPair(server, { era });
    const tools = await client.listTools();
    const listed = tools.find((tool) => tool.name === 'order')!;
    expect(listed.inputSchema).toMatchObject({
      type: 'object',
      properties: { item: { type: 'string', minLength: 1 }, quantity: { type: 'integer', default: 1 } },
      required: ['item', 'note'],
    });
    expect(listed.outputSchema).toMatchObject({ required: ['line', 'total', 'currency'] });
    expect(JSON.stringify(listed)).not.toContain('"def"');
    expect(tools.find((tool) => tool.name === 'shout')!.inputSchema).toMatchObject({
      type: 'object',
      properties: { word: { type: 'string' } },
      required: ['word'],
    });
    expect(tools.find((tool) => tool.name === 'flip')!.inputSchema).toMatchObject({
      properties: { flag: { type: 'boolean' } },
    });
  });

  it("hands the handler the library's output (defaults filled, transforms run) and the client the output's", async () => {
    const { client } = await connectPair(server, { era });
    const result = await client.callTool('order', { item: 'tea', note: '  hot ' });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual({ line: '1 x tea (HOT)', total: 2.5, currency: 'EUR' });
    expect(result.content).toEqual([
      { type: 'text', text: JSON.stringify({ line: '1 x tea (HOT)', total: 2.5, currency: 'EUR' }) },
    ]);
    expect(await client.callTool('shout', { word: 'hey' })).toMatchObject({ content: [{ text: 'HEY!' }] });
    expect(await client.callTool('flip', { flag: true })).toMatchObject({ content: [{ text: 'false' }] });
  });

  it('runs refinements and reports each issue with its path, as a tool error', async () => {
    const { client } = await connectPair(server, { era });
    const result = await client.callTool('order', { item: '', quantity: -2, coupon: 'FREE', note: 'x' });
    expect(result.isError).toBe(true);
    const text = (result.content[0] as { text: string }).text;
    expect(text).toMatch(/^Invalid arguments for tool order: /);
    expect(text).toContain('/item:');
    expect(text).toContain('/quantity:');
    expect(text).toContain('/coupon: coupons start with SAVE');
    const ark = await client.callTool('flip', { flag: 'yes' });
    expect(ark).toMatchObject({
      isError: true,
      content: [{ text: expect.stringContaining('/flag: flag must be boolean') }],
    });
  });

  it('lists prompt arguments from a schema and validates them before get', async () => {
    const { client } = await connectPair(server, { era });
    const [prompt] = await client.listPrompts();
    expect(prompt!.arguments).toEqual([
      { name: 'code', description: 'The code to review', required: true },
      { name: 'level' },
    ]);
    const got = await client.getPrompt('review', { code: 'x = 1' });
    expect(got.messages[0]!.content).toEqual({ type: 'text', text: 'gentle: x = 1' });
    const refused = await client.getPrompt('review', { code: 'x', level: 'harsh' }).catch((error) => error);
    expect(refused).toBeInstanceOf(McpError);
    expect(refused).toMatchObject({
      code: -32602,
      message: expect.stringContaining('Invalid arguments for prompt review: /level'),
    });
  });
});

describe('Standard Schemas that validate asynchronously or throw', () => {
  /** A minimal Standard Schema (no library), validating after a macrotask, with a JSON Schema converter. */
  const later: StandardSchemaV1<{ n: number }> & { '~standard': { jsonSchema: object } } = {
    '~standard': {
      version: 1,
      vendor: 'test',
      validate: (value) =>
        new Promise((resolve) =>
          setTimeout(() =>
            resolve(
              typeof (value as { n?: unknown }).n === 'number'
                ? { value: { n: (value as { n: number }).n * 10 } }
                : { issues: [{ message: 'n must be a number', path: ['n'] }] },
            ),
          ),
        ),
      jsonSchema: {
        input: () => ({ type: 'object', properties: { n: { type: 'number' } } }),
        output: () => ({ type: 'object', properties: { n: { type: 'number' } } }),
      },
    },
  };
  const throwing = z.object({ n: z.number() }).superRefine(() => {
    throw new Error('the refinement broke');
  });

  it.each(ERAS)(
    'awaits an asynchronous validation and reports a throwing one as a tool error (%s era)',
    async (era) => {
      const definition = defineServer({
        name: 's',
        version: '1',
        tools: [
          { name: 'later', inputSchema: later, handler: ({ n }) => String(n) },
          { name: 'throws', inputSchema: throwing, handler: () => 'never' },
        ],
      });
      const { client } = await connectPair(definition, { era });
      expect(await client.callTool('later', { n: 4 })).toMatchObject({ content: [{ text: '40' }] });
      expect(await client.callTool('later', { n: 'four' })).toMatchObject({
        isError: true,
        content: [{ text: 'Invalid arguments for tool later: /n: n must be a number' }],
      });
      expect(await client.callTool('throws', { n: 1 })).toMatchObject({
        isError: true,
        content: [{ text: 'the refinement broke' }],
      });
    },
  );
});

describe('schemas refused at definition', () => {
  it('publishes a zod object passed where plain JavaScript expected a JSON Schema, and validates with zod', async () => {
    // What a JavaScript user writes: no types to stop it. Before, zod internals were listed and every call failed.
    const untyped = { name: 'js', inputSchema: z.object({ n: z.number() }) as unknown, handler: () => 'ok' };
    const { client } = await connectPair(defineServer({ name: 's', version: '1', tools: [untyped as never] }));
    const [listed] = await client.listTools();
    expect(listed!.inputSchema).toEqual({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { n: { type: 'number' } },
      required: ['n'],
    });
    expect(await client.callTool('js', { n: 1 })).toMatchObject({ content: [{ text: 'ok' }] });
  });

  it('refuses what is no schema, naming the tool and the problem', () => {
    class LegacySchema {
      readonly type = 'object';
      readonly _def = { typeName: 'ZodObject' };
    }
    const cases: [unknown, string][] = [
      [
        new LegacySchema(),
        'Tool t: inputSchema must be a Standard Schema (zod, valibot, arktype) or a JSON Schema object, not an instance of LegacySchema',
      ],
      ['object', 'not a string'],
      [[{ type: 'object' }], 'not an array'],
      [new Map([['type', 'object']]), 'not an instance of Map'],
      [null, 'not null'],
    ];
    for (const [inputSchema, message] of cases) {
      expect(() => defineTool({ name: 't', inputSchema: inputSchema as never, handler: () => '' })).toThrow(
        new TypeError(
          message.startsWith('Tool')
            ? message
            : `Tool t: inputSchema must be a Standard Schema (zod, valibot, arktype) or a JSON Schema object, ${message}`,
        ),
      );
    }
  });

  it('refuses a JSON Schema that is itself invalid, with what its meta-schema says', () => {
    expect(() =>
      defineServer({
        name: 's',
        version: '1',
        tools: [{ name: 'bad', inputSchema: { type: 'object', required: 'city' }, handler: () => '' }],
      }),
    ).toThrow('Tool bad: inputSchema is not a valid JSON Schema: /required must be array');
    expect(() =>
      defineTool({
        name: 'worse',
        inputSchema: { type: 'object', properties: { a: { type: 'strin' } } },
        handler: () => '',
      }),
    ).toThrow(
      /^Tool worse: inputSchema is not a valid JSON Schema: \/properties\/a\/type must be equal to one of the allowed values/,
    );
    expect(() =>
      defineTool({ name: 'out', outputSchema: { type: 'object', minProperties: -1 }, handler: () => ({}) }),
    ).toThrow('Tool out: outputSchema is not a valid JSON Schema: /minProperties must be >= 0');
  });

  it('refuses a schema its library cannot publish, or one not of an object', () => {
    expect(() => defineTool({ name: 'raw', inputSchema: v.object({ a: v.string() }), handler: () => '' })).toThrow(
      /^Tool raw: inputSchema cannot be published as JSON Schema: this valibot schema cannot write itself as JSON Schema .*toStandardJsonSchema/,
    );
    expect(() =>
      defineTool({
        name: 'when',
        outputSchema: z.object({ at: z.string().transform((s) => new Date(s)) }),
        handler: () => ({ at: '2026-01-01' }),
      }),
    ).toThrow(
      'Tool when: outputSchema cannot be published as JSON Schema: Transforms cannot be represented in JSON Schema',
    );
    expect(() => defineTool({ name: 'str', inputSchema: z.string(), handler: () => '' })).toThrow(
      'Tool str: inputSchema must describe an object ("type": "object"), not "string"',
    );
    expect(() => definePrompt({ name: 'p', arguments: z.number() as never, get: () => [] })).toThrow(
      'Prompt p: arguments must describe an object ("type": "object"), not "number"',
    );
  });

  it('quotes a bounded excerpt of a hostile argument name in an issue', async () => {
    const strict = defineServer({
      name: 's',
      version: '1',
      tools: [{ name: 'strict', inputSchema: z.object({ deep: z.record(z.string(), z.number()) }), handler: () => '' }],
    });
    const { client } = await connectPair(strict);
    const hostile = 'k'.repeat(50_000);
    const result = await client.callTool('strict', { deep: { [hostile]: 'not a number' } });
    expect(result.isError).toBe(true);
    const text = (result.content[0] as { text: string }).text;
    expect(text.length).toBeLessThan(400);
    expect(text).toContain('/deep/kkkk');
  });
});

describe('toolSchemaProblem', () => {
  it('says why a tool from elsewhere would be refused, without throwing', () => {
    expect(toolSchemaProblem({ inputSchema: { type: 'object', required: 'a' } })).toBe(
      'inputSchema is not a valid JSON Schema: /required must be array',
    );
    expect(toolSchemaProblem({ inputSchema: { type: 'object' }, outputSchema: { type: 'array' } })).toBe(
      'outputSchema must describe an object ("type": "object"), not "array"',
    );
    expect(
      toolSchemaProblem({ inputSchema: { type: 'object', properties: { a: { type: 'string' } } } }),
    ).toBeUndefined();
  });
});
