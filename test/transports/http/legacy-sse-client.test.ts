/**
 * The HTTP+SSE client transport (MCP 2024-11-05) over real `node:http` on 127.0.0.1: the shared transport
 * suite and our Client against our legacy SSE server, then the endpoint rules (lazy connection, same
 * origin only) and failures as values against hand-written servers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { firstValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Client } from '../../../lib/client/client';
import { TransportError } from '../../../lib/jsonrpc/errors';
import { UnreadableFrame } from '../../../lib/jsonrpc/types';
import { Server } from '../../../lib/server/server';
import type { Transport } from '../../../transports/transport';
import { createLegacySseHandler } from '../../../transports/http/legacy-sse-server';
import { LegacySseClientTransport } from '../../../transports/http/legacy-sse-client';
import { deferred, serverWith, tool } from '../../helpers/fixtures';
import { cleanups, eventually, listenHttp, type LocalHttpServer } from '../../helpers/http';
import { validateEmitted } from '../../helpers/pair';
import { runTransportSuite } from '../../helpers/transport-suite';
import { json } from '../../helpers/content';

/** The requests `site` received, each as `METHOD url`. */
const requestLines = (site: LocalHttpServer) => site.seen.map(({ method, url }) => `${method} ${url}`);

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
      const site = await listenHttp(handler);
      const left = new LegacySseClientTransport(`${site.origin}/sse`);
      await left.connect();
      const right = await arrived.promise;
      return { left, right };
    },
  });
});

const definition = serverWith([
  tool('echo', json),
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
  /** Our server behind the legacy handler, and our client connected to it (answering sampling with "hi"). */
  async function session() {
    const server = new Server(definition);
    const handler = createLegacySseHandler(server);
    cleanups.push(() => handler.close());
    const site = await listenHttp(handler);
    const client = new Client(
      { name: 'legacy-client', version: '1.0.0' },
      { sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' }) },
    );
    validateEmitted(client);
    cleanups.push(() => client.close());
    await client.connect(new LegacySseClientTransport(`${site.origin}/sse`), { timeout: 5000 });
    return { handler, site, client };
  }

  it('negotiates the current revision', async () => {
    const { client } = await session();
    expect(client.protocolVersion).toBe('2025-11-25');
  });

  it('calls a tool that asks for sampling', async () => {
    const { client } = await session();
    const result = await client.callTool('work', {});
    expect(result.content).toEqual([{ type: 'text', text: 'sampled: hi' }]);
  });

  it("delivers a call's progress", async () => {
    const { client } = await session();
    const progress: number[] = [];
    await client.callTool('work', {}, { onProgress: ({ progress: value }) => progress.push(value) });
    expect(progress).toEqual([1, 2]);
  });

  it('answers 20 concurrent calls, each with its own result', async () => {
    const { client } = await session();
    const echoes = await Promise.all(Array.from({ length: 20 }, (_, i) => client.callTool('echo', { i })));
    expect(echoes.map((echo) => JSON.parse((echo.content[0] as { text: string }).text).i)).toEqual(
      Array.from({ length: 20 }, (_, i) => i),
    );
  });

  it('opens one event stream and names the session in every POST', async () => {
    const { site, client } = await session();
    await client.callTool('echo', {});
    expect(requestLines(site).filter((request) => request.startsWith('GET'))).toEqual(['GET /sse']);
    const posts = requestLines(site).filter((request) => request.startsWith('POST'));
    expect(posts.length).toBeGreaterThan(0);
    expect(posts.every((request) => request.includes('sessionId='))).toBe(true);
  });

  it('ends the server session on close', async () => {
    const { handler, client } = await session();
    expect(handler.sessionCount).toBe(1);
    await client.close();
    // No event announces that the server dropped a session: it does once it sees the stream's socket close.
    await eventually(() => handler.sessionCount === 0, 'the server session to end');
  });
});

describe('the endpoint', () => {
  it('connects lazily: nothing is requested before a send, a subscription or connect()', async () => {
    const site = await listenHttp(announcing('/messages'));
    const transport = new LegacySseClientTransport(`${site.origin}/sse`);
    cleanups.push(() => transport.close());
    // Proving an absence: an eager transport would have sent its GET within this window.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(site.seen).toEqual([]);
  });

  it('opens the event stream on connect()', async () => {
    const site = await listenHttp(announcing('/messages'));
    const transport = new LegacySseClientTransport(`${site.origin}/sse`);
    cleanups.push(() => transport.close());
    const subscription = transport.messages.subscribe();
    await transport.connect();
    expect(requestLines(site)).toEqual(['GET /sse']);
    subscription.unsubscribe();
  });

  it('POSTs to the endpoint resolved against the SSE URL', async () => {
    const posted = deferred<string>();
    const site = await listenHttp((request, response) => {
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

  /** A transport whose stream announces an endpoint on another origin, and what happened to a send. */
  async function foreignEndpoint() {
    const site = await listenHttp(announcing('http://attacker.example/messages'));
    const transport = new LegacySseClientTransport(`${site.origin}/sse`);
    cleanups.push(() => transport.close());
    const ended = firstValueFrom(transport.messages.pipe(toArray())).catch((error: unknown) => error);
    const sent = transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const failure = await sent.catch((error: unknown) => error);
    return { site, ended, failure };
  }

  it('refuses an endpoint on another origin: the send rejects with a TransportError naming it', async () => {
    const { failure } = await foreignEndpoint();
    expect(failure).toBeInstanceOf(TransportError);
    expect((failure as Error).message).toMatch(/refusing the endpoint http:\/\/attacker\.example\/messages.*origin/);
  });

  it('ends the messages with a TransportError when the endpoint is on another origin', async () => {
    const { ended } = await foreignEndpoint();
    expect(await ended).toBeInstanceOf(TransportError);
  });

  it('sends nothing to an endpoint on another origin', async () => {
    const { site } = await foreignEndpoint();
    expect(requestLines(site)).toEqual(['GET /sse']);
  });

  it('fails with the status when the GET is not an event stream', async () => {
    const site = await listenHttp((_request, response) => {
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
    const site = await listenHttp((_request, response) => {
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
    const site = await listenHttp(announcing('/messages'));
    const transport = new LegacySseClientTransport(`${site.origin}/sse`);
    cleanups.push(() => transport.close());
    await expect(transport.send({ jsonrpc: '2.0', id: 1, method: 'ping' })).rejects.toThrow(
      /POST http:\/\/127\.0\.0\.1:\d+\/messages: HTTP 500.*boom/,
    );
  });

  /** A transport whose event stream breaks after the endpoint event, and how its messages ended. */
  async function brokenStream() {
    const site = await listenHttp(
      announcing('/messages', (response) => setImmediate(() => response.socket?.destroy())),
    );
    const transport = new LegacySseClientTransport(`${site.origin}/sse`);
    cleanups.push(() => transport.close());
    const ended = await firstValueFrom(transport.messages.pipe(toArray())).catch((error: unknown) => error);
    return { transport, ended };
  }

  it('a broken event stream errors messages with a TransportError', async () => {
    const { ended } = await brokenStream();
    expect(ended).toBeInstanceOf(TransportError);
    expect((ended as Error).message).toMatch(/event stream broke/);
  });

  it('after the event stream broke, sends reject', async () => {
    const { transport } = await brokenStream();
    await expect(transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' })).rejects.toThrow(
      /event stream broke/,
    );
  });

  /** The frames of a stream that sends one message over a 200-byte limit, then a small one. */
  async function framesAroundAnOversizedOne() {
    const site = await listenHttp(
      announcing('/messages', (response) => {
        response.write(
          `event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'x', params: { p: 'y'.repeat(500) } })}\n\n`,
        );
        response.end(`event: message\ndata: {"jsonrpc":"2.0","method":"small"}\n\n`);
      }),
    );
    const transport = new LegacySseClientTransport(`${site.origin}/sse`, { maxMessageBytes: 200 });
    cleanups.push(() => transport.close());
    return firstValueFrom(transport.messages.pipe(toArray()));
  }

  it('a frame over the limit arrives as an UnreadableFrame', async () => {
    const [oversized] = await framesAroundAnOversizedOne();
    expect(oversized).toBeInstanceOf(UnreadableFrame);
    expect((oversized as UnreadableFrame).message).toContain('too large');
  });

  it('the stream carries on after a frame over the limit', async () => {
    const frames = await framesAroundAnOversizedOne();
    expect(frames).toHaveLength(2);
    expect(frames[1]).toEqual({ jsonrpc: '2.0', method: 'small' });
  });

  /** A connected transport closed twice at once, and its messages as they ended. */
  async function closedTwice() {
    const site = await listenHttp(announcing('/messages'));
    const transport = new LegacySseClientTransport(`${site.origin}/sse`);
    const ended = firstValueFrom(transport.messages.pipe(toArray()));
    await transport.connect();
    const closing = await Promise.allSettled([transport.close(), transport.close()]);
    return { transport, ended, closing };
  }

  it('close() is idempotent: closing twice at once succeeds both times', async () => {
    const { closing } = await closedTwice();
    expect(closing.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled']);
  });

  it('close() completes the messages', async () => {
    const { ended } = await closedTwice();
    expect(await ended).toEqual([]);
  });

  it('close() refuses later sends', async () => {
    const { transport } = await closedTwice();
    await expect(transport.send({ jsonrpc: '2.0', method: 'x' })).rejects.toBeInstanceOf(TransportError);
  });
});
