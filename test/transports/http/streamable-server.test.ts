/**
 * The Streamable HTTP server handler over real `node:http` on 127.0.0.1: sessions (their lifecycle, idle
 * expiry, failed handshakes), POST answered as JSON or SSE, the standalone GET stream, keep-alive
 * comments, resumption from the event store, closing a stream mid-call, the header and origin checks,
 * and the official SDK client (JSON, SSE, and resuming after its stream was dropped or closed).
 */
import type { ServerResponse } from 'node:http';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as SdkV2Client, StreamableHTTPClientTransport as SdkV2Transport } from '@modelcontextprotocol/client';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import type { ServerDefinition } from '../../../lib/server/definition';
import { defaultLogger } from '../../../lib/core/logger';
import { Runtime } from '../../../lib/core/runtime';
import type { JsonRpcMessage } from '../../../lib/jsonrpc/types';
import { Server, type ServerConnection } from '../../../lib/server/server';
import { MemoryEventStore } from '../../../transports/http/event-store';
import { HttpSession } from '../../../transports/http/http-session';
import { SseParser } from '../../../transports/http/sse';
import { createStreamableHttpHandler, type StreamableHttpOptions } from '../../../transports/http/streamable-server';
import { validateEveryConnection } from '../../conformance/validate-connections';
import { deferred, serverWith, tool } from '../../helpers/fixtures';
import { cleanups, listenHttp, sseReader, statusOfGet, within } from '../../helpers/http';
import { nextEvent } from '../../helpers/wait';

const LATEST = '2025-11-25';
/** What the test HTTP server saw, for tools that act on their own HTTP exchange. */
interface Hooks {
  /** POST responses still open. */
  readonly posts: Set<ServerResponse>;
  /** Emits each time a POST or GET response closed on the server, with the method. */
  readonly responseClosed: Subject<string>;
  /** Resolves at the first GET carrying `Last-Event-ID`. */
  readonly resumed: Promise<void>;
  /** Resolves when the `slow` tool started. */
  readonly slowStarted: Promise<void>;
}

const definition = (release: Promise<void>, hooks: Hooks, slowStarted: { resolve(): void }): ServerDefinition =>
  serverWith([
    tool('echo'),
    tool('chatty', async (_args, ctx) => {
      await ctx.log('info', 'working on it');
      return { content: [{ type: 'text', text: 'done' }] };
    }),
    tool('pinger', async (_args, ctx) => {
      await ctx.request('ping');
      return { content: [{ type: 'text', text: 'pong received' }] };
    }),
    tool('slow', async () => {
      slowStarted.resolve();
      await release;
      return { content: [{ type: 'text', text: 'finally' }] };
    }),
    // Drops its own SSE response as a network failure would, and answers once the client resumed. The
    // ping first: once the client answered it, it has read the priming event before it, so it can resume.
    tool('dropper', async (_args, ctx) => {
      await ctx.request('ping');
      for (const response of hooks.posts) {
        if (response.getHeader('content-type') === 'text/event-stream') response.destroy();
      }
      await hooks.resumed;
      return { content: [{ type: 'text', text: 'survived the drop' }] };
    }),
    // Closes its stream cleanly (SSE polling) and answers once the client resumed, if it could close.
    tool('poller', async (_args, ctx) => {
      const closed = (await ctx.closeStream?.()) ?? false;
      if (closed) await hooks.resumed;
      return { content: [{ type: 'text', text: `stream closed: ${closed}` }] };
    }),
  ]);

async function start(options: StreamableHttpOptions = {}) {
  const release = deferred();
  const resumed = deferred();
  const slowStarted = deferred();
  const hooks: Hooks = {
    posts: new Set(),
    responseClosed: new Subject(),
    resumed: resumed.promise,
    slowStarted: slowStarted.promise,
  };
  const server = validateEveryConnection(new Server(definition(release.promise, hooks, slowStarted)));
  /** The server side of each session, in the order they opened. */
  const connections: ServerConnection[] = [];
  const connect = server.connect.bind(server);
  server.connect = (...args) => {
    const connection = connect(...args);
    connections.push(connection);
    return connection;
  };
  const handler = createStreamableHttpHandler(server, options);
  const { origin } = await listenHttp((request, response) => {
    if (request.method === 'POST') hooks.posts.add(response);
    response.once('close', () => {
      hooks.posts.delete(response);
      hooks.responseClosed.next(request.method!);
    });
    if (request.method === 'GET' && request.headers['last-event-id']) resumed.resolve();
    handler(request, response);
  });
  cleanups.push(() => handler.close());
  /** Resolves once no POST response is open on the server any more. */
  const postsClosed = (): Promise<unknown> =>
    hooks.posts.size === 0
      ? Promise.resolve()
      : nextEvent(hooks.responseClosed, () => hooks.posts.size === 0, 'the POSTs to close on the server');
  /** The next message the server side of session `index` sends for `method` (a result: its id). */
  const sent = (index: number, matches: (message: any) => boolean, what: string) =>
    nextEvent(connections[index]!.trace$, (event) => event.direction === 'out' && matches(event.message), what);
  return { server, handler, hooks, connections, postsClosed, sent, release: release.resolve, url: `${origin}/mcp` };
}

/** Resolves when an HTTP session of `runtime` has closed (its lifecycle actor, on the runtime's trace). */
const sessionClosed = (runtime: Runtime) =>
  nextEvent(
    runtime.trace$,
    (event) => event.actor === 'httpSession' && event.kind === 'lifecycle' && event.to === 'closed',
    'the session to close',
  );

const ACCEPT_BOTH = 'application/json, text/event-stream';

function post(url: string, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(url, {
    method: 'POST',
    headers: { accept: ACCEPT_BOTH, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal,
  });
}

const initializeRequest = (version = LATEST, capabilities = {}) => ({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: version, capabilities, clientInfo: { name: 't', version: '1' } },
});

/** Initializes a session and sends `notifications/initialized`; returns the headers later requests need. */
async function openSession(url: string, version = LATEST, capabilities = {}) {
  const response = await post(url, initializeRequest(version, capabilities));
  expect(response.status).toBe(200);
  const sessionId = response.headers.get('mcp-session-id')!;
  const events = await readAll(response);
  expect(events.at(-1)).toMatchObject({ id: 0, result: { protocolVersion: version } });
  const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': version };
  expect((await post(url, { jsonrpc: '2.0', method: 'notifications/initialized' }, headers)).status).toBe(202);
  return { sessionId, headers };
}

/** The JSON-RPC messages of a JSON or SSE response, after it ended. */
async function readAll(response: Response): Promise<any[]> {
  if (response.headers.get('content-type')?.startsWith('application/json')) return [await response.json()];
  const reader = sseReader(response);
  const messages: any[] = [];
  for (let event = await reader.next(); event; event = await reader.next()) {
    if (event.data !== '') messages.push(JSON.parse(event.data));
  }
  return messages;
}

const call = (id: number, name: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: {} },
});

describe('sessions', () => {
  it('initialize creates a session with a visible-ASCII id', async () => {
    const { url, handler } = await start();
    const { sessionId } = await openSession(url);
    expect(sessionId).toMatch(/^[\x21-\x7e]{16,}$/);
    expect(handler.sessionCount).toBe(1);
  });

  it('a POST without the session id gets 400', async () => {
    const { url } = await start();
    await openSession(url);
    expect((await post(url, call(1, 'echo'), { 'mcp-protocol-version': LATEST })).status).toBe(400);
  });

  it('a POST naming an unknown session gets 404', async () => {
    const { url } = await start();
    await openSession(url);
    expect((await post(url, call(1, 'echo'), { 'mcp-session-id': 'nope' })).status).toBe(404);
  });

  it('a GET without the session id gets 400', async () => {
    const { url } = await start();
    await openSession(url);
    expect((await fetch(url, { headers: { accept: 'text/event-stream' } })).status).toBe(400);
  });

  it('DELETE ends the session: later requests get 404 and nothing is left behind', async () => {
    const { url, handler, server } = await start();
    const { headers } = await openSession(url);
    expect((await fetch(url, { method: 'DELETE', headers })).status).toBe(204);
    expect((await post(url, call(1, 'echo'), headers)).status).toBe(404);
    expect(handler.sessionCount).toBe(0);
    expect(server.connectionCount).toBe(0);
  });

  it('closes a session left idle', async () => {
    const clock = new SimulatedClock();
    const runtime = new Runtime({ clock });
    const { url, handler, server, postsClosed } = await start({ idleTimeoutMs: 100, connectionOptions: { runtime } });
    const { headers } = await openSession(url);
    await postsClosed();
    const expired = sessionClosed(runtime);
    clock.increment(100);
    await expired;
    expect(handler.sessionCount).toBe(0);
    expect(server.connectionCount).toBe(0);
    expect((await post(url, call(1, 'echo'), headers)).status).toBe(404);
  });

  it("an idle session's expiry timer does not hold the process open", async () => {
    const timers: NodeJS.Timeout[] = [];
    const recordingClock = {
      now: () => Date.now(),
      setTimeout: (callback: () => void, ms: number) => {
        const timer = setTimeout(callback, ms);
        timers.push(timer);
        return timer;
      },
      clearTimeout: (timer: unknown) => clearTimeout(timer as NodeJS.Timeout),
    };
    const runtime = new Runtime({ clock: recordingClock });
    const { url, handler } = await start({ idleTimeoutMs: 60_000, connectionOptions: { runtime } });
    await openSession(url);
    expect(handler.sessionCount).toBe(1);
    expect(timers.length).toBeGreaterThan(0);
    expect(timers.filter((timer) => timer.hasRef())).toEqual([]);
  });

  it('a session busy past the idle timeout lives on, and expires a whole timeout after its last response', async () => {
    const clock = new SimulatedClock();
    const runtime = new Runtime({ clock });
    const { url, handler, postsClosed, release } = await start({
      idleTimeoutMs: 1000,
      connectionOptions: { runtime },
    });
    const { headers } = await openSession(url);
    const reader = sseReader(await post(url, call(1, 'slow'), headers));
    await reader.next(); // priming: the call's POST is open
    clock.increment(1500); // the first check finds the session busy: the next one is due at 2500
    clock.increment(400);
    release(); // at 1900
    for (let event = await reader.next(); event; event = await reader.next());
    await postsClosed();
    clock.increment(600); // 2500: idle for 600 ms only, so the check re-arms for 2900
    const notice = { jsonrpc: '2.0', method: 'notifications/roots/list_changed' };
    expect((await post(url, notice, headers)).status).toBe(202); // alive (and active again at 2500)
    await postsClosed();
    clock.increment(400); // 2900: idle for 400 ms, so the check re-arms for 3500
    clock.increment(599);
    expect(handler.sessionCount).toBe(1);
    const expired = sessionClosed(runtime);
    clock.increment(1); // 3500: idle for the whole timeout
    await expired;
    expect(handler.sessionCount).toBe(0);
    expect((await post(url, call(2, 'echo'), headers)).status).toBe(404);
  });

  it('DELETE without a session id gets 400', async () => {
    const { url } = await start();
    expect((await fetch(url, { method: 'DELETE' })).status).toBe(400);
  });

  it('other methods get 405, naming the allowed ones', async () => {
    const { url } = await start();
    const put = await fetch(url, { method: 'PUT', body: '{}' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, POST, DELETE');
  });

  it('a full table evicts an idle session for a newcomer (the evicted one gets 404)', async () => {
    const { url, handler } = await start({ maxSessions: 1 });
    const first = await openSession(url);
    await openSession(url);
    expect(handler.sessionCount).toBe(1);
    expect((await post(url, call(1, 'echo'), first.headers)).status).toBe(404);
  });

  it('a full table of busy sessions refuses a newcomer with 503', async () => {
    const { url } = await start({ maxSessions: 1 });
    const second = await openSession(url);
    // The second session is busy while its standalone stream is open: nothing to evict.
    const stream = await fetch(url, { headers: { accept: 'text/event-stream', ...second.headers } });
    expect(stream.status).toBe(200);
    const refused = await post(url, initializeRequest());
    expect(refused.status).toBe(503);
    expect((await refused.json()).error.message).toMatch(/busy/);
    await stream.body!.cancel();
  });

  it('a client over its own quota evicts its own oldest idle session', async () => {
    const { url, handler } = await start({ maxSessionsPerClient: 2 });
    const oldest = await openSession(url);
    const middle = await openSession(url);
    await openSession(url);
    expect(handler.sessionCount).toBe(2);
    expect((await post(url, call(1, 'echo'), oldest.headers)).status).toBe(404);
    expect((await post(url, call(1, 'echo'), middle.headers)).status).toBe(200);
  });

  it('a client over its own quota gets 429 when all its sessions are busy', async () => {
    const { url } = await start({ maxSessionsPerClient: 2 });
    const middle = await openSession(url);
    const streams = await Promise.all(
      [middle.headers, (await openSession(url)).headers].map((headers) =>
        fetch(url, { headers: { accept: 'text/event-stream', ...headers } }),
      ),
    );
    expect(streams.map((stream) => stream.status)).toEqual([200, 200]);
    expect((await post(url, initializeRequest())).status).toBe(429);
    for (const stream of streams) await stream.body!.cancel();
  });
});

describe('W3C trace headers', () => {
  it('puts traceparent, tracestate and baggage headers into the _meta of requests that carry none', async () => {
    const runtime = new Runtime();
    const received: Array<Record<string, unknown> | undefined> = [];
    runtime.trace$.subscribe((event) => {
      if (event.direction === 'in' && event.method === 'tools/call') {
        received.push((event.message as { params?: { _meta?: Record<string, unknown> } }).params?._meta);
      }
    });
    const { url } = await start({ connectionOptions: { runtime } });
    const { headers } = await openSession(url);
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const traceHeaders = { ...headers, traceparent, tracestate: 'vendor=opaque', baggage: 'tenant=acme' };

    await readAll(await post(url, call(1, 'echo'), traceHeaders));
    const own = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const withOwn = { ...call(2, 'echo'), params: { name: 'echo', arguments: {}, _meta: { traceparent: own } } };
    await readAll(await post(url, withOwn, traceHeaders));
    await readAll(await post(url, call(3, 'echo'), { ...headers, traceparent: 'garbage', baggage: 'k=v' }));

    expect(received).toEqual([
      { traceparent, tracestate: 'vendor=opaque', baggage: 'tenant=acme' },
      { traceparent: own, baggage: 'tenant=acme' }, // _meta wins, and its trace context comes whole
      { baggage: 'k=v' },
    ]);
  });
});

describe('POST', () => {
  it('answers a tools/call as JSON when the mode is json: sized, not chunked, naming the session', async () => {
    const { url } = await start({ responseMode: 'json' });
    const { headers, sessionId } = await openSession(url);
    const response = await post(url, call(1, 'echo'), headers);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('mcp-session-id')).toBe(sessionId);
    expect(response.headers.get('transfer-encoding')).toBeNull();
    const text = await response.text();
    expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect(JSON.parse(text)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { content: [{ type: 'text', text: 'echo' }] },
    });
  });

  it('answers a tools/call as SSE: a priming event, the response, then the end', async () => {
    const { url } = await start();
    const { headers } = await openSession(url);
    const response = await post(url, call(1, 'echo'), headers);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const reader = sseReader(response);
    const priming = await reader.next();
    expect(priming).toMatchObject({ data: '', retry: 1000 });
    expect(priming!.id).toBeTruthy();
    const answer = await reader.next();
    expect(answer).toMatchObject({ event: 'message' });
    expect(JSON.parse(answer!.data)).toMatchObject({ id: 1, result: { content: [{ text: 'echo' }] } });
    expect(await reader.next()).toBeUndefined();
  });

  it('auto mode answers older clients with JSON', async () => {
    const { url } = await start();
    const { headers } = await openSession(url, '2025-06-18');
    const plain = await post(url, call(1, 'echo'), headers);
    expect(plain.headers.get('content-type')).toBe('application/json');
  });

  it('auto mode answers older clients with SSE when the handler sends something first', async () => {
    const { url } = await start();
    const { headers } = await openSession(url, '2025-06-18');
    const chatty = await post(url, call(2, 'chatty'), headers);
    expect(chatty.headers.get('content-type')).toBe('text/event-stream');
    const messages = await readAll(chatty);
    expect(messages.map((message) => message.method ?? message.id)).toEqual(['notifications/message', 2]);
  });

  it('a log notification made by a tool arrives on its stream before the response', async () => {
    const { url } = await start();
    const { headers } = await openSession(url);
    const messages = await readAll(await post(url, call(1, 'chatty'), headers));
    expect(messages[0]).toMatchObject({ method: 'notifications/message', params: { data: 'working on it' } });
    expect(messages[1]).toMatchObject({ id: 1, result: { content: [{ text: 'done' }] } });
  });

  it('a request made by a tool arrives on its stream; the answer POSTed back completes the call', async () => {
    const { url } = await start();
    const { headers } = await openSession(url);
    const reader = sseReader(await post(url, call(1, 'pinger'), headers));
    await reader.next(); // priming
    const ping = JSON.parse((await reader.next())!.data);
    expect(ping).toMatchObject({ method: 'ping' });
    expect((await post(url, { jsonrpc: '2.0', id: ping.id, result: {} }, headers)).status).toBe(202);
    expect(JSON.parse((await reader.next())!.data)).toMatchObject({
      id: 1,
      result: { content: [{ text: 'pong received' }] },
    });
    expect(await reader.next()).toBeUndefined();
  });

  it('a cancelled request ends its stream without a response', async () => {
    const { url } = await start();
    const { headers } = await openSession(url);
    const reader = sseReader(await post(url, call(5, 'slow'), headers));
    await reader.next(); // priming
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5 } };
    expect((await post(url, cancel, headers)).status).toBe(202);
    expect(await reader.next()).toBeUndefined();
  });

  it('a notification gets 202 with an empty body, naming the session', async () => {
    const { url } = await start();
    const { headers, sessionId } = await openSession(url);
    const response = await post(url, { jsonrpc: '2.0', method: 'notifications/roots/list_changed' }, headers);
    expect(response.status).toBe(202);
    expect(response.headers.get('mcp-session-id')).toBe(sessionId);
    expect(await response.text()).toBe('');
  });

  it('refuses malformed JSON with 400 and an id-less parse error', async () => {
    const { url } = await start();
    const { headers } = await openSession(url);
    const response = await post(url, '{"jsonrpc":', headers);
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error.code).toBe(-32700);
    expect(body).not.toHaveProperty('id');
  });

  it('accepts a batch from a 2025-03-26 session', async () => {
    const { url } = await start({ responseMode: 'json' });
    const old = await openSession(url, '2025-03-26');
    const batch = await post(url, [call(1, 'echo'), call(2, 'echo')], old.headers);
    expect((await batch.json()).map((reply: { id: number }) => reply.id).sort()).toEqual([1, 2]);
  });

  it('refuses a batch from a later session with 400', async () => {
    const { url } = await start({ responseMode: 'json' });
    const recent = await openSession(url);
    expect((await post(url, [call(1, 'echo')], recent.headers)).status).toBe(400);
  });

  it('refuses a body over maxBodyBytes with 413', async () => {
    const { url } = await start({ maxBodyBytes: 1024 });
    const { headers } = await openSession(url);
    const big = { ...call(1, 'echo'), params: { name: 'echo', arguments: { pad: 'x'.repeat(2000) } } };
    expect((await post(url, big, headers)).status).toBe(413);
  });

  it('refuses a POST that does not accept SSE with 406', async () => {
    const { url } = await start();
    const { headers } = await openSession(url);
    expect((await post(url, call(1, 'echo'), { ...headers, accept: 'application/json' })).status).toBe(406);
  });

  it('refuses a body that is not JSON by its media type with 415', async () => {
    const { url } = await start();
    const { headers } = await openSession(url);
    expect((await post(url, call(1, 'echo'), { ...headers, 'content-type': 'text/plain' })).status).toBe(415);
  });

  it('refuses an unknown protocol version header with 400', async () => {
    const { url } = await start();
    const { headers } = await openSession(url);
    expect((await post(url, call(1, 'echo'), { ...headers, 'mcp-protocol-version': '1999-01-01' })).status).toBe(400);
  });
});

describe('origin and host', () => {
  it('refuses a foreign Origin with 403', async () => {
    const { url } = await start();
    expect((await post(url, initializeRequest(), { origin: 'https://evil.example' })).status).toBe(403);
    expect((await post(url, initializeRequest(), { origin: 'null' })).status).toBe(403);
  });

  it('accepts a localhost Origin', async () => {
    const { url } = await start();
    expect((await post(url, initializeRequest(), { origin: 'http://localhost:3000' })).status).toBe(200);
  });

  it('refuses a foreign Host with 403', async () => {
    const { url } = await start();
    expect(await statusOfGet(url, { host: 'evil.example', accept: 'text/event-stream' })).toBe(403);
  });

  it('accepts an origin from allowedOrigins', async () => {
    const { url } = await start({ allowedOrigins: ['https://app.example'] });
    expect((await post(url, initializeRequest(), { origin: 'https://app.example' })).status).toBe(200);
  });
});

describe('GET streams', () => {
  it('a second standalone stream gets 409', async () => {
    const { url } = await start();
    const { headers } = await openSession(url);
    const stream = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' } });
    expect(stream.status).toBe(200);
    const reader = sseReader(stream);
    expect(await reader.next()).toMatchObject({ data: '' }); // priming
    expect((await fetch(url, { headers: { ...headers, accept: 'text/event-stream' } })).status).toBe(409);
    await reader.cancel();
  });

  it('the standalone stream carries list_changed after server.update', async () => {
    const { url, server } = await start();
    const { headers } = await openSession(url);
    const stream = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' } });
    expect(stream.status).toBe(200);
    const reader = sseReader(stream);
    expect(await reader.next()).toMatchObject({ data: '' }); // priming
    server.update((current) => current.withTools(tool('fresh')));
    expect(JSON.parse((await reader.next())!.data)).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
    });
    await reader.cancel();
  });

  it('resumes a dropped response stream with Last-Event-ID and replays the missed response', async () => {
    const { url, release, sent } = await start();
    const { headers } = await openSession(url);
    const abort = new AbortController();
    const reader = sseReader(await post(url, call(7, 'slow'), headers, abort.signal));
    const priming = (await reader.next())!;
    abort.abort();
    await reader.cancel();
    const answered = sent(0, (message) => message.id === 7, 'the response to 7');
    release();
    await answered; // sent while no stream was open: kept for the resumption
    const resumed = await fetch(url, {
      headers: { ...headers, accept: 'text/event-stream', 'last-event-id': priming.id! },
    });
    expect(resumed.status).toBe(200);
    const messages = await readAll(resumed);
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'finally' }] } }]);
  });
});

describe('resumption', () => {
  it('a stream resumed while its request runs replays what was missed, then carries the response', async () => {
    const { url, release } = await start();
    const { headers } = await openSession(url);
    const abort = new AbortController();
    const reader = sseReader(await post(url, call(3, 'slow'), headers, abort.signal));
    const priming = (await reader.next())!;
    abort.abort();
    await reader.cancel();
    const resumeHeaders = { ...headers, accept: 'text/event-stream', 'last-event-id': priming.id! };
    const resumed = await fetch(url, { headers: resumeHeaders });
    expect(resumed.status).toBe(200);
    release();
    expect(await readAll(resumed)).toEqual([
      { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'finally' }] } },
    ]);
  });

  it('messages sent while no standalone stream is open are replayed to a resuming GET', async () => {
    const { url, server, hooks, sent } = await start();
    const { headers } = await openSession(url);
    const first = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' } });
    const reader = sseReader(first);
    const priming = (await reader.next())!;
    const streamClosed = nextEvent(
      hooks.responseClosed,
      (method) => method === 'GET',
      'the GET to close on the server',
    );
    await reader.cancel();
    await streamClosed;
    const announced = sent(0, (message) => message.method === 'notifications/tools/list_changed', 'list_changed');
    server.update((current) => current.withTools(tool('fresh')));
    await announced;
    const resumed = await fetch(url, {
      headers: { ...headers, accept: 'text/event-stream', 'last-event-id': priming.id! },
    });
    const again = sseReader(resumed);
    expect(JSON.parse((await again.next())!.data)).toMatchObject({ method: 'notifications/tools/list_changed' });
    // Still the standalone stream: a second GET is refused.
    expect((await fetch(url, { headers: { ...headers, accept: 'text/event-stream' } })).status).toBe(409);
    await again.cancel();
  });

  it('an unknown Last-Event-ID opens a fresh standalone stream', async () => {
    const { url } = await start();
    const { headers } = await openSession(url);
    const response = await fetch(url, { headers: { ...headers, accept: 'text/event-stream', 'last-event-id': 'x:9' } });
    expect(response.status).toBe(200);
    const reader = sseReader(response);
    expect(await reader.next()).toMatchObject({ data: '' });
    await reader.cancel();
  });
});

describe('the official SDK client', () => {
  it.each(['auto', 'json', 'sse'] as const)('connects, lists and calls tools in %s mode', async (responseMode) => {
    const { url, handler, server } = await start({ responseMode });
    const client = new SdkClient({ name: 'sdk', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL(url));
    cleanups.push(() => client.close());
    await within(client.connect(transport));
    expect(transport.sessionId).toBeTruthy();
    const { tools } = await within(client.listTools());
    expect(tools.map((listed) => listed.name)).toEqual(['echo', 'chatty', 'pinger', 'slow', 'dropper', 'poller']);
    expect(await within(client.callTool({ name: 'echo', arguments: {} }))).toMatchObject({
      content: [{ text: 'echo' }],
    });
    expect(await within(client.callTool({ name: 'pinger', arguments: {} }))).toMatchObject({
      content: [{ text: 'pong received' }],
    });
    await within(transport.terminateSession());
    expect(handler.sessionCount).toBe(0);
    expect(server.connectionCount).toBe(0);
  });
});

describe('session lifecycle', () => {
  it.each(['auto', 'json'] as const)(
    'an initialize answered with an error closes its session at once (%s mode)',
    async (responseMode) => {
      const { url, handler, server, connections } = await start({ responseMode });
      const bad = { ...initializeRequest(), params: { protocolVersion: LATEST, capabilities: {} } };
      const response = await post(url, bad);
      const sessionId = response.headers.get('mcp-session-id')!;
      expect(await readAll(response)).toEqual([
        expect.objectContaining({ id: 0, error: expect.objectContaining({ code: -32602 }) }),
      ]);
      await within(connections[0]!.closed, 'the failed session to close');
      expect(handler.sessionCount).toBe(0);
      expect(server.connectionCount).toBe(0);
      const headers = { 'mcp-session-id': sessionId, 'mcp-protocol-version': LATEST };
      expect((await post(url, call(1, 'echo'), headers)).status).toBe(404);
    },
  );

  it('a session whose initialize POST ends before the answer is closed at once', async () => {
    const session = new HttpSession('handshake-test', {
      store: new MemoryEventStore(),
      responseMode: 'sse',
      retryMs: 1000,
      idleTimeoutMs: 60_000,
      keepAliveMs: 0,
      runtime: new Runtime(),
      standaloneBacklog: { waitMs: 10_000, maxLength: 10 },
      logger: defaultLogger,
      onClosed: () => {},
    });
    const received: unknown[] = [];
    // Plays a connection that never answers: the handshake can only end by the POST going away.
    session.messages.subscribe((message) => received.push(message));
    const { origin } = await listenHttp((_request, response) => {
      session.track(response);
      session.accept(initializeRequest() as JsonRpcMessage, response);
    });
    cleanups.push(() => session.close());
    const abort = new AbortController();
    const response = await post(`${origin}/mcp`, initializeRequest(), {}, abort.signal);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(session.state).toBe('handshake');
    abort.abort();
    expect(await within(session.ended)).toBe('handshake-failed');
    expect(session.live).toBe(false);
    expect(received).toHaveLength(1);
  });

  it('the server closing the connection ends its session; later requests get 404', async () => {
    const { url, handler, server, connections } = await start();
    const { headers } = await openSession(url);
    await server.close();
    await within(connections[0]!.closed, 'the session to close');
    expect(handler.sessionCount).toBe(0);
    expect((await post(url, call(1, 'echo'), headers)).status).toBe(404);
  });

  it('closing the handler ends every session and its connection', async () => {
    const { url, handler, server } = await start();
    const first = await openSession(url);
    await openSession(url);
    expect(handler.sessionCount).toBe(2);
    await handler.close();
    expect(handler.sessionCount).toBe(0);
    expect(server.connectionCount).toBe(0);
    expect((await post(url, call(1, 'echo'), first.headers)).status).toBe(404);
  });
});

describe('keep-alive', () => {
  it('an idle SSE stream gets `: keep-alive` comments, which parsers ignore', async () => {
    const { url } = await start({ keepAliveMs: 20 });
    const { headers } = await openSession(url);
    const response = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' } });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes(': keep-alive\n\n')) {
      const chunk = await within(reader.read(), 'a keep-alive comment');
      if (chunk.done) break;
      text += decoder.decode(chunk.value, { stream: true });
    }
    await reader.cancel();
    expect(text).toContain(': keep-alive\n\n');
    const events = new SseParser().push(text);
    expect(events.every((event) => event.data === '')).toBe(true); // the priming event only
  });
});

describe('closing a stream mid-call', () => {
  it('ctx.closeStream ends the POST response after the priming event; the result arrives on the resuming GET', async () => {
    const { url } = await start();
    const { headers } = await openSession(url);
    const reader = sseReader(await post(url, call(4, 'poller'), headers));
    const priming = (await reader.next())!;
    expect(priming).toMatchObject({ data: '', retry: 1000 });
    expect(await reader.next()).toBeUndefined(); // closed mid-call, before the result
    const resumed = await fetch(url, {
      headers: { ...headers, accept: 'text/event-stream', 'last-event-id': priming.id! },
    });
    expect(await readAll(resumed)).toEqual([
      { jsonrpc: '2.0', id: 4, result: { content: [{ type: 'text', text: 'stream closed: true' }] } },
    ]);
  });

  it('resolves false for a request answered as JSON', async () => {
    const json = await start({ responseMode: 'json' });
    const recent = await openSession(json.url);
    expect(await (await post(json.url, call(1, 'poller'), recent.headers)).json()).toMatchObject({
      result: { content: [{ text: 'stream closed: false' }] },
    });
  });

  it('resolves false for clients older than 2025-11-25', async () => {
    const auto = await start();
    const old = await openSession(auto.url, '2025-06-18');
    expect(await (await post(auto.url, call(1, 'poller'), old.headers)).json()).toMatchObject({
      result: { content: [{ text: 'stream closed: false' }] },
    });
  });
});

describe('the official SDK client resumes a call', () => {
  async function connectSdk(url: string) {
    const client = new SdkClient({ name: 'sdk', version: '1' });
    const errors: Error[] = [];
    client.onerror = (error) => errors.push(error);
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      reconnectionOptions: {
        initialReconnectionDelay: 20,
        maxReconnectionDelay: 200,
        reconnectionDelayGrowFactor: 2,
        maxRetries: 5,
      },
    });
    cleanups.push(() => client.close());
    await within(client.connect(transport));
    return { client, errors };
  }

  it('after its SSE response was destroyed mid-call (GET + Last-Event-ID)', async () => {
    const { url } = await start({ retryMs: 20 });
    const { client, errors } = await connectSdk(url);
    expect(await within(client.callTool({ name: 'dropper', arguments: {} }))).toMatchObject({
      content: [{ type: 'text', text: 'survived the drop' }],
    });
    expect(errors.map((error) => error.message).join('\n')).toContain('SSE stream disconnected');
  });

  it('after the server closed its stream mid-call (SSE polling)', async () => {
    const { url } = await start({ retryMs: 20 });
    const { client } = await connectSdk(url);
    expect(await within(client.callTool({ name: 'poller', arguments: {} }))).toMatchObject({
      content: [{ type: 'text', text: 'stream closed: true' }],
    });
  });
});

/** A server that asks the client for its roots the moment the client says `notifications/initialized`. */
class RootsOnInitialized extends Server {
  readonly roots: Promise<unknown>[] = [];
  readonly opened: ServerConnection[] = [];
  /** Emits the number of roots/list requests made so far, at each. */
  readonly asked = new Subject<number>();
  /** Resolves once the server has asked for roots `count` times. */
  askedFor(count: number): Promise<unknown> {
    return this.roots.length >= count
      ? Promise.resolve()
      : nextEvent(this.asked, (asked) => asked >= count, 'the server to ask for roots');
  }

  override connect(...args: Parameters<Server['connect']>): ServerConnection {
    const connection = super.connect(...args);
    this.opened.push(connection);
    connection.notifications$.subscribe((notification) => {
      if (notification.method !== 'notifications/initialized') return;
      const roots = connection.request('roots/list');
      roots.catch(() => undefined); // the test awaits it, or not
      this.roots.push(roots);
      this.asked.next(this.roots.length);
    });
    return connection;
  }
}

async function startRootsServer(options: StreamableHttpOptions = {}) {
  const server = new RootsOnInitialized(serverWith([tool('echo')]));
  const handler = createStreamableHttpHandler(server, options);
  const { origin } = await listenHttp(handler);
  cleanups.push(() => handler.close());
  return { server, handler, url: `${origin}/mcp` };
}

const ROOTS = [{ uri: 'file:///work/project', name: 'project' }];

/** The two official clients, each with a roots handler, an `onerror` recorder, and closed after the test. */
const sdkClients = {
  v1: async (url: string) => {
    const client = new SdkClient({ name: 'sdk-v1', version: '1' }, { capabilities: { roots: {} } });
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: ROOTS }));
    const errors: unknown[] = [];
    client.onerror = (error) => errors.push(error);
    cleanups.push(() => client.close());
    await within(client.connect(new StreamableHTTPClientTransport(new URL(url))));
    return {
      errors,
      callSlow: (signal: AbortSignal) => client.callTool({ name: 'slow', arguments: {} }, undefined, { signal }),
    };
  },
  v2: async (url: string) => {
    const client = new SdkV2Client({ name: 'sdk-v2', version: '2' }, { capabilities: { roots: {} } });
    client.setRequestHandler('roots/list', () => ({ roots: ROOTS }));
    const errors: unknown[] = [];
    client.onerror = (error) => errors.push(error);
    cleanups.push(() => client.close());
    await within(client.connect(new SdkV2Transport(new URL(url))));
    return {
      errors,
      callSlow: (signal: AbortSignal) => client.callTool({ name: 'slow', arguments: {} }, { signal }),
    };
  },
};

describe('server-to-client messages made before the client opened its GET stream', () => {
  it.each(['v1', 'v2'] as const)(
    'a roots/list sent as notifications/initialized arrives reaches the SDK %s client and is answered',
    async (version) => {
      const { server } = await startRootsServer().then(async (started) => {
        await sdkClients[version](started.url);
        return started;
      });
      await server.askedFor(1);
      expect(await within(server.roots[0]!, 'the roots answer')).toEqual({ roots: ROOTS });
    },
  );

  /** A roots server whose backlog waits 200 ms of a simulated clock; the roots/list it sent on initialized. */
  async function neverOpened() {
    const clock = new SimulatedClock();
    const warnings: string[] = [];
    const logger = { ...defaultLogger, warn: (message: string) => void warnings.push(message) };
    const { server, url } = await startRootsServer({
      standaloneStreamWaitMs: 200,
      connectionOptions: { logger, runtime: new Runtime({ clock }) },
    });
    await openSession(url, LATEST, { roots: {} });
    await server.askedFor(1);
    return { server, clock, warnings };
  }

  it('fails a request clearly when the client never opens the stream', async () => {
    const { server, clock } = await neverOpened();
    clock.increment(200);
    await expect(within(server.roots[0]!)).rejects.toThrow(/opened no stream for server-to-client messages/);
  });

  it('drops a notification when the client never opens the stream, with a warning', async () => {
    const { server, clock, warnings } = await neverOpened();
    const notified = server.opened[0]!.notify('notifications/tools/list_changed'); // waits for the stream
    clock.increment(200);
    await within(notified, 'the end of the wait');
    expect(warnings).toEqual([expect.stringMatching(/dropped The notification notifications\/tools\/list_changed/)]);
  });

  it('a bounded number wait; the rest fail at once', async () => {
    const { server, url } = await startRootsServer({ maxStandaloneBacklog: 1, standaloneStreamWaitMs: 5_000 });
    await openSession(url, LATEST, { roots: {} });
    await server.askedFor(1);
    const connection = server.opened[0]!;
    await expect(within(connection.request('roots/list'))).rejects.toThrow(/1 messages are already waiting/);
  });
});

describe('the official SDK clients cancelling a call', () => {
  it.each(['v1', 'v2'] as const)(
    'the SDK %s client sees the stream end without reporting an error',
    async (version) => {
      const { url, release, hooks } = await start({ retryMs: 20 });
      const client = await sdkClients[version](url);
      const abort = new AbortController();
      const call = client.callSlow(abort.signal);
      await within(hooks.slowStarted, 'the call to start');
      abort.abort('changed my mind');
      await expect(call).rejects.toThrow();
      // The one wall-clock window of this file, for an absence: a client that tried to resume the stream would
      // come back after the priming event's retry (20 ms) and report the failure well within 500 ms.
      await new Promise((resolve) => setTimeout(resolve, 500));
      release();
      expect(client.errors).toEqual([]);
    },
  );
});

describe('answers that cannot be encoded', () => {
  it.each(['json', 'sse'] as const)(
    'a result nested too deep for JSON.stringify is answered with an internal error for its id (%s)',
    async (responseMode) => {
      let deep: Record<string, unknown> = {};
      for (let depth = 0; depth < 20_000; depth++) deep = { deep };
      const server = new Server(
        serverWith([
          tool('deep', async () => ({ content: [{ type: 'text', text: 'deep' }], _meta: { deep } }) as never),
        ]),
      );
      const handler = createStreamableHttpHandler(server, { responseMode });
      const { origin } = await listenHttp(handler);
      cleanups.push(() => handler.close());
      const url = `${origin}/mcp`;
      const { headers } = await openSession(url);
      const messages = await within(readAll(await post(url, call(7, 'deep'), headers)), 'the answer');
      expect(messages.at(-1)).toMatchObject({ id: 7, error: { code: -32603 } });
      expect((await post(url, call(8, 'deep'), headers)).status).toBe(200);
    },
  );
});

describe('SDK v1 clients that close without DELETE', () => {
  it('never fill the table: each new client takes the place of an idle one', async () => {
    const { url, handler } = await start({ maxSessions: 5 });
    for (let connects = 0; connects < 12; connects++) {
      const client = new SdkClient({ name: 'sdk', version: '1' });
      await within(client.connect(new StreamableHTTPClientTransport(new URL(url))), `connect #${connects + 1}`);
      expect(await within(client.callTool({ name: 'echo', arguments: {} }))).toMatchObject({
        content: [{ text: 'echo' }],
      });
      await client.close(); // the SDK v1 client sends no DELETE: its session stays until evicted or expired
      expect(handler.sessionCount).toBeLessThanOrEqual(5);
    }
  });
});
