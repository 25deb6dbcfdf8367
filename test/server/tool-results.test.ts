/**
 * Results as handlers write them, in both eras: a string, a plain object for a tool with an output schema,
 * `structuredContent` without `content`; and a tool without `inputSchema`.
 */
import { describe, expect, it } from 'vitest';
import { defineServer } from '../../lib/server/definition';
import { connectPair } from '../helpers/pair';

const ERAS = ['handshake', 'modern'] as const;

const sum = {
  type: 'object',
  properties: { a: { type: 'number' }, b: { type: 'number' } },
  required: ['a', 'b'],
} as const;

const server = defineServer({
  name: 'results',
  version: '1',
  tools: [
    { name: 'hello', description: 'No parameters', handler: () => 'hello' },
    {
      name: 'add',
      inputSchema: sum,
      outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
      handler: ({ a, b }) => ({ sum: a + b }),
    },
    {
      name: 'structured-only',
      outputSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
      handler: () => ({ structuredContent: { ok: true } }),
    },
    {
      name: 'wrong-plain',
      outputSchema: { type: 'object', properties: { sum: { type: 'number' } }, required: ['sum'] },
      handler: () => ({ total: 3 }),
    },
    { name: 'plain-without-schema', handler: () => ({ sum: 3 }) },
  ],
});

describe.each(ERAS)('tool results as written, %s era', (era) => {
  it('lists a tool without inputSchema as taking an object, and calls it with or without arguments', async () => {
    const { client } = await connectPair(server, { era });
    const tools = await client.listTools();
    expect(tools.find((tool) => tool.name === 'hello')!.inputSchema).toEqual({ type: 'object' });
    expect(await client.callTool('hello')).toEqual({ content: [{ type: 'text', text: 'hello' }] });
    expect(await client.callTool('hello', { extra: 1 })).toEqual({ content: [{ type: 'text', text: 'hello' }] });
  });

  it('turns a plain object into structuredContent and its JSON text, checked against the output schema', async () => {
    const { client } = await connectPair(server, { era });
    expect(await client.callTool('add', { a: 2, b: 3 })).toEqual({
      content: [{ type: 'text', text: '{"sum":5}' }],
      structuredContent: { sum: 5 },
    });
    expect(await client.callTool('structured-only')).toEqual({
      content: [{ type: 'text', text: '{"ok":true}' }],
      structuredContent: { ok: true },
    });
    const wrong = await client.callTool('wrong-plain');
    expect(wrong).toMatchObject({
      isError: true,
      content: [
        {
          text: expect.stringContaining(
            "returned structuredContent that does not match its outputSchema: the value must have required property 'sum'",
          ),
        },
      ],
    });
  });

  it('refuses a plain object from a tool without an output schema', async () => {
    const { client } = await connectPair(server, { era });
    expect(await client.callTool('plain-without-schema')).toMatchObject({
      isError: true,
      content: [{ text: 'Tool plain-without-schema returned a result without a content array' }],
    });
  });
});

it('gives a 2025-03-26 client the JSON text of a plain object (its revision has no structuredContent)', async () => {
  const { client } = await connectPair(server, { era: 'handshake', protocolVersion: '2025-03-26' });
  expect(await client.callTool('add', { a: 1, b: 1 })).toEqual({ content: [{ type: 'text', text: '{"sum":2}' }] });
});
