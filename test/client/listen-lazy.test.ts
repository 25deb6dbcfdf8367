/**
 * The list-change stream of a client connected in the stateless revision (2026-07-28) opens only while
 * something needs it (lib/client/list-change-stream.ts): a subscriber of `notifications$` or a list cache.
 * Counted on our own `Server` in process (`server.listenStreams.size`); a refused stream is one log line and
 * a state (`client.listChangeStatus`). The handshake era has no such stream: its list changes arrive on the
 * session whatever the client needs.
 */
import { filter, firstValueFrom, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { LISTEN_ACKNOWLEDGED } from '../../lib/client/listen';
import type { Logger } from '../../lib/core/logger';
import type { JsonRpcNotification } from '../../lib/jsonrpc/types';
import { defineServer } from '../../lib/server/definition';
import { Server, type ServerOptions } from '../../lib/server/server';
import { createMemoryPair } from '../../transports/memory';
import { eventually, nextEvent, within } from '../helpers/wait';

const TOOLS_CHANGED = 'notifications/tools/list_changed';

function echoServer(options: ServerOptions = {}): Server {
  const echo = { name: 'echo', inputSchema: { type: 'object' as const }, handler: () => ({ content: [] }) };
  const other = { name: 'other', inputSchema: { type: 'object' as const }, handler: () => ({ content: [] }) };
  return new Server(defineServer({ name: 'lazy', version: '1.0.0', tools: [echo, other] }), options);
}

/** A logger that keeps every line a client writes, with its detail. */
function recordingLogger() {
  const lines: { level: string; message: string; detail: unknown }[] = [];
  const make = (level: string) => (message: string, detail?: unknown) => void lines.push({ level, message, detail });
  const logger: Logger = { debug: make('debug'), info: make('info'), warn: make('warn'), error: make('error') };
  return { logger, lines, warnings: () => lines.filter((line) => line.level !== 'debug') };
}

const opened: Client[] = [];
const subscriptions: Subscription[] = [];

afterEach(async () => {
  for (const subscription of subscriptions.splice(0)) subscription.unsubscribe();
  await Promise.all(opened.splice(0).map((client) => client.close()));
});

/** A client of `server` in `era`, not connected yet (so a test may subscribe first). */
function clientOf(server: Server, era: 'modern' | 'handshake', logger = recordingLogger().logger) {
  const [clientSide, serverSide] = createMemoryPair();
  server.connect(serverSide);
  const client = new Client({ name: 'lazy-client', version: '1.0.0' }, { era, logger });
  opened.push(client);
  return { client, connect: () => client.connect(clientSide) };
}

function connected(server: Server, era: 'modern' | 'handshake', logger?: Logger): Promise<Client> {
  return clientOf(server, era, logger).connect();
}

/** Subscribes to `notifications$` (kept until the test ends) and resolves with the next list change. */
function nextToolsChange(client: Client): Promise<JsonRpcNotification> {
  return nextEvent(client.notifications$, (message) => message.method === TOOLS_CHANGED, 'tools/list_changed');
}

/** Subscribes to `notifications$` for the rest of the test; resolves once the server acknowledged the stream. */
function keepListening(client: Client): Promise<unknown> {
  const acknowledged = firstValueFrom(client.notifications$.pipe(filter((m) => m.method === LISTEN_ACKNOWLEDGED)));
  subscriptions.push(client.notifications$.subscribe({ error: () => undefined }));
  return within(acknowledged, 'the acknowledgement of the list-change stream');
}

describe('the list-change stream of a stateless client', () => {
  it('is not opened for a client that needs no list changes', async () => {
    const server = echoServer();
    const clients = await Promise.all([1, 2, 3].map(() => connected(server, 'modern')));
    for (const client of clients) await client.callTool('echo', {});
    expect(server.listenStreams.size).toBe(0);
    expect(clients.map((client) => client.listChangeStatus)).toEqual(
      clients.map(() => ({ heard: false, state: 'idle' })),
    );
  });

  it('opens for a subscriber of notifications$, brings the change, and closes when it unsubscribes', async () => {
    const server = echoServer();
    const client = await connected(server, 'modern');
    const acknowledged = firstValueFrom(client.notifications$.pipe(filter((m) => m.method === LISTEN_ACKNOWLEDGED)));
    const changed = firstValueFrom(client.notifications$.pipe(filter((m) => m.method === TOOLS_CHANGED)));
    await within(acknowledged, 'the acknowledgement');
    expect(server.listenStreams.size).toBe(1);
    expect(client.listChangeStatus).toEqual({ heard: true, state: 'listening' });
    server.update((definition) => definition.withoutTools('other'));
    await within(changed, 'the list change');
    // Both subscribers are gone now (each took its first value): the stream is cancelled.
    expect(client.listChangeStatus).toEqual({ heard: false, state: 'idle' });
    // The server forgets the stream when the cancellation arrives, which no event announces to the test.
    await eventually(() => server.listenStreams.size === 0, 'the server to close the stream');
  });

  it('opens at connect for a subscriber that came before connect', async () => {
    const server = echoServer();
    const { client, connect } = clientOf(server, 'modern');
    const acknowledged = keepListening(client);
    await connect();
    await acknowledged;
    expect(server.listenStreams.size).toBe(1);
    expect(client.listChangeStatus).toEqual({ heard: true, state: 'listening' });
  });

  it('opens for a list cache, which is refreshed after a change', async () => {
    const server = echoServer();
    const client = await connected(server, 'modern');
    const lists: string[][] = [];
    subscriptions.push(
      client.toolList.changes$.subscribe({
        next: (tools) => lists.push(tools.map((tool) => tool.name)),
        error: () => undefined,
      }),
    );
    expect(client.listChangeStatus).toEqual({ heard: true, state: 'listening' });
    await eventually(() => lists.length === 1 && server.listenStreams.size === 1, 'the listing and the stream');
    server.update((definition) => definition.withoutTools('other'));
    await eventually(() => lists.length === 2, 'the refreshed list');
    expect(lists).toEqual([['echo', 'other'], ['echo']]);
  });

  it('is not opened by a resource subscription, which has its own stream', async () => {
    const resource = { uri: 'file:///readme.md', name: 'readme', read: () => 'hello' };
    const server = new Server(defineServer({ name: 'lazy', version: '1.0.0', resources: [resource] }));
    const client = await connected(server, 'modern');
    const updates = client.subscribeResource(resource.uri);
    subscriptions.push(updates.subscribe());
    await eventually(() => server.listenStreams.size === 1, "the resource subscription's stream");
    expect(client.listChangeStatus).toEqual({ heard: false, state: 'idle' });
  });

  it('past the server’s limit: one log line without a stack, and a refused state naming the reason', async () => {
    const server = echoServer({ maxListenStreams: 2 });
    const first = await connected(server, 'modern');
    const second = await connected(server, 'modern');
    await Promise.all([keepListening(first), keepListening(second)]);
    const third = recordingLogger();
    const client = await connected(server, 'modern', third.logger);
    const idle = recordingLogger();
    const needsNothing = await connected(server, 'modern', idle.logger);
    subscriptions.push(client.notifications$.subscribe({ error: () => undefined }));
    await eventually(() => third.warnings().length > 0, 'the refusal to be logged');
    expect(third.warnings()).toHaveLength(1);
    const [line] = third.warnings();
    expect(line!.detail).toBeUndefined();
    expect(line!.message).not.toContain('\n');
    expect(line!.message).toMatch(/^List changes are not heard: .*limit 2/);
    expect(client.listChangeStatus).toMatchObject({
      heard: false,
      state: 'refused',
      reason: expect.stringMatching(/limit 2/),
    });
    expect([first, second].map((listening) => listening.listChangeStatus.state)).toEqual(['listening', 'listening']);
    await needsNothing.callTool('echo', {});
    expect(idle.lines).toEqual([]);
    expect(server.listenStreams.size).toBe(2);
  });

  it('asks again once everything released a refused stream and something needs it anew', async () => {
    const server = echoServer({ maxListenStreams: 1 });
    const blocker = await connected(server, 'modern');
    await keepListening(blocker);
    const refused = recordingLogger();
    const client = await connected(server, 'modern', refused.logger);
    const first = client.notifications$.subscribe({ error: () => undefined });
    await eventually(() => client.listChangeStatus.state === 'refused', 'the refusal');
    first.unsubscribe();
    expect(client.listChangeStatus.state).toBe('idle');
    await blocker.close();
    await eventually(() => server.listenStreams.size === 0, 'the server to forget the closed client’s stream');
    await keepListening(client);
    expect(client.listChangeStatus).toEqual({ heard: true, state: 'listening' });
  });
});

describe('list changes in the handshake era', () => {
  it('arrive on the session with no stream, whatever the client needs', async () => {
    const server = echoServer();
    const client = await connected(server, 'handshake');
    expect(client.listChangeStatus).toEqual({ heard: true, state: 'session' });
    const changed = nextToolsChange(client);
    server.update((definition) => definition.withoutTools('other'));
    await changed;
    expect(server.listenStreams.size).toBe(0);
  });

  it('refresh a list cache', async () => {
    const server = echoServer();
    const client = await connected(server, 'handshake');
    expect((await client.toolList.get()).map((tool) => tool.name)).toEqual(['echo', 'other']);
    const changed = nextToolsChange(client);
    server.update((definition) => definition.withoutTools('other'));
    await changed;
    expect((await client.toolList.get()).map((tool) => tool.name)).toEqual(['echo']);
  });
});
