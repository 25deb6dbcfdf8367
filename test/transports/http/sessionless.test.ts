/**
 * `sessions: false`: an endpoint for the stateless 2026-07-28 revision only (Workers, replicas), over real HTTP
 * on 127.0.0.1 (and over the web port in fetch-port.test.ts). Stateless clients are served; every way into a
 * handshake-era session is refused with -32022 naming the revisions served, so nothing is kept between requests.
 */
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as SdkV2Client, StreamableHTTPClientTransport as SdkV2Transport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { Client } from '../../../lib/client/client';
import { defineServer } from '../../../lib/server/definition';
import { Server } from '../../../lib/server/server';
import { createMcpHttpHandler, type McpHttpOptions } from '../../../transports/http/endpoint';
import { StreamableHttpClientTransport } from '../../../transports/http/streamable-client';
import { serverWith, tool } from '../../helpers/fixtures';
import { cleanups, lateListener, listenHttp, postInitializeUnread, within } from '../../helpers/http';
import { MODERN_VERSION } from '../../helpers/modern-http';

async function serve(options: McpHttpOptions = {}) {
  const server = new Server(serverWith([tool('echo', (args: { text?: string }) => String(args.text))]));
  cleanups.push(() => server.close().then(() => undefined));
  let handler: ReturnType<typeof createMcpHttpHandler> | undefined;
  const { origin } = await listenHttp(lateListener(() => handler));
  handler = createMcpHttpHandler(server, { sessions: false, ...options });
  cleanups.push(() => handler!.close());
  return { url: `${origin}/mcp`, origin, handler };
}

async function refusal(response: Response) {
  const body = (await response.json()) as { error: { code: number; message: string; data?: unknown } };
  return { status: response.status, code: body.error.code, data: body.error.data };
}

describe('an endpoint with sessions: false', () => {
  it('serves our client and the SDK v2 client (both negotiating: auto) in the stateless revision', async () => {
    const { url, handler } = await serve();
    const ours = new Client({ name: 'ours', version: '1' }, { eraCache: false });
    await within(ours.connect(new StreamableHttpClientTransport(url)), 'our connect');
    expect(ours.connectedEra).toBe('modern');
    expect((await ours.callTool('echo', { text: 'a' })).content).toEqual([{ type: 'text', text: 'a' }]);
    await ours.close();
    const sdk = new SdkV2Client({ name: 'v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await within(sdk.connect(new SdkV2Transport(new URL(url))), 'the SDK v2 connect');
    const result = await sdk.callTool({ name: 'echo', arguments: { text: 'b' } });
    await sdk.close();
    expect(result.content).toEqual([{ type: 'text', text: 'b' }]);
    expect(handler.sessionCount).toBe(0);
  });

  it('refuses an initialize with -32022 naming the revisions it serves, and opens no session', async () => {
    const { url, handler } = await serve();
    const response = await postInitializeUnread(url);
    expect(response.headers.get('mcp-session-id')).toBeNull();
    const refused = await refusal(response);
    expect(refused).toEqual({ status: 400, code: -32022, data: { supported: [MODERN_VERSION] } });
    expect(handler.sessionCount).toBe(0);
  });

  it('refuses a handshake-era version header or a session id before reading the body', async () => {
    const { url } = await serve();
    const headers: Record<string, string>[] = [
      { 'mcp-protocol-version': '2025-11-25' },
      { 'mcp-session-id': 'forged' },
    ];
    for (const header of headers) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...header },
        body: '{}',
      });
      expect(await refusal(response)).toMatchObject({ status: 400, code: -32022 });
    }
  });

  it('answers GET and DELETE with 405, allowing POST only, and serves no legacy endpoints', async () => {
    const { url, origin } = await serve();
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(url, { method, headers: { accept: 'text/event-stream', 'mcp-session-id': 'x' } });
      expect([response.status, response.headers.get('allow')]).toEqual([405, 'POST']);
      await response.body?.cancel();
    }
    expect((await fetch(`${origin}/sse`)).status).toBe(404);
  });

  it('fails the SDK v1 client (handshake era only) with the refusal, not a hang', async () => {
    const { url } = await serve();
    const client = new SdkClient({ name: 'v1', version: '1' });
    const failure = await within(
      client.connect(new StreamableHTTPClientTransport(new URL(url))).then(
        () => undefined,
        (error: unknown) => error as Error,
      ),
      'the SDK v1 connect to fail',
    );
    expect(failure?.message).toContain(`serves ${MODERN_VERSION} only`);
  });

  it('is refused where it cannot hold: with legacy endpoints, or a server without the stateless revision', () => {
    const server = new Server(serverWith([]));
    cleanups.push(() => server.close().then(() => undefined));
    expect(() => createMcpHttpHandler(server, { sessions: false, legacy: true })).toThrow(
      /legacy endpoints need sessions/,
    );
    const handshakeOnly = new Server(defineServer({ name: 'h', version: '1', modernProtocolVersions: [] }));
    cleanups.push(() => handshakeOnly.close().then(() => undefined));
    expect(() => createMcpHttpHandler(handshakeOnly, { sessions: false })).toThrow(/needs a server that serves/);
  });
});
