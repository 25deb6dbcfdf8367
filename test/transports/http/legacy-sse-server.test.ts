/**
 * The legacy HTTP+SSE server (2024-11-05) over real `node:http` on 127.0.0.1: the official SDK's
 * `SSEClientTransport` against it (negotiation, tools, progress, sampling during a call, notifications both
 * ways, close from either side), the wire format seen by a raw client, the HTTP refusals, and the combined
 * endpoint serving a Streamable HTTP client and an SSE client at once. Everything our server emits is checked
 * against the official schema of the negotiated revision.
 */
import http from 'node:http';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import type { ConnectionOptions } from '../../../lib/core/connection';
import type { ProtocolVersion } from '../../../lib/protocol/versions';
import { Runtime } from '../../../lib/core/runtime';
import { Server, type ServerConnection } from '../../../lib/server/server';
import type { Transport } from '../../../transports/transport';
import { createMcpHttpHandler, type McpHttpOptions } from '../../../transports/http/endpoint';
import { createLegacySseHandler, type LegacySseOptions } from '../../../transports/http/legacy-sse-server';
import { SseParser, type SseEvent } from '../../../transports/http/sse';
import { deferred, serverWith, tool } from '../../helpers/fixtures';
import { cleanups, listenHttp, sseReader, statusOfGet, within } from '../../helpers/http';
import { nextEvent } from '../../helpers/wait';
import { validateEmitted } from '../../helpers/pair';
import { json } from '../../helpers/content';

/** A `Server` whose every connection is schema-checked and remembered. */
class CheckedServer extends Server {
  readonly connections: ServerConnection[] = [];

  override connect(transport: Transport, options?: ConnectionOptions): ServerConnection {
    const connection = super.connect(transport, options);
    validateEmitted(connection);
    this.connections.push(connection);
    return connection;
  }
}

function definition(versions?: readonly ProtocolVersion[]) {
  const release = deferred();
  const slowStarted = deferred();
  const progressSeen = deferred();
  const slowAborted = deferred<unknown>();
  const floodSent = deferred();
  const spec = versions ? { protocolVersions: versions } : {};
  const tools = [
    tool('echo', json),
    tool('steps', async (_args, ctx) => {
      await ctx.progress(1, 2, 'half way');
      await ctx.progress(2, 2);
      // The SDK client handles notifications a microtask later than responses: a result arriving in the same
      // chunk would retire the progress handler first. Answer once the caller has seen the progress.
      await progressSeen.promise;
      return { content: [{ type: 'text', text: 'walked' }] };
    }),
    tool('chatty', async (_args, ctx) => {
      await ctx.log('info', 'working on it');
      return { content: [{ type: 'text', text: 'done' }] };
    }),
    tool('ask', async (_args, ctx) => {
      const answer = await ctx.createMessage({
        messages: [{ role: 'user', content: { type: 'text', text: 'sky colour?' } }],
        maxTokens: 10,
      });
      return { content: [{ type: 'text', text: `model said ${(answer.content as { text: string }).text}` }] };
    }),
    tool('slow', async (_args, ctx) => {
      slowStarted.resolve();
      ctx.signal.addEventListener('abort', () => slowAborted.resolve(ctx.signal.reason), { once: true });
      await Promise.race([release.promise, slowAborted.promise]);
      return { content: [{ type: 'text', text: 'finally' }] };
    }),
    // Sends `count` log messages of `size` characters at once, without waiting for one before the next.
    tool('flood', async (args, ctx) => {
      const { count, size } = args as { count: number; size: number };
      const sends = Array.from({ length: count }, (_, index) => ctx.log('info', `${index}:${'x'.repeat(size)}`));
      floodSent.resolve();
      await Promise.all(sends);
      return { content: [{ type: 'text', text: 'flooded' }] };
    }),
  ];
  return {
    definition: serverWith(tools, spec),
    release: release.resolve,
    slowStarted: slowStarted.promise,
    progressSeen: progressSeen.resolve,
    slowAborted: slowAborted.promise,
    floodSent: floodSent.promise,
  };
}

async function start(options: LegacySseOptions & { versions?: readonly ProtocolVersion[] } = {}) {
  const { definition: served, ...hooks } = definition(options.versions);
  const server = new CheckedServer(served);
  const handler = createLegacySseHandler(server, options);
  const { origin: base } = await listenHttp(handler);
  cleanups.push(() => handler.close());
  return { server, handler, base, ...hooks };
}

async function connectSdk(base: string, capabilities: Record<string, object> = {}) {
  const client = new SdkClient({ name: 'sdk', version: '1' }, { capabilities });
  const transport = new SSEClientTransport(new URL(`${base}/sse`));
  const errors: Error[] = [];
  client.onerror = (error) => errors.push(error);
  cleanups.push(() => client.close());
  await within(client.connect(transport), 'the SDK client to connect');
  return { client, transport, errors };
}

/** A hand-driven client: the event stream, the advertised endpoint, and a POST helper for it. */
async function openRaw(base: string) {
  const response = await fetch(`${base}/sse`, { headers: { accept: 'text/event-stream' } });
  const events = sseReader(response);
  cleanups.push(() => events.cancel());
  const endpoint = (await events.next())!;
  const postUrl = new URL(endpoint.data, base).href;
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(postUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  /** The next `message` event's JSON. */
  const nextMessage = async () => {
    const event = await events.next();
    expect(event?.event).toBe('message');
    return JSON.parse(event!.data);
  };
  return { response, events, endpoint, postUrl, post, nextMessage };
}

const initializeRequest = (version = '2024-11-05') => ({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

async function initializeRaw(raw: Awaited<ReturnType<typeof openRaw>>, version = '2024-11-05') {
  expect((await raw.post(initializeRequest(version))).status).toBe(202);
  const result = await raw.nextMessage();
  expect((await raw.post({ jsonrpc: '2.0', method: 'notifications/initialized' })).status).toBe(202);
  return result;
}

describe('the wire format', () => {
  it('opens with an endpoint event naming the session, answers POSTs 202 and replies as message events', async () => {
    const { base, handler } = await start();
    const raw = await openRaw(base);
    expect(raw.response.status).toBe(200);
    expect(raw.response.headers.get('content-type')).toBe('text/event-stream');
    expect(raw.endpoint.event).toBe('endpoint');
    expect(raw.endpoint.data).toMatch(/^\/messages\?sessionId=[0-9a-f-]{36}$/);
    expect(handler.sessionCount).toBe(1);

    const accepted = await raw.post(initializeRequest());
    expect(accepted.status).toBe(202);
    expect(await accepted.text()).toBe('');
    expect(await raw.nextMessage()).toMatchObject({ jsonrpc: '2.0', id: 0, result: { protocolVersion: '2024-11-05' } });
    await raw.post({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await raw.post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { a: 1 } } });
    expect(await raw.nextMessage()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { content: [{ type: 'text', text: '{"a":1}' }] },
    });
  });

  it("hands a POST's W3C trace headers to the request as _meta entries", async () => {
    const { base, server } = await start();
    const raw = await openRaw(base);
    await initializeRaw(raw);
    const seen: unknown[] = [];
    server.connections[0]!.trace$.subscribe((event) => {
      if (event.direction === 'in' && event.method === 'tools/call') seen.push(event.message);
    });
    const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const echo = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: {} } };
    await raw.post(echo, { traceparent, baggage: 'tenant=acme' });
    await raw.nextMessage();
    expect(seen).toEqual([{ ...echo, params: { ...echo.params, _meta: { traceparent, baggage: 'tenant=acme' } } }]);
  });

  it('a batch from a 2024-11-05 session is accepted for delivery and refused by the connection on the stream', async () => {
    const { base } = await start();
    const raw = await openRaw(base);
    await initializeRaw(raw);
    const batch = [{ jsonrpc: '2.0', id: 1, method: 'ping' }];
    expect((await raw.post(batch)).status).toBe(202);
    const refusal = await raw.nextMessage();
    expect(refusal.error.code).toBe(-32600);
    expect(refusal.error.message).toMatch(/batches/);
  });
});

describe('the official SDK client', () => {
  it('negotiates 2024-11-05 when the server offers only that', async () => {
    const { base, server } = await start({ versions: ['2024-11-05'] });
    await connectSdk(base);
    expect(server.connections[0]!.protocolVersion).toBe('2024-11-05');
  });

  it('lists and calls tools', async () => {
    const { base } = await start({ versions: ['2024-11-05'] });
    const { client, errors } = await connectSdk(base);
    const { tools } = await within(client.listTools());
    expect(tools.map((listed) => listed.name)).toEqual(['echo', 'steps', 'chatty', 'ask', 'slow', 'flood']);
    expect(await within(client.callTool({ name: 'echo', arguments: { city: 'Oslo' } }))).toEqual({
      content: [{ type: 'text', text: '{"city":"Oslo"}' }],
    });
    expect(errors).toEqual([]);
  });

  it('a client asking for a newer revision over HTTP+SSE gets it: the transport does not limit negotiation', async () => {
    const { base, server } = await start();
    const { client } = await connectSdk(base);
    expect(server.connections[0]!.protocolVersion).toBe('2025-11-25');
    expect(await within(client.callTool({ name: 'echo', arguments: {} }))).toMatchObject({
      content: [{ text: '{}' }],
    });
  });

  it('progress notifications reach the caller before the result', async () => {
    const { base, progressSeen } = await start({ versions: ['2024-11-05'] });
    const { client } = await connectSdk(base);
    const progress: unknown[] = [];
    const onprogress = (step: unknown) => {
      if (progress.push(step) === 2) progressSeen();
    };
    const result = await within(client.callTool({ name: 'steps', arguments: {} }, undefined, { onprogress }));
    expect(progress).toEqual([
      { progress: 1, total: 2 },
      { progress: 2, total: 2 },
    ]); // no message before 2025-03-26
    expect(result).toMatchObject({ content: [{ text: 'walked' }] });
  });

  it('a tool asks the client to sample during its call and uses the answer', async () => {
    const { base } = await start({ versions: ['2024-11-05'] });
    const { client } = await connectSdk(base, { sampling: {} });
    client.setRequestHandler(CreateMessageRequestSchema, (request) => {
      expect(request.params.messages[0]!.content).toEqual({ type: 'text', text: 'sky colour?' });
      return { role: 'assistant', content: { type: 'text', text: 'blue' }, model: 'm' };
    });
    expect(await within(client.callTool({ name: 'ask', arguments: {} }))).toMatchObject({
      content: [{ text: 'model said blue' }],
    });
  });

  it("carries a tool's log messages to the client", async () => {
    const { base } = await start({ versions: ['2024-11-05'] });
    const { client } = await connectSdk(base);
    const logs: LoggingMessageNotification['params'][] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      logs.push(notification.params);
    });
    await within(client.callTool({ name: 'chatty', arguments: {} }));
    expect(logs).toEqual([{ level: 'info', data: 'working on it' }]);
  });

  it('carries list_changed to the client', async () => {
    const { base, server } = await start({ versions: ['2024-11-05'] });
    const { client } = await connectSdk(base);
    const listChanged = deferred();
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => listChanged.resolve());
    server.update((current) => current.withTools(tool('fresh')));
    await within(listChanged.promise, 'notifications/tools/list_changed');
  });

  it("carries the client's cancellation to the handler", async () => {
    const { base, slowStarted, slowAborted } = await start({ versions: ['2024-11-05'] });
    const { client } = await connectSdk(base);
    const abort = new AbortController();
    const call = client.callTool({ name: 'slow', arguments: {} }, undefined, { signal: abort.signal });
    await within(slowStarted, 'the slow call to start');
    abort.abort(new Error('changed my mind'));
    await expect(call).rejects.toThrow();
    await within(slowAborted, 'the handler to see the cancellation');
  });

  it('the client closing ends the session: the connection closes and nothing is left', async () => {
    const { base, server, handler } = await start();
    const { client } = await connectSdk(base);
    expect(handler.sessionCount).toBe(1);
    await client.close();
    expect(await within(server.connections[0]!.closed, 'the session to end')).toMatchObject({
      kind: 'transport-closed',
    });
    expect(handler.sessionCount).toBe(0);
    expect(server.connectionCount).toBe(0);
  });
});

describe('keep-alive', () => {
  it('an idle event stream gets keep-alive comments', async () => {
    const { base } = await start({ keepAliveMs: 20 });
    const response = await fetch(`${base}/sse`, { headers: { accept: 'text/event-stream' } });
    const reader = response.body!.getReader();
    cleanups.push(() => reader.cancel().catch(() => undefined));
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes(': keep-alive\n\n')) {
      const chunk = await within(reader.read(), 'a keep-alive comment');
      if (chunk.done) throw new Error(`The stream ended early: ${text}`);
      text += decoder.decode(chunk.value, { stream: true });
    }
    expect(text.startsWith('event: endpoint\n')).toBe(true);
  });
});

describe('backpressure', () => {
  it('a burst of large events to a client not reading waits on one drain, and arrives whole and in order', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    cleanups.push(() => void process.off('warning', onWarning));
    const { base, floodSent } = await start();
    // A node:http client, so the stream can be paused: the server's writes then wait for the socket to drain.
    const stream = await new Promise<http.IncomingMessage>((resolve, reject) => {
      http.get(`${base}/sse`, { headers: { accept: 'text/event-stream' } }, resolve).on('error', reject);
    });
    cleanups.push(() => void stream.destroy());
    stream.setEncoding('utf8');
    const parser = new SseParser();
    const events: SseEvent[] = [];
    let arrived = () => {};
    stream.on('data', (chunk: string) => {
      events.push(...parser.push(chunk));
      arrived();
    });
    const nextEvent = async (): Promise<SseEvent> => {
      while (events.length === 0) await within(new Promise<void>((resolve) => (arrived = resolve)), 'an SSE event');
      return events.shift()!;
    };
    const postUrl = new URL((await nextEvent()).data, base).href;
    const post = (body: unknown) =>
      fetch(postUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await post(initializeRequest());
    expect(JSON.parse((await nextEvent()).data)).toMatchObject({ id: 0, result: {} });
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' });

    stream.pause();
    const count = 64;
    const size = 256 * 1024;
    await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'flood', arguments: { count, size } } });
    await within(floodSent, 'the flood to be sent');
    await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
    stream.resume();
    const logged: string[] = [];
    for (;;) {
      const message = JSON.parse((await nextEvent()).data);
      if (message.id === 1) {
        expect(message.result.content[0].text).toBe('flooded');
        break;
      }
      logged.push(message.params.data);
    }
    expect(logged.map((data) => data.split(':')[0])).toEqual(Array.from({ length: count }, (_, index) => `${index}`));
    expect(logged.every((data, index) => data === `${index}:${'x'.repeat(size)}`)).toBe(true);
    expect(warnings.map((warning) => warning.name)).not.toContain('MaxListenersExceededWarning');
  });
});

describe('closing from the server side', () => {
  it('closing the handler ends every event stream and forgets the sessions', async () => {
    const { base, server, handler } = await start();
    const first = await openRaw(base);
    const second = await openRaw(base);
    await initializeRaw(first);
    expect(handler.sessionCount).toBe(2);
    await handler.close();
    expect(handler.sessionCount).toBe(0);
    expect(server.connectionCount).toBe(0);
    expect(await first.events.next()).toBeUndefined();
    expect(await second.events.next()).toBeUndefined();
    expect((await first.post({ jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(404);
  });

  it('closing one connection ends only its stream', async () => {
    const { base, server, handler } = await start();
    const doomed = await openRaw(base);
    const survivor = await openRaw(base);
    await initializeRaw(doomed);
    await initializeRaw(survivor);
    await server.connections[0]!.close();
    expect(await doomed.events.next()).toBeUndefined();
    expect(handler.sessionCount).toBe(1);
    await survivor.post({ jsonrpc: '2.0', id: 9, method: 'ping' });
    expect(await survivor.nextMessage()).toEqual({ jsonrpc: '2.0', id: 9, result: {} });
  });
});

describe('refusals', () => {
  const body = JSON.stringify(initializeRequest());
  const json = { 'content-type': 'application/json' };

  it('POST without a sessionId gets 400', async () => {
    const { base } = await start();
    expect((await fetch(`${base}/messages`, { method: 'POST', headers: json, body })).status).toBe(400);
  });

  it('POST naming an unknown session gets 404', async () => {
    const { base } = await start();
    expect((await fetch(`${base}/messages?sessionId=nope`, { method: 'POST', headers: json, body })).status).toBe(404);
  });

  it('other paths get 404', async () => {
    const { base } = await start();
    expect((await fetch(`${base}/elsewhere`, { headers: { accept: 'text/event-stream' } })).status).toBe(404);
  });

  it('wrong methods get 405, naming the allowed one', async () => {
    const { base } = await start();
    const wrong = await fetch(`${base}/sse`, { method: 'POST', headers: json, body });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('GET');
    expect((await fetch(`${base}/messages`)).headers.get('allow')).toBe('POST');
  });

  it('GET without Accept: text/event-stream gets 406', async () => {
    const { base } = await start();
    expect((await fetch(`${base}/sse`, { headers: { accept: 'application/json' } })).status).toBe(406);
  });

  it('sessions beyond maxSessions get 503', async () => {
    const { base } = await start({ maxSessions: 1 });
    await openRaw(base);
    expect((await fetch(`${base}/sse`, { headers: { accept: 'text/event-stream' } })).status).toBe(503);
  });

  it('a client at its quota of streams gets 429 saying so', async () => {
    const { base } = await start({ maxSessionsPerClient: 1 });
    await openRaw(base);
    const refused = await fetch(`${base}/sse`, { headers: { accept: 'text/event-stream' } });
    expect(refused.status).toBe(429);
    expect((await refused.json()).error.message).toMatch(/this client holds 1 sessions/);
  });

  it("a client at its quota does not affect other clients' streams", async () => {
    const { base } = await start({ maxSessionsPerClient: 1 });
    await openRaw(base);
    const other = await new Promise<number>((resolve, reject) => {
      const request = http.get(
        `${base}/sse`,
        { localAddress: '127.0.0.2', headers: { accept: 'text/event-stream' } },
        (response) => {
          resolve(response.statusCode!);
          response.destroy();
        },
      );
      request.on('error', reject);
    });
    expect(other).toBe(200);
  });

  /** A started handler (1 KiB bodies at most) and an initialized hand-driven session. */
  async function openedSession() {
    const started = await start({ maxBodyBytes: 1024 });
    const raw = await openRaw(started.base);
    await initializeRaw(raw);
    return { ...started, raw };
  }

  it('refuses a body over maxBodyBytes with 413', async () => {
    const { raw } = await openedSession();
    const big = {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'echo', arguments: { pad: 'x'.repeat(2000) } },
    };
    expect((await raw.post(big)).status).toBe(413);
  });

  it('refuses a body that is not JSON by its media type with 415', async () => {
    const { raw } = await openedSession();
    expect((await raw.post({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'content-type': 'text/plain' })).status).toBe(
      415,
    );
  });

  it('answers bad JSON with 400 and an id-less parse error', async () => {
    const { raw } = await openedSession();
    const garbled = await raw.post('{"jsonrpc":');
    expect(garbled.status).toBe(400);
    const parseError = await garbled.json();
    expect(parseError.error.code).toBe(-32700);
    expect(parseError).not.toHaveProperty('id');
  });

  it('answers a bad envelope with 400 and -32600', async () => {
    const { raw } = await openedSession();
    const envelope = await raw.post({ jsonrpc: '1.0', id: 2, method: 'ping' });
    expect(envelope.status).toBe(400);
    expect((await envelope.json()).error.code).toBe(-32600);
  });

  it('leaves the session untouched by a refused POST: nothing goes on the stream and the next request is answered', async () => {
    const { raw, handler } = await openedSession();
    await raw.post('{"jsonrpc":');
    await raw.post({ jsonrpc: '1.0', id: 2, method: 'ping' });
    expect(handler.sessionCount).toBe(1);
    await raw.post({ jsonrpc: '2.0', id: 3, method: 'ping' });
    expect(await raw.nextMessage()).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
  });

  const evil = { origin: 'https://evil.example' };

  it('refuses a foreign Origin on the event stream with 403, opening no session', async () => {
    const { base, handler } = await start();
    expect((await fetch(`${base}/sse`, { headers: { accept: 'text/event-stream', ...evil } })).status).toBe(403);
    expect(handler.sessionCount).toBe(0);
  });

  it('refuses a foreign Origin on the POST path with 403', async () => {
    const { base } = await start();
    const raw = await openRaw(base);
    expect((await raw.post(initializeRequest(), evil)).status).toBe(403);
  });

  it('accepts a localhost Origin on the POST path', async () => {
    const { base } = await start();
    const raw = await openRaw(base);
    expect((await raw.post(initializeRequest(), { origin: 'http://localhost:5173' })).status).toBe(202);
  });

  it('refuses a foreign Host with 403', async () => {
    const { base } = await start();
    expect(await statusOfGet(`${base}/sse`, { host: 'evil.example', accept: 'text/event-stream' })).toBe(403);
  });

  it('accepts an origin from allowedOrigins', async () => {
    const { base } = await start({ allowedOrigins: ['https://app.example'] });
    const response = await fetch(`${base}/sse`, {
      headers: { accept: 'text/event-stream', origin: 'https://app.example' },
    });
    expect(response.status).toBe(200);
    await response.body!.cancel();
  });
});

describe('the combined endpoint', () => {
  async function startCombined(options: McpHttpOptions = {}) {
    const server = new CheckedServer(definition().definition);
    const runtime = new Runtime();
    const handler = createMcpHttpHandler(server, { connectionOptions: { runtime }, ...options });
    const { origin: base } = await listenHttp(handler);
    cleanups.push(() => handler.close());
    /** Resolves when a Streamable HTTP session has closed (its lifecycle actor, on the runtime's trace). */
    const streamableSessionClosed = () =>
      nextEvent(
        runtime.trace$,
        (event) => event.actor === 'httpSession' && event.kind === 'lifecycle' && event.to === 'closed',
        'the Streamable HTTP session to close',
      );
    return { server, handler, base, streamableSessionClosed };
  }

  it('serves a Streamable HTTP client and an HTTP+SSE client at once', async () => {
    const { base, server, handler, streamableSessionClosed } = await startCombined();
    const modern = new SdkClient({ name: 'modern', version: '1' });
    const modernTransport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`));
    cleanups.push(() => modern.close());
    const { client: legacy } = await connectSdk(base);
    await within(modern.connect(modernTransport));
    expect(handler.sessionCount).toBe(2);

    const [fromModern, fromLegacy] = await within(
      Promise.all([
        modern.callTool({ name: 'echo', arguments: { via: 'mcp' } }),
        legacy.callTool({ name: 'echo', arguments: { via: 'sse' } }),
      ]),
    );
    expect(fromModern).toMatchObject({ content: [{ text: '{"via":"mcp"}' }] });
    expect(fromLegacy).toMatchObject({ content: [{ text: '{"via":"sse"}' }] });

    const modernClosed = streamableSessionClosed();
    await within(modernTransport.terminateSession());
    await legacy.close();
    await modernClosed;
    await within(Promise.all(server.connections.map((connection) => connection.closed)), 'both connections to close');
    expect(handler.sessionCount).toBe(0);
    expect(server.connectionCount).toBe(0);
  });

  const customPaths = { path: '/rpc', legacy: { ssePath: '/old/sse', messagePath: '/old/post' } };

  it('serves the SSE endpoints at custom paths', async () => {
    const custom = await startCombined(customPaths);
    const opened = await fetch(`${custom.base}/old/sse`, { headers: { accept: 'text/event-stream' } });
    const events = sseReader(opened);
    expect((await events.next())!.data).toMatch(/^\/old\/post\?sessionId=/);
    await events.cancel();
  });

  it('serves the Streamable endpoint at a custom path, and 404 at the default one', async () => {
    const custom = await startCombined(customPaths);
    expect((await fetch(`${custom.base}/mcp`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${custom.base}/rpc`, { method: 'PUT' })).status).toBe(405); // the Streamable handler
  });

  it('turns the SSE endpoints off with legacy: false', async () => {
    const modernOnly = await startCombined({ legacy: false });
    expect((await fetch(`${modernOnly.base}/sse`, { headers: { accept: 'text/event-stream' } })).status).toBe(404);
    expect(() => createMcpHttpHandler(modernOnly.server, { path: '/sse' })).toThrow(/must differ/);
  });

  it('close() ends the sessions of both transports', async () => {
    const { base, server, handler, streamableSessionClosed } = await startCombined();
    const modern = new SdkClient({ name: 'modern', version: '1' });
    cleanups.push(() => modern.close());
    await within(modern.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`))));
    const raw = await openRaw(base);
    await initializeRaw(raw);
    expect(handler.sessionCount).toBe(2);
    const modernClosed = streamableSessionClosed();
    await handler.close();
    expect(server.connectionCount).toBe(0);
    expect(await raw.events.next()).toBeUndefined();
    // The Streamable HTTP session forgets itself once its streams have ended, a moment after its connection.
    await modernClosed;
    expect(handler.sessionCount).toBe(0);
  });
});
