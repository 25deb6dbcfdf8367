/**
 * The Streamable HTTP client transport against our Streamable HTTP server over real `node:http` on
 * 127.0.0.1: the shared transport suite, then our Client and Server through it: JSON and SSE answers,
 * progress and a server-to-client request during a call, the standalone GET stream, a dropped stream
 * resumed with Last-Event-ID while a finished (cancelled, timed-out) request's stream never is, a lost
 * session renewed, DELETE on close (given up on the runtime's clock), the session's lifecycle actor in the
 * runtime, keep-alive, failed exchanges as `TransportError`s (a server's JSON-RPC error body as sent) and
 * the fallback to the legacy HTTP+SSE transport.
 */
import { getEventListeners } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import { filter, firstValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { Client, type ClientOptions } from '../../../lib/client/client';
import { Runtime } from '../../../lib/core/runtime';
import {
  ErrorCode,
  McpError,
  RequestCancelledError,
  RequestTimeoutError,
  TransportError,
} from '../../../lib/jsonrpc/errors';
import { UnreadableFrame } from '../../../lib/jsonrpc/types';
import type { ServerDefinition } from '../../../lib/server/definition';
import { Server } from '../../../lib/server/server';
import type { TraceEvent } from '../../../lib/trace/types';
import { headerList, httpTarget, HttpStatusError, sendHttpRequest } from '../../../transports/http/client-request';
import { createMcpHttpHandler } from '../../../transports/http/endpoint';
import type { HttpSession } from '../../../transports/http/http-session';
import { createStreamableHttpHandler, type StreamableHttpOptions } from '../../../transports/http/streamable-server';
import {
  StreamableHttpClientTransport,
  type HttpClientEvent,
  type StreamableHttpClientOptions,
} from '../../../transports/http/streamable-client';
import { deferred, serverWith, tool } from '../../helpers/fixtures';
import { json, textOf } from '../../helpers/content';
import { cleanups, eventually, listenHttp, within } from '../../helpers/http';
import { nextEvent } from '../../helpers/wait';
import { validateEmitted } from '../../helpers/pair';
import { runTransportSuite } from '../../helpers/transport-suite';

type Listener = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * `listenHttp` with two hooks of these tests: `nextGet()` (the next GET once the listener attached its
 * stream) and `dropPostStreams()`. `intercept` may answer a request itself (returning true) before the
 * listener sees it.
 */
async function listenWithStreams(
  listener: Listener,
  intercept?: (request: IncomingMessage, response: ServerResponse) => boolean,
) {
  const openPosts = new Set<ServerResponse>();
  const getArrivals: ((request: IncomingMessage) => void)[] = [];
  const site = await listenHttp((request, response) => {
    if (intercept?.(request, response)) return;
    if (request.method === 'POST') {
      openPosts.add(response);
      response.once('close', () => openPosts.delete(response));
    }
    listener(request, response);
    // The listener attaches a GET stream synchronously: once it returned, the stream is live.
    if (request.method === 'GET') for (const arrived of getArrivals.splice(0)) arrived(request);
  });
  return Object.assign(site, {
    /** The next GET, once the listener has attached its stream. */
    nextGet: () => new Promise<IncomingMessage>((resolve) => getArrivals.push(resolve)),
    /** Cuts the connections of the POSTs still answering (their SSE streams break mid-way). */
    dropPostStreams: () => {
      for (const response of openPosts) response.socket?.destroy();
    },
  });
}

/** Our server for `definition` over Streamable HTTP at `/mcp`. */
async function serve(
  definition: ServerDefinition,
  options: StreamableHttpOptions = {},
  intercept?: Parameters<typeof listenWithStreams>[1],
) {
  const server = new Server(definition);
  const handler = createStreamableHttpHandler(server, { retryMs: 30, ...options });
  const site = await listenWithStreams(handler, intercept);
  cleanups.push(() => handler.close());
  return { ...site, server, handler, url: `${site.origin}/mcp` };
}

/**
 * Our client over a new transport, everything it emits schema-checked; closed after the test. These tests
 * are about handshake-era sessions: the client connects with `era: 'handshake'` (no `server/discover` probe).
 */
async function connect(url: string, options: ClientOptions = {}, transportOptions: StreamableHttpClientOptions = {}) {
  const transport = new StreamableHttpClientTransport(url, { reconnect: { initialDelayMs: 20 }, ...transportOptions });
  const events: HttpClientEvent[] = [];
  transport.events.subscribe((event) => events.push(event));
  const client = new Client({ name: 'http-client-test', version: '1.0.0' }, { era: 'handshake', ...options });
  validateEmitted(client);
  cleanups.push(() => client.close());
  await client.connect(transport, { timeout: 5000 });
  return { client, transport, events };
}

describe('the shared transport suite', () => {
  /**
   * The pair's right side is the server's session transport itself: the handler is given a stand-in whose
   * `connect` hands the session over. The server only accepts `initialize` first, so the pair does a raw
   * initialize exchange before it is handed to the suite. The session is bound to the pair
   * (`renewSession: false`): the server ending it ends the client side, like a socket closed by its peer.
   */
  runTransportSuite('Streamable HTTP client', {
    async connect() {
      const sessions: HttpSession[] = [];
      const arrived = deferred<HttpSession>();
      const standIn = {
        connect: (session: HttpSession) => {
          sessions.push(session);
          arrived.resolve(session);
          return undefined;
        },
      } as unknown as Server;
      const handler = createStreamableHttpHandler(standIn, { retryMs: 20 });
      const site = await listenWithStreams(handler);
      const left = new StreamableHttpClientTransport(`${site.origin}/mcp`, {
        renewSession: false,
        reconnect: { initialDelayMs: 20 },
      });
      const answered = firstValueFrom(left.messages);
      // A request's send() settles with its exchange: once the answer below arrived.
      const sent = left.send({
        jsonrpc: '2.0',
        id: 'suite-init',
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'suite', version: '1' } },
      });
      const right = await arrived.promise;
      const request = (await firstValueFrom(right.messages)) as { id: string };
      await right.send({
        jsonrpc: '2.0',
        id: request.id,
        result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'suite', version: '1' } },
      });
      expect(await answered).toMatchObject({ id: 'suite-init', result: { protocolVersion: '2025-11-25' } });
      await sent;
      const initialized = firstValueFrom(right.messages);
      const standalone = site.nextGet();
      await left.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      await initialized;
      await within(standalone, 'the standalone stream');
      return {
        left,
        right,
        dispose: async () => {
          await Promise.all(sessions.map((session) => session.close()));
        },
      };
    },
  });
});

const definition = serverWith([
  tool('echo', json),
  tool('work', async (_args, ctx) => {
    await ctx.progress(1, 3, 'one');
    await ctx.log('info', 'halfway');
    await ctx.progress(2, 3, 'two');
    await ctx.progress(3, 3, 'three');
    // With JSON answers, the messages above travel on the standalone stream and the result on the POST: the
    // sampling round trip makes sure they all arrived before the result.
    const sampled = await ctx.createMessage({
      messages: [{ role: 'user', content: { type: 'text', text: 'sample me' } }],
      maxTokens: 10,
    });
    return { content: [{ type: 'text', text: `sampled: ${(sampled.content as { text: string }).text}` }] };
  }),
  tool('big', (args) => ({ content: [{ type: 'text', text: 'x'.repeat((args as { size: number }).size) }] })),
]);

const isToolsListChanged = (note: { method: string }) => note.method === 'notifications/tools/list_changed';

const sampling = () => ({
  role: 'assistant' as const,
  content: { type: 'text' as const, text: 'from the client' },
  model: 'test-model',
});

describe.each(['json', 'sse'] as const)('our Client and Server, %s answers', (responseMode) => {
  /** A session with a custom header that made one call, and everything the server saw (DELETE included). */
  async function closedSession() {
    const site = await serve(definition, { responseMode });
    const { client, transport } = await connect(site.url, {}, { headers: { Authorization: 'Bearer token-1' } });
    const sessionId = transport.sessionId;
    const echoed = await client.callTool('echo', { n: 1 });
    const posts = site.seen.filter((request) => request.method === 'POST');
    await client.close();
    return { site, client, sessionId, echoed, posts };
  }

  it('negotiates the current revision and gets a visible-ASCII session id', async () => {
    const { client, sessionId } = await closedSession();
    expect(client.protocolVersion).toBe('2025-11-25');
    expect(sessionId).toMatch(/^[\x21-\x7e]+$/);
  });

  it('calls a tool', async () => {
    const { echoed } = await closedSession();
    expect(JSON.parse(textOf(echoed))).toEqual({ n: 1 });
  });

  it('sends every POST with Accept for JSON and SSE and a JSON Content-Type', async () => {
    const { posts } = await closedSession();
    expect(posts.length).toBeGreaterThanOrEqual(3);
    for (const post of posts) {
      expect(post.headers.accept).toContain('application/json');
      expect(post.headers.accept).toContain('text/event-stream');
      expect(post.headers['content-type']).toBe('application/json');
    }
  });

  it('sends the initialize POST without a session id', async () => {
    const { posts } = await closedSession();
    expect(posts[0]!.headers['mcp-session-id']).toBeUndefined();
  });

  it('sends the session id and protocol version on every later request', async () => {
    const { site, sessionId } = await closedSession();
    for (const later of site.seen.slice(1)) {
      expect(later.headers['mcp-session-id']).toBe(sessionId);
      expect(later.headers['mcp-protocol-version']).toBe('2025-11-25');
    }
  });

  it('uses POST, GET and DELETE', async () => {
    const { site } = await closedSession();
    expect(new Set(site.seen.map((request) => request.method))).toEqual(new Set(['POST', 'GET', 'DELETE']));
  });

  it('sends the custom header on every request', async () => {
    const { site } = await closedSession();
    for (const request of site.seen) expect(request.headers.authorization).toBe('Bearer token-1');
  });

  /** The `work` tool called with the standalone stream open (JSON answers send the call's messages there). */
  async function work() {
    const site = await serve(definition, { responseMode });
    const standalone = site.nextGet();
    const { client } = await connect(site.url, { sampling });
    await within(standalone, 'the standalone stream');
    await client.setLoggingLevel('info');
    const logs = firstValueFrom(client.logs$);
    const progress: number[] = [];
    const result = await client.callTool('work', {}, { onProgress: ({ progress: value }) => progress.push(value) });
    return { result, progress, log: await within(logs, 'the log') };
  }

  it('carries progress during a call', async () => {
    expect((await work()).progress).toEqual([1, 2, 3]);
  });

  it('carries a log during a call', async () => {
    expect((await work()).log.data).toBe('halfway');
  });

  it('carries a sampling request during a call', async () => {
    expect(textOf((await work()).result)).toBe('sampled: from the client');
  });

  it('receives list_changed on the standalone GET stream', async () => {
    const site = await serve(definition, { responseMode });
    const standalone = site.nextGet();
    const { client } = await connect(site.url);
    const get = await within(standalone, 'the standalone stream');
    expect(get.headers.accept).toBe('text/event-stream');
    const changed = firstValueFrom(
      client.notifications$.pipe(filter((note) => note.method === 'notifications/tools/list_changed')),
    );
    site.server.update((current) => current.withTools(tool('added')));
    await within(changed, 'list_changed');
    expect((await client.listTools()).map((listed) => listed.name)).toContain('added');
  });

  it('keeps its connections alive: many calls, few TCP connections', async () => {
    const site = await serve(definition, { responseMode });
    const { client } = await connect(site.url);
    for (let i = 0; i < 40; i++) await client.callTool('echo', { i });
    // One for the standalone stream, one for the POSTs (another when a POST was still finishing).
    expect(site.connections).toBeLessThanOrEqual(3);
  });
});

describe('streams', () => {
  /** A call whose SSE stream the server drops between two progress notifications. */
  async function droppedCall() {
    let site!: Awaited<ReturnType<typeof serve>>;
    const firstProgress = deferred();
    const droppingDefinition = serverWith([
      tool('drop', async (_args, ctx) => {
        await ctx.progress(1, 2);
        await firstProgress.promise; // the client holds an event id to resume after
        site.dropPostStreams();
        await ctx.progress(2, 2); // sent while the client is away: replayed on resumption
        return { content: [{ type: 'text', text: 'survived' }] };
      }),
    ]);
    site = await serve(droppingDefinition, { responseMode: 'sse' });
    const { client, events } = await connect(site.url);
    const progress: number[] = [];
    const result = await client.callTool(
      'drop',
      {},
      {
        onProgress: ({ progress: value }) => {
          progress.push(value);
          firstProgress.resolve();
        },
      },
    );
    return { site, events, progress, result };
  }

  it('completes a call whose request stream dropped', async () => {
    expect(textOf((await droppedCall()).result)).toBe('survived');
  });

  it('misses nothing of a dropped request stream: what was sent meanwhile is replayed', async () => {
    expect((await droppedCall()).progress).toEqual([1, 2]);
  });

  it('resumes a dropped request stream with a GET carrying the last event id, after the retry delay', async () => {
    const { site, events } = await droppedCall();
    const reconnecting = events.find((event) => event.type === 'reconnecting' && event.stream === 'request');
    expect(reconnecting).toMatchObject({ attempt: 1, delayMs: 30, lastEventId: expect.any(String) });
    const resume = site.seen.find((request) => request.method === 'GET' && request.headers['last-event-id']);
    expect(resume?.headers['last-event-id']).toBe((reconnecting as { lastEventId: string }).lastEventId);
  });

  /** A client whose standalone stream the server cut after one list_changed, and the GET that reopened it. */
  async function standaloneCut() {
    const site = await serve(definition);
    const first = site.nextGet();
    const { client } = await connect(site.url);
    const firstGet = await within(first, 'the standalone stream');
    const before = nextEvent(client.notifications$, isToolsListChanged, 'list_changed before the drop');
    site.server.update((current) => current.withTools(tool('sooner')));
    await before;
    const again = site.nextGet();
    firstGet.socket.destroy();
    const reopened = await within(again, 'the reconnection');
    return { site, client, reopened };
  }

  it('reopens the standalone stream when the server ends it, resuming after its last event', async () => {
    const { reopened } = await standaloneCut();
    expect(reopened.headers['last-event-id']).toMatch(/^standalone:\d+$/);
  });

  it('hears notifications on the reopened standalone stream', async () => {
    const { site, client } = await standaloneCut();
    const after = nextEvent(client.notifications$, isToolsListChanged, 'list_changed after the reconnection');
    site.server.update((current) => current.withTools(tool('later')));
    await after;
  });

  describe('a finished request: its stream is never resumed', () => {
    /** A tool that runs until its caller cancels it; `started` resolves once it runs, `ended` once it was aborted. */
    function hangingServer() {
      const started = deferred();
      const ended = deferred();
      const hanging = serverWith([
        tool('hang', (_args, ctx) => {
          started.resolve();
          return new Promise((_, reject) =>
            ctx.signal.addEventListener('abort', () => {
              ended.resolve();
              reject(ctx.signal.reason);
            }),
          );
        }),
      ]);
      return { hanging, started, ended };
    }

    /**
     * What the transport did on its own about request streams from now on, until `quietMs` passed without
     * any of it (the server's retry delay is 30 ms: a resumption would show within that).
     */
    async function requestStreamTrouble(transport: StreamableHttpClientTransport, quietMs = 300) {
      const trouble = firstValueFrom(
        transport.events.pipe(filter((event) => 'stream' in event && event.stream === 'request')),
      );
      const quiet = new Promise<undefined>((resolve) => setTimeout(resolve, quietMs));
      return Promise.race([trouble, quiet]);
    }

    it('a cancelled call: no reconnection, no resumption GET', async () => {
      const { hanging, started, ended } = hangingServer();
      const site = await serve(hanging, { responseMode: 'sse' });
      const { client, transport } = await connect(site.url);
      const abort = new AbortController();
      const call = client.callTool('hang', {}, { signal: abort.signal }).catch((error: unknown) => error);
      await within(started.promise, 'the tool to start');
      const trouble = requestStreamTrouble(transport);
      abort.abort();
      expect(await call).toBeInstanceOf(RequestCancelledError);
      await within(ended.promise, 'the server to abort the tool');
      expect(await trouble).toBeUndefined();
      expect(site.seen.filter((request) => request.headers['last-event-id'] !== undefined)).toEqual([]);
    });

    it('a timed-out call: no reconnection, no resumption GET', async () => {
      const { hanging, started, ended } = hangingServer();
      const site = await serve(hanging, { responseMode: 'sse' });
      const { client, transport } = await connect(site.url);
      const call = client.callTool('hang', {}, { timeout: 200 }).catch((error: unknown) => error);
      await within(started.promise, 'the tool to start');
      const trouble = requestStreamTrouble(transport, 500);
      expect(await call).toBeInstanceOf(RequestTimeoutError);
      await within(ended.promise, 'the server to abort the tool');
      expect(await trouble).toBeUndefined();
      expect(site.seen.filter((request) => request.headers['last-event-id'] !== undefined)).toEqual([]);
    });
  });

  it('does without a standalone stream when the server answers the GET with 405', async () => {
    const site = await serve(definition, {}, (request, response) => {
      if (request.method !== 'GET') return false;
      response.writeHead(405, { allow: 'POST, DELETE' }).end();
      return true;
    });
    const { client, events } = await connect(site.url);
    expect(JSON.parse(textOf(await client.callTool('echo', { ok: true })))).toEqual({ ok: true });
    expect(site.seen.filter((request) => request.method === 'GET')).toHaveLength(1);
    expect(events).toEqual([]);
  });
});

describe('sessions', () => {
  const deleteSession = async (url: string, sessionId: string) =>
    (await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': sessionId } })).status;

  it('sends DELETE on close', async () => {
    const site = await serve(definition);
    const { client } = await connect(site.url);
    await client.close();
    expect(site.seen.at(-1)?.method).toBe('DELETE');
  });

  it('the server forgets the session once the DELETE is answered', async () => {
    const site = await serve(definition);
    const { client } = await connect(site.url);
    expect(site.handler.sessionCount).toBe(1);
    await client.close();
    expect(site.handler.sessionCount).toBe(0);
  });

  /** A session the server ended behind the client's back, then a call that met the 404 and renewed it. */
  async function renewedByPost() {
    const site = await serve(definition);
    const { client, transport, events } = await connect(site.url, {}, { standaloneStream: false });
    const previous = transport.sessionId!;
    expect(await deleteSession(site.url, previous)).toBe(204);
    expect(site.handler.sessionCount).toBe(0);
    const echoed = await client.callTool('echo', { after: 'renewal' });
    return { site, transport, events, previous, echoed };
  }

  it('renews a session the server ended when the next POST gets 404', async () => {
    const { site, transport, events, previous } = await renewedByPost();
    expect(events).toEqual([{ type: 'session-renewed', previousSessionId: previous, sessionId: transport.sessionId }]);
    expect(transport.sessionId).not.toBe(previous);
    expect(site.handler.sessionCount).toBe(1);
  });

  it('retries the message that met the 404 on the renewed session', async () => {
    const { echoed } = await renewedByPost();
    expect(JSON.parse(textOf(echoed))).toEqual({ after: 'renewal' });
  });

  it('renews with a replayed initialize', async () => {
    const { site } = await renewedByPost();
    // The replayed initialize carried the same client info; its answer never reached the client.
    const initializes = site.seen.filter((request) => request.method === 'POST' && !request.headers['mcp-session-id']);
    expect(initializes).toHaveLength(2);
  });

  /** A client whose standalone stream found its session gone, and the GET that reopened on the new one. */
  async function renewedByStandalone() {
    const site = await serve(definition);
    const first = site.nextGet();
    const { client, transport, events } = await connect(site.url);
    await within(first, 'the standalone stream');
    const renewed = nextEvent(transport.events, (event) => event.type === 'session-renewed', 'the renewal');
    await deleteSession(site.url, transport.sessionId!);
    await renewed;
    const reopened = await within(site.nextGet(), 'the stream on the new session');
    return { site, client, transport, events, reopened };
  }

  it('renews the session, once, when the standalone stream finds it gone', async () => {
    const { transport, events, reopened } = await renewedByStandalone();
    expect(reopened.headers['mcp-session-id']).toBe(transport.sessionId);
    expect(events.filter((event) => event.type === 'session-renewed')).toHaveLength(1);
  });

  it('keeps listening on the renewed session', async () => {
    const { site, client } = await renewedByStandalone();
    const changed = nextEvent(client.notifications$, isToolsListChanged, 'list_changed on the new session');
    site.server.update((current) => current.withTools(tool('renewed')));
    await changed;
  });

  it('with renewSession false, the session ending ends the connection', async () => {
    const site = await serve(definition);
    const first = site.nextGet();
    const { client, transport } = await connect(site.url, {}, { renewSession: false });
    await within(first, 'the standalone stream');
    await deleteSession(site.url, transport.sessionId!);
    expect((await within(client.closed, 'the connection to close')).kind).toBe('transport-closed');
  });

  it('a renewal the server refuses makes the transport fail with a clear TransportError', async () => {
    let refuseInitialize = false;
    const site = await serve(definition, {}, (request, response) => {
      if (!refuseInitialize || request.method !== 'POST' || request.headers['mcp-session-id']) return false;
      response.writeHead(503, { 'content-type': 'text/plain' }).end('maintenance');
      return true;
    });
    const { client, transport } = await connect(site.url, {}, { standaloneStream: false });
    await deleteSession(site.url, transport.sessionId!);
    refuseInitialize = true;
    const failure = await client.callTool('echo', {}).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    const reason = await within(client.closed, 'the connection to close');
    expect(reason.kind).toBe('transport-error');
    expect(reason.message).toMatch(/HTTP 404.*could not be started.*HTTP 503.*maintenance/);
  });
});

describe('the session lifecycle actor', () => {
  it("joins the runtime given: the runtime's trace shows it go from opening to active", async () => {
    const runtime = new Runtime();
    const changes: TraceEvent[] = [];
    const subscription = runtime.trace$.subscribe((event) => changes.push(event));
    cleanups.push(() => subscription.unsubscribe());
    const site = await serve(definition);
    await connect(site.url, {}, { runtime, standaloneStream: false });
    expect(changes).toContainEqual(
      expect.objectContaining({ kind: 'lifecycle', actor: 'httpClientSession', from: 'opening', to: 'active' }),
    );
  });

  it("close() gives up on a DELETE the server never answers after 5 s of the runtime's clock", async () => {
    const clock = new SimulatedClock();
    const deleteArrived = deferred();
    const site = await serve(definition, {}, (request) => {
      if (request.method !== 'DELETE') return false;
      deleteArrived.resolve(); // and never answered
      return true;
    });
    const { transport } = await connect(site.url, {}, { runtime: new Runtime({ clock }), standaloneStream: false });
    const closing = transport.close();
    await within(deleteArrived.promise, 'the DELETE');
    clock.increment(4999);
    expect(transport.state).toBe('closing');
    clock.increment(1);
    await within(closing, 'close() to give up');
    expect(transport.state).toBe('closed');
  });
});

describe('requests in flight', () => {
  /** 64 POSTs under one abort signal to a server that never answers, their bodies written. */
  async function underOneSignal() {
    const site = await listenWithStreams(() => undefined); // never answers
    const agent = new http.Agent({ keepAlive: true });
    cleanups.push(() => agent.destroy());
    const target = httpTarget(new URL(`${site.origin}/mcp`), agent);
    const headers = headerList(target, undefined, { 'content-type': 'application/json' });
    const abort = new AbortController();
    const exchanges = Array.from({ length: 64 }, () =>
      sendHttpRequest({ method: 'POST', target, headers, body: '{}', signal: abort.signal }),
    );
    // A test that does not abort leaves them to fail when the server closes: handled, not unhandled rejections.
    for (const exchange of exchanges) exchange.response.catch(() => undefined);
    await within(Promise.all(exchanges.map((exchange) => exchange.written)), 'the bodies to be written');
    return { site, abort, exchanges };
  }

  it('64 requests under one signal add one abort listener', async () => {
    const { abort } = await underOneSignal();
    expect(getEventListeners(abort.signal, 'abort')).toHaveLength(1);
  });

  it('aborting the signal fails every request under it with a TransportError', async () => {
    const { site, abort, exchanges } = await underOneSignal();
    abort.abort();
    const failures = await within(
      Promise.all(exchanges.map((exchange) => exchange.response.catch((error: unknown) => error))),
      'the requests to fail',
    );
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(TransportError);
      expect((failure as Error).message).toBe(`POST ${site.origin}/mcp aborted: the transport closed`);
    }
  });
});

describe('errors are values', () => {
  it("an HTTP error status with a JSON-RPC error body fails the request with the server's error as sent", async () => {
    const site = await serve(definition, { maxBodyBytes: 4096 });
    const { client } = await connect(site.url);
    const failure = await client.callTool('echo', { padding: 'p'.repeat(8000) }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(McpError);
    expect(failure).toMatchObject({
      code: ErrorCode.InvalidRequest,
      message: 'Payload Too Large: the limit is 4096 bytes',
    });
  });

  it('after an HTTP error on a request POST, the connection carries on', async () => {
    const site = await serve(definition, { maxBodyBytes: 4096 });
    const { client } = await connect(site.url);
    await client.callTool('echo', { padding: 'p'.repeat(8000) }).catch(() => undefined);
    expect(JSON.parse(textOf(await client.callTool('echo', { still: 'fine' })))).toEqual({ still: 'fine' });
  });

  it('an HTTP error status without a JSON-RPC error body fails the request with a TransportError', async () => {
    let failPosts = false;
    const site = await serve(definition, {}, (request, response) => {
      if (!failPosts || request.method !== 'POST') return false;
      response.writeHead(502, { 'content-type': 'text/plain' }).end('bad gateway');
      return true;
    });
    const { client } = await connect(site.url, {}, { standaloneStream: false });
    failPosts = true;
    const failure = await client.callTool('echo', {}).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TransportError);
    expect((failure as Error).message).toMatch(/POST .* \(tools\/call \d+\): HTTP 502.*bad gateway/);
  });

  it('a notification the server refuses rejects send() with a TransportError', async () => {
    const site = await serve(definition, { maxBodyBytes: 4096 });
    const transport = new StreamableHttpClientTransport(site.url);
    cleanups.push(() => transport.close());
    const refused = transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await expect(refused).rejects.toBeInstanceOf(TransportError);
    await expect(refused).rejects.toThrow(/HTTP 400.*MCP-Session-Id/);
  });

  /** A client whose inbound limit is 2000 bytes. */
  async function limitedClient() {
    const site = await serve(definition, { responseMode: 'json' });
    return (await connect(site.url, {}, { maxMessageBytes: 2000 })).client;
  }

  it('an answer over the inbound limit fails the request with a TransportError', async () => {
    const client = await limitedClient();
    const failure = await client.callTool('big', { size: 5000 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TransportError);
    expect((failure as Error).message).toContain('larger than the limit of 2000 bytes');
  });

  it('after an answer over the inbound limit, the connection carries on', async () => {
    const client = await limitedClient();
    await client.callTool('big', { size: 5000 }).catch(() => undefined);
    expect(textOf(await client.callTool('big', { size: 10 }))).toBe('x'.repeat(10));
  });

  it('an unreachable server fails connect with a TransportError', async () => {
    const probe = await listenHttp(() => undefined);
    await new Promise((resolve) => probe.server.close(resolve)); // nothing listens there any more
    const url = `${probe.origin}/mcp`;
    const client = new Client({ name: 'c', version: '1' });
    const failure = await client.connect(new StreamableHttpClientTransport(url)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TransportError);
    expect((failure as Error).message).toMatch(/ECONNREFUSED/);
  });

  /** A transport closed twice at once before it ever connected, and its two streams as they ended. */
  async function closedTwice() {
    const site = await serve(definition);
    const transport = new StreamableHttpClientTransport(site.url);
    const messages = firstValueFrom(transport.messages.pipe(toArray()));
    const events = firstValueFrom(transport.events.pipe(toArray()));
    const closing = await Promise.allSettled([transport.close(), transport.close()]);
    return { transport, messages, events, closing };
  }

  it('close() is idempotent: closing twice at once succeeds both times', async () => {
    const { closing } = await closedTwice();
    expect(closing.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled']);
  });

  it('close() completes messages', async () => {
    expect(await (await closedTwice()).messages).toEqual([]);
  });

  it('close() completes events', async () => {
    expect(await (await closedTwice()).events).toEqual([]);
  });

  it('after close(), sends reject with a TransportError', async () => {
    const { transport } = await closedTwice();
    await expect(transport.send({ jsonrpc: '2.0', method: 'ping', id: 1 })).rejects.toBeInstanceOf(TransportError);
  });

  it('refuses a URL that is not http or https', () => {
    expect(() => new StreamableHttpClientTransport('ftp://127.0.0.1/mcp')).toThrow(/http: or https:/);
  });
});

describe('the fallback to HTTP+SSE', () => {
  /** Our client pointed at the legacy SSE URL of our endpoint serving both transports. */
  async function fellBack() {
    const server = new Server(definition);
    const handler = createMcpHttpHandler(server);
    cleanups.push(() => handler.close());
    const site = await listenWithStreams(handler);
    return { handler, ...(await connect(`${site.origin}/sse`, { sampling })) };
  }

  it('switches to the legacy transport when the initialize POST gets 405', async () => {
    const { transport, events } = await fellBack();
    expect(events).toEqual([{ type: 'fallback', to: 'legacy-sse', status: 405 }]);
    expect(transport.sessionId).toBeUndefined();
  });

  it('works on over the legacy transport: a call with progress and sampling', async () => {
    const { client } = await fellBack();
    const progress: number[] = [];
    const result = await client.callTool('work', {}, { onProgress: ({ progress: value }) => progress.push(value) });
    expect(textOf(result)).toBe('sampled: from the client');
    expect(progress).toEqual([1, 2, 3]);
  });

  it('ends the legacy session on close', async () => {
    const { client, handler } = await fellBack();
    expect(handler.sessionCount).toBe(1);
    await client.close();
    // No event announces that the server dropped a session: it does once it sees the stream's socket close.
    await eventually(() => handler.sessionCount === 0, 'the legacy session to end');
  });

  it("with fallback false, the refused initialize fails connect with the server's JSON-RPC error", async () => {
    const server = new Server(definition);
    const handler = createMcpHttpHandler(server);
    cleanups.push(() => handler.close());
    const site = await listenWithStreams(handler);
    const client = new Client({ name: 'c', version: '1' });
    const failure = await client
      .connect(new StreamableHttpClientTransport(`${site.origin}/sse`, { fallback: false }))
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(McpError);
    expect((failure as Error).message).toBe('Method Not Allowed');
  });

  it('reports both failures when the fallback GET finds no HTTP+SSE endpoint either', async () => {
    const site = await listenWithStreams((request, response) => {
      response.writeHead(404, { 'content-type': 'text/plain' }).end(`nothing at ${request.method}`);
    });
    const client = new Client({ name: 'c', version: '1' });
    const failure = await client
      .connect(new StreamableHttpClientTransport(`${site.origin}/mcp`))
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TransportError);
    expect((failure as Error).message).toMatch(/HTTP 404.*nothing at POST.*falling back.*HTTP 404.*nothing at GET/);
  });

  it('keeps the status of the refused initialize POST on the combined failure', async () => {
    const site = await listenWithStreams((request, response) => {
      response.writeHead(request.method === 'POST' ? 405 : 404, { 'content-type': 'text/plain' }).end('no');
    });
    const client = new Client({ name: 'c', version: '1' });
    const failure = await client
      .connect(new StreamableHttpClientTransport(`${site.origin}/mcp`))
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(HttpStatusError);
    expect((failure as HttpStatusError).httpStatus).toBe(405);
  });
});

describe('servers that misbehave', () => {
  const request = { jsonrpc: '2.0' as const, id: 7, method: 'tools/list' };

  /**
   * Sends one request straight through a transport: what came back on `messages` until the exchange
   * settled, and how it settled (undefined: answered; otherwise the rejection of `send()`).
   */
  async function exchange(listener: Listener, options: StreamableHttpClientOptions = {}) {
    const site = await listenWithStreams(listener);
    const transport = new StreamableHttpClientTransport(`${site.origin}/mcp`, options);
    cleanups.push(() => transport.close());
    const events: HttpClientEvent[] = [];
    transport.events.subscribe((event) => events.push(event));
    const frames: unknown[] = [];
    transport.messages.subscribe((frame) => frames.push(frame));
    const failure = await within(
      transport.send(request).then(
        () => undefined,
        (error: unknown) => error,
      ),
      'the exchange to settle',
    );
    return { frames, events, seen: site.seen, failure };
  }

  it('a request stream that ends without an event id delivers what came', async () => {
    const { frames } = await exchange((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(
        'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}\n\n',
      );
    });
    expect(frames).toEqual([{ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 1 } }]);
  });

  it('a request stream that ends without an event id fails that request with a TransportError', async () => {
    const { failure } = await exchange((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end('event: message\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{}}\n\n');
    });
    expect(failure).toBeInstanceOf(TransportError);
    expect((failure as Error).message).toMatch(
      /tools\/list 7\).*ended the stream before the response, without an event id/,
    );
  });

  it('a resumable stream that keeps coming back empty is given up after maxAttempts', async () => {
    const { failure, events, seen } = await exchange(
      (incoming, response) => {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end(incoming.method === 'POST' ? 'id: a-1\nretry: 5\ndata: \n\n' : '');
      },
      { reconnect: { maxAttempts: 2, maxDelayMs: 10 } },
    );
    expect(events).toEqual([
      { type: 'reconnecting', stream: 'request', attempt: 1, delayMs: 5, lastEventId: 'a-1' },
      { type: 'reconnecting', stream: 'request', attempt: 2, delayMs: 10, lastEventId: 'a-1' },
      { type: 'stream-lost', stream: 'request', error: expect.stringContaining('gave up after 2 attempts') },
    ]);
    expect(seen.filter((seenRequest) => seenRequest.method === 'GET')).toHaveLength(2);
    expect(failure).toBeInstanceOf(TransportError);
    expect((failure as Error).message).toContain('the response stream was lost');
  });

  it('an answer of an unexpected type fails the request with a clear TransportError', async () => {
    const { frames, failure } = await exchange((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
    });
    expect(frames).toEqual([]);
    expect(failure).toBeInstanceOf(TransportError);
    expect((failure as Error).message).toMatch(/unexpected content type text\/html/);
  });

  /** A request answered with JSON that does not parse. */
  const unparsable = () =>
    exchange((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":');
    });

  it('a JSON answer that does not parse arrives as an UnreadableFrame', async () => {
    const { frames } = await unparsable();
    expect(frames).toHaveLength(1);
    expect(frames[0]).toBeInstanceOf(UnreadableFrame);
  });

  it('a JSON answer that does not parse fails the request with a TransportError', async () => {
    const { failure } = await unparsable();
    expect(failure).toBeInstanceOf(TransportError);
    expect((failure as Error).message).toMatch(/Parse error/);
  });
});
