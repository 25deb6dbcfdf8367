/**
 * OAuth end to end, our pieces together (issue 15 §5): our `Client` over `StreamableHttpClientTransport`
 * with an `OAuthClient` (headless interaction), against our `Server` behind `createMcpHttpHandler` with
 * `auth`, against the tests' authorization server (helpers/oauth-server.ts), all over real HTTP on
 * 127.0.0.1. The client probes 2026-07-28 first (`era: 'auto'`) or speaks the handshake era
 * (`era: 'handshake'`); the flows must behave the same in both. What the authorization server saw is read from
 * its `events` log.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AuthorizationError, headlessInteraction, MemoryTokenStore, OAuthClient } from '../../lib/auth';
import type { TokenStore } from '../../lib/auth';
import { FileTokenStore } from '../../lib/auth/node';
import { createJwtVerifier } from '../../lib/auth/server';
import type { ResourceServerOptions } from '../../lib/auth/server/resource-server';
import { Client } from '../../lib/client/client';
import { Runtime } from '../../lib/core/runtime';
import type { TraceEvent } from '../../lib/trace/types';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { cleanups } from '../helpers/http';
import {
  startAuthorizationServer,
  type AuthorizationServer,
  type AuthorizationServerEvent,
  type AuthorizationServerOptions,
} from '../helpers/oauth-server';
import { protectedToolsDefinition } from '../helpers/protected-tools';
import { serveProtected } from '../helpers/protected-endpoint';

const REDIRECT_URI = 'http://127.0.0.1:53682/callback';
const HOUR_MS = 3_600_000;

const DEFINITION = protectedToolsDefinition();

/** One protected MCP server, its authorization server, and a clock both of them read. */
interface Setup {
  readonly as: AuthorizationServer;
  /** The MCP endpoint's URL, which is also the resource. */
  readonly url: string;
  /** The server's runtime (its trace). */
  readonly runtime: Runtime;
  /** Moves the authorization server's and the resource server's clock forward. */
  advance(ms: number): void;
  readonly now: () => number;
}

interface SetupOptions {
  /** The resource server's `auth` over the defaults (JWT by the authorization server's JWKS). */
  readonly auth?: (as: AuthorizationServer, url: string, now: () => number) => Partial<ResourceServerOptions>;
  readonly authorizationServer?: AuthorizationServerOptions;
}

/**
 * The authorization server offers `offline_access` (so the client gets refresh tokens); the resource
 * server lists `mcp:read` and `mcp:write` in its metadata, needs `mcp:read` of every request (its 401
 * challenge names it) and `mcp:write` for the `write` tool.
 */
async function setup(options: SetupOptions = {}): Promise<Setup> {
  let skewMs = 0;
  const now = () => Date.now() + skewMs;
  const as = await startAuthorizationServer({
    scopesSupported: ['mcp:read', 'mcp:write', 'offline_access'],
    now,
    ...options.authorizationServer,
  });
  cleanups.push(() => as.close());
  const runtime = new Runtime();
  const { url } = await serveProtected(
    DEFINITION,
    (url) => ({
      resource: url,
      authorizationServers: [as.issuer],
      jwks: as.url('/jwks'),
      scopesSupported: ['mcp:read', 'mcp:write'],
      requiredScopes: ['mcp:read'],
      ...options.auth?.(as, url, now),
    }),
    { server: { runtime } },
  );
  return { as, url, runtime, now, advance: (ms) => void (skewMs += ms) };
}

/** JWTs checked on the shared clock (to see a token expire without waiting). */
const jwtOnTheClock = (as: AuthorizationServer, url: string, now: () => number) => ({
  jwks: undefined,
  verifier: createJwtVerifier({ jwksUrl: as.url('/jwks'), issuer: as.issuer, audience: url, now }),
});

function oauthClientFor(setup: Setup, store: TokenStore = new MemoryTokenStore(), extra = {}): OAuthClient {
  return new OAuthClient(setup.url, {
    store,
    interaction: headlessInteraction(REDIRECT_URI),
    now: setup.now,
    ...extra,
  });
}

type Era = 'auto' | 'handshake';

async function connect(setup: Setup, authorization: OAuthClient, era: Era): Promise<Client> {
  const client = new Client({ name: 'e2e', version: '1.0.0' }, { eraCache: false, era });
  cleanups.push(() => client.close());
  await client.connect(new StreamableHttpClientTransport(setup.url, { authorization, fallback: false }));
  return client;
}

async function whoami(client: Client): Promise<Record<string, unknown>> {
  const result = await client.callTool('whoami', {});
  return JSON.parse((result.content[0] as { text: string }).text);
}

const at = (as: AuthorizationServer, endpoint: AuthorizationServerEvent['endpoint']) =>
  as.events.filter((event) => event.endpoint === endpoint);
const grants = (as: AuthorizationServer, grantType: string) =>
  at(as, 'token').filter((event) => event.grantType === grantType && event.status === 200);
const scopesOf = (event: AuthorizationServerEvent | undefined) => (event?.scope ?? '').split(' ').sort();

describe.each<Era>(['auto', 'handshake'])('our client with an OAuthClient, era %s', (era) => {
  describe('the first connection', () => {
    it('registers, runs the code flow with PKCE for the resource, and gets one token', async () => {
      const s = await setup();
      await connect(s, oauthClientFor(s), era);
      expect(
        s.as.events
          .filter((event) => event.endpoint !== 'metadata' && event.endpoint !== 'jwks')
          .map(({ endpoint, status, pkce, resource, grantType }) => ({ endpoint, status, pkce, resource, grantType })),
      ).toEqual(
        [
          { endpoint: 'register', status: 201 },
          { endpoint: 'authorize', status: 302, resource: s.url },
          { endpoint: 'token', status: 200, pkce: 'matched', resource: s.url, grantType: 'authorization_code' },
        ].map((event) => expect.objectContaining(event)),
      );
    });

    it('speaks the era asked for', async () => {
      const s = await setup();
      const client = await connect(s, oauthClientFor(s), era);
      expect(client.connectedEra).toBe(era === 'auto' ? 'modern' : 'handshake');
    });

    it('asks for the scope the challenge names, with offline_access', async () => {
      const s = await setup();
      await connect(s, oauthClientFor(s), era);
      expect(scopesOf(at(s.as, 'authorize')[0])).toEqual(['mcp:read', 'offline_access']);
    });

    it('then calls a tool whose ctx.auth is the token’s subject and scopes', async () => {
      const s = await setup();
      const client = await connect(s, oauthClientFor(s), era);
      expect(await whoami(client)).toMatchObject({
        subject: 'user-1',
        issuer: s.as.issuer,
        scopes: ['mcp:read', 'offline_access'],
      });
    });
  });

  it('reuses the token for every later call: one token request in all', async () => {
    const s = await setup();
    const client = await connect(s, oauthClientFor(s), era);
    await client.listTools();
    await whoami(client);
    await whoami(client);
    expect(at(s.as, 'token')).toHaveLength(1);
  });

  describe('a tool needing a scope the token lacks', () => {
    it('is called once the client stepped up', async () => {
      const s = await setup();
      const client = await connect(s, oauthClientFor(s), era);
      expect((await client.callTool('write', {})).content).toEqual([{ type: 'text', text: 'written' }]);
    });

    it('makes the second authorization ask for the union of the scopes', async () => {
      const s = await setup();
      const client = await connect(s, oauthClientFor(s), era);
      await client.callTool('write', {});
      expect(at(s.as, 'authorize').map(scopesOf)).toEqual([
        ['mcp:read', 'offline_access'],
        ['mcp:read', 'mcp:write', 'offline_access'],
      ]);
    });

    it('leaves the handlers a principal with the union of the scopes', async () => {
      const s = await setup();
      const client = await connect(s, oauthClientFor(s), era);
      await client.callTool('write', {});
      expect(((await whoami(client)).scopes as string[]).slice().sort()).toEqual([
        'mcp:read',
        'mcp:write',
        'offline_access',
      ]);
    });
  });

  describe('an expired token', () => {
    const expiring = { auth: jwtOnTheClock };

    it('is refreshed (no second authorization) and the call succeeds', async () => {
      const s = await setup(expiring);
      const client = await connect(s, oauthClientFor(s), era);
      s.advance(2 * HOUR_MS);
      await whoami(client);
      expect([at(s.as, 'authorize').length, grants(s.as, 'refresh_token').length]).toEqual([1, 1]);
    });

    it('leaves the old refresh token refused (rotation)', async () => {
      const s = await setup(expiring);
      const store = new MemoryTokenStore();
      const client = await connect(s, oauthClientFor(s, store), era);
      const before = (await store.load(keyOf(s)))!;
      s.advance(2 * HOUR_MS);
      await whoami(client);
      const reuse = await tokenRequest(s.as, {
        grant_type: 'refresh_token',
        refresh_token: before.tokens!.refreshToken!,
        client_id: before.client!.clientId,
      });
      expect([reuse.status, reuse.body.error]).toEqual([400, 'invalid_grant']);
    });

    it('is replaced in the store by the refreshed tokens', async () => {
      const s = await setup(expiring);
      const store = new MemoryTokenStore();
      const authorization = oauthClientFor(s, store);
      const client = await connect(s, authorization, era);
      const before = (await store.load(keyOf(s)))!.tokens!;
      s.advance(2 * HOUR_MS);
      await whoami(client);
      const after = (await store.load(keyOf(s)))!.tokens!;
      expect({
        newAccessToken: after.accessToken !== before.accessToken,
        newRefreshToken: after.refreshToken !== before.refreshToken,
        inUse: authorization.currentTokens?.accessToken === after.accessToken,
      }).toEqual({ newAccessToken: true, newRefreshToken: true, inUse: true });
    });

    it('without a refresh token, runs the grant again asking for every scope it had stepped up to', async () => {
      const s = await setup({
        auth: (as, url, now) => ({ ...jwtOnTheClock(as, url, now), scopesSupported: undefined }),
        authorizationServer: { refreshTokens: 'never' },
      });
      const client = await connect(s, oauthClientFor(s), era);
      await client.callTool('write', {});
      s.advance(2 * HOUR_MS);
      await client.callTool('write', {});
      const asked = at(s.as, 'authorize').map((event) => scopesOf(event));
      expect(asked).toEqual([
        ['mcp:read', 'offline_access'],
        ['mcp:read', 'mcp:write', 'offline_access'],
        ['mcp:read', 'mcp:write', 'offline_access'],
      ]);
    });

    it('whose refresh token was revoked is replaced by running the grant again', async () => {
      const s = await setup(expiring);
      const store = new MemoryTokenStore();
      const client = await connect(s, oauthClientFor(s, store), era);
      s.as.revoke((await store.load(keyOf(s)))!.tokens!.refreshToken!);
      s.advance(2 * HOUR_MS);
      await whoami(client);
      expect({
        refusedRefreshes: at(s.as, 'token').filter((e) => e.grantType === 'refresh_token' && e.status === 400).length,
        authorizations: at(s.as, 'authorize').length,
        codeGrants: grants(s.as, 'authorization_code').length,
      }).toEqual({ refusedRefreshes: 1, authorizations: 2, codeGrants: 2 });
    });
  });

  it('uses the token a previous run stored on disk, without asking the authorization server', async () => {
    const s = await setup();
    const configDir = await mkdtemp(join(tmpdir(), 'switchboard-e2e-'));
    cleanups.push(() => rm(configDir, { recursive: true, force: true }));
    const first = await connect(s, oauthClientFor(s, new FileTokenStore({ configDir })), era);
    await whoami(first);
    await first.close();
    const asked = s.as.events.length;
    const second = await connect(s, oauthClientFor(s, new FileTokenStore({ configDir })), era);
    await whoami(second);
    expect(s.as.events.length - asked).toBe(0);
  });

  it('starts exactly one authorization for many calls refused at once', async () => {
    // No refresh tokens: a refused token can only be replaced by the grant.
    const s = await setup({ auth: jwtOnTheClock, authorizationServer: { refreshTokens: 'never' } });
    const client = await connect(s, oauthClientFor(s), era);
    s.advance(2 * HOUR_MS);
    await Promise.all(Array.from({ length: 8 }, () => whoami(client)));
    expect(at(s.as, 'authorize')).toHaveLength(2);
  });

  it('gets its token checked by introspection where the server introspects', async () => {
    const s = await setup({
      auth: (as) => {
        as.addClient({ clientId: 'resource-server', clientSecret: 'rs-secret' });
        return {
          jwks: undefined,
          introspection: { endpoint: as.url('/introspect'), clientId: 'resource-server', clientSecret: 'rs-secret' },
        };
      },
    });
    const client = await connect(s, oauthClientFor(s), era);
    expect({ caller: await whoami(client), introspected: at(s.as, 'introspect').length > 0 }).toMatchObject({
      caller: { subject: 'user-1', scopes: ['mcp:read', 'offline_access'] },
      introspected: true,
    });
  });

  it('never shows the bearer token in the client’s or the server’s trace', async () => {
    const s = await setup();
    const events: TraceEvent[] = [];
    const serverTrace = s.runtime.trace$.subscribe((event) => events.push(event));
    cleanups.push(() => serverTrace.unsubscribe());
    const authorization = oauthClientFor(s);
    const client = new Client({ name: 'e2e', version: '1.0.0' }, { eraCache: false, era });
    cleanups.push(() => client.close());
    const clientTrace = client.trace$.subscribe((event) => events.push(event));
    cleanups.push(() => clientTrace.unsubscribe());
    await client.connect(new StreamableHttpClientTransport(s.url, { authorization, fallback: false }));
    await client.callTool('write', {});
    await whoami(client);
    const token = authorization.currentTokens!.accessToken;
    const traced = events.map((event) => JSON.stringify(event));
    expect({
      traced: traced.length > 0,
      withToken: traced.filter((event) => event.includes(token)),
    }).toEqual({ traced: true, withToken: [] });
  });
});

describe('a server whose resource metadata names another resource', () => {
  it('is refused with an AuthorizationError naming both', async () => {
    const s = await setup({ auth: (_as, url) => ({ resource: new URL('/other', url).href }) });
    const failure = await connect(s, oauthClientFor(s), 'auto').catch((error: unknown) => error);
    expect(failure).toMatchObject({
      name: AuthorizationError.name,
      message: expect.stringMatching(new RegExp(`is for ${new URL('/other', s.url).href}, not for ${s.url}`)),
    });
  });

  it('gets no request to its authorization server', async () => {
    const s = await setup({ auth: (_as, url) => ({ resource: new URL('/other', url).href }) });
    await connect(s, oauthClientFor(s), 'auto').catch(() => undefined);
    expect(s.as.events).toEqual([]);
  });
});

function keyOf(s: Setup) {
  return { server: s.url, client: 'mcp-switchboard' };
}

/** A token endpoint request as a public client makes it: status and JSON body. */
async function tokenRequest(as: AuthorizationServer, form: Record<string, string>) {
  const response = await fetch(as.url('/token'), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
