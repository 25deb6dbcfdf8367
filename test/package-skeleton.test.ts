import { describe, expect, it } from 'vitest';
import { defineServer } from '../lib/server/definition';
import { connectPair } from './helpers/pair';

describe('a client and a server in one process', () => {
  it('handshakes, lists and calls a tool', async () => {
    const definition = defineServer({
      name: 'demo',
      version: '1.0.0',
      tools: [
        {
          name: 'echo',
          inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
          handler: ({ text }) => ({ content: [{ type: 'text', text: String(text) }] }),
        },
      ],
    });
    const { client } = await connectPair(definition);
    expect(client.state).toBe('ready');
    expect(client.protocolVersion).toBe('2025-11-25');
    expect((await client.listTools()).map((tool) => tool.name)).toEqual(['echo']);
    expect(await client.callTool('echo', { text: 'hi' })).toEqual({ content: [{ type: 'text', text: 'hi' }] });
    expect(await client.close()).toMatchObject({ kind: 'local-close' });
  });
});
