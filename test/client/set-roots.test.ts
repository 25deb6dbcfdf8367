/**
 * `Client.setRoots` in both eras: in the handshake era it tells the server with
 * `notifications/roots/list_changed`; the 2026-07-28 revision removed that notification (the server asks
 * for the roots in each call that needs them), so there it sends nothing and resolves. In both, the server
 * gets the new roots when it next asks. Our own `Server` in process; what it receives is read on its
 * connection's trace.
 */
import { describe, expect, it } from 'vitest';
import { cleanups } from '../helpers/cleanups';
import { json, jsonOf } from '../helpers/content';
import { serverWith, tool } from '../helpers/fixtures';
import { connectPair } from '../helpers/pair';
import { eventually } from '../helpers/wait';

const definition = serverWith([
  tool('roots', async (_args, ctx) => json((await ctx.listRoots()).map((root) => root.uri))),
]);

async function connected(era: 'handshake' | 'modern') {
  const { client, serverConnection } = await connectPair(definition, {
    era,
    eraCache: false,
    listChanges: 'off',
    roots: [{ uri: 'file:///old', name: 'old' }],
  });
  cleanups.push(() => client.close());
  const received: string[] = [];
  serverConnection.trace$.subscribe((event) => {
    if (event.direction === 'in' && event.method !== undefined) received.push(`${event.kind} ${event.method}`);
  });
  return { client, received };
}

describe('setRoots', () => {
  it('in the handshake era: tells the server, which then lists the new roots', async () => {
    const { client, received } = await connected('handshake');
    await client.setRoots([{ uri: 'file:///new', name: 'new' }]);
    await eventually(() => received.length > 0, 'the server to receive the notification');
    expect(received).toEqual(['notification notifications/roots/list_changed']);
    expect(jsonOf(await client.callTool('roots'))).toEqual(['file:///new']);
  });

  it('in the stateless revision: sends nothing, and the server gets the new roots when it asks', async () => {
    const { client, received } = await connected('modern');
    await client.setRoots([{ uri: 'file:///new', name: 'new' }]);
    expect(client.roots).toEqual([{ uri: 'file:///new', name: 'new' }]);
    expect(jsonOf(await client.callTool('roots'))).toEqual(['file:///new']);
    // The call's requests (the first and its retry with the roots) are all the server received.
    expect(new Set(received)).toEqual(new Set(['request tools/call']));
  });
});
