/**
 * Our HTTP client transports against the official SDK's servers over real `node:http` on 127.0.0.1 (no
 * mocks): `McpServer` behind `StreamableHTTPServerTransport` with JSON answers and with SSE answers, a
 * stream the server drops (`closeSSEStream`) resumed from the SDK's event store, a session the server
 * forgot renewed, DELETE on close; and the SDK's deprecated `SSEServerTransport`, reached through the
 * Streamable client's fallback and directly with `LegacySseClientTransport`. Everything our client emits is
 * checked against the official schema.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { StreamableHTTPServerTransport, type EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { filter, firstValueFrom, Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client } from '../../lib/client/client';
import { EraCache } from '../../lib/client/era-cache';
import type { Transport } from '../../transports/transport';
import { LegacySseClientTransport } from '../../transports/http/legacy-sse-client';
import { StreamableHttpClientTransport, type HttpClientEvent } from '../../transports/http/streamable-client';
import { textOf as text } from '../helpers/content';
import { cleanups, listenHttp, within } from '../helpers/http';
import { validateEmitted } from '../helpers/pair';
import { nextEvent } from '../helpers/wait';

/**
 * An event store for the SDK server that replays in the order events were stored. (The SDK's example
 * `InMemoryEventStore` sorts by id, and its ids order events of the same millisecond at random: a result
 * could be replayed before the progress sent just before it.)
 */
class OrderedEventStore implements EventStore {
  private readonly events: { id: string; streamId: string; message: unknown }[] = [];

  async storeEvent(streamId: string, message: Parameters<EventStore['storeEvent']>[1]): Promise<string> {
    const id = `${streamId}.${this.events.length}`;
    this.events.push({ id, streamId, message });
    return id;
  }

  async replayEventsAfter(...[lastEventId, { send }]: Parameters<EventStore['replayEventsAfter']>): Promise<string> {
    const index = this.events.findIndex((event) => event.id === lastEventId);
    if (index === -1) return '';
    const { streamId } = this.events[index]!;
    for (const event of this.events.slice(index + 1)) {
      if (event.streamId === streamId) await send(event.id, event.message as Parameters<typeof send>[1]);
    }
    return streamId;
  }
}

/** An SDK server with the tools the tests call; one per session, as the SDK expects. */
function sdkServer(): McpServer {
  const mcp = new McpServer({ name: 'sdk-http-server', version: '1.0.0' }, { capabilities: { logging: {} } });
  mcp.registerTool('echo', { inputSchema: { message: z.string() } }, ({ message }) => ({
    content: [{ type: 'text', text: `echo: ${message}` }],
  }));
  mcp.registerTool('work', { description: 'progress, a log and a sampling request' }, async (extra) => {
    const progressToken = extra._meta?.progressToken;
    if (progressToken !== undefined) {
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken, progress: 1, total: 2 },
      });
    }
    await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data: 'working' } });
    const sampled = await mcp.server.createMessage(
      { messages: [{ role: 'user', content: { type: 'text', text: 'sample me' } }], maxTokens: 10 },
      { relatedRequestId: extra.requestId },
    );
    if (progressToken !== undefined) {
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken, progress: 2, total: 2 },
      });
    }
    return { content: [{ type: 'text', text: `sampled: ${(sampled.content as { text: string }).text}` }] };
  });
  mcp.registerTool('drop', { description: 'drops its stream, then answers' }, async (extra) => {
    const progressToken = extra._meta?.progressToken;
    if (progressToken !== undefined) {
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: 1 } });
    }
    extra.closeSSEStream?.(); // the client must come back with GET + Last-Event-ID
    if (progressToken !== undefined) {
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: 2 } });
    }
    return { content: [{ type: 'text', text: 'answered after the drop' }] };
  });
  return mcp;
}

/** Emits once `response`'s head is written (the SDK registers a stream right after writing its head). */
function onHeadWritten(response: ServerResponse, written: Subject<void>): void {
  const writeHead = response.writeHead.bind(response) as (...args: unknown[]) => ServerResponse;
  response.writeHead = ((...args: unknown[]) => {
    const result = writeHead(...args);
    written.next();
    return result;
  }) as ServerResponse['writeHead'];
}

const notFound = (response: ServerResponse, message: string) =>
  response
    .writeHead(404, { 'content-type': 'application/json' })
    .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message }, id: null }));

/** The SDK's Streamable HTTP server at `/mcp`, one `McpServer` and transport per session. */
async function startSdkStreamable(enableJsonResponse: boolean) {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; mcp: McpServer }>();
  /** Each standalone GET stream, once the SDK has written its head. */
  const standaloneOpened = new Subject<void>();
  const site = await listenHttp((request, response) => {
    if (request.method === 'GET') onHeadWritten(response, standaloneOpened);
    void (async () => {
      const sessionId = request.headers['mcp-session-id'];
      if (typeof sessionId === 'string') {
        const session = sessions.get(sessionId);
        if (!session) return notFound(response, 'Session not found');
        return session.transport.handleRequest(request, response);
      }
      if (request.method !== 'POST') return notFound(response, 'No session');
      const mcp = sdkServer();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse,
        eventStore: new OrderedEventStore(),
        retryInterval: 50,
        onsessioninitialized: (id) => void sessions.set(id, { transport, mcp }),
        onsessionclosed: (id) => void sessions.delete(id),
      });
      await mcp.connect(transport);
      await transport.handleRequest(request, response);
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    });
  });
  cleanups.push(async () => {
    for (const { mcp } of sessions.values()) await mcp.close();
  });
  return { ...site, sessions, standaloneOpened, url: `${site.origin}/mcp` };
}

/** The SDK's deprecated HTTP+SSE server: GET `/sse`, POST `/messages?sessionId=`. Nothing else exists. */
async function startSdkLegacy() {
  const sessions = new Map<string, { transport: SSEServerTransport; mcp: McpServer }>();
  /** The id of each session whose stream ended. */
  const sessionEnded = new Subject<string>();
  const site = await listenHttp((request, response) => {
    void (async () => {
      const url = new URL(request.url!, 'http://localhost');
      if (request.method === 'GET' && url.pathname === '/sse') {
        const transport = new SSEServerTransport('/messages', response);
        const mcp = sdkServer();
        sessions.set(transport.sessionId, { transport, mcp });
        response.once('close', () => {
          sessions.delete(transport.sessionId);
          sessionEnded.next(transport.sessionId);
        });
        return mcp.connect(transport);
      }
      if (request.method === 'POST' && url.pathname === '/messages') {
        const session = sessions.get(url.searchParams.get('sessionId') ?? '');
        if (!session) return notFound(response, 'Session not found');
        return session.transport.handlePostMessage(request, response);
      }
      // Like an express app without that route: a POST of `initialize` to /sse is not found.
      notFound(response, `Cannot ${request.method} ${url.pathname}`);
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    });
  });
  cleanups.push(async () => {
    for (const { mcp } of sessions.values()) await mcp.close();
  });
  return { ...site, sessions, sessionEnded };
}

const sampling = () => ({
  role: 'assistant' as const,
  content: { type: 'text' as const, text: 'from switchboard' },
  model: 'test-model',
});

/** Our client (sampling declared) over `transport`; schema-checked, closed after the test. */
async function connectOurs(transport: Transport) {
  const client = new Client({ name: 'switchboard-http', version: '1.0.0' }, { sampling });
  validateEmitted(client);
  cleanups.push(() => client.close());
  await client.connect(transport, { timeout: 5000 });
  return client;
}

function streamable(url: string) {
  const transport = new StreamableHttpClientTransport(url, { reconnect: { initialDelayMs: 20 } });
  const events: HttpClientEvent[] = [];
  transport.events.subscribe((event) => events.push(event));
  return { transport, events };
}

async function callWork(client: Client) {
  const progress: number[] = [];
  const log = firstValueFrom(client.logs$);
  const result = await client.callTool('work', {}, { onProgress: ({ progress: value }) => progress.push(value) });
  expect(text(result)).toBe('sampled: from switchboard');
  expect((await within(log, 'the log')).data).toBe('working');
  expect(progress).toEqual([1, 2]);
}

describe('the SDK Streamable HTTP server, JSON answers (enableJsonResponse)', () => {
  it('initializes, and keeps the session the SDK server made', async () => {
    const sdk = await startSdkStreamable(true);
    const { transport } = streamable(sdk.url);
    const client = await connectOurs(transport);
    expect(client.serverInfo).toMatchObject({ name: 'sdk-http-server' });
    expect(transport.sessionId).toBe([...sdk.sessions.keys()][0]);
  });

  it('calls a tool', async () => {
    const sdk = await startSdkStreamable(true);
    const client = await connectOurs(streamable(sdk.url).transport);
    expect(text(await client.callTool('echo', { message: 'json' }))).toBe('echo: json');
  });

  it('gets list_changed on the standalone stream', async () => {
    const sdk = await startSdkStreamable(true);
    const opened = nextEvent(sdk.standaloneOpened, () => true, 'the standalone stream');
    const client = await connectOurs(streamable(sdk.url).transport);
    await opened;
    const changed = firstValueFrom(
      client.notifications$.pipe(filter((note) => note.method === 'notifications/tools/list_changed')),
    );
    [...sdk.sessions.values()][0]!.mcp.registerTool('late', {}, () => ({ content: [] }));
    await within(changed, 'list_changed');
    expect((await client.listTools()).map((tool) => tool.name)).toContain('late');
  });

  it('sends the negotiated revision in the header of every request after initialize', async () => {
    const sdk = await startSdkStreamable(true);
    const client = await connectOurs(streamable(sdk.url).transport);
    await client.callTool('echo', { message: 'json' });
    // The era probe (server/discover, refused by this handshake-era server) and initialize come first.
    const handshakeEra = sdk.seen.filter((request) => request.headers['mcp-method'] !== 'server/discover');
    expect(handshakeEra.length).toBeGreaterThan(1);
    for (const later of handshakeEra.slice(1)) expect(later.headers['mcp-protocol-version']).toBe('2025-11-25');
  });

  it('keeps its connections alive over many calls', async () => {
    const sdk = await startSdkStreamable(true);
    const client = await connectOurs(streamable(sdk.url).transport);
    for (let i = 0; i < 30; i++) expect(text(await client.callTool('echo', { message: `${i}` }))).toBe(`echo: ${i}`);
    expect(sdk.connections).toBeLessThanOrEqual(3);
  });
});

describe('the SDK Streamable HTTP server, SSE answers', () => {
  it('carries progress, a log and a sampling request during a call', async () => {
    const sdk = await startSdkStreamable(false);
    const client = await connectOurs(streamable(sdk.url).transport);
    await client.setLoggingLevel('info');
    await callWork(client);
  });

  it('resumes a stream the server closed (closeSSEStream) from its event store, missing nothing', async () => {
    const sdk = await startSdkStreamable(false);
    const { transport, events } = streamable(sdk.url);
    const client = await connectOurs(transport);
    const progress: number[] = [];
    const result = await client.callTool('drop', {}, { onProgress: ({ progress: value }) => progress.push(value) });
    expect(text(result)).toBe('answered after the drop');
    expect(progress).toEqual([1, 2]);
    const reconnecting = events.find((event) => event.type === 'reconnecting' && event.stream === 'request');
    expect(reconnecting).toMatchObject({ attempt: 1, delayMs: 50 }); // the server's retry interval
    const resume = sdk.seen.find((request) => request.method === 'GET' && request.headers['last-event-id']);
    expect(resume?.headers['last-event-id']).toBe((reconnecting as { lastEventId: string }).lastEventId);
  });

  it('renews a session the server forgot', async () => {
    const sdk = await startSdkStreamable(false);
    const { transport, events } = streamable(sdk.url);
    const client = await connectOurs(transport);
    const first = transport.sessionId!;
    const renewed = firstValueFrom(transport.events.pipe(filter((event) => event.type === 'session-renewed')));
    const forgotten = sdk.sessions.get(first)!;
    sdk.sessions.delete(first);
    await forgotten.mcp.close(); // ends its streams: the client finds the session gone
    await within(renewed, 'the renewal');
    expect(text(await client.callTool('echo', { message: 'again' }))).toBe('echo: again');
    expect(events.filter((event) => event.type === 'session-renewed')).toEqual([
      { type: 'session-renewed', previousSessionId: first, sessionId: transport.sessionId },
    ]);
    expect([...sdk.sessions.keys()]).toEqual([transport.sessionId]);
  });

  it('sends DELETE on close, which ends the session on the server', async () => {
    const sdk = await startSdkStreamable(false);
    const client = await connectOurs(streamable(sdk.url).transport);
    await client.close();
    expect(sdk.seen.at(-1)).toMatchObject({ method: 'DELETE' });
    expect(sdk.sessions.size).toBe(0);
  });
});

describe('a stale 2026-07-28 verdict for the SDK Streamable HTTP server (a handshake-era server)', () => {
  /** A cache that wrongly remembers `url` as modern, as one kept on disk may after the server was replaced. */
  function staleCache(url: string): EraCache {
    const cache = new EraCache();
    const discover = { supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, serverInfo: { name: 'was' } };
    cache.set(new StreamableHttpClientTransport(url).eraKey, { era: 'modern', version: '2026-07-28', discover });
    return cache;
  }

  async function callWithStaleVerdict() {
    const sdk = await startSdkStreamable(true);
    const eraCache = staleCache(sdk.url);
    const client = new Client({ name: 'switchboard-http', version: '1.0.0' }, { eraCache });
    cleanups.push(() => client.close());
    await client.connect(new StreamableHttpClientTransport(sdk.url), { timeout: 5000 });
    const failure = await client.callTool('echo', { message: 'stale' }).catch((error: unknown) => error);
    return { sdk, eraCache, client, failure };
  }

  it("the request fails with the SDK's -32000 (no session): the client adopted the cached verdict", async () => {
    const { client, failure } = await callWithStaleVerdict();
    expect(client.connectedEra).toBe('modern');
    expect(failure).toMatchObject({ code: -32000 });
  });

  it('the failure drops the verdict, so the next client probes, falls back to initialize and calls', async () => {
    const { sdk, eraCache } = await callWithStaleVerdict();
    const next = new Client({ name: 'switchboard-http', version: '1.0.0' }, { eraCache });
    cleanups.push(() => next.close());
    await next.connect(new StreamableHttpClientTransport(sdk.url), { timeout: 5000 });
    expect(next.connectedEra).toBe('handshake');
    expect(text(await next.callTool('echo', { message: 'fresh' }))).toBe('echo: fresh');
  });
});

describe("the SDK's deprecated HTTP+SSE server", () => {
  it('is reached through the fallback when the initialize POST gets 404', async () => {
    const sdk = await startSdkLegacy();
    const { transport, events } = streamable(`${sdk.origin}/sse`);
    const client = await connectOurs(transport);
    expect(events).toEqual([{ type: 'fallback', to: 'legacy-sse', status: 404 }]);
    await client.ping();
    expect(sdk.seen.map((request) => `${request.method} ${new URL(request.url, 'http://x').pathname}`)).toEqual(
      expect.arrayContaining(['POST /sse', 'GET /sse', 'POST /messages']),
    );
  });

  it('carries progress, a log and a sampling request after the fallback', async () => {
    const sdk = await startSdkLegacy();
    const client = await connectOurs(streamable(`${sdk.origin}/sse`).transport);
    await client.setLoggingLevel('info');
    await callWork(client);
  });

  it('ends the session on the server when the client closes after the fallback', async () => {
    const sdk = await startSdkLegacy();
    const client = await connectOurs(streamable(`${sdk.origin}/sse`).transport);
    const ended = nextEvent(sdk.sessionEnded, () => true, 'the end of the session');
    await client.close();
    await ended;
    expect(sdk.sessions.size).toBe(0);
  });

  it('is reached directly with LegacySseClientTransport', async () => {
    const sdk = await startSdkLegacy();
    const client = await connectOurs(new LegacySseClientTransport(`${sdk.origin}/sse`));
    expect(client.serverInfo).toMatchObject({ name: 'sdk-http-server' });
    expect(text(await client.callTool('echo', { message: 'legacy' }))).toBe('echo: legacy');
  });

  it('carries progress, a log and a sampling request over LegacySseClientTransport', async () => {
    const sdk = await startSdkLegacy();
    const client = await connectOurs(new LegacySseClientTransport(`${sdk.origin}/sse`));
    await client.setLoggingLevel('info');
    await callWork(client);
  });
});
