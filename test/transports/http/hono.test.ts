/**
 * The web-standard handler (`createMcpFetchHandler`) inside a Hono application, served by @hono/node-server on
 * 127.0.0.1: MCP at the routes the application gives it, next to the application's own routes, in both eras
 * (our client with progress, the official SDK clients) and over the legacy HTTP+SSE transport; the per-client
 * quota keyed on the address the adapter hands over.
 */
import { serve, type ServerType } from '@hono/node-server';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as SdkV2Client, StreamableHTTPClientTransport as SdkV2Transport } from '@modelcontextprotocol/client';
import { Hono } from 'hono';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { Client } from '../../../lib/client/client';
import { Server } from '../../../lib/server/server';
import { createMcpFetchHandler, type McpFetchOptions } from '../../../transports/http/fetch-handler';
import { LegacySseClientTransport } from '../../../transports/http/legacy-sse-client';
import { StreamableHttpClientTransport } from '../../../transports/http/streamable-client';
import { serverWith, tool } from '../../helpers/fixtures';
import { cleanups, eventually, postInitialize, within } from '../../helpers/http';

const definition = serverWith([
  tool('work', async (_args, ctx) => {
    await ctx.progress(1, 2);
    await ctx.progress(2, 2);
    return { content: [{ type: 'text', text: 'done' }] };
  }),
]);

/** A Hono app with a route of its own and MCP under `/mcp` (and the legacy `/sse`, `/messages`). */
async function honoApp(options: McpFetchOptions = {}) {
  const server = new Server(definition);
  const handler = createMcpFetchHandler(server, options);
  const app = new Hono();
  app.get('/', (c) => c.text('the application'));
  app.all('/mcp', (c) => handler(c.req.raw, c.env));
  app.on(['GET', 'POST'], ['/sse', '/messages'], (c) => handler(c.req.raw, c.env));
  const site = await new Promise<ServerType>((resolve) => {
    const started: ServerType = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(started));
  });
  cleanups.push(
    () => handler.close(),
    () => server.close().then(() => undefined),
    () => new Promise((resolve) => site.close(resolve)),
  );
  const { port } = site.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, handler };
}

async function callWithProgress(client: Client): Promise<{ text: unknown; progress: number[] }> {
  const progress: number[] = [];
  const result = await within(
    client.callTool('work', {}, { onProgress: ({ progress: value }) => progress.push(value) }),
    'the call',
  );
  return { text: result.content[0] && 'text' in result.content[0] ? result.content[0].text : undefined, progress };
}

describe('createMcpFetchHandler in a Hono application', () => {
  it('serves MCP at its route, the application at its own', async () => {
    const { origin } = await honoApp();
    expect(await (await fetch(`${origin}/`)).text()).toBe('the application');
    expect((await postInitialize(`${origin}/mcp`)).status).toBe(200);
  });

  it.each(['handshake', 'modern'] as const)(
    'serves our client in the %s era, progress notifications before the result',
    async (era) => {
      const { origin, handler } = await honoApp();
      const client = new Client({ name: 'hono', version: '1' }, { era, eraCache: false });
      await within(client.connect(new StreamableHttpClientTransport(`${origin}/mcp`)), 'connect');
      cleanups.push(() => client.close().then(() => undefined));
      expect(await callWithProgress(client)).toEqual({ text: 'done', progress: [1, 2] });
      expect(handler.sessionCount).toBe(era === 'handshake' ? 1 : 0);
    },
  );

  it('serves our client over the legacy HTTP+SSE endpoints', async () => {
    const { origin, handler } = await honoApp();
    const client = new Client({ name: 'hono-legacy', version: '1' }, { era: 'handshake', eraCache: false });
    await within(client.connect(new LegacySseClientTransport(`${origin}/sse`)), 'connect');
    expect(handler.sessionCount).toBe(1);
    expect(await callWithProgress(client)).toEqual({ text: 'done', progress: [1, 2] });
    await client.close();
    await eventually(() => handler.sessionCount === 0, 'the session to end with its stream');
  });

  it('serves the official SDK v1 and v2 clients, progress included', async () => {
    const { origin } = await honoApp();
    const url = new URL(`${origin}/mcp`);
    const v1 = new SdkClient({ name: 'v1', version: '1' });
    await within(v1.connect(new StreamableHTTPClientTransport(url)), 'the SDK v1 connect');
    const v1Progress: number[] = [];
    const v1Result = await within(
      v1.callTool({ name: 'work', arguments: {} }, undefined, {
        onprogress: ({ progress }) => void v1Progress.push(progress),
      }),
      'the SDK v1 call',
    );
    await v1.close();
    const v2 = new SdkV2Client({ name: 'v2', version: '1' });
    await within(v2.connect(new SdkV2Transport(url)), 'the SDK v2 connect');
    const v2Progress: number[] = [];
    const v2Result = await within(
      v2.callTool({ name: 'work', arguments: {} }, { onprogress: ({ progress }) => void v2Progress.push(progress) }),
      'the SDK v2 call',
    );
    await v2.close();
    expect([v1Result.content, v1Progress]).toEqual([[{ type: 'text', text: 'done' }], [1, 2]]);
    expect([v2Result.content, v2Progress]).toEqual([[{ type: 'text', text: 'done' }], [1, 2]]);
  });

  it('keys the per-client quotas on the address the adapter hands over', async () => {
    const keys: (string | undefined)[] = [];
    const { origin, handler } = await honoApp({
      maxSessionsPerClient: 1,
      clientKey: (request) => {
        keys.push(request.socket.remoteAddress);
        return request.socket.remoteAddress ?? 'unknown';
      },
    });
    const first = await postInitialize(`${origin}/mcp`);
    const id = first.headers.get('mcp-session-id');
    // The first session is idle: the same client's second one evicts it, and it is gone.
    const second = await postInitialize(`${origin}/mcp`);
    expect([first.status, second.status, handler.sessionCount]).toEqual([200, 200, 1]);
    expect(keys).toHaveLength(2);
    for (const key of keys) expect(key).toMatch(/127\.0\.0\.1$/);
    const gone = await fetch(`${origin}/mcp`, {
      method: 'DELETE',
      headers: { 'mcp-session-id': id!, 'mcp-protocol-version': '2025-06-18' },
    });
    expect(gone.status).toBe(404);
  });
});
