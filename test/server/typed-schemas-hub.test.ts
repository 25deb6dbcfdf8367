/**
 * A hub's in-process upstream with Standard Schema tools: listed through the hub as the library's JSON
 * Schema, validated by the library whether the hub calls the definition directly or over its connection.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Hub } from '../../lib/compose/hub';
import { defineServer } from '../../lib/server/definition';
import { cleanups } from '../helpers/cleanups';
import { connectToHub } from '../helpers/hub';

const local = defineServer({
  name: 'local',
  version: '1',
  tools: [
    {
      name: 'greet',
      inputSchema: z.object({ who: z.string().min(1), times: z.number().int().default(1) }),
      outputSchema: z.object({ greeting: z.string() }),
      handler: ({ who, times }) => ({ greeting: `hello ${who}`.repeat(times) }),
    },
  ],
});

describe.each([true, false])('a hub over an in-process upstream with zod tools (direct: %s)', (direct) => {
  it.each(['handshake', 'modern'] as const)('lists, validates and answers through the hub (%s era)', async (era) => {
    const hub = new Hub({
      name: 'hub',
      upstreams: [
        { name: 'local', source: { kind: 'in-process', server: local, direct }, naming: { prefix: 'local' } },
      ],
    });
    cleanups.push(() => hub.close());
    await hub.start();
    const client = await connectToHub(hub, { era });
    const [tool] = await client.listTools();
    expect(tool).toMatchObject({
      name: 'local__greet',
      inputSchema: { type: 'object', properties: { who: { type: 'string', minLength: 1 } }, required: ['who'] },
    });
    expect(await client.callTool('local__greet', { who: 'Ada' })).toEqual({
      content: [{ type: 'text', text: '{"greeting":"hello Ada"}' }],
      structuredContent: { greeting: 'hello Ada' },
    });
    const refused = await client.callTool('local__greet', { who: '', times: 1.5 });
    expect(refused).toMatchObject({ isError: true, content: [{ text: expect.stringMatching(/\/who: .*\/times: /s) }] });
  });
});
