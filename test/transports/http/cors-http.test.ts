/**
 * CORS on `createMcpHttpHandler` over real HTTP on 127.0.0.1, in both eras: preflights, the grant on every
 * kind of answer (a session's POSTs, its GET stream and DELETE; a stateless POST; the legacy HTTP+SSE
 * stream; a 401 of an endpoint with auth), and its interplay with the Origin/Host guard: an allowed origin
 * passes it, a hostile Origin or Host gets the guard's 403 and no grant, odd preflights a clear 403.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../lib/jsonrpc/types';
import { META } from '../../../lib/protocol/modern';
import { Server } from '../../../lib/server/server';
import { createMcpHttpHandler, type McpHttpOptions } from '../../../transports/http/endpoint';
import { serverWith, tool } from '../../helpers/fixtures';
import { cleanups, firstMessage, lateListener, listenHttp, sendRaw } from '../../helpers/http';
import { startTestIssuer, type TestIssuer } from '../../helpers/jwt-issuer';
import { MODERN_VERSION } from '../../helpers/modern-http';
import { text } from '../../helpers/content';

const APP = 'https://app.example';
const EVIL = 'https://evil.example';
const HANDSHAKE_VERSION = '2025-11-25';
const JSON_AND_SSE = 'application/json, text/event-stream';

const TOOLS = [
  tool('echo'),
  tool('regional', (args: { region?: string }) => text(`region ${args.region}`), {
    inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } },
  }),
];

/** Our endpoint for a two-era server, with `options`, on 127.0.0.1; closed after the test. */
async function serve(options: McpHttpOptions = { cors: { origins: [APP] } }) {
  const server = new Server(serverWith(TOOLS));
  const handler = createMcpHttpHandler(server, options);
  cleanups.push(() => handler.close());
  const { origin } = await listenHttp(handler);
  return { origin, url: `${origin}/mcp`, handler };
}

function preflight(url: string, origin: string, method = 'POST', headers = 'content-type, mcp-protocol-version') {
  return fetch(url, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });
}

/** A POST of `body` as a page of `origin` sends it. */
function post(url: string, origin: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: { origin, 'content-type': 'application/json', accept: JSON_AND_SSE, ...headers },
    body: JSON.stringify(body),
  });
}

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: HANDSHAKE_VERSION, capabilities: {}, clientInfo: { name: 'page', version: '1' } },
};

function modernCall(id: number, name: string, args: JsonObject) {
  const _meta = {
    [META.protocolVersion]: MODERN_VERSION,
    [META.clientCapabilities]: {},
    [META.clientInfo]: { name: 'page', version: '1' },
  };
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args, _meta } };
}

function expectGranted(response: Response, origin = APP) {
  expect(response.headers.get('access-control-allow-origin')).toBe(origin);
  expect(response.headers.get('access-control-expose-headers')).toMatch(/Mcp-Session-Id, MCP-Protocol-Version/);
  expect(response.headers.get('vary')).toMatch(/Origin/);
}

function expectNoGrant(response: Response) {
  expect(response.headers.get('access-control-allow-origin')).toBeNull();
  expect(response.headers.get('access-control-allow-methods')).toBeNull();
}

describe('CORS, handshake era', () => {
  it('answers the preflight, then grants every answer of a session to an allowed origin: POSTs, GET stream, DELETE', async () => {
    const { url } = await serve();
    const answer = await preflight(url, APP, 'POST', 'content-type, mcp-session-id, mcp-protocol-version');
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe(APP);
    expect(answer.headers.get('access-control-allow-methods')).toBe('GET, POST, DELETE');
    expect(answer.headers.get('access-control-allow-headers')).toMatch(/mcp-session-id.*last-event-id/);
    expect(answer.headers.get('access-control-max-age')).toBe('7200');

    const opened = await post(url, APP, initialize);
    expect(opened.status).toBe(200);
    expectGranted(opened);
    const session = opened.headers.get('mcp-session-id')!;
    expect((await firstMessage(opened)).result.protocolVersion).toBe(HANDSHAKE_VERSION);
    const sessionHeaders = { 'mcp-session-id': session, 'mcp-protocol-version': HANDSHAKE_VERSION };

    const initialized = await post(url, APP, { jsonrpc: '2.0', method: 'notifications/initialized' }, sessionHeaders);
    expect(initialized.status).toBe(202);
    expectGranted(initialized);
    const called = await post(
      url,
      APP,
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: {} } },
      sessionHeaders,
    );
    expectGranted(called);
    expect((await firstMessage(called)).result.content).toEqual(text('echo').content);

    const stream = await fetch(url, { headers: { origin: APP, accept: 'text/event-stream', ...sessionHeaders } });
    expect(stream.status).toBe(200);
    expectGranted(stream);
    await stream.body!.cancel();

    const deleted = await fetch(url, { method: 'DELETE', headers: { origin: APP, ...sessionHeaders } });
    expect(deleted.status).toBe(204);
    expectGranted(deleted);
  });

  it('grants the legacy HTTP+SSE stream and answers the preflight of its POSTs', async () => {
    const { origin } = await serve();
    expect((await preflight(`${origin}/messages`, APP)).status).toBe(204);
    const stream = await fetch(`${origin}/sse`, { headers: { origin: APP, accept: 'text/event-stream' } });
    expect(stream.status).toBe(200);
    expectGranted(stream);
    await stream.body!.cancel();
  });
});

describe('CORS, stateless era (2026-07-28)', () => {
  it('answers a preflight asking for the mirrored headers, and grants the stateless call', async () => {
    const { url } = await serve();
    const asked = 'content-type, mcp-protocol-version, mcp-method, mcp-name, mcp-param-region';
    const answer = await preflight(url, APP, 'POST', asked);
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-headers')!.split(', ')).toEqual(
      expect.arrayContaining(asked.split(', ')),
    );

    const called = await post(url, APP, modernCall(7, 'regional', { region: 'eu' }), {
      'mcp-protocol-version': MODERN_VERSION,
      'mcp-method': 'tools/call',
      'mcp-name': 'regional',
      'mcp-param-region': 'eu',
    });
    expect(called.status).toBe(200);
    expectGranted(called);
    expect((await firstMessage(called)).result.content).toEqual(text('region eu').content);
  });
});

describe('CORS and the Origin/Host guard', () => {
  it('lets an allowed origin pass the guard, which refuses it (403) when CORS is off', async () => {
    const without = await serve({});
    expect((await post(without.url, APP, initialize)).status).toBe(403);
    const withCors = await serve();
    expect((await post(withCors.url, APP, initialize)).status).toBe(200);
  });

  it('keeps allowedOrigins (a list or a predicate) beside the CORS origins: those pass the guard with no grant', async () => {
    for (const allowedOrigins of [['https://tool.example'], (origin: string) => origin === 'https://tool.example']) {
      const { url } = await serve({ cors: { origins: [APP] }, allowedOrigins });
      const tool = await post(url, 'https://tool.example', initialize);
      expect(tool.status).toBe(200);
      expectNoGrant(tool);
      await tool.body!.cancel();
      const page = await post(url, APP, initialize);
      expectGranted(page);
      await page.body!.cancel();
      expect((await post(url, EVIL, initialize)).status).toBe(403);
    }
  });

  it('gives a hostile origin the guard answer (403) and no grant, on the preflight and on the POST, in both eras', async () => {
    const { url } = await serve();
    const refused = await preflight(url, EVIL);
    expect(refused.status).toBe(403);
    expectNoGrant(refused);
    expect((await refused.json()).error.message).toMatch(/Origin https:\/\/evil\.example is not allowed/);
    const eras: [unknown, Record<string, string>][] = [
      [initialize, {}],
      [modernCall(3, 'echo', {}), { 'mcp-protocol-version': MODERN_VERSION }],
    ];
    for (const [body, headers] of eras) {
      const answer = await post(url, EVIL, body, headers);
      expect(answer.status).toBe(403);
      expectNoGrant(answer);
      expect(answer.headers.get('vary')).toBe('Origin');
    }
  });

  it('refuses the preflight of an origin the guard accepts but CORS does not, and grants nothing to its POST', async () => {
    const { url, origin } = await serve();
    const local = origin.replace('127.0.0.1', 'localhost'); // a local origin: the guard lets it through
    const refused = await preflight(url, local);
    expect(refused.status).toBe(403);
    expectNoGrant(refused);
    expect((await refused.json()).error.message).toContain(`CORS preflight refused: origin "${local}" is not allowed`);
    const served = await post(url, local, initialize);
    expect(served.status).toBe(200);
    expectNoGrant(served);
    await served.body!.cancel();
  });

  it('refuses an allowed origin with a foreign Host (DNS rebinding) with the guard answer, granting nothing', async () => {
    const { origin } = await serve();
    const answer = await sendRaw(`${origin}/mcp`, 'OPTIONS', {
      host: 'rebound.example:80',
      origin: APP,
      'access-control-request-method': 'POST',
    });
    expect(answer.status).toBe(403);
    expect(answer.headers['access-control-allow-origin']).toBeUndefined();
    expect(JSON.parse(answer.body).error.message).toMatch(/Host rebound\.example:80 is not allowed/);
  });

  it('refuses preflights asking for odd methods or headers, saying which', async () => {
    const { url } = await serve();
    const cases = [
      ['PUT', 'content-type', /method "PUT" is not allowed \(allowed: GET, POST, DELETE\)/],
      ['POST', 'content-type, cookie', /request header "cookie" is not allowed/],
      ['POST', 'x-forwarded-host', /request header "x-forwarded-host" is not allowed/],
    ] as const;
    for (const [method, headers, reason] of cases) {
      const answer = await preflight(url, APP, method, headers);
      expect(answer.status, `${method} ${headers}`).toBe(403);
      expectNoGrant(answer);
      expect((await answer.json()).error.message).toMatch(reason);
    }
  });

  it('leaves other paths alone (404), and OPTIONS without CORS as before (405)', async () => {
    const { origin } = await serve();
    expect((await preflight(`${origin}/elsewhere`, APP)).status).toBe(404);
    const without = await serve({});
    expect((await preflight(without.url, APP)).status).toBe(403); // the guard first: APP is foreign there
    const local = without.origin; // the page's own origin: the guard lets it through
    expect((await preflight(without.url, local)).status).toBe(405);
  });
});

describe('CORS on an endpoint with auth', () => {
  let issuer: TestIssuer;
  beforeAll(async () => {
    issuer = await startTestIssuer();
  });

  async function protectedEndpoint(cors: McpHttpOptions['cors']) {
    const server = new Server(serverWith(TOOLS));
    cleanups.push(() => server.close());
    let handler: ReturnType<typeof createMcpHttpHandler> | undefined;
    const { origin } = await listenHttp(lateListener(() => handler));
    const url = `${origin}/mcp`;
    handler = createMcpHttpHandler(server, {
      cors,
      auth: { resource: url, authorizationServers: [issuer.issuer], jwks: issuer.jwksUrl },
    });
    cleanups.push(() => handler!.close());
    return { url, origin };
  }

  it("answers the preflight without a token, lets the page read the 401's challenge, and serves its token", async () => {
    const { url } = await protectedEndpoint({ origins: '*' });
    const page = 'https://anywhere.example'; // '*': any origin, since every request needs a token
    const answer = await preflight(url, page, 'POST', 'authorization, content-type');
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-headers')).toContain('authorization');

    const challenged = await post(url, page, initialize);
    expect(challenged.status).toBe(401);
    expectGranted(challenged, page);
    expect(challenged.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate');
    expect(challenged.headers.get('www-authenticate')).toMatch(/^Bearer /);

    const token = await issuer.sign(url);
    const served = await post(url, page, initialize, { authorization: `Bearer ${token}` });
    expect(served.status).toBe(200);
    expectGranted(served, page);
    await served.body!.cancel();
  });

  it("keeps the metadata document's own CORS (any origin, no token)", async () => {
    const { origin } = await protectedEndpoint({ origins: [APP] });
    const metadata = await fetch(`${origin}/.well-known/oauth-protected-resource/mcp`, { headers: { origin: EVIL } });
    expect(metadata.status).toBe(200);
    expect(metadata.headers.get('access-control-allow-origin')).toBe('*');
  });

  it("refuses '*' without auth when the endpoint is made, saying why", () => {
    const server = new Server(serverWith(TOOLS));
    expect(() => createMcpHttpHandler(server, { cors: { origins: '*' } })).toThrow(
      /'\*' is only allowed on an endpoint with auth/,
    );
  });
});
