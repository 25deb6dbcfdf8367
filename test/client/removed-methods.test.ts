/**
 * Our `Client` refuses locally what the server's revision removed (lib/client/client-connection.ts, the
 * method table's `removed` facts): on a 2026-07-28 connection `ping`, `logging/setLevel` and
 * `notifications/roots/list_changed` sent raw fail with a `MethodRemovedError` naming the revision and the
 * replacement, and nothing reaches the server. In the handshake era the same calls work. What the server
 * receives is counted on its connection's trace.
 */
import { describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { MethodRemovedError, SwitchboardError } from '../../lib/jsonrpc/errors';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { createMemoryPair } from '../../transports/memory';
import { cleanups } from '../helpers/cleanups';
import { eventually } from '../helpers/wait';

const NO_ARGUMENTS = { type: 'object' } as const;

async function connect(era: 'handshake' | 'modern') {
  const server = new Server(
    defineServer({
      name: 'removed-methods',
      version: '1.0.0',
      tools: [{ name: 'echo', inputSchema: NO_ARGUMENTS, handler: () => ({ content: [] }) }],
    }),
  );
  cleanups.push(() => server.close());
  const [clientSide, serverSide] = createMemoryPair();
  const connection = server.connect(serverSide);
  const client = new Client(
    { name: 'removed-methods-client', version: '1.0.0' },
    { era, eraCache: false, listChanges: 'off', roots: [{ uri: 'file:///work', name: 'work' }] },
  );
  cleanups.push(() => client.close());
  await client.connect(clientSide);
  // Everything the server receives from now on.
  const received: string[] = [];
  connection.trace$.subscribe((event) => {
    if (event.direction === 'in' && event.method !== undefined) received.push(`${event.kind} ${event.method}`);
  });
  return { client, received };
}

describe('a client on a 2026-07-28 connection', () => {
  it.each([
    ['ping', () => undefined, 'the revision has no ping'],
    ['logging/setLevel', () => ({ level: 'info' }), 'io.modelcontextprotocol/logLevel'],
  ])('refuses the request %s locally, naming the revision and what replaced it', async (method, params, hint) => {
    const { client, received } = await connect('modern');
    expect(client.connectedEra).toBe('modern');
    const error = await client.request(method, params()).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MethodRemovedError);
    expect(error).toBeInstanceOf(SwitchboardError);
    expect(error).toMatchObject({ code: 'METHOD_REMOVED', method, revision: '2026-07-28' });
    expect((error as MethodRemovedError).replacement).toContain(hint);
    expect((error as Error).message).toContain('2026-07-28');
    // A request the revision has reaches the server: the trace sees what arrives.
    await client.request('tools/list');
    await eventually(() => received.length > 0, 'the server to receive tools/list');
    expect(received).toEqual(['request tools/list']);
  });

  it('refuses the notification notifications/roots/list_changed locally', async () => {
    const { client, received } = await connect('modern');
    const error = await client.notify('notifications/roots/list_changed').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(MethodRemovedError);
    expect(error).toMatchObject({
      code: 'METHOD_REMOVED',
      method: 'notifications/roots/list_changed',
      revision: '2026-07-28',
      replacement: 'roots are requested per call as input requests',
    });
    await client.request('tools/list');
    await eventually(() => received.length > 0, 'the server to receive tools/list');
    expect(received).toEqual(['request tools/list']);
  });

  it('still pings through the typed call, which uses server/discover', async () => {
    const { client, received } = await connect('modern');
    await client.ping();
    await eventually(() => received.length > 0, 'the server to receive server/discover');
    expect(received).toEqual(['request server/discover']);
  });
});

describe('a client on a handshake-era connection', () => {
  it('sends ping, logging/setLevel and notifications/roots/list_changed', async () => {
    const { client, received } = await connect('handshake');
    expect(client.connectedEra).toBe('handshake');
    await expect(client.request('ping')).resolves.toEqual({});
    await expect(client.request('logging/setLevel', { level: 'info' })).resolves.toEqual({});
    await client.notify('notifications/roots/list_changed');
    await eventually(() => received.length === 3, 'the server to receive all three');
    expect(received).toEqual([
      'request ping',
      'request logging/setLevel',
      'notification notifications/roots/list_changed',
    ]);
  });
});
