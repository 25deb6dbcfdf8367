/**
 * The HTTP+SSE client transport (MCP 2024-11-05) over real `node:http` on 127.0.0.1: the shared transport
 * suite and our Client against our legacy SSE server, then the endpoint rules (lazy connection, same
 * origin only) and failures as values against hand-written servers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { firstValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Client } from '../lib/client/client';
import { TransportError } from '../lib/jsonrpc/errors';
import { Server } from '../lib/server/server';
import type { Transport } from '../transports/transport';
import { createLegacySseHandler } from '../transports/http/legacy-sse-server';
import { LegacySseClientTransport } from '../transports/http/legacy-sse-client';
import { deferred, serverWith, tool } from './helpers/fixtures';
import { cleanups, listenHttp } from './helpers/http';
import { validateEmitted } from './helpers/pair';
import { runTransportSuite } from './helpers/transport-suite';

/** Serves `listener` on 127.0.0.1, counting requests; closed after the test. */
async function listen(listener: (request: IncomingMessage, response: ServerResponse) => void) {
  const requests: string[] = [];
  const { origin } = await listenHttp((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    listener(request, response);
  });
  return { origin, requests };
}

/** A stream that announces `endpoint`, then does what `after` says. */
function announcing(endpoint: string, after: (response: ServerResponse) => void = () => undefined) {
  return (request: IncomingMessage, response: ServerResponse) => {
    if (request.method !== 'GET') return void response.writeHead(500).end('boom');
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write(`event: endpoint\ndata: ${endpoint}\n\n`);
    after(response);
  };
}

describe('the shared transport suite', () => {
  /** The pair's right side is the server's session transport, handed over by a stand-in server. */
  runTransportSuite('HTTP+SSE client', {
    async connect() {
      const arrived = deferred<Transport>();
      const standIn = {
        connect: (session: Transport) => {
          arrived.resolve(session);
          return undefined;
        },
      } as unknown as Server;
      const handler = createLegacySseHandler(standIn);
      const site = await listen(handler);
      const left = new LegacySseClientTransport(`${site.origin}/sse`);
      await left.connect();
      const right = await arrived.promise;
      return { left, right };
    },
  });
});

const definition = serverWith([
  tool('echo', (args) => ({ content: [{ type: 'text', text: JSON.stringify(args) }] })),
  tool('work', async (_args, ctx) => {
    await ctx.progress(1, 2);
    const sampled = await ctx.createMessage({
      messages: [{ role: 'user', content: { type: 'text', text: 'sample me' } }],
      maxTokens: 10,
    });
    await ctx.progress(2, 2);
    return { content: [{ type: 'text', text: `sampled: ${(sampled.content as { text: string }).text}` }] };
  }),
]);

describe('our Client and Server over HTTP+SSE', () => {
  it('calls tools with progress and a sampling request, and ends the session on close', async () => {
    const server = new Server(definition);
    const handler = createLegacySseHandler(server);
    cleanups.push(() => handler.close());
    const site = await listen(handler);
    const client = new Client(
      { name: 'legacy-client', version: '1.0.0' },
      { sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' }) },
    );
    validateEmitted(client);
    cleanups.push(() => client.close());
    await client.connect(new LegacySseClientTransport(`${site.origin}/sse`), { timeout: 5000 });
    expect(client.protocolVersion).toBe('2025-11-25');
    const progress: number[] = [];
    const result = await client.callTool('work', {}, { onProgress: ({ progress: value }) => progress.push(value) });
    expect(result.content).toEqual([{ type: 'text', text: 'sampled: hi' }]);
    expect(progress).toEqual([1, 2]);
    const echoes = await Promise.all(Array.from({ length: 20 }, (_, i) => client.callTool('echo', { i })));
    expect(echoes.map((echo) => JSON.parse((echo.content[0] as { text: string }).text).i)).toEqual(
      Array.from({ length: 20 }, (_, i) => i),
    );
    expect(handler.sessionCount).toBe(1);
    await client.close();
    for (let i = 0; i < 100 && handler.sessionCount > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(handler.sessionCount).toBe(0);
    expect(site.requests.filter((request) => request.startsWith('GET'))).toEqual(['GET /sse']);
    expect(site.requests.filter((request) => request.startsWith('POST')).every((r) => r.includes('sessionId='))).toBe(
      true,
    );
  });
});

describe('the endpoint', () => {
  it('connects lazily: nothing is requested before a send, a subscription or connect()', async () => {
    const site = await listen(announcing('/messages'));
    const transport = new LegacySseClientTransport(`${site.origin}/sse`);
    cleanups.push(() => transport.close());
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(site.requests).toEqual([]);
    const subscription = transport.messages.subscribe();
    await transport.connect();
    expect(site.requests).toEqual(['GET /sse']);
    subscription.unsubscribe();
  });

  it('POSTs to the endpoint resolved against the SSE URL', async () => {
    const posted = deferred<string>();
    const site = await listen((request, response) => {
      if (request.method === 'GET') return announcing('messages?session=abc')(request, response);
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        posted.resolve(`${request.url} ${request.headers['content-type']} ${body}`);
        response.writeHead(202).end();
      });
    });
    const transport = new LegacySseClientTransport(`${site.origin}/mcp/sse`);
    cleanups.push(() => transport.close());
    await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(await posted.promise).toBe(
      '/mcp/messages?session=abc application/json {"jsonrpc":"2.0","method":"notifications/initialized"}',
    );
  });

  it('refuses an endpoint on another origin with a TransportError, and sends nothing there', async () => {
    const site = await listen(announcing('http://attacker.example/messages'));
    const transport = new LegacySseClientTransport(`${site.origin}/sse`);
    cleanups.push(() => transport.close());
    const ended = firstValueFrom(transport.messages.pipe(toArray())).catch((error: unknown) => error);
    const sent = transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await expect(sent).rejects.toBeInstanceOf(TransportError);
    await expect(sent).rejects.toThrow(/refusing the endpoint http:\/\/attacker\.example\/messages.*origin/);
    expect(await ended).toBeInstanceOf(TransportError);
    expect(site.requests).toEqual(['GET /sse']);
  });

  it('fails with the status when the GET is not an event stream', async () => {
    const site = await listen((_request, response) => {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'token required' } }));
    });
    const client = new Client({ name: 'c', version: '1' });
    const failure = await client
      .connect(new LegacySseClientTransport(`${site.origin}/sse`))
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((await client.closed).message).toMatch(/GET http:\/\/127\.0\.0\.1:\d+\/sse: HTTP 401.*token required/);
  });

  it('fails when the stream ends before naming the endpoint', async () => {
    const site = await listen((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end('event: message\ndata: {}\n\n');
    });
    const transport = new LegacySseClientTransport(`${site.origin}/sse`);
    cleanups.push(() => transport.close());
    await expect(transport.connect()).rejects.toThrow(/ended before the server sent its endpoint event/);
  });
});

describe('failures are values', () => {
  it('a POST the server refuses rejects send() with the status and the server text', async () => {
    const site = await listen(announcing('/messages'));
    const transport = new LegacySseClientTransport(`${site.origin}/sse`);
    cleanups.push(() => transport.close());
    await expect(transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' })).rejects.toThrow(
      /POST http:\/\/127\.0\.0\.1:\d+\/messages: HTTP 500.*boom/,
    );
  });

  it('a broken event stream errors messages with a TransportError; later sends reject', async () => {
    const site = await listen(announcing('/messages', (response) => setTimeout(() => response.socket?.destroy(), 20)));
    const transport = new LegacySseClientTransport(`${site.origin}/sse`);
    cleanups.push(() => transport.close());
    const ended = await firstValueFrom(transport.messages.pipe(toArray())).catch((error: unknown) => error);
    expect(ended).toBeInstanceOf(TransportError);
    expect((ended as Error).message).toMatch(/event stream broke/);
    await expect(transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' })).rejects.toThrow(
      /event stream broke/,
    );
  });

  it('a frame over the limit arrives as a UnreadableFrame and the stream carries on', async () => {
    const site = await listen(
      announcing('/messages', (response) => {
        response.write(
          `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'x', params: { p: 'y'.repeat(500) } })}\n\n`,
        );
        response.end(`event: message\ndata: {"jsonrpc":"2.0","method":"small"}\n\n`);
      }),
    );
    const transport = new LegacySseClientTransport(`${site.origin}/sse`, { maxMessageBytes: 200 });
    cleanups.push(() => transport.close());
    const frames = await firstValueFrom(transport.messages.pipe(toArray()));
    expect(frames).toHaveLength(2);
    expect((frames[0] as { message: string }).message).toContain('too large');
    expect(frames[1]).toEqual({ jsonrpc: '2.0', method: 'small' });
  });

  it('close() is idempotent, ends the stream and refuses later sends', async () => {
    const site = await listen(announcing('/messages'));
    const transport = new LegacySseClientTransport(`${site.origin}/sse`);
    const ended = firstValueFrom(transport.messages.pipe(toArray()));
    await transport.connect();
    await Promise.all([transport.close(), transport.close()]);
    expect(await ended).toEqual([]);
    await expect(transport.send({ jsonrpc: '2.0', method: 'x' })).rejects.toBeInstanceOf(TransportError);
  });
});
