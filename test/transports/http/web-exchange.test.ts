/**
 * The web port on its own: fetch `Request`s handed to `createMcpFetchHandler` in process, no server, no socket.
 * What only the web path does: the `Response` built from what the transport writes (a whole body, or a stream
 * with backpressure), a client that goes away (the stream cancelled, the request aborted), bodies read from a
 * `ReadableStream` and abandoned once refused (an endless body is cancelled, not read for ever), the Host a
 * Request made in code lacks, repeated credentials that fetch joins, and the client address each runtime
 * passes in its own way.
 */
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../lib/jsonrpc/types';
import type { ServerContext } from '../../../lib/server/context';
import { Server } from '../../../lib/server/server';
import { createMcpFetchHandler, type McpFetchOptions } from '../../../transports/http/fetch-handler';
import { remoteAddressOf, WebReply } from '../../../transports/http/web-exchange';
import { deferred, serverWith, tool } from '../../helpers/fixtures';
import { cleanups, within } from '../../helpers/http';
import { mirroredHeaders, modernPostHeaders, MODERN_VERSION } from '../../helpers/modern-http';

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientInfo': { name: 'web', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

let hangStarted = deferred();
let hangCancelled = deferred<string>();

const definition = serverWith([
  tool('echo', (args: { text?: string }) => ({ content: [{ type: 'text', text: String(args.text) }] })),
  tool('hangs', async (_args, ctx: ServerContext) => {
    // The progress notification starts the response stream.
    await ctx.progress(0);
    hangStarted.resolve();
    return new Promise((resolve) =>
      ctx.onCancel((reason) => {
        hangCancelled.resolve(reason.message);
        resolve({ content: [] });
      }),
    );
  }),
]);

function handlerWith(options: McpFetchOptions = {}) {
  const server = new Server(definition);
  const handler = createMcpFetchHandler(server, options);
  cleanups.push(
    () => handler.close(),
    () => server.close().then(() => undefined),
  );
  return handler;
}

function call(id: number, name: string, args: JsonObject = {}) {
  const _meta = { ...ENVELOPE, progressToken: `progress-${id}` };
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta } };
}

/** A POST of `tools/call` for `tool`, its mirrored headers set. */
function postCall(body: BodyInit, tool: string, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return post(body, { ...mirroredHeaders('tools/call', { name: tool }), ...headers }, signal);
}

function post(body: BodyInit, headers: Record<string, string> = {}, signal?: AbortSignal): Request {
  return new Request('http://localhost/mcp', {
    method: 'POST',
    body,
    signal,
    headers: modernPostHeaders(headers),
    // A stream body must say it is sent half-duplex.
    ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
  } as RequestInit);
}

/** A body that sends `chunk` until cancelled (at most `limit` times); `cancelled` resolves when it is. */
function endlessBody(chunk: string, limit = 10_000) {
  const cancelled = deferred();
  let sent = 0;
  const bytes = new TextEncoder().encode(chunk);
  const stream = new ReadableStream<Uint8Array>({
    pull: (controller) => {
      if (++sent > limit) controller.close();
      else controller.enqueue(bytes);
    },
    cancel: () => cancelled.resolve(),
  });
  return { stream, cancelled: cancelled.promise, sent: () => sent };
}

describe('createMcpFetchHandler without a server', () => {
  it('answers a stateless call with a whole JSON Response', async () => {
    const handler = handlerWith({ responseMode: 'json' });
    const response = await handler(postCall(JSON.stringify(call(1, 'echo', { text: 'hi' })), 'echo'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('connection')).toBeNull();
    expect(await response.json()).toMatchObject({ id: 1, result: { content: [{ type: 'text', text: 'hi' }] } });
  });

  it('opens and ends a handshake-era session: initialize, then DELETE', async () => {
    const handler = handlerWith();
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'web', version: '1' } },
    };
    const opened = await handler(post(JSON.stringify(initialize), { 'mcp-protocol-version': '2025-06-18' }));
    const id = opened.headers.get('mcp-session-id');
    expect([opened.status, typeof id, handler.sessionCount]).toEqual([200, 'string', 1]);
    await opened.text();
    const deleted = await handler(
      new Request('http://localhost/mcp', {
        method: 'DELETE',
        headers: { 'mcp-session-id': id!, 'mcp-protocol-version': '2025-06-18' },
      }),
    );
    expect([deleted.status, handler.sessionCount]).toEqual([204, 0]);
  });

  it('takes the Host from the URL of a Request made in code, and still refuses a foreign one', async () => {
    const handler = handlerWith({ responseMode: 'json' });
    const local = await handler(postCall(JSON.stringify(call(1, 'echo', { text: 'x' })), 'echo'));
    expect(local.status).toBe(200);
    const foreign = await handler(
      new Request('http://rebound.example/mcp', {
        method: 'POST',
        body: JSON.stringify(call(2, 'echo')),
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      }),
    );
    expect(foreign.status).toBe(403);
    expect((await foreign.json()).error.message).toContain('Host rebound.example is not allowed');
  });

  it('refuses an endless body over maxBodyBytes with 413, and cancels it', async () => {
    const handler = handlerWith({ maxBodyBytes: 10_000 });
    const body = endlessBody('x'.repeat(1_000));
    const response = await within(handler(post(body.stream)), 'the refusal');
    expect(response.status).toBe(413);
    await within(body.cancelled, 'the body to be cancelled');
    expect(body.sent()).toBeLessThan(100);
  });

  it('refuses a body that does not arrive within bodyTimeoutMs with 408, and cancels it', async () => {
    const handler = handlerWith({ bodyTimeoutMs: 50 });
    const cancelled = deferred();
    const stalled = new ReadableStream<Uint8Array>({
      start: (controller) => controller.enqueue(new TextEncoder().encode('{"jsonrpc":')),
      cancel: () => cancelled.resolve(),
    });
    const response = await within(handler(post(stalled)), 'the refusal');
    expect(response.status).toBe(408);
    await within(cancelled.promise, 'the body to be cancelled');
  });

  it('cancels the call when the client aborts its request mid-stream', async () => {
    hangStarted = deferred();
    hangCancelled = deferred<string>();
    const handler = handlerWith({ responseMode: 'sse' });
    const abort = new AbortController();
    const response = await handler(postCall(JSON.stringify(call(1, 'hangs')), 'hangs', {}, abort.signal));
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    await within(hangStarted.promise, 'the tool to start');
    abort.abort();
    expect(await within(hangCancelled.promise, 'the tool to be cancelled')).toContain('closed');
  });

  it('cancels the call when the runtime cancels the response stream (the client went away)', async () => {
    hangStarted = deferred();
    hangCancelled = deferred<string>();
    const handler = handlerWith({ responseMode: 'sse' });
    const response = await handler(postCall(JSON.stringify(call(1, 'hangs')), 'hangs'));
    await within(hangStarted.promise, 'the tool to start');
    await response.body!.cancel();
    expect(await within(hangCancelled.promise, 'the tool to be cancelled')).toContain('closed');
  });

  it('refuses two Authorization headers, which fetch joins into one value', async () => {
    const handler = handlerWith({
      auth: {
        resource: 'http://localhost/mcp',
        authorizationServers: ['http://127.0.0.1:1'],
        jwks: 'http://127.0.0.1:1/jwks',
      },
    });
    const headers = new Headers({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' });
    headers.append('authorization', 'Bearer one');
    headers.append('authorization', 'Bearer two');
    const response = await handler(
      new Request('http://localhost/mcp', { method: 'POST', headers, body: JSON.stringify(call(1, 'echo')) }),
    );
    expect(response.status).toBe(400);
    expect(response.headers.get('www-authenticate')).toContain('invalid_request');
  });
});

describe('WebReply', () => {
  it('says the client is behind once 64 KiB wait unread, and drains as the stream is read', async () => {
    const reply = new WebReply();
    reply.writeHead(200, ['content-type', 'text/event-stream']);
    let accepted = true;
    let writes = 0;
    while (accepted && writes < 1_000) {
      accepted = reply.write('x'.repeat(1_024));
      writes++;
    }
    expect([accepted, writes, reply.writableNeedDrain]).toEqual([false, 64, true]);
    const drained = new Promise<void>((resolve) => reply.once('drain', resolve));
    const reader = (await reply.response).body!.getReader();
    let read = 0;
    while (reply.writableNeedDrain && read < 1_000) {
      await reader.read();
      read++;
    }
    await within(drained, 'drain');
    expect(reply.writableNeedDrain).toBe(false);
    reply.end();
  });

  it('answers a reply dropped before its head with a network error, then closes', async () => {
    const reply = new WebReply();
    const closed = new Promise<void>((resolve) => reply.once('close', resolve));
    reply.destroy();
    expect((await reply.response).type).toBe('error');
    await within(closed, 'close');
    expect([reply.destroyed, reply.closed]).toEqual([true, true]);
  });

  it('gives the whole body and its headers, repeated ones included, with no header the runtime owns', async () => {
    const reply = new WebReply();
    reply.setHeader('vary', ['origin', 'accept']);
    reply.writeHead(201, { 'content-type': 'application/json', connection: 'close' }).end('{"a":1}');
    const response = await reply.response;
    expect([response.status, response.headers.get('vary'), response.headers.get('connection')]).toEqual([
      201,
      'origin, accept',
      null,
    ]);
    expect(await response.text()).toBe('{"a":1}');
    expect([reply.writableEnded, reply.writableFinished, reply.headersSent]).toEqual([true, true, true]);
  });
});

describe('remoteAddressOf', () => {
  const request = new Request('http://localhost/mcp');
  it.each([
    ['Deno (info.remoteAddr)', { remoteAddr: { hostname: '10.0.0.1', port: 1, transport: 'tcp' } }, '10.0.0.1'],
    ['Bun (server.requestIP)', { requestIP: () => ({ address: '10.0.0.2', port: 1 }) }, '10.0.0.2'],
    ['@hono/node-server (env.incoming)', { incoming: { socket: { remoteAddress: '10.0.0.3' } } }, '10.0.0.3'],
    ['Workers (env, no address)', { MY_BINDING: 'x' }, undefined],
    ['Bun with no address', { requestIP: () => null }, undefined],
    ['nothing', undefined, undefined],
  ])('reads %s', (_runtime, context, address) => {
    expect(remoteAddressOf(request, context)).toBe(address);
  });
});
