/**
 * The client's API in both eras (lib/client/client.ts, client-connection.ts, modern-client.ts): the same code
 * against our own dual-era `Server` hears list changes, keeps its list caches fresh, follows resource updates,
 * and closes cleanly, whether the connection is of the handshake era or of the stateless revision. The
 * stateless revision has no notification outside a request's stream: list changes arrive on the client's
 * background `subscriptions/listen` stream, resource updates on one listen stream per subscribed URI.
 *
 * Each claim runs over three setups: modern over a memory pair (`era: 'modern'`), modern over Streamable
 * HTTP on 127.0.0.1 (probed, `era: 'auto'`), and the handshake era over a memory pair (`era: 'handshake'`). Everything the
 * client emits is validated against its era's schema. Server-side states that announce themselves through no
 * event (open listen streams, followed resources) are awaited with `eventually`.
 */
import { ReplaySubject, type Observable } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { Client, type ClientOptions } from '../../lib/client/client';
import { listChangeFilter } from '../../lib/client/modern-client';
import type { Logger } from '../../lib/core/logger';
import { CapabilityNotSupportedError, McpError } from '../../lib/jsonrpc/errors';
import type { JsonRpcNotification } from '../../lib/jsonrpc/types';
import type { ResourceUpdatedParams } from '../../lib/protocol/types';
import { defineServer, type ServerSpec } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { createMcpHttpHandler } from '../../transports/http/endpoint';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { createMemoryPair } from '../../transports/memory';
import { cleanups, eventually, listenHttp } from '../helpers/http';
import { recordEmittedEitherEra } from '../helpers/schema-modern';
import { nextEvent, within } from '../helpers/wait';

const NO_ARGUMENTS = { type: 'object' } as const;
const tool = (name: string) => ({
  name,
  description: name,
  inputSchema: NO_ARGUMENTS,
  handler: () => ({ content: [{ type: 'text' as const, text: name }] }),
});

/** Lists that may be reused for an hour: only a list change can make the client list again within a test. */
const SPEC: ServerSpec = {
  name: 'parity',
  version: '1.0.0',
  tools: [tool('first')],
  resources: [{ uri: 'test://doc', name: 'doc', read: () => 'doc' }],
  cacheHints: { tools: { ttlMs: 3_600_000, cacheScope: 'private' } },
};

type Setup = 'modern over memory' | 'modern over HTTP' | 'handshake over memory';
const SETUPS: readonly Setup[] = ['modern over memory', 'modern over HTTP', 'handshake over memory'];

/** A logger that keeps what was said at warn and error (closing must say nothing there). */
function complaints() {
  const said: string[] = [];
  const logger: Logger = {
    debug() {},
    info() {},
    warn: (message: string) => void said.push(`warn: ${message}`),
    error: (message: string) => void said.push(`error: ${message}`),
  };
  return { said, logger };
}

let emitted: { assertValid(): void }[] = [];
afterEach(() => {
  for (const record of emitted.splice(0)) record.assertValid();
});

/** Our server and a connected client in `setup`; `heard` replays every notification the client got. */
async function connect(setup: Setup, spec: ServerSpec = SPEC, options: ClientOptions = {}) {
  const server = new Server(defineServer(spec));
  cleanups.push(() => server.close());
  const { said, logger } = complaints();
  const client = new Client(
    { name: 'parity-client', version: '1.0.0' },
    { logger, eraCache: false, era: setup.startsWith('handshake') ? 'handshake' : 'modern', ...options },
  );
  emitted.push(recordEmittedEitherEra(client));
  const heard = new ReplaySubject<JsonRpcNotification>();
  client.notifications$.subscribe({ next: (notification) => heard.next(notification), error: () => undefined });
  cleanups.push(() => client.close());
  if (setup === 'modern over HTTP') {
    const handler = createMcpHttpHandler(server);
    cleanups.push(() => handler.close());
    const { origin } = await listenHttp(handler);
    await client.connect(new StreamableHttpClientTransport(`${origin}/mcp`));
  } else {
    const [clientSide, serverSide] = createMemoryPair();
    server.connect(serverSide);
    await client.connect(clientSide);
  }
  const modern = setup.startsWith('modern');
  // The stateless revision's list changes flow once the server acknowledged the background stream.
  const listening = options.listChanges !== 'off' && listChangeFilter(client.serverCapabilities) !== undefined;
  if (modern && listening) await acknowledged(heard);
  return { server, client, heard, said, modern };
}

const acknowledged = (heard: Observable<JsonRpcNotification>) =>
  nextEvent(heard, (note) => note.method === 'notifications/subscriptions/acknowledged', 'the listen acknowledgement');

const toolsChanged = (heard: Observable<JsonRpcNotification>) =>
  nextEvent(heard, (note) => note.method === 'notifications/tools/list_changed', 'tools/list_changed');

const names = (tools: readonly { name: string }[]) => tools.map((entry) => entry.name);

describe.each(SETUPS)('the client, %s', (setup) => {
  it('connects in the era asked for', async () => {
    const { client } = await connect(setup);
    expect(client.connectedEra).toBe(setup.startsWith('modern') ? 'modern' : 'handshake');
  });

  it('hears notifications/tools/list_changed on notifications$ after server.update', async () => {
    const { server, heard } = await connect(setup);
    server.update((current) => current.withTools(tool('first'), tool('second')));
    expect((await toolsChanged(heard)).method).toBe('notifications/tools/list_changed');
  });

  it('lists the tools again after the list changed (the cache is invalidated)', async () => {
    const { server, client, heard } = await connect(setup);
    expect(names(await client.toolList.get())).toEqual(['first']);
    server.update((current) => current.withTools(tool('first'), tool('second')));
    await toolsChanged(heard);
    expect(names(await client.toolList.get())).toEqual(['first', 'second']);
  });

  it('emits the changed list on toolList.changes$', async () => {
    const { server, client } = await connect(setup);
    const lists: string[][] = [];
    const second = new Promise<void>((resolve) =>
      client.toolList.changes$.subscribe({
        next: (list) => {
          lists.push(names(list));
          if (lists.length === 2) resolve();
        },
        error: () => undefined,
      }),
    );
    await eventually(() => lists.length === 1, 'the first listing');
    server.update((current) => current.withTools(tool('first'), tool('second')));
    await within(second, 'the refreshed list');
    expect(lists).toEqual([['first'], ['first', 'second']]);
  });

  it('forgets the output schemas of listed tools after the tool list changed', async () => {
    const checked = {
      ...tool('shape'),
      outputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      handler: () => ({ content: [], structuredContent: { n: 1 } }),
    };
    const { server, client, heard } = await connect(setup, { ...SPEC, tools: [checked] });
    await client.listTools();
    // The same name now answers without the shape listTools remembered (and the server checks nothing).
    server.update((current) =>
      current.withTools({ ...tool('shape'), handler: () => ({ content: [], structuredContent: { n: 'one' } }) }),
    );
    await toolsChanged(heard);
    expect((await client.callTool('shape')).structuredContent).toEqual({ n: 'one' });
  });

  it('emits a resource update after server.resourceUpdated(uri)', async () => {
    const { server, client } = await connect(setup);
    const updates: ResourceUpdatedParams[] = [];
    client.subscribeResource('test://doc').subscribe((update) => updates.push(update));
    await eventually(() => server.subscriptions.size === 1, 'the server to follow test://doc');
    server.resourceUpdated('test://doc');
    await eventually(() => updates.length === 1, 'the update');
    expect(updates[0]!.uri).toBe('test://doc');
  });

  it('stops following the resource on the server when the last subscriber unsubscribes', async () => {
    const { server, client } = await connect(setup);
    const subscription = client.subscribeResource('test://doc').subscribe();
    await eventually(() => server.subscriptions.size === 1, 'the server to follow test://doc');
    subscription.unsubscribe();
    await eventually(() => server.subscriptions.size === 0, 'the server to stop following test://doc');
  });

  it('errors a subscription to a resource the server does not have', async () => {
    const { client } = await connect(setup);
    const failure = await within(
      new Promise<unknown>((resolve) => client.subscribeResource('test://missing').subscribe({ error: resolve })),
      'the refusal',
    );
    expect(failure).toBeInstanceOf(McpError);
  });

  it('completes resource subscriptions on close()', async () => {
    const { server, client } = await connect(setup);
    const completed = new Promise<void>((resolve) =>
      client.subscribeResource('test://doc').subscribe({ complete: resolve }),
    );
    await eventually(() => server.subscriptions.size === 1, 'the server to follow test://doc');
    await client.close();
    await within(completed, 'the subscription to complete');
  });

  it('closes without a warning or an error in its log', async () => {
    const { client, said } = await connect(setup);
    client.subscribeResource('test://doc').subscribe();
    await client.close();
    expect(said).toEqual([]);
  });

  it('leaves no request pending once closed', async () => {
    const { client } = await connect(setup);
    await client.close();
    expect(client.pendingRequestCount).toBe(0);
  });
});

describe.each(['modern over memory', 'modern over HTTP'] as const)('the stateless revision, %s', (setup) => {
  it('keeps one listen stream open for the list changes', async () => {
    const { server, client } = await connect(setup);
    expect([server.listenStreams.size, client.pendingRequestCount]).toEqual([1, 1]);
  });

  it('ends the list-change stream on the server when the client closes', async () => {
    const { server, client } = await connect(setup);
    await client.close();
    await eventually(() => server.listenStreams.size === 0, 'the server to end the listen stream');
  });

  it('opens no list-change stream with listChanges: off', async () => {
    const { server, client } = await connect(setup, SPEC, { listChanges: 'off' });
    await client.listTools();
    expect([server.listenStreams.size, client.pendingRequestCount]).toEqual([0, 0]);
  });

  it('opens no list-change stream when the server declares no list', async () => {
    const { server, client } = await connect(setup, { name: 'bare', version: '1.0.0' });
    await client.ping();
    expect([server.listenStreams.size, client.pendingRequestCount]).toEqual([0, 0]);
  });

  it('backs a resource subscription with its own listen stream, cancelled on unsubscription', async () => {
    const { server, client } = await connect(setup);
    const subscription = client.subscribeResource('test://doc').subscribe();
    await eventually(() => server.listenStreams.size === 2, 'the resource stream to open');
    subscription.unsubscribe();
    await eventually(() => server.listenStreams.size === 1, 'the resource stream to end');
  });

  it('shares one listen stream between the subscribers of a URI', async () => {
    const { client } = await connect(setup);
    client.subscribeResource('test://doc').subscribe();
    client.subscribeResource('test://doc').subscribe();
    // The list-change stream and one stream for test://doc (a listen request is pending once sent).
    expect(client.pendingRequestCount).toBe(2);
  });

  it('refuses a resource subscription the server does not offer, as the handshake era does', async () => {
    const { client } = await connect(setup, {
      name: 'tools-only',
      version: '1.0.0',
      tools: [tool('first')],
    });
    const failure = await within(
      new Promise<unknown>((resolve) => client.subscribeResource('test://doc').subscribe({ error: resolve })),
      'the refusal',
    );
    expect(failure).toBeInstanceOf(CapabilityNotSupportedError);
  });
});

describe('list cache hints in the stateless revision', () => {
  async function withClock(ttlMs: number) {
    const clock = new SimulatedClock();
    const spec = { ...SPEC, cacheHints: { tools: { ttlMs, cacheScope: 'public' as const } } };
    const { client } = await connect('modern over memory', spec, { clock });
    let listings = 0;
    client.trace$.subscribe((event) => {
      if (event.direction === 'out' && event.method === 'tools/list' && event.kind === 'request') listings++;
    });
    return { clock, client, listings: () => listings };
  }

  it('reuses the tool list within its ttlMs', async () => {
    const { clock, client, listings } = await withClock(1000);
    await client.toolList.get();
    clock.increment(999);
    await client.toolList.get();
    expect(listings()).toBe(1);
  });

  it('lists the tools again once ttlMs has passed', async () => {
    const { clock, client, listings } = await withClock(1000);
    await client.toolList.get();
    clock.increment(1000);
    await client.toolList.get();
    expect(listings()).toBe(2);
  });

  it('keeps the cacheScope of the listing', async () => {
    const { client } = await withClock(1000);
    await client.toolList.get();
    expect(client.toolList.scope).toBe('public');
  });

  it('reuses nothing with ttlMs 0 (the server default)', async () => {
    const { client, listings } = await withClock(0);
    await client.toolList.get();
    await client.toolList.get();
    expect(listings()).toBe(2);
  });
});

describe('results of the stateless revision as the caller gets them', () => {
  it('come without resultType, and a member named "__proto__" stays a member, not the prototype', async () => {
    const odd = {
      name: 'odd',
      description: 'A result with an own __proto__ member, as JSON.parse makes one',
      inputSchema: NO_ARGUMENTS,
      handler: () => JSON.parse('{"content":[{"type":"text","text":"odd"}],"__proto__":{"isError":true}}'),
    };
    const { client } = await connect('modern over memory', { ...SPEC, tools: [odd] });
    const result = (await client.callTool('odd', {})) as Record<string, unknown>;
    expect([
      'resultType' in result,
      Object.getPrototypeOf(result) === Object.prototype,
      Object.hasOwn(result, '__proto__'),
      result.isError,
    ]).toEqual([false, true, true, undefined]);
  });
});

describe('the filter of the list-change stream', () => {
  it('asks for the lists the server declares listChanged for, and only those', () => {
    expect(listChangeFilter({ tools: { listChanged: true }, prompts: {}, resources: { listChanged: true } })).toEqual({
      toolsListChanged: true,
      resourcesListChanged: true,
    });
  });

  it('is undefined when the server declares no list that changes', () => {
    expect(listChangeFilter({ tools: {}, resources: { subscribe: true } })).toBeUndefined();
  });
});
