/**
 * How the client's streams that live as long as its connection end (lib/client/stream-end.ts), in both eras,
 * against an in-process server on a memory pair whose server side is closed abruptly: `notifications$`,
 * `logs$`, `elicitationComplete$` and the list caches' `changes$` error with a `ConnectionClosedError`
 * carrying the quit reason when the connection dies (also for a subscriber that comes after), complete on
 * the client's own `close()`, and with a reconnect policy carry on across a reconnection and error only when
 * the client gives up. The same with a real stdio child killed: stream-end-stdio.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { Observable } from 'rxjs';
import { Client } from '../../lib/client/client';
import { ConnectionClosedError } from '../../lib/jsonrpc/errors';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { createMemoryPair, type MemoryTransport } from '../../transports/memory';
import { cleanups } from '../helpers/cleanups';
import { ManualClock } from '../helpers/manual-clock';
import { recordEmittedEitherEra } from '../helpers/schema-modern';
import { within } from '../helpers/wait';

const ERAS = ['handshake', 'modern'] as const;
type Era = (typeof ERAS)[number];

function definition() {
  return defineServer({
    name: 's',
    version: '1',
    resources: [{ uri: 'notes://index', name: 'index', read: () => 'the index' }],
    prompts: [{ name: 'greet', get: () => [{ role: 'user', content: { type: 'text', text: 'hello' } }] }],
    tools: [
      {
        name: 'log',
        inputSchema: { type: 'object' },
        handler: async (_args, ctx) => {
          await ctx.log('notice', 'logged');
          return { content: [] };
        },
      },
    ],
  });
}

/** Subscribes to `stream`: the values it gives, `count(n)` once it gave `n`, and how it ended ('completed' or the error). */
function follow<T>(stream: Observable<T>) {
  const values: T[] = [];
  const waiting: { n: number; arrived: () => void }[] = [];
  const ended = new Promise<unknown>((resolve) =>
    stream.subscribe({
      next: (value) => {
        values.push(value);
        for (const wait of waiting) if (values.length >= wait.n) wait.arrived();
      },
      error: resolve,
      complete: () => resolve('completed'),
    }),
  );
  const count = (n: number) =>
    within(
      values.length >= n ? Promise.resolve() : new Promise<void>((arrived) => void waiting.push({ n, arrived })),
      `value ${n}`,
    );
  return { values, ended, count };
}

/** Every public stream of `client` that lives as long as its connection, by the name its error gives it. */
function followAll(client: Client) {
  return {
    'The notification stream': follow(client.notifications$),
    'The log stream': follow(client.logs$),
    'The elicitation completion stream': follow(client.elicitationComplete$),
    'The tools list stream': follow(client.toolList.changes$),
    'The resources list stream': follow(client.resourceList.changes$),
    'The prompts list stream': follow(client.promptList.changes$),
  };
}

/** A client connected in `era` to an in-process server; `kill()` closes the server's side of the memory pair. */
async function connected(era: Era) {
  const server = new Server(definition());
  cleanups.push(() => server.close());
  const [clientSide, serverSide] = createMemoryPair();
  server.connect(serverSide);
  const client = new Client({ name: 'c', version: '1' }, { era });
  const emitted = recordEmittedEitherEra(client);
  cleanups.push(() => emitted.assertValid());
  cleanups.push(() => client.close());
  await client.connect(clientSide);
  expect(client.connectedEra).toBe(era);
  return { client, kill: () => serverSide.close() };
}

/** Resolves once each list cache's `changes$` gave its first list. */
async function listed(streams: ReturnType<typeof followAll>) {
  await streams['The tools list stream'].count(1);
  await streams['The resources list stream'].count(1);
  await streams['The prompts list stream'].count(1);
}

function expectDied(error: unknown, name: string) {
  expect(error).toBeInstanceOf(ConnectionClosedError);
  expect((error as ConnectionClosedError).quitReason?.kind).toBe('transport-closed');
  expect((error as Error).message).toBe(`${name} ended: the connection closed (The transport closed)`);
}

describe.each(ERAS)('the streams of a client without a reconnect policy (%s era)', (era) => {
  it('error with a ConnectionClosedError carrying the quit reason when the server side closes', async () => {
    const { client, kill } = await connected(era);
    const streams = followAll(client);
    await listed(streams);
    await client.setLoggingLevel('info');
    await client.callTool('log');
    expect(streams['The log stream'].values).toEqual([{ level: 'notice', data: 'logged' }]);
    await kill();
    for (const [name, stream] of Object.entries(streams)) expectDied(await within(stream.ended, name), name);
    expect((await client.closed).kind).toBe('transport-closed');
  });

  it('give a subscriber that comes after the death the same error at once', async () => {
    const { client, kill } = await connected(era);
    const tools = follow(client.toolList.changes$);
    await tools.count(1);
    await kill();
    await client.closed;
    const late = followAll(client);
    for (const [name, stream] of Object.entries(late)) expectDied(await within(stream.ended, name), name);
    // The cached list comes first: it was listed before the death.
    expect(late['The tools list stream'].values.map((list) => list.map((tool) => tool.name))).toEqual([['log']]);
  });

  it('end a list cache whose first listing the end cut short as the end says', async () => {
    const died = await connected(era);
    const cutByDeath = follow(died.client.toolList.changes$);
    void died.kill();
    expectDied(await within(cutByDeath.ended, 'the stream to end'), 'The tools list stream');
    const closed = await connected(era);
    const cutByClose = follow(closed.client.toolList.changes$);
    void closed.client.close();
    expect(await within(cutByClose.ended, 'the stream to end')).toBe('completed');
    expect([...cutByDeath.values, ...cutByClose.values]).toEqual([]);
  });

  it('complete when the client is closed with close(), also for a subscriber that comes after', async () => {
    const { client } = await connected(era);
    const streams = {
      'The notification stream': follow(client.notifications$),
      'The log stream': follow(client.logs$),
      'The tools list stream': follow(client.toolList.changes$),
    };
    await streams['The tools list stream'].count(1);
    expect((await client.close()).kind).toBe('local-close');
    for (const [name, stream] of Object.entries(streams)) expect(await within(stream.ended, name)).toBe('completed');
    // The resources and prompts caches are made after the close: nothing can be listed, and they end at once.
    for (const [name, stream] of Object.entries(followAll(client))) {
      expect(await within(stream.ended, `${name}, subscribed after close()`)).toBe('completed');
      expect(stream.values.length).toBe(name === 'The tools list stream' ? 1 : 0);
    }
  });
});

describe.each(ERAS)('the streams of a client with a reconnect policy (%s era)', (era) => {
  it('carry on across a reconnection, then error with the quit reason when the client gives up', async () => {
    const server = new Server(definition());
    cleanups.push(() => server.close());
    const clock = new ManualClock();
    const state = { up: true };
    const serverSides: MemoryTransport[] = [];
    const open = () => {
      if (!state.up) throw new Error('the server is down');
      const [clientSide, serverSide] = createMemoryPair();
      server.connect(serverSide);
      serverSides.push(serverSide);
      return clientSide;
    };
    const client = new Client(
      { name: 'c', version: '1' },
      { era, clock, reconnect: { transport: open, initialDelayMs: 100, maxAttempts: 1, jitter: 0 } },
    );
    cleanups.push(() => client.close());
    await client.connect(open());
    const streams = followAll(client);
    await listed(streams);
    const event = (name: 'reconnecting' | 'reconnected' | 'reconnectFailed') =>
      within(new Promise<void>((resolve) => client.events.once(name, () => resolve())), `the ${name} event`);

    const reconnecting = event('reconnecting');
    const reconnected = event('reconnected');
    await serverSides.at(-1)!.close();
    await reconnecting;
    clock.advance(100);
    await reconnected;
    await client.setLoggingLevel('info');
    await client.callTool('log');
    await streams['The log stream'].count(1);
    await streams['The tools list stream'].count(2); // listed again after the reconnection

    state.up = false;
    const failed = event('reconnectFailed');
    await serverSides.at(-1)!.close();
    clock.advance(100);
    await failed;
    for (const [name, stream] of Object.entries(streams)) {
      const error = await within(stream.ended, name);
      expect(error).toBeInstanceOf(ConnectionClosedError);
      expect((error as ConnectionClosedError).quitReason?.kind).toBe('transport-error');
      expect((error as Error).message).toContain(
        `${name} ended: the connection closed (The transport failed: Gave up reconnecting after 1 attempt`,
      );
    }
    expect(streams['The log stream'].values).toHaveLength(1);
  });
});
