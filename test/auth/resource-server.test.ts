/**
 * The HTTP endpoint as an OAuth resource server (MCP authorization 2025-11-25 and 2026-07-28, the server's
 * side), over real HTTP on 127.0.0.1: the 401 challenge and the metadata document, JWT and introspected
 * tokens accepted or refused, scopes per tool, resource and prompt (403 insufficient_scope in both eras),
 * the principal on `ctx.auth`, sessions and sealed requestState bound to their principal, and no token in a
 * trace. Tokens come from a stand-in issuer (helpers/jwt-issuer.ts).
 */
import nodeCrypto from 'node:crypto';
import { connect } from 'node:net';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { bearerChallenge as clientChallenge } from '../../lib/auth/client/www-authenticate';
import { DEFAULT_DPOP_ALGORITHMS } from '../../lib/auth/server/dpop-proof';
import type { ResourceServerOptions } from '../../lib/auth/server/resource-server';
import { Client } from '../../lib/client/client';
import { Runtime } from '../../lib/core/runtime';
import { META } from '../../lib/protocol/modern';
import type { ServerContext } from '../../lib/server/context';
import { defineServer } from '../../lib/server/definition';
import { createRedactor } from '../../lib/trace/redact';
import type { TraceEvent } from '../../lib/trace/types';
import { LegacySseClientTransport } from '../../transports/http/legacy-sse-client';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { cleanups, sseReader } from '../helpers/http';
import { startTestIssuer, type TestIssuer } from '../helpers/jwt-issuer';
import { mirroredHeaders, postModern } from '../helpers/modern-http';
import { text } from '../helpers/content';
import { WHOAMI_TOOL, WRITE_TOOL } from '../helpers/protected-tools';
import { askName } from '../helpers/fixtures';
import { connectPair } from '../helpers/pair';
import { serveProtected, type ProtectedEndpoint } from '../helpers/protected-endpoint';

const DEFINITION = defineServer({
  name: 'protected',
  version: '1.0.0',
  tools: [
    WHOAMI_TOOL,
    WRITE_TOOL,
    {
      name: 'greet',
      inputSchema: { type: 'object' },
      handler: async (_args, ctx: ServerContext) => {
        return text(`Hello ${(await askName(ctx)).name}`);
      },
    },
  ],
  resources: [{ uri: 'test://secret', name: 'secret', scopes: ['mcp:admin'], read: () => 'hush' }],
  prompts: [{ name: 'plan', scopes: ['mcp:prompts'], get: () => [] }],
});

const ENVELOPE = {
  [META.protocolVersion]: '2026-07-28',
  [META.clientCapabilities]: { elicitation: {} },
  [META.clientInfo]: { name: 'auth-test', version: '1' },
};

/** The second challenge of every 401: DPoP-bound tokens are accepted too (RFC 9449 §7.1). */
const DPOP_OFFER = `DPoP algs="${DEFAULT_DPOP_ALGORITHMS.join(' ')}"`;

const SESSION_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

let issuer: TestIssuer;
beforeEach(async () => {
  issuer = await startTestIssuer();
});

/** Our server behind `createMcpHttpHandler` with `auth` (JWT by the issuer's JWKS unless `auth` says else). */
async function protectedEndpoint(
  auth: Partial<ResourceServerOptions> = {},
  path = '/mcp',
  runtime?: Runtime,
): Promise<ProtectedEndpoint> {
  return serveProtected(
    DEFINITION,
    (url) => ({ resource: url, authorizationServers: [issuer.issuer], jwks: issuer.jwksUrl, ...auth }),
    { path, ...(runtime && { server: { runtime } }) },
  );
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** An `initialize` POST with `headers`; its response. */
function initialize(url: string, headers: Record<string, string>): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { ...SESSION_HEADERS, ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
}

/** A handshake-era session opened with `token`: its id. */
async function openSession(url: string, token: string): Promise<string> {
  const response = await initialize(url, bearer(token));
  await response.text();
  const sessionId = response.headers.get('mcp-session-id')!;
  await postInSession(url, token, sessionId, { jsonrpc: '2.0', method: 'notifications/initialized' });
  return sessionId;
}

async function postInSession(url: string, token: string, sessionId: string, body: unknown) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      ...SESSION_HEADERS,
      ...bearer(token),
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, challenge: response.headers.get('www-authenticate'), text: await response.text() };
}

/** A 2026-07-28 request with `token`: status, challenge and JSON body. */
async function modernCall(url: string, token: string, id: number, method: string, params: Record<string, unknown>) {
  const response = await postModern(
    url,
    { jsonrpc: '2.0', id, method, params: { ...params, _meta: ENVELOPE } },
    { ...mirroredHeaders(method, params as never), ...bearer(token) },
  );
  const challenge = response.headers.get('www-authenticate');
  return { status: response.status, challenge, body: (await response.json()) as Record<string, any> };
}

async function connectClient(url: string, token: string, era: 'handshake' | 'modern'): Promise<Client> {
  const client = new Client({ name: 'auth-test', version: '1.0.0' }, { eraCache: false, era });
  cleanups.push(() => client.close());
  await client.connect(new StreamableHttpClientTransport(url, { headers: bearer(token), fallback: false }));
  return client;
}

async function whoami(client: Client): Promise<Record<string, unknown> | null> {
  const result = await client.callTool('whoami', {});
  return JSON.parse((result.content[0] as { text: string }).text);
}

describe('a request without a token', () => {
  it('is refused 401 with a challenge naming the metadata document', async () => {
    const endpoint = await protectedEndpoint();
    const response = await initialize(endpoint.url, {});
    expect([response.status, response.headers.get('www-authenticate')]).toEqual([
      401,
      `Bearer resource_metadata="${endpoint.metadataUrl}", ${DPOP_OFFER}`,
    ]);
  });

  it('gets the scopes every request needs in the challenge', async () => {
    const endpoint = await protectedEndpoint({ requiredScopes: ['mcp:read', 'mcp:tools'] });
    const response = await initialize(endpoint.url, {});
    expect(response.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${endpoint.metadataUrl}", scope="mcp:read mcp:tools", ${DPOP_OFFER}`,
    );
  });

  it('is refused on GET and DELETE too', async () => {
    const endpoint = await protectedEndpoint();
    const get = await fetch(endpoint.url, { headers: { accept: 'text/event-stream', 'mcp-session-id': 'x' } });
    const remove = await fetch(endpoint.url, { method: 'DELETE', headers: { 'mcp-session-id': 'x' } });
    expect([get.status, remove.status]).toEqual([401, 401]);
  });

  it('is refused on the legacy HTTP+SSE stream', async () => {
    const endpoint = await protectedEndpoint();
    const response = await fetch(`${endpoint.origin}/sse`, { headers: { accept: 'text/event-stream' } });
    expect([response.status, response.headers.get('www-authenticate')]).toEqual([
      401,
      `Bearer resource_metadata="${endpoint.metadataUrl}", ${DPOP_OFFER}`,
    ]);
  });
});

describe('the Protected Resource Metadata document', () => {
  it('is served at the well-known path with the endpoint path after it', async () => {
    const endpoint = await protectedEndpoint({ scopesSupported: ['mcp:read', 'mcp:write'], resourceName: 'Test' });
    const response = await fetch(endpoint.metadataUrl);
    expect(await response.json()).toEqual({
      resource: endpoint.url,
      authorization_servers: [issuer.issuer],
      scopes_supported: ['mcp:read', 'mcp:write'],
      bearer_methods_supported: ['header'],
      resource_name: 'Test',
      dpop_signing_alg_values_supported: DEFAULT_DPOP_ALGORITHMS,
    });
  });

  it('may be read from any origin', async () => {
    const endpoint = await protectedEndpoint();
    const response = await fetch(endpoint.metadataUrl, { headers: { origin: 'https://elsewhere.example' } });
    expect([response.status, response.headers.get('access-control-allow-origin')]).toEqual([200, '*']);
  });

  it('is served at the bare well-known path for an endpoint at the root', async () => {
    const endpoint = await protectedEndpoint({}, '/');
    const response = await fetch(`${endpoint.origin}/.well-known/oauth-protected-resource`);
    expect(((await response.json()) as { resource: string }).resource).toBe(endpoint.origin);
  });
});

describe('JWT access tokens', () => {
  it('are accepted when signed by the issuer for this resource', async () => {
    const endpoint = await protectedEndpoint();
    const client = await connectClient(endpoint.url, await issuer.sign(endpoint.url), 'handshake');
    expect((await client.listTools()).map((tool) => tool.name)).toContain('whoami');
  });

  it('are accepted with the scheme in lower case', async () => {
    const endpoint = await protectedEndpoint();
    const response = await initialize(endpoint.url, { authorization: `bearer ${await issuer.sign(endpoint.url)}` });
    expect(response.status).toBe(200);
  });

  const refusals: [string, (endpoint: ProtectedEndpoint) => Promise<string>][] = [
    ['for another audience', () => issuer.sign('https://other.example/mcp')],
    ['expired', (endpoint) => issuer.sign(endpoint.url, { exp: Math.floor(Date.now() / 1000) - 600 })],
    ['from another issuer', (endpoint) => issuer.sign(endpoint.url, { iss: 'https://evil.example' })],
    ['with a bad signature', (endpoint) => issuer.sign(endpoint.url, {}, { foreignKey: true })],
    ['of another type (an ID token)', (endpoint) => issuer.sign(endpoint.url, {}, { typ: 'id+jwt' })],
    ['unsigned (alg none)', async (endpoint) => unsigned({ iss: issuer.issuer, sub: 'alice', aud: endpoint.url })],
  ];
  it.each(refusals)('are refused 401 invalid_token when %s', async (_case, tokenFor) => {
    const endpoint = await protectedEndpoint();
    const response = await initialize(endpoint.url, bearer(await tokenFor(endpoint)));
    expect([response.status, response.headers.get('www-authenticate')]).toEqual([
      401,
      expect.stringMatching(
        new RegExp(
          `^Bearer error="invalid_token", error_description="[^"]+", resource_metadata="${endpoint.metadataUrl}", ${DPOP_OFFER}$`,
        ),
      ),
    ]);
  });

  it('are checked against a key set fetched once and cached', async () => {
    const endpoint = await protectedEndpoint();
    const client = await connectClient(endpoint.url, await issuer.sign(endpoint.url), 'handshake');
    await client.listTools();
    await client.callTool('whoami', {});
    expect(issuer.jwksFetches).toBe(1);
  });

  it('are refused in the query string, even with a good header', async () => {
    const endpoint = await protectedEndpoint();
    const token = await issuer.sign(endpoint.url);
    const response = await initialize(`${endpoint.url}?access_token=${token}`, bearer(token));
    expect([response.status, response.headers.get('www-authenticate')]).toEqual([
      400,
      expect.stringMatching(/^Bearer error="invalid_request", /),
    ]);
  });

  it('are answered 503, not blamed, when the key set cannot be fetched', async () => {
    const endpoint = await protectedEndpoint({ jwks: 'http://127.0.0.1:1/jwks' });
    const response = await initialize(endpoint.url, bearer(await issuer.sign(endpoint.url)));
    expect([response.status, response.headers.get('www-authenticate')]).toEqual([503, null]);
  });

  it('are refused when the header is not a Bearer one', async () => {
    const endpoint = await protectedEndpoint();
    const response = await initialize(endpoint.url, { authorization: 'Basic YWxpY2U6c2VjcmV0' });
    expect(response.status).toBe(400);
  });
});

describe('the Authorization header', () => {
  it('is refused 400 invalid_request when sent twice, even with two good tokens (RFC 6750 §2)', async () => {
    const endpoint = await protectedEndpoint();
    const token = await issuer.sign(endpoint.url);
    const answer = await rawPost(endpoint.url, [`Authorization: Bearer ${token}`, `Authorization: Bearer ${token}`]);
    expect([answer.status, answer.challenge]).toEqual([
      400,
      expect.stringMatching(/^Bearer error="invalid_request", /),
    ]);
  });

  it('is served once, on the same raw request', async () => {
    const endpoint = await protectedEndpoint();
    const answer = await rawPost(endpoint.url, [`Authorization: Bearer ${await issuer.sign(endpoint.url)}`]);
    expect(answer.status).toBe(200);
  });

  it('leaves the 401 challenge readable by our client: resource_metadata of the first challenge', async () => {
    const endpoint = await protectedEndpoint();
    const response = await initialize(endpoint.url, {});
    expect(clientChallenge(response.headers.get('www-authenticate') ?? undefined)?.params).toEqual({
      resource_metadata: endpoint.metadataUrl,
    });
  });

  it('is compared with the previous request’s token in constant time (node:crypto timingSafeEqual)', async () => {
    const endpoint = await protectedEndpoint();
    const token = await issuer.sign(endpoint.url);
    await initialize(endpoint.url, bearer(token));
    const comparisons = vi.spyOn(nodeCrypto, 'timingSafeEqual');
    cleanups.push(() => comparisons.mockRestore());
    const again = await initialize(endpoint.url, bearer(token));
    expect([again.status, comparisons.mock.calls.length > 0]).toEqual([200, true]);
  });

  it('tells a token from the previous one of the same length differing near its end', async () => {
    const endpoint = await protectedEndpoint();
    const token = await issuer.sign(endpoint.url);
    await initialize(endpoint.url, bearer(token));
    // Not the last character: its low bits may be padding, which base64url decoding drops.
    const at = token.length - 8;
    const altered = `${token.slice(0, at)}${token[at] === 'A' ? 'B' : 'A'}${token.slice(at + 1)}`;
    expect((await initialize(endpoint.url, bearer(altered))).status).toBe(401);
  });

  it('with the DPoP scheme is refused 400 when the server takes no DPoP (dpop: false)', async () => {
    const endpoint = await protectedEndpoint({ dpop: false });
    const response = await initialize(endpoint.url, { authorization: `DPoP ${await issuer.sign(endpoint.url)}` });
    expect([response.status, response.headers.get('www-authenticate')]).toEqual([
      400,
      expect.stringMatching(/^Bearer error="invalid_request", error_description="[^"]*must be \\"Bearer <token>\\""/),
    ]);
  });
});

describe('introspected tokens', () => {
  const introspection = () => ({
    jwks: undefined,
    introspection: { endpoint: issuer.introspectionUrl, clientId: 'rs' },
  });
  const active = (endpoint: ProtectedEndpoint) => ({
    active: true,
    sub: 'carol',
    aud: endpoint.url,
    scope: 'mcp:read',
  });

  it('are accepted when the authorization server says they are active for this resource', async () => {
    const endpoint = await protectedEndpoint(introspection());
    issuer.introspect('opaque-1', active(endpoint));
    const client = await connectClient(endpoint.url, 'opaque-1', 'handshake');
    expect(await whoami(client)).toMatchObject({ subject: 'carol', scopes: ['mcp:read'] });
  });

  it('are refused 401 invalid_token when inactive', async () => {
    const endpoint = await protectedEndpoint(introspection());
    const response = await initialize(endpoint.url, bearer('opaque-unknown'));
    expect([response.status, response.headers.get('www-authenticate')]).toEqual([
      401,
      expect.stringMatching(/^Bearer error="invalid_token"/),
    ]);
  });

  it('are refused when active for another audience', async () => {
    const endpoint = await protectedEndpoint(introspection());
    issuer.introspect('opaque-2', { ...active(endpoint), aud: 'https://other.example/mcp' });
    const response = await initialize(endpoint.url, bearer('opaque-2'));
    expect(response.status).toBe(401);
  });

  it('cost one introspection while the answer is cached', async () => {
    const endpoint = await protectedEndpoint(introspection());
    issuer.introspect('opaque-3', active(endpoint));
    const client = await connectClient(endpoint.url, 'opaque-3', 'handshake');
    await client.listTools();
    await client.callTool('whoami', {});
    expect(issuer.introspections).toBe(1);
  });
});

describe('scopes per tool, resource and prompt', () => {
  it('refuse a handshake-era session call lacking them with 403 insufficient_scope naming what to ask for', async () => {
    const endpoint = await protectedEndpoint();
    const token = await issuer.sign(endpoint.url, { scope: 'mcp:read' });
    const sessionId = await openSession(endpoint.url, token);
    const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'write', arguments: {} } };
    const answer = await postInSession(endpoint.url, token, sessionId, call);
    expect([answer.status, answer.challenge]).toEqual([
      403,
      `Bearer error="insufficient_scope", scope="mcp:read mcp:write", resource_metadata="${endpoint.metadataUrl}", error_description="this request needs the scope mcp:write"`,
    ]);
  });

  it('refuse a 2026-07-28 call lacking them with 403 insufficient_scope', async () => {
    const endpoint = await protectedEndpoint();
    const token = await issuer.sign(endpoint.url, { scope: 'mcp:read' });
    const answer = await modernCall(endpoint.url, token, 8, 'tools/call', { name: 'write', arguments: {} });
    expect([answer.status, answer.challenge]).toEqual([
      403,
      expect.stringMatching(/^Bearer error="insufficient_scope", scope="mcp:read mcp:write", /),
    ]);
  });

  it('answer the refused call with a JSON-RPC error echoing its id', async () => {
    const endpoint = await protectedEndpoint();
    const token = await issuer.sign(endpoint.url, { scope: 'mcp:read' });
    const answer = await modernCall(endpoint.url, token, 'call-9' as never, 'tools/call', {
      name: 'write',
      arguments: {},
    });
    expect(answer.body).toMatchObject({ jsonrpc: '2.0', id: 'call-9', error: { code: -32600 } });
  });

  it('let the call through once the token grants them (a step-up)', async () => {
    const endpoint = await protectedEndpoint();
    const token = await issuer.sign(endpoint.url, { scope: 'mcp:read mcp:write' });
    const answer = await modernCall(endpoint.url, token, 10, 'tools/call', { name: 'write', arguments: {} });
    expect(answer.body.result.content).toEqual([{ type: 'text', text: 'written' }]);
  });

  it('apply to resources/read', async () => {
    const endpoint = await protectedEndpoint();
    const token = await issuer.sign(endpoint.url);
    const answer = await modernCall(endpoint.url, token, 11, 'resources/read', { uri: 'test://secret' });
    expect([answer.status, answer.challenge]).toEqual([403, expect.stringContaining('scope="mcp:read mcp:admin"')]);
  });

  it('apply to prompts/get', async () => {
    const endpoint = await protectedEndpoint();
    const token = await issuer.sign(endpoint.url);
    const answer = await modernCall(endpoint.url, token, 12, 'prompts/get', { name: 'plan' });
    expect([answer.status, answer.challenge]).toEqual([403, expect.stringContaining('scope="mcp:read mcp:prompts"')]);
  });

  it('are not listed to clients', async () => {
    const endpoint = await protectedEndpoint();
    const client = await connectClient(endpoint.url, await issuer.sign(endpoint.url), 'handshake');
    const write = (await client.listTools()).find((tool) => tool.name === 'write');
    expect(write).not.toHaveProperty('scopes');
  });

  it('are not checked on a transport without authentication', async () => {
    const { client, server } = await connectPair(DEFINITION);
    cleanups.push(
      () => client.close(),
      () => server.close(),
    );
    expect((await client.callTool('write', {})).content).toEqual([{ type: 'text', text: 'written' }]);
  });
});

describe('the principal on ctx.auth', () => {
  it.each(['handshake', 'modern'] as const)('is the token’s caller in the %s era', async (era) => {
    const endpoint = await protectedEndpoint();
    const client = await connectClient(endpoint.url, await issuer.sign(endpoint.url, { scope: 'mcp:read mcp:x' }), era);
    expect(await whoami(client)).toMatchObject({
      id: `${issuer.issuer} sub:alice`,
      subject: 'alice',
      clientId: 'test-client',
      issuer: issuer.issuer,
      scopes: ['mcp:read', 'mcp:x'],
    });
  });

  it('carries no token unless the server exposes it', async () => {
    const endpoint = await protectedEndpoint();
    const client = await connectClient(endpoint.url, await issuer.sign(endpoint.url), 'modern');
    expect(await whoami(client)).not.toHaveProperty('token');
  });

  it('carries the token when the server exposes it', async () => {
    const endpoint = await protectedEndpoint({ exposeToken: true });
    const token = await issuer.sign(endpoint.url);
    const client = await connectClient(endpoint.url, token, 'modern');
    expect(await whoami(client)).toHaveProperty('token', token);
  });

  it('is undefined without authentication', async () => {
    const { client, server } = await connectPair(DEFINITION);
    cleanups.push(
      () => client.close(),
      () => server.close(),
    );
    expect(await whoami(client)).toBeNull();
  });
});

describe('a handshake-era session', () => {
  it('refuses a POST with another principal’s token as an unknown session (404)', async () => {
    const endpoint = await protectedEndpoint();
    const sessionId = await openSession(endpoint.url, await issuer.sign(endpoint.url));
    const mallory = await issuer.sign(endpoint.url, { sub: 'mallory' });
    const answer = await postInSession(endpoint.url, mallory, sessionId, {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/list',
    });
    expect(answer.status).toBe(404);
  });

  it('refuses a DELETE with another principal’s token as an unknown session (404)', async () => {
    const endpoint = await protectedEndpoint();
    const sessionId = await openSession(endpoint.url, await issuer.sign(endpoint.url));
    const mallory = await issuer.sign(endpoint.url, { sub: 'mallory' });
    const response = await fetch(endpoint.url, {
      method: 'DELETE',
      headers: { ...bearer(mallory), 'mcp-session-id': sessionId },
    });
    expect(response.status).toBe(404);
  });

  it('serves a new token of the same principal, its scopes on ctx.auth', async () => {
    const endpoint = await protectedEndpoint();
    const sessionId = await openSession(endpoint.url, await issuer.sign(endpoint.url, { scope: 'mcp:read' }));
    const stepped = await issuer.sign(endpoint.url, { scope: 'mcp:read mcp:write' });
    const call = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'whoami', arguments: {} } };
    const answer = await postInSession(endpoint.url, stepped, sessionId, call);
    expect(answer.text).toContain('\\"scopes\\":[\\"mcp:read\\",\\"mcp:write\\"]');
  });
});

describe('a legacy HTTP+SSE (2024-11-05) session', () => {
  it('gives its handlers the principal on ctx.auth', async () => {
    const endpoint = await protectedEndpoint();
    const client = new Client({ name: 'auth-test', version: '1.0.0' }, { eraCache: false, era: 'handshake' });
    cleanups.push(() => client.close());
    const token = await issuer.sign(endpoint.url);
    await client.connect(new LegacySseClientTransport(`${endpoint.origin}/sse`, { headers: bearer(token) }));
    expect(await whoami(client)).toMatchObject({ subject: 'alice' });
  });

  it('refuses a POST with another principal’s token as an unknown session (404)', async () => {
    const endpoint = await protectedEndpoint();
    const stream = await fetch(`${endpoint.origin}/sse`, {
      headers: { accept: 'text/event-stream', ...bearer(await issuer.sign(endpoint.url)) },
    });
    const events = sseReader(stream);
    cleanups.push(() => events.cancel());
    const messages = (await events.next())!.data;
    const response = await fetch(`${endpoint.origin}${messages}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(await issuer.sign(endpoint.url, { sub: 'mallory' })) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(response.status).toBe(404);
  });
});

describe('a 2026-07-28 input round', () => {
  async function firstRound(endpoint: ProtectedEndpoint, token: string): Promise<string> {
    const round = await modernCall(endpoint.url, token, 1, 'tools/call', { name: 'greet', arguments: {} });
    return round.body.result.requestState as string;
  }
  const retry = (endpoint: ProtectedEndpoint, token: string, requestState: string) =>
    modernCall(endpoint.url, token, 2, 'tools/call', {
      name: 'greet',
      arguments: {},
      inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } },
      requestState,
    });

  it('is completed by the principal it was sealed for', async () => {
    const endpoint = await protectedEndpoint();
    const token = await issuer.sign(endpoint.url);
    const answer = await retry(endpoint, token, await firstRound(endpoint, token));
    expect(answer.body.result.content).toEqual([{ type: 'text', text: 'Hello Ada' }]);
  });

  it('refuses a requestState sealed for another principal', async () => {
    const endpoint = await protectedEndpoint();
    const requestState = await firstRound(endpoint, await issuer.sign(endpoint.url));
    const answer = await retry(endpoint, await issuer.sign(endpoint.url, { sub: 'mallory' }), requestState);
    expect(answer.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/requestState/) });
  });
});

describe('traces of an authenticated endpoint', () => {
  it('never show the bearer token', async () => {
    const runtime = new Runtime({ redact: createRedactor({}) });
    const events: TraceEvent[] = [];
    const subscription = runtime.trace$.subscribe((event) => events.push(event));
    cleanups.push(() => subscription.unsubscribe());
    const endpoint = await protectedEndpoint({}, '/mcp', runtime);
    const token = await issuer.sign(endpoint.url);
    const client = await connectClient(endpoint.url, token, 'handshake');
    await client.callTool('whoami', {});
    expect(events.length > 0 && !JSON.stringify(events).includes(token)).toBe(true);
  });

  it('show no token field a request carries, with the default redaction', async () => {
    const runtime = new Runtime({ redact: createRedactor({}) });
    const events: TraceEvent[] = [];
    const subscription = runtime.trace$.subscribe((event) => events.push(event));
    cleanups.push(() => subscription.unsubscribe());
    const endpoint = await protectedEndpoint({}, '/mcp', runtime);
    const client = await connectClient(endpoint.url, await issuer.sign(endpoint.url), 'handshake');
    await client.callTool('whoami', { upstream: { access_token: 'at-123', client_secret: 'cs-456' } });
    expect(JSON.stringify(events)).not.toMatch(/at-123|cs-456/);
  });
});

/**
 * An `initialize` POST written on a raw socket (fetch and node:http merge or refuse repeated headers), with
 * `headerLines` added: the status and challenge of the answer.
 */
function rawPost(url: string, headerLines: readonly string[]): Promise<{ status: number; challenge?: string }> {
  const { hostname, port, pathname, host } = new URL(url);
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  const head = [
    `POST ${pathname} HTTP/1.1`,
    `Host: ${host}`,
    'Content-Type: application/json',
    'Accept: application/json, text/event-stream',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
    ...headerLines,
  ];
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    cleanups.push(() => void socket.destroy());
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(received)?.[1]);
      const challenge = /^www-authenticate: (.*)\r$/im.exec(received)?.[1];
      resolve({ status, ...(challenge !== undefined && { challenge }) });
    });
    // Written, not ended: a half-closed socket makes Node abort a request still being authenticated.
    socket.write(`${head.join('\r\n')}\r\n\r\n${body}`);
  });
}

/** An unsigned JWT (`alg: none`) with these claims. */
function unsigned(claims: Record<string, unknown>): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const exp = Math.floor(Date.now() / 1000) + 300;
  return `${part({ alg: 'none', typ: 'at+jwt' })}.${part({ ...claims, exp, scope: 'mcp:read' })}.`;
}
