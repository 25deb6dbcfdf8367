/**
 * CORS on the two server transports used on their own (no `createMcpHttpHandler` around them), over real HTTP
 * on 127.0.0.1: `createStreamableHttpHandler` in both eras and `createLegacySseHandler` on both its paths
 * answer an allowed origin's preflight, grant its requests, refuse another origin, and refuse `'*'` without auth.
 */
import { describe, expect, it } from 'vitest';
import { META } from '../../../lib/protocol/modern';
import { Server } from '../../../lib/server/server';
import { createLegacySseHandler } from '../../../transports/http/legacy-sse-server';
import { createStreamableHttpHandler } from '../../../transports/http/streamable-server';
import { text } from '../../helpers/content';
import { serverWith, tool } from '../../helpers/fixtures';
import { cleanups, firstMessage, listenHttp, sseReader } from '../../helpers/http';
import { MODERN_VERSION } from '../../helpers/modern-http';

const APP = 'https://app.example';
const EVIL = 'https://evil.example';
const CORS = { cors: { origins: [APP] } };

function newServer(): Server {
  return new Server(serverWith([tool('echo')]));
}

function preflight(url: string, origin: string, headers = 'content-type, mcp-protocol-version') {
  return fetch(url, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': headers },
  });
}

function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: {
      origin: APP,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

function expectGranted(response: Response) {
  expect(response.headers.get('access-control-allow-origin')).toBe(APP);
  expect(response.headers.get('access-control-expose-headers')).toMatch(/Mcp-Session-Id, MCP-Protocol-Version/);
  expect(response.headers.get('vary')).toMatch(/Origin/);
}

function expectPreflightAnswered(response: Response) {
  expect(response.status).toBe(204);
  expect(response.headers.get('access-control-allow-origin')).toBe(APP);
  expect(response.headers.get('access-control-allow-methods')).toBe('GET, POST, DELETE');
}

async function expectPreflightRefused(response: Response) {
  expect(response.status).toBe(403);
  expect(response.headers.get('access-control-allow-origin')).toBeNull();
  expect((await response.json()).error.message).toMatch(/Origin https:\/\/evil\.example is not allowed/);
}

const initialize = (protocolVersion: string) => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'page', version: '1' } },
});

describe('createStreamableHttpHandler with cors, on its own', () => {
  async function serve() {
    const handler = createStreamableHttpHandler(newServer(), CORS);
    cleanups.push(() => handler.close());
    return `${(await listenHttp(handler)).origin}/mcp`;
  }

  it('answers an allowed origin’s preflight and refuses another’s', async () => {
    const url = await serve();
    expectPreflightAnswered(await preflight(url, APP, 'content-type, mcp-session-id, mcp-protocol-version'));
    await expectPreflightRefused(await preflight(url, EVIL));
  });

  it('grants the handshake era’s POSTs: the initialize that opens a session, and a call on it', async () => {
    const url = await serve();
    const opened = await post(url, initialize('2025-11-25'));
    expect(opened.status).toBe(200);
    expectGranted(opened);
    const session = opened.headers.get('mcp-session-id')!;
    expect(session).toBeTruthy();
    await opened.body!.cancel();
    const called = await post(
      url,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: {} } },
      { 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' },
    );
    expect(called.status).toBe(200);
    expectGranted(called);
    expect((await firstMessage(called)).result.content).toEqual(text('echo').content);
  });

  it('grants a stateless POST (2026-07-28)', async () => {
    const url = await serve();
    expectPreflightAnswered(await preflight(url, APP, 'content-type, mcp-protocol-version, mcp-method, mcp-name'));
    const _meta = {
      [META.protocolVersion]: MODERN_VERSION,
      [META.clientCapabilities]: {},
      [META.clientInfo]: { name: 'page', version: '1' },
    };
    const called = await post(
      url,
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: {}, _meta } },
      { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
    );
    expect(called.status).toBe(200);
    expectGranted(called);
    expect((await firstMessage(called)).result.content).toEqual(text('echo').content);
  });

  it("refuses '*' without auth when made", () => {
    expect(() => createStreamableHttpHandler(newServer(), { cors: { origins: '*' } })).toThrow(
      /'\*' is only allowed on an endpoint with auth/,
    );
  });
});

describe('createLegacySseHandler with cors, on its own', () => {
  async function serve() {
    const handler = createLegacySseHandler(newServer(), CORS);
    cleanups.push(() => handler.close());
    return (await listenHttp(handler)).origin;
  }

  it('answers an allowed origin’s preflight on both paths, refuses another’s, and leaves other paths alone', async () => {
    const origin = await serve();
    expectPreflightAnswered(await preflight(`${origin}/messages`, APP));
    expectPreflightAnswered(await preflight(`${origin}/sse`, APP, ''));
    await expectPreflightRefused(await preflight(`${origin}/messages`, EVIL));
    expect((await preflight(`${origin}/elsewhere`, APP)).status).toBe(404);
  });

  it('grants the event stream and a POST of the session, whose answer comes on the stream', async () => {
    const origin = await serve();
    const stream = await fetch(`${origin}/sse`, { headers: { origin: APP, accept: 'text/event-stream' } });
    expect(stream.status).toBe(200);
    expectGranted(stream);
    const events = sseReader(stream);
    const endpoint = (await events.next())!;
    expect(endpoint.event).toBe('endpoint');
    const posted = await post(`${origin}${endpoint.data}`, initialize('2024-11-05'));
    expect(posted.status).toBe(202);
    expectGranted(posted);
    const message = (await events.next())!;
    expect(JSON.parse(message.data).result.protocolVersion).toBe('2024-11-05');
    await events.cancel();
  });

  it("refuses '*' without auth when made", () => {
    expect(() => createLegacySseHandler(newServer(), { cors: { origins: '*' } })).toThrow(
      /'\*' is only allowed on an endpoint with auth/,
    );
  });
});
