import { describe, expect, it } from 'vitest';
import { firstValueFrom, Subject, take, toArray } from 'rxjs';
import { CapabilityNotSupportedError, ConnectionClosedError, McpError } from '../../lib/jsonrpc/errors';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../../lib/protocol/versions';
import { defineServer } from '../../lib/server/definition';
import type { ResourceDefinition, ResourceTemplateDefinition } from '../../lib/server/resources';
import { Server } from '../../lib/server/server';
import { Client } from '../../lib/client/client';
import { createMemoryPair } from '../../transports/memory';
import { connectClients, connectPair, validateEmitted } from '../helpers/pair';
import { cleanups } from '../helpers/cleanups';
import { deferred } from '../helpers/fixtures';
import { within } from '../helpers/wait';
import { RawPeer } from '../helpers/raw-peer';
import { isAlive } from '../helpers/processes';
import { StdioClientTransport } from '../../transports/stdio';
import { fixturePath } from '../helpers/paths';

const readme: ResourceDefinition = {
  uri: 'file:///project/README.md',
  name: 'README',
  title: 'Project readme',
  mimeType: 'text/markdown',
  icons: [{ src: 'https://example.com/doc.png' }],
  annotations: { audience: ['user'], priority: 0.5, lastModified: '2025-11-01T00:00:00Z' },
  _meta: { 'com.example/owner': 'docs' },
  read: () => '# Hello',
};

const logo: ResourceDefinition = {
  uri: 'file:///project/logo.png',
  name: 'logo',
  mimeType: 'image/png',
  read: () => ({ blob: 'iVBORw0KGgo=' }),
};

const bundle: ResourceDefinition = {
  uri: 'bundle://all',
  name: 'bundle',
  read: (context) => ({
    contents: [
      { uri: 'bundle://all/a', text: 'A' },
      { uri: 'bundle://all/b', blob: 'Qg==', mimeType: 'application/octet-stream', _meta: { size: 1 } },
    ],
    _meta: { 'com.example/read-by': context.connection.clientInfo?.name },
  }),
};

const weather: ResourceTemplateDefinition = {
  uriTemplate: 'weather://{city}/current{?units}',
  name: 'weather',
  title: 'Current weather',
  mimeType: 'application/json',
  read: ({ city, units }) => JSON.stringify({ city, units: units ?? 'metric', celsius: 20 }),
  complete: { city: (value) => ['Oslo', 'Osaka', 'Ottawa', 'Rome'].filter((city) => city.startsWith(value)) },
};

function definition(extra: Partial<Parameters<typeof defineServer>[0]> = {}) {
  return defineServer({
    name: 's',
    version: '1',
    resources: [readme, logo, bundle],
    resourceTemplates: [weather],
    ...extra,
  });
}

describe('resources', () => {
  for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
    it(`lists, reads and shapes resources for ${version}`, async () => {
      const { client } = await connectPair(definition(), { protocolVersion: version });
      expect(client.serverCapabilities?.resources).toEqual({ subscribe: true, listChanged: true });
      const listed = await client.listResources();
      expect(listed.map((resource) => resource.uri)).toEqual([readme.uri, logo.uri, bundle.uri]);
      const modern = version >= '2025-06-18';
      expect('title' in listed[0]!).toBe(modern);
      expect('icons' in listed[0]!).toBe(version === '2025-11-25');
      expect('lastModified' in listed[0]!.annotations!).toBe(modern);
      expect(await client.readResource(readme.uri)).toEqual({
        contents: [{ uri: readme.uri, mimeType: 'text/markdown', text: '# Hello' }],
      });
      expect(await client.readResource(logo.uri)).toEqual({
        contents: [{ uri: logo.uri, mimeType: 'image/png', blob: 'iVBORw0KGgo=' }],
      });
      const many = await client.readResource(bundle.uri);
      expect(many.contents).toHaveLength(2);
      expect('_meta' in many.contents[1]!).toBe(modern);
      expect(many._meta).toEqual({ 'com.example/read-by': 'test-client' });
      const templates = await client.listResourceTemplates();
      expect(templates.map((template) => template.uriTemplate)).toEqual([weather.uriTemplate]);
    });
  }

  it('reads through a template with the variables it matched', async () => {
    const { client } = await connectPair(definition());
    const result = await client.readResource('weather://Oslo/current?units=imperial');
    expect(result.contents[0]).toEqual({
      uri: 'weather://Oslo/current?units=imperial',
      mimeType: 'application/json',
      text: '{"city":"Oslo","units":"imperial","celsius":20}',
    });
    expect(
      JSON.parse(((await client.readResource('weather://Rome/current')).contents[0] as { text: string }).text).units,
    ).toBe('metric');
  });

  it('answers -32002 with the URI in data for an unknown resource', async () => {
    const { client } = await connectPair(definition());
    const failure = await client.readResource('file:///nope').catch((error) => error);
    expect(failure).toBeInstanceOf(McpError);
    expect(failure).toMatchObject({
      code: -32002,
      message: 'Resource not found: file:///nope',
      data: { uri: 'file:///nope' },
    });
  });

  it('pages resources and templates with their own cursors', async () => {
    const { client } = await connectPair(definition({ pageSize: 2 }));
    const first = await client.listResourcesPage();
    expect(first.resources).toHaveLength(2);
    expect((await client.listResourcesPage(first.nextCursor)).resources.map((r) => r.name)).toEqual(['bundle']);
    await expect(client.listResourceTemplatesPage(first.nextCursor)).rejects.toMatchObject({ code: -32602 });
  });

  it('turns a read that breaks its contract into an internal error naming the resource', async () => {
    const broken: ResourceDefinition = {
      uri: 'x://broken',
      name: 'broken',
      read: () => ({ text: 'a', blob: 'b' }) as never,
    };
    const throwing: ResourceDefinition = {
      uri: 'x://throws',
      name: 'throws',
      read: () => {
        throw new Error('disk gone');
      },
    };
    const { client } = await connectPair(defineServer({ name: 's', version: '1', resources: [broken, throwing] }));
    await expect(client.readResource('x://broken')).rejects.toMatchObject({
      code: -32603,
      message:
        'Reading x://broken returned invalid contents: each contents item needs exactly one of a string "text" or a base64 "blob"',
    });
    await expect(client.readResource('x://throws')).rejects.toMatchObject({ code: -32603, message: 'disk gone' });
  });

  it('refuses two resources of one URI', () => {
    expect(() => defineServer({ name: 's', version: '1', resources: [readme, readme] })).toThrow(
      'Two resources have the URI',
    );
  });

  it('refuses two resource templates of one URI template', () => {
    expect(() => defineServer({ name: 's', version: '1', resourceTemplates: [weather, weather] })).toThrow(
      'Two resource templates',
    );
  });

  it('announces resources/list_changed and the client cache re-lists', async () => {
    const { client, server } = await connectPair(definition());
    expect((await client.resourceList.get()).length).toBe(3);
    const refreshed = firstValueFrom(client.resourceList.changes$.pipe(take(2), toArray()));
    server.update((current) => current.withoutResources(logo.uri));
    const [before, after] = await refreshed;
    expect(before!.length).toBe(3);
    expect(after!.map((resource) => resource.name)).toEqual(['README', 'bundle']);
    expect((await client.resourceList.get()).length).toBe(2);
  });
});

describe('resource subscriptions', () => {
  for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
    it(`subscribes, is told of changes, and unsubscribes (${version})`, async () => {
      const { client, server } = await connectPair(definition(), { protocolVersion: version });
      const updates: string[] = [];
      const subscription = client.subscribeResource(readme.uri).subscribe((update) => updates.push(update.uri));
      await client.ping();
      server.resourceUpdated(readme.uri);
      server.resourceUpdated(logo.uri); // nobody subscribed: nothing sent
      await client.ping();
      expect(updates).toEqual([readme.uri]);
      subscription.unsubscribe();
      await client.ping();
      expect(server.subscriptions.size).toBe(0);
    });
  }

  it('delivers updates only to subscribers of that URI, from one upstream subscription', async () => {
    const changes = new Subject<unknown>();
    let upstream = 0;
    const live: ResourceDefinition = {
      uri: 'live://counter',
      name: 'counter',
      read: () => 'n',
      updates: {
        subscribe: (observer) => {
          upstream++;
          const inner = changes.subscribe(observer);
          return {
            unsubscribe: () => {
              upstream--;
              inner.unsubscribe();
            },
          };
        },
      },
    };
    const server = new Server(defineServer({ name: 's', version: '1', resources: [live, readme] }));
    const clients = await connectClients(server, 3);
    const [a, b, c] = clients as [Client, Client, Client];
    const seenA: string[] = [];
    const seenB: string[] = [];
    const subA = a.subscribeResource(live.uri).subscribe((update) => seenA.push(update.uri));
    const subA2 = a.subscribeResource(live.uri).subscribe(() => {});
    const subB = b.subscribeResource(live.uri).subscribe((update) => seenB.push(update.uri));
    const otherOfC: string[] = [];
    c.subscribeResource(readme.uri).subscribe((update) => otherOfC.push(update.uri));
    await a.ping();
    await b.ping();
    await c.ping();
    expect(upstream).toBe(1);
    expect(server.subscriptions.size).toBe(2);
    changes.next(undefined);
    changes.next('live://counter/detail');
    await a.ping();
    await b.ping();
    expect(seenA).toEqual(['live://counter', 'live://counter/detail']);
    expect(seenB).toEqual(['live://counter', 'live://counter/detail']);
    expect(otherOfC).toEqual([]);
    subA.unsubscribe();
    subA2.unsubscribe(); // the last subscriber on a: resources/unsubscribe
    await a.ping();
    changes.next(undefined);
    await b.ping();
    expect(seenA).toHaveLength(2);
    expect(seenB).toHaveLength(3);
    subB.unsubscribe();
    await b.ping();
    expect(upstream).toBe(0);
    server.resourceUpdated(readme.uri);
    await c.ping();
    expect(otherOfC).toEqual([readme.uri]);
    await c.close(); // the connection's subscriptions end with it
    await c.closed;
    expect(server.subscriptions.size).toBe(0);
    for (const client of clients) await client.close();
  });

  it('errors the Observable when the server refuses', async () => {
    const { client } = await connectPair(definition());
    const refused = deferred<unknown>();
    client.subscribeResource('file:///nope').subscribe({ error: (error) => refused.resolve(error) });
    expect(await refused.promise).toMatchObject({ code: -32002 });
  });

  it('completes the Observable when the client closes the connection', async () => {
    const { client } = await connectPair(definition());
    const completed = deferred();
    client.subscribeResource(readme.uri).subscribe({ complete: () => completed.resolve() });
    await client.close();
    await completed.promise;
  });

  it('errors with a ConnectionClosedError carrying the quit reason when the server side goes away', async () => {
    const [clientSide, serverSide] = createMemoryPair();
    const connection = new Server(definition()).connect(serverSide);
    const client = await new Client({ name: 'c', version: '1' }).connect(clientSide);
    const ended = deferred<unknown>();
    client.subscribeResource(readme.uri).subscribe({
      error: (error) => ended.resolve(error),
      complete: () => ended.resolve('completed'),
    });
    await client.ping(); // answered after the subscribe request that went before it
    expect(connection.server.subscriptions.size).toBe(1);
    await connection.close(); // the server ends this connection: the client did not ask for it
    const error = await ended.promise;
    expect(error).toBeInstanceOf(ConnectionClosedError);
    expect((error as ConnectionClosedError).quitReason?.kind).toBe('transport-closed');
    expect((error as Error).message).toContain(readme.uri);
  });

  it('a subscription made after the connection died errors too', async () => {
    const [clientSide, serverSide] = createMemoryPair();
    const connection = new Server(definition()).connect(serverSide);
    const client = await new Client({ name: 'c', version: '1' }).connect(clientSide);
    await connection.close();
    await client.closed;
    const error = await firstValueFrom(client.subscribeResource(readme.uri)).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(ConnectionClosedError);
    expect((error as ConnectionClosedError).quitReason?.kind).toBe('transport-closed');
  });

  /** Our client over stdio to a fixture that sends one update right after it accepts a subscription. */
  async function subscribedOverStdio() {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [fixturePath('broken-results-server.mjs')],
      shutdown: { stdinGraceMs: 300, terminateGraceMs: 300 },
    });
    const client = await new Client({ name: 'c', version: '1' }).connect(transport);
    cleanups.push(() => client.close());
    const first = deferred<string>();
    const ended = new Promise<unknown>((resolve) =>
      client.subscribeResource('notes://a').subscribe({
        next: (update) => first.resolve(update.uri),
        error: resolve,
        complete: () => resolve('completed'),
      }),
    );
    expect(await within(first.promise, 'the first update')).toBe('notes://a');
    return { transport, client, ended };
  }

  it('over stdio: errors when the server process is killed', async () => {
    const killed = await subscribedOverStdio();
    process.kill(killed.transport.pid!, 'SIGKILL');
    const error = await killed.ended;
    expect(error).toBeInstanceOf(ConnectionClosedError);
    expect((error as ConnectionClosedError).quitReason?.kind).not.toBe('local-close');
    await within(killed.transport.exited, 'the child to exit');
    expect(isAlive(killed.transport.pid!)).toBe(false);
  });

  it('over stdio: completes on a deliberate close, and the child ends', async () => {
    const closed = await subscribedOverStdio();
    await closed.client.close();
    expect(await closed.ended).toBe('completed');
    await within(closed.transport.exited, 'the child to exit');
    expect(isAlive(closed.transport.pid!)).toBe(false);
  });

  it('answers -32601 to subscribe when the server has no resources', async () => {
    const [peerSide, serverSide] = createMemoryPair();
    validateEmitted(new Server(defineServer({ name: 's', version: '1' })).connect(serverSide));
    const peer = new RawPeer(peerSide);
    await peer.initialize();
    expect((await peer.request('resources/subscribe', { uri: 'x://y' })).error.code).toBe(-32601);
  });
});

describe('the resources/search extension', () => {
  it('is off unless the server enables it', async () => {
    const { client } = await connectPair(definition());
    await expect(client.searchResources('read')).rejects.toBeInstanceOf(CapabilityNotSupportedError);
    await expect(client.request('resources/search', { query: 'read' })).rejects.toMatchObject({ code: -32601 });
  });

  it('answers with the matching resources, shaped for the revision', async () => {
    const searchable = definition({
      searchResources: (query) =>
        [readme, logo].filter((r) => r.name.toLowerCase().includes(query)).map(({ read: _r, ...resource }) => resource),
    });
    const { client } = await connectPair(searchable, { protocolVersion: '2025-03-26' });
    expect(client.serverCapabilities?.experimental).toEqual({ 'io.github.mcp-switchboard/resources-search': {} });
    const found = await client.searchResources('read');
    expect(found).toEqual([
      {
        uri: readme.uri,
        name: 'README',
        mimeType: 'text/markdown',
        annotations: { audience: ['user'], priority: 0.5 },
      },
    ]);
    await expect(client.request('resources/search', {})).rejects.toMatchObject({ code: -32602 });
  });
});
