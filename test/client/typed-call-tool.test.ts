/**
 * `Client.callTool` given a tool's definition (or its type): the arguments and `structuredContent` are typed
 * from its schemas (checked by `tsc`, each `@ts-expect-error` must meet an error), and the call reaches the
 * server by the definition's name, in both eras.
 */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { Client } from '../../lib/client/client';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { defineTool } from '../../lib/server/tools';
import { createMemoryPair } from '../../transports/memory';

const add = defineTool({
  name: 'add',
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  outputSchema: z.object({ sum: z.number() }),
  handler: ({ a, b }) => ({ sum: a + b }),
});

async function connected(era: 'handshake' | 'modern'): Promise<Client> {
  const [clientSide, serverSide] = createMemoryPair();
  new Server(defineServer({ name: 'calc', version: '1.0.0', tools: [add] })).connect(serverSide);
  return new Client({ name: 'c', version: '1.0.0' }, { era }).connect(clientSide);
}

describe.each(['handshake', 'modern'] as const)('callTool with a definition (%s era)', (era) => {
  it('sends typed arguments under the tool name and types the structured result', async () => {
    const client = await connected(era);
    const result = await client.callTool(add, { a: 2, b: 3 });
    expectTypeOf(result.structuredContent).toEqualTypeOf<{ sum: number } | undefined>();
    expect(result.structuredContent).toEqual({ sum: 5 });
    const byName = await client.callTool<typeof add>('add', { a: 1, b: 1 });
    expect(byName.structuredContent?.sum).toBe(2);
    await client.close();
  });

  it('refuses at compile time what the schema does not allow, and the server refuses it at run time as a tool error', async () => {
    const client = await connected(era);
    // @ts-expect-error: b must be a number
    const wrong = await client.callTool(add, { a: 1, b: 'two' });
    // Invalid arguments are the tool's failure (a result with isError), as the 2025-11-25 revision asks.
    expect(wrong.isError).toBe(true);
    expect(JSON.stringify(wrong.content)).toContain('/b: Invalid input: expected number');
    const untyped = await client.callTool('add', { a: 1, b: 2 });
    expectTypeOf(untyped.structuredContent).toEqualTypeOf<Record<string, unknown> | undefined>();
    await client.close();
  });
});
