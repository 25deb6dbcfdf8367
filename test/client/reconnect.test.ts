/**
 * A client with a reconnect policy, against an in-process server on a new memory pair per attempt, in both
 * eras: it backs off on its clock (a manual one here: no real waiting), reopens, redoes the handshake or the
 * probe, restores resource subscriptions and listen streams, and reports each step; calls made meanwhile wait
 * or fail at once; it gives up after `maxAttempts`; `close()` stops it mid back-off.
 */
import { describe, expect, it } from 'vitest';
import type { Observable } from 'rxjs';
import { Client, type ClientOptions } from '../../lib/client/client';
import type { ReconnectOptions } from '../../lib/client/reconnect-policy';
import { ReconnectingError, reconnectDelay, reconnectPolicy } from '../../lib/client/reconnect-policy';
import { ConnectionClosedError, TransportError } from '../../lib/jsonrpc/errors';
import { defineServer } from '../../lib/server/definition';
import { Server, type ServerConnection } from '../../lib/server/server';
import type { TraceEvent } from '../../lib/trace/types';
import { createMemoryPair } from '../../transports/memory';
import { cleanups } from '../helpers/cleanups';
import { deferred } from '../helpers/fixtures';
import { validateEmitted } from '../helpers/pair';
import { within } from '../helpers/wait';
import { ManualClock } from '../helpers/manual-clock';

const ERAS = ['handshake', 'modern'] as const;
type Era = (typeof ERAS)[number];
const URI = 'notes://index';

const hang = deferred();

function definition() {
  const server: Server = new Server(
    defineServer({
      name: 's',
      version: '1',
      resources: [{ uri: URI, name: 'index', read: () => 'the index' }],
      tools: [
        {
          name: 'echo',
          inputSchema: { type: 'object' },
          handler: () => ({ content: [{ type: 'text', text: 'echo' }] }),
        },
        { name: 'hang', inputSchema: { type: 'object' }, handler: () => hang.promise.then(() => ({ content: [] })) },
      ],
    }),
  );
  return server;
}

/**
 * A client in `era` whose reconnect policy opens a new memory pair to `server` per attempt (while `up`),
 * everything emitted schema-checked. `kill()` ends the server side of the current connection.
 */
async function reconnectingClient(era: Era, policy: Partial<ReconnectOptions> = {}, options: ClientOptions = {}) {
  const server = definition();
  const clock = new ManualClock();
  const state = { up: true, opened: 0 };
  const serverSides: ServerConnection[] = [];
  const open = () => {
    state.opened++;
    if (!state.up) throw new Error('the server is down');
    const [clientSide, serverSide] = createMemoryPair();
    const connection = server.connect(serverSide);
    validateEmitted(connection);
    serverSides.push(connection);
    return clientSide;
  };
  const client = new Client(
    { name: 'c', version: '1' },
    {
      era,
      clock,
      reconnect: { transport: open, initialDelayMs: 100, maxDelayMs: 400, jitter: 0, ...policy },
      ...options,
    },
  );
  validateEmitted(client);
  cleanups.push(() => client.close());
  await client.connect(open());
  const events: string[] = [];
  client.events.on('reconnecting', ({ attempt, delayMs }) => void events.push(`reconnecting ${attempt} ${delayMs}`));
  client.events.on('reconnected', ({ attempt }) => void events.push(`reconnected ${attempt}`));
  client.events.on(
    'reconnectFailed',
    ({ attempt, final }) => void events.push(`failed ${attempt}${final ? ' final' : ''}`),
  );
  const kill = () => serverSides.at(-1)!.close();
  /** Resolves with the next `event` of the client. */
  const next = <T>(event: 'reconnecting' | 'reconnected' | 'reconnectFailed') =>
    within(new Promise<T>((resolve) => client.events.once(event, resolve as never)), `the ${event} event`);
  return {
    client,
    server,
    clock,
    state,
    events,
    kill,
    next,
    /** Kills the server side and resolves once the client has started reconnecting. */
    lose: async () => {
      const reconnecting = next('reconnecting');
      await kill();
      await reconnecting;
    },
    /** Kills the server side and resolves once the client is back (after the first back-off, 100 ms). */
    bounce: async () => {
      const reconnecting = next('reconnecting');
      const reconnected = next('reconnected');
      await kill();
      await reconnecting;
      clock.advance(100);
      await reconnected;
    },
  };
}

/** Subscribes to `stream`: the values it gives, and how it ended ('completed' or the error). */
function follow<T>(stream: Observable<T>) {
  const values: T[] = [];
  let arrived = deferred();
  const ended = new Promise<unknown>((resolve) =>
    stream.subscribe({
      next: (value) => {
        values.push(value);
        arrived.resolve();
        arrived = deferred();
      },
      error: resolve,
      complete: () => resolve('completed'),
    }),
  );
  return { values, ended, next: () => within(arrived.promise, 'the next value') };
}

describe.each(ERAS)('a client that reconnects (%s era)', (era) => {
  it('reconnects after the server side dies, reporting each step as events and on trace$', async () => {
    const { client, clock, kill, next, events } = await reconnectingClient(era);
    const trace: TraceEvent[] = [];
    client.trace$.subscribe((event) => void (event.actor === 'reconnect' && trace.push(event)));
    expect(client.connectedEra).toBe(era);
    const reconnecting = next<{ attempt: number; delayMs: number; reason: string }>('reconnecting');
    await kill();
    expect(await reconnecting).toMatchObject({ attempt: 1, delayMs: 100, reason: 'the transport closed' });
    expect(client.reconnecting).toBe(true);
    const reconnected = next('reconnected');
    clock.advance(100);
    await reconnected;
    expect(client.reconnecting).toBe(false);
    expect(client.connectedEra).toBe(era);
    expect(await client.callTool('echo')).toMatchObject({ content: [{ type: 'text', text: 'echo' }] });
    expect(events).toEqual(['reconnecting 1 100', 'reconnected 1']);
    expect(trace.map((event) => `${event.from}->${event.to}`)).toEqual([
      'connected->backing-off',
      'backing-off->reopening',
      'reopening->connected',
    ]);
  });

  it('traces the rediscovery of a reconnection as the era probe: its request, its answer and its verdict', async () => {
    const { client, bounce } = await reconnectingClient(era);
    const probe: string[] = [];
    client.trace$.subscribe((event) => {
      if (event.actor === 'era-probe') probe.push(`${event.from} → ${event.to}`);
      else if (event.method === 'server/discover') probe.push(`${event.direction} ${event.kind} ${String(event.id)}`);
    });
    await bounce();
    // The stateless revision asks the server again whether it still speaks it; the handshake era initializes.
    expect(probe).toEqual(
      era === 'modern'
        ? [
            expect.stringMatching(/^out request switchboard-era-probe-\d+$/),
            expect.stringMatching(/^in result switchboard-era-probe-\d+$/),
            'probing → modern',
          ]
        : [],
    );
  });

  it('keeps a resource subscriber: an update after the reconnect reaches the same Observable', async () => {
    const { client, server, bounce } = await reconnectingClient(era);
    const updates = follow(client.subscribeResource(URI));
    await client.ping(); // answered after the subscription was made
    server.resourceUpdated(URI);
    await updates.next();
    await bounce();
    await client.ping(); // answered after the subscription was made again
    server.resourceUpdated(URI);
    await updates.next();
    expect(updates.values.map((update) => update.uri)).toEqual([URI, URI]);
    await client.close();
    expect(await updates.ended).toBe('completed');
  });

  it('lists a cached list again after the reconnect: it may have changed meanwhile', async () => {
    const { client, bounce } = await reconnectingClient(era);
    const lists = follow(client.toolList.changes$);
    await lists.next(); // the first listing
    await bounce();
    await lists.next(); // listed again
    expect(lists.values.map((list) => list.map((tool) => tool.name))).toEqual([
      ['echo', 'hang'],
      ['echo', 'hang'],
    ]);
  });

  it('a call made while reconnecting waits and is sent once the client is back', async () => {
    const { client, clock, lose } = await reconnectingClient(era);
    await lose();
    const call = client.callTool('echo');
    clock.advance(100);
    expect(await within(call, 'the waiting call')).toMatchObject({ content: [{ text: 'echo' }] });
  });

  it("with whileReconnecting: 'fail', a call made while reconnecting fails at once", async () => {
    const { client, lose } = await reconnectingClient(era, { whileReconnecting: 'fail' });
    await lose();
    const error = await client.callTool('echo').catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(ReconnectingError);
    expect(error).toBeInstanceOf(TransportError);
    expect((error as Error).message).toContain('reconnecting');
  });

  it('a call in flight when the connection is lost fails with a ReconnectingError and is not sent again', async () => {
    const { client, clock, kill, next, server } = await reconnectingClient(era);
    const call = client.callTool('hang').catch((failure: unknown) => failure);
    await client.ping(); // the hanging call has reached the server
    await kill();
    const error = await call;
    expect(error).toBeInstanceOf(ReconnectingError);
    expect((error as Error).message).toContain('tools/call');
    const reconnected = next('reconnected');
    clock.advance(100);
    await reconnected;
    await client.ping();
    expect(client.pendingRequestCount).toBe(0);
    expect(server.connectionCount).toBe(1);
  });

  it('backs off by its factor up to the cap, then gives up after maxAttempts with a clear reason', async () => {
    const { client, clock, kill, next, events, state } = await reconnectingClient(era, { maxAttempts: 4 });
    const updates = follow(client.subscribeResource(URI));
    await client.ping();
    state.up = false;
    let reconnecting = next<{ delayMs: number }>('reconnecting');
    await kill();
    for (let attempt = 1; attempt <= 4; attempt++) {
      const { delayMs } = await reconnecting;
      const failed = next('reconnectFailed');
      if (attempt < 4) reconnecting = next<{ delayMs: number }>('reconnecting');
      clock.advance(delayMs);
      await failed;
    }
    const reason = await within(client.closed, 'the client to close');
    expect(reason.kind).toBe('transport-error');
    expect(reason.message).toContain('Gave up reconnecting after 4 attempts: the server is down');
    expect(events).toEqual([
      'reconnecting 1 100',
      'failed 1',
      'reconnecting 2 200',
      'failed 2',
      'reconnecting 3 400',
      'failed 3',
      'reconnecting 4 400',
      'failed 4 final',
    ]);
    const error = await updates.ended;
    expect(error).toBeInstanceOf(ConnectionClosedError);
    expect((error as ConnectionClosedError).quitReason?.message).toContain('Gave up reconnecting');
    expect(state.opened).toBe(5);
  });

  it('close() during a back-off stops it at once: no attempt is made after', async () => {
    const { client, clock, lose, state, events } = await reconnectingClient(era);
    const updates = follow(client.subscribeResource(URI));
    await client.ping();
    await lose();
    expect((await within(client.close(), 'close')).kind).toBe('local-close');
    clock.advance(60_000);
    expect(state.opened).toBe(1);
    expect(events).toEqual(['reconnecting 1 100']);
    expect(await updates.ended).toBe('completed');
  });
});

describe('the reconnect policy', () => {
  const policy = reconnectPolicy({ transport: () => createMemoryPair()[0], initialDelayMs: 100, maxDelayMs: 1_000 });

  it('grows by its factor, caps, and takes at most its jitter off', () => {
    expect([1, 2, 3, 4, 5, 9].map((attempt) => reconnectDelay(policy, attempt, () => 0))).toEqual([
      100, 200, 400, 800, 1_000, 1_000,
    ]);
    // The default jitter (0.2) takes at most a fifth off, never adds.
    expect(reconnectDelay(policy, 5, () => 1)).toBe(800);
    expect(reconnectDelay(policy, 5, () => 0.5)).toBe(900);
  });

  it('refuses a policy without a transport factory, or with a bad number, naming the option', () => {
    expect(() => reconnectPolicy({} as ReconnectOptions)).toThrow(/reconnect\.transport must be a function/);
    expect(() => reconnectPolicy({ transport: () => createMemoryPair()[0], jitter: 2 })).toThrow(/reconnect\.jitter/);
    expect(
      () =>
        new Client(
          { name: 'c', version: '1' },
          { reconnect: { transport: () => createMemoryPair()[0], maxAttempts: 0 } },
        ),
    ).toThrow(/reconnect\.maxAttempts/);
  });
});
