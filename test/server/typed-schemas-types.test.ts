/**
 * What the types infer from schemas. `npx tsc --noEmit -p .` checks this file (each `@ts-expect-error` must
 * meet an error, or tsc fails); vitest runs it so the definitions are also accepted at run time.
 */
import { type } from 'arktype';
import * as v from 'valibot';
import { toStandardJsonSchema } from '@valibot/to-json-schema';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import type { JsonObject } from '../../lib/jsonrpc/types';
import { defineServer } from '../../lib/server/definition';
import { definePrompt } from '../../lib/server/prompts';
import { defineTool, type ToolArgumentsOf, type ToolResultOf } from '../../lib/server/tools';

const pointSchema = {
  type: 'object',
  properties: { x: { type: 'number' }, label: { type: 'string' } },
  required: ['x'],
  additionalProperties: false,
} as const;

describe('types inferred from schemas', () => {
  it('types a handler inside defineServer from zod, valibot, arktype and a JSON Schema literal', () => {
    const server = defineServer({
      name: 's',
      version: '1',
      tools: [
        {
          name: 'zod',
          inputSchema: z.object({ n: z.number(), times: z.number().default(2) }),
          handler: (args) => {
            expectTypeOf(args).toEqualTypeOf<{ n: number; times: number }>();
            // @ts-expect-error: a field the schema does not have
            args.foo.bar;
            return String(args.n * args.times);
          },
        },
        {
          name: 'valibot',
          inputSchema: toStandardJsonSchema(v.object({ word: v.string() })),
          handler: (args) => {
            expectTypeOf(args).toEqualTypeOf<{ word: string }>();
            // @ts-expect-error: a string has no `bar`
            args.word.bar;
            return args.word;
          },
        },
        {
          name: 'arktype',
          inputSchema: type({ flag: 'boolean' }),
          handler: (args) => {
            expectTypeOf(args).toEqualTypeOf<{ flag: boolean }>();
            return String(args.flag);
          },
        },
        {
          name: 'json',
          inputSchema: pointSchema,
          handler: (args) => {
            expectTypeOf(args).toEqualTypeOf<{ x: number; label?: string }>();
            // @ts-expect-error: not in the schema
            args.y.toFixed();
            return { content: [{ type: 'text', text: String(args.x) }] };
          },
        },
        {
          name: 'inline',
          inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          handler: (args) => {
            expectTypeOf(args.city).toEqualTypeOf<string>();
            // @ts-expect-error: written inline, without `as const`, the literal still types the arguments
            args.city.bar.baz();
            return args.city;
          },
        },
        {
          name: 'none',
          handler: (args) => {
            expectTypeOf(args).toEqualTypeOf<JsonObject>();
            return 'no parameters';
          },
        },
      ],
    });
    expect(server.tools?.size).toBe(6);
  });

  it('types arguments and results with defineTool, and what a caller sends and gets back', () => {
    const add = defineTool({
      name: 'add',
      inputSchema: z.object({ a: z.number(), b: z.number().default(0) }),
      outputSchema: z.object({ sum: z.number() }),
      handler: ({ a, b }) => ({ sum: a + b }),
    });
    expectTypeOf<ToolArgumentsOf<typeof add>>().toEqualTypeOf<{ a: number; b?: number | undefined }>();
    expectTypeOf<ToolResultOf<typeof add>['structuredContent']>().toEqualTypeOf<{ sum: number } | undefined>();

    const half = defineTool({
      name: 'half',
      inputSchema: pointSchema,
      outputSchema: { type: 'object', properties: { half: { type: 'number' } }, required: ['half'] },
      handler: ({ x }) => ({ structuredContent: { half: x / 2 } }),
    });
    expectTypeOf<NonNullable<ToolResultOf<typeof half>['structuredContent']>['half']>().toEqualTypeOf<number>();

    defineTool({
      name: 'wrong',
      outputSchema: z.object({ sum: z.number() }),
      // @ts-expect-error: the output schema wants a number
      handler: () => ({ sum: 'three' }),
    });
    expect(add.inputSchema).toMatchObject({ type: 'object' });
  });

  it('accepts an interface as the arguments type of defineTool', () => {
    interface Args {
      city: string;
      days?: number;
    }
    const forecast = defineTool<Args>({
      name: 'forecast',
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      handler: (args) => {
        expectTypeOf(args).toEqualTypeOf<Args>();
        return args.city;
      },
    });
    const echo = defineTool<{ text: string }>({
      name: 'echo',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
      handler: ({ text }) => text,
    });
    expectTypeOf<ToolArgumentsOf<typeof echo>>().toEqualTypeOf<{ text: string }>();
    expect(forecast.name).toBe('forecast');
  });

  it('types prompt arguments from a Standard Schema and from a list written as const', () => {
    const fromSchema = definePrompt({
      name: 'review',
      arguments: z.object({ code: z.string(), style: z.string().optional() }),
      get: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ code: string; style?: string | undefined }>();
        return [{ role: 'user', content: { type: 'text', text: args.code } }];
      },
    });
    const fromList = definePrompt({
      name: 'greet',
      arguments: [{ name: 'who', required: true }, { name: 'tone' }] as const,
      get: (args) => {
        expectTypeOf(args.who).toEqualTypeOf<string>();
        expectTypeOf(args.tone).toEqualTypeOf<string | undefined>();
        return [{ role: 'user', content: { type: 'text', text: args.who } }];
      },
    });
    expect(fromSchema.arguments).toEqual([{ name: 'code', required: true }, { name: 'style' }]);
    expect(fromList.arguments).toHaveLength(2);
  });
});
