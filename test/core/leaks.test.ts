import { describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { Runtime } from '../../lib/core/runtime';
import { RequestTimeoutError } from '../../lib/jsonrpc/errors';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { createMemoryPair } from '../../transports/memory';
import { collectGarbage, heapUsed } from '../helpers/gc';
import { Subject } from 'rxjs';
import type { ResourceDefinition } from '../../lib/server/resources';

const definition = defineServer({
  name: 's',
  version: '1',
  tools: [
    { name: 'echo', inputSchema: { type: 'object' }, handler: () => ({ content: [{ type: 'text', text: 'x' }] }) },
    { name: 'hang', inputSchema: { type: 'object' }, handler: () => new Promise(() => {}) },
  ],
});

async function openPair(server: Server, runtime: Runtime) {
  const [clientSide, serverSide] = createMemoryPair();
  const serverConnection = server.connect(serverSide, { runtime });
  const client = new Client({ name: 'c', version: '1' }, { runtime });
  await client.connect(clientSide);
  return { client, serverConnection, clientSide, serverSide };
}

describe('leaks', () => {
  it('a closed connection is collectable: client, server connection, transports and lifecycle actors', async () => {
    const server = new Server(definition);
    const runtime = new Runtime();
    const shared = new AbortController();
    const refs: WeakRef<object>[] = [];
    // In a function of its own: a suspended async frame would keep its last loop values reachable.
    const exercise = async () => {
      for (let i = 0; i < 50; i++) {
        const { client, serverConnection, clientSide, serverSide } = await openPair(server, runtime);
        await client.callTool('echo', {}, { signal: shared.signal, onProgress: () => {} });
        // Not `expect(...).rejects`: vitest keeps the error until the test ends, and an error's unformatted
        // stack holds the objects of its frames (the client among them).
        const timedOut = await client
          .callTool('hang', {}, { timeout: 5, signal: shared.signal })
          .catch((error) => error);
        expect(timedOut instanceof RequestTimeoutError).toBe(true);
        const pending = client.callTool('hang', {}, { signal: shared.signal }).catch(() => undefined);
        client.trace$.subscribe();
        client.notifications$.subscribe({ error: () => undefined });
        client.events.on('close', () => {});
        await client.close();
        await pending;
        refs.push(new WeakRef(client), new WeakRef(serverConnection), new WeakRef(clientSide), new WeakRef(serverSide));
        refs.push(new WeakRef(client.actor), new WeakRef(serverConnection.actor));
      }
    };
    await exercise();
    expect(server.connectionCount).toBe(0);
    await collectGarbage();
    expect(refs.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
  });

  it('heap stays flat over many connect/call/close cycles', async () => {
    const server = new Server(definition);
    const runtime = new Runtime();
    const cycle = async () => {
      const { client } = await openPair(server, runtime);
      await client.callTool('echo', {});
      await client.close();
    };
    for (let i = 0; i < 300; i++) await cycle(); // warm up: caches, JIT, lazily built pages
    await collectGarbage();
    const before = heapUsed();
    for (let i = 0; i < 2000; i++) await cycle();
    await collectGarbage();
    const grown = heapUsed() - before;
    // 2,000 leaked pairs would be ~15 MB; allow noise well below one pair per cycle.
    expect(grown).toBeLessThan(1_000_000);
  });

  it('an open connection stays registered with its runtime until it is closed', async () => {
    const server = new Server(definition);
    const runtime = new Runtime();
    const open = async () => new WeakRef((await openPair(server, runtime)).client);
    const ref = await open();
    await collectGarbage();
    const client = ref.deref();
    expect(client?.state).toBe('ready'); // held by the runtime (and its server) while open: close what you connect
    await client!.close();
  });

  it('resource subscriptions leave nothing behind: unsubscribed, or cut off by a closing connection', async () => {
    const changes = new Subject<unknown>();
    const live: ResourceDefinition = { uri: 'live://feed', name: 'feed', read: () => 'x', updates: changes };
    const server = new Server(defineServer({ name: 's', version: '1', resources: [live] }));
    const runtime = new Runtime();
    const refs: WeakRef<object>[] = [];
    const exercise = async () => {
      for (let i = 0; i < 20; i++) {
        const { client, serverConnection } = await openPair(server, runtime);
        const received: unknown[] = [];
        const subscriptions = Array.from({ length: 5 }, () =>
          client.subscribeResource(live.uri).subscribe((update) => received.push(update)),
        );
        await client.ping();
        changes.next(undefined);
        await client.ping();
        expect(received).toHaveLength(5); // one notification, five subscribers
        if (i % 2 === 0) {
          for (const subscription of subscriptions) subscription.unsubscribe();
          await client.ping();
        }
        await client.close(); // odd rounds: closed while still subscribed
        await serverConnection.closed;
        refs.push(new WeakRef(client), new WeakRef(serverConnection));
      }
    };
    await exercise();
    expect(server.subscriptions.size).toBe(0);
    expect(changes.observed).toBe(false); // the upstream change stream was released
    await collectGarbage();
    expect(refs.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
  });
});
