/**
 * A tool whose `x-mcp-header` annotations are invalid (here: on a parameter of type `number`, which the
 * 2026-07-28 revision does not allow): a client of that revision leaves it out of `listTools`, since no call
 * to it could carry valid `Mcp-Param-*` headers (lib/client/modern-request-stamp.ts, `usableTools`); in the
 * handshake era the annotation means nothing and the tool is listed and callable. Our own `Server` in
 * process serves the same definition in both eras.
 */
import { describe, expect, it } from 'vitest';
import { text } from '../helpers/content';
import { serverWith, tool } from '../helpers/fixtures';
import { connectPair } from '../helpers/pair';
import { cleanups } from '../helpers/cleanups';

const definition = serverWith([
  tool('plain'),
  tool('bad-header', () => text('called'), {
    inputSchema: { type: 'object', properties: { amount: { type: 'number', 'x-mcp-header': 'Amount' } } },
  }),
]);

async function connected(era: 'handshake' | 'modern') {
  const pair = await connectPair(definition, { era, eraCache: false, listChanges: 'off' });
  cleanups.push(() => pair.client.close());
  return pair.client;
}

describe('a tool with an invalid x-mcp-header annotation', () => {
  it('is listed and callable in the handshake era', async () => {
    const client = await connected('handshake');
    expect((await client.listTools()).map((listed) => listed.name)).toEqual(['plain', 'bad-header']);
    expect(await client.callTool('bad-header', { amount: 1.5 })).toEqual(text('called'));
  });

  it('is left out of listTools in the stateless revision', async () => {
    const client = await connected('modern');
    expect((await client.listTools()).map((listed) => listed.name)).toEqual(['plain']);
  });
});
