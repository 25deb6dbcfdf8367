/**
 * The hub and OAuth (issue 15 §3), over real HTTP on 127.0.0.1 with the tests' authorization server:
 * upstreams protected by `createMcpHttpHandler(server, { auth })` reached with the tokens of an earlier
 * login (from the hub's token store, refreshed there when they expire), a bearer token from the
 * environment, or the client credentials grant; an upstream that needs a login fails with how to log in
 * while the others serve; no downstream client's token ever reaches an upstream; and the hub's own endpoint
 * protected by the config's top-level `auth`.
 */
import { firstValueFrom, filter } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { OAuthClient } from '../../lib/auth/client/oauth-client';
import { headlessInteraction } from '../../lib/auth/client/authorization-code';
import { MemoryTokenStore } from '../../lib/auth/memory-token-store';
import type { TokenStore } from '../../lib/auth/token-store';
import { Client } from '../../lib/client/client';
import { hubFromConfig, parseConfig } from '../../lib/compose/config';
import { Hub } from '../../lib/compose/hub';
import type { UpstreamOptions } from '../../lib/compose/upstream';
import { silentLogger } from '../../lib/core/logger';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { createMcpHttpHandler, type McpHttpHandler } from '../../transports/http/endpoint';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { text, textOf } from '../helpers/content';
import { tool } from '../helpers/fixtures';
import { cleanups, lateListener, listenHttp, postInitialize, type SeenRequest } from '../helpers/http';
import { connectToHub } from '../helpers/hub';
import { startAuthorizationServer, type AuthorizationServer } from '../helpers/oauth-server';

/** Any loopback redirect URI: the tests' authorization server matches loopback ones on any port. */
const REDIRECT_URI = 'http://127.0.0.1:9/callback';

interface Upstream {
  /** The MCP endpoint, which is also the resource its tokens are for. */
  readonly url: string;
  /** Every request it received, headers included. */
  readonly seen: SeenRequest[];
}

/** An MCP server over Streamable HTTP whose one tool `<name>_hello` answers `hello from <name>`. */
async function upstreamServer(name: string, as: AuthorizationServer | undefined, path = '/mcp'): Promise<Upstream> {
  const server = new Server(
    defineServer({ name, version: '1', tools: [tool(`${name}_hello`, () => text(`hello from ${name}`))] }),
  );
  cleanups.push(() => server.close());
  let handler: McpHttpHandler | undefined;
  const { origin, seen } = await listenHttp(lateListener(() => handler));
  const url = `${origin}${path}`;
  handler = createMcpHttpHandler(server, {
    path,
    ...(as && { auth: { resource: url, authorizationServers: [as.issuer], jwks: as.url('/jwks') } }),
  });
  cleanups.push(() => handler!.close());
  return { url, seen };
}

async function authorizationServer(options: Parameters<typeof startAuthorizationServer>[0] = {}) {
  const as = await startAuthorizationServer(options);
  cleanups.push(() => as.close());
  return as;
}

/** What `switchboard login <url>` does: the authorization code flow once, the tokens kept in `store`. */
async function login(url: string, store: TokenStore): Promise<void> {
  const authorization = new OAuthClient(url, { store, interaction: headlessInteraction(REDIRECT_URI) });
  const client = new Client({ name: 'login', version: '1' });
  await client.connect(new StreamableHttpClientTransport(url, { authorization }));
  await client.close();
}

async function startHub(upstreams: UpstreamOptions[], tokenStore?: TokenStore): Promise<Hub> {
  const hub = new Hub({ upstreams, logger: silentLogger, ...(tokenStore && { tokenStore }) });
  cleanups.push(() => hub.close());
  await hub.start();
  return hub;
}

const http = (name: string, url: string, extra: Record<string, unknown> = {}): UpstreamOptions => ({
  name,
  source: { kind: 'http', url, ...extra },
});

/** The `Authorization` headers an upstream received, in order (undefined for a request without one). */
const authorizationsSeen = (upstream: Upstream) => upstream.seen.map((request) => request.headers.authorization);

describe('an upstream with oauth auth', () => {
  it('calls its tools with the tokens a login stored', async () => {
    const as = await authorizationServer();
    const notes = await upstreamServer('notes', as);
    const store = new MemoryTokenStore();
    await login(notes.url, store);
    const hub = await startHub([http('notes', notes.url, { auth: { type: 'oauth' } })], store);
    const client = await connectToHub(hub);
    expect(textOf(await client.callTool('notes_hello'))).toBe('hello from notes');
  });

  it('sends the stored token rather than authorizing again', async () => {
    const as = await authorizationServer();
    const notes = await upstreamServer('notes', as);
    const store = new MemoryTokenStore();
    await login(notes.url, store);
    const grantsAtLogin = as.events.filter((event) => event.endpoint === 'token').length;
    const hub = await startHub([http('notes', notes.url, { auth: { type: 'oauth' } })], store);
    await (await connectToHub(hub)).callTool('notes_hello');
    expect(as.events.filter((event) => event.endpoint === 'token')).toHaveLength(grantsAtLogin);
    const stored = (await store.load({ server: notes.url, client: 'mcp-switchboard' }))!.tokens!.accessToken;
    expect(new Set(authorizationsSeen(notes).slice(-3))).toEqual(new Set([`Bearer ${stored}`]));
  });

  it('refreshes an expired token and stores the new one', async () => {
    const as = await authorizationServer({ refreshTokens: 'always' });
    const notes = await upstreamServer('notes', as);
    const store = new MemoryTokenStore();
    const key = { server: notes.url, client: 'mcp-switchboard' };
    await login(notes.url, store);
    const expired = await as.issueToken({ audience: notes.url, ttlSec: -600 });
    await store.update(key, (record) => ({ ...record, tokens: { ...record!.tokens!, accessToken: expired } }));
    const hub = await startHub([http('notes', notes.url, { auth: { type: 'oauth' } })], store);
    expect(textOf(await (await connectToHub(hub)).callTool('notes_hello'))).toBe('hello from notes');
    expect(as.events.filter((event) => event.grantType === 'refresh_token' && event.status === 200)).toHaveLength(1);
    const refreshed = (await store.load(key))!.tokens!.accessToken;
    expect(refreshed).not.toBe(expired);
    expect(authorizationsSeen(notes).at(-1)).toBe(`Bearer ${refreshed}`);
  });

  it('fails an upstream that needs a login with how to log in, and serves the others', async () => {
    const as = await authorizationServer();
    const notes = await upstreamServer('notes', as);
    const wiki = await upstreamServer('wiki', as);
    const store = new MemoryTokenStore();
    await login(notes.url, store);
    const hub = await startHub(
      [
        http('notes', notes.url, { auth: { type: 'oauth' } }),
        { ...http('wiki', wiki.url, { auth: { type: 'oauth' } }), supervision: { maxRestarts: 0 } },
      ],
      store,
    );
    const wikiStatus = await firstValueFrom(
      hub.upstream('wiki')!.status$.pipe(filter((status) => status.state === 'failed')),
    );
    expect(wikiStatus.lastError).toContain(`run \`switchboard login ${wiki.url}\``);
    expect(textOf(await (await connectToHub(hub)).callTool('notes_hello'))).toBe('hello from notes');
  });

  it('names a non-default client name in the login hint', async () => {
    const as = await authorizationServer();
    const wiki = await upstreamServer('wiki', as);
    const hub = await startHub([
      {
        ...http('wiki', wiki.url, { auth: { type: 'oauth', clientName: 'team-hub' } }),
        supervision: { maxRestarts: 0 },
      },
    ]);
    const status = await firstValueFrom(hub.upstream('wiki')!.status$.pipe(filter((s) => s.state === 'failed')));
    expect(status.lastError).toContain('switchboard login --client-name team-hub ');
  });

  it('asks the authorization server nothing for an upstream never logged in to', async () => {
    const as = await authorizationServer();
    const wiki = await upstreamServer('wiki', as);
    const hub = await startHub([
      { ...http('wiki', wiki.url, { auth: { type: 'oauth' } }), supervision: { maxRestarts: 0 } },
    ]);
    await firstValueFrom(hub.upstream('wiki')!.status$.pipe(filter((s) => s.state === 'failed')));
    expect(as.events).toEqual([]);
  });
});

describe('an upstream with a static bearer token', () => {
  it('reads the token from the environment variable the config names', async () => {
    const as = await authorizationServer();
    const search = await upstreamServer('search', as);
    const token = await as.issueToken({ audience: search.url });
    const hub = hubFromConfig(
      { mcpServers: { search: { url: search.url, auth: { type: 'bearer', tokenEnv: 'SEARCH_TOKEN' } } } },
      { env: { SEARCH_TOKEN: token }, hub: { logger: silentLogger } },
    );
    cleanups.push(() => hub.close());
    await hub.start();
    expect(textOf(await (await connectToHub(hub)).callTool('search_hello'))).toBe('hello from search');
    expect(new Set(authorizationsSeen(search))).toEqual(new Set([`Bearer ${token}`]));
  });
});

describe('an upstream with client credentials', () => {
  it.each([
    ['Bearer', false],
    ['DPoP', true],
  ])('gets a token with the client credentials grant and calls its tools (%s)', async (scheme, dpop) => {
    // With DPoP offered, the token is bound to the hub's key and our server checks its proofs (issue 23 item 4).
    const as = await authorizationServer({ clients: [{ clientId: 'hub', clientSecret: 's3cret' }], dpop });
    const jobs = await upstreamServer('jobs', as);
    const hub = hubFromConfig(
      {
        mcpServers: {
          jobs: {
            url: jobs.url,
            auth: { type: 'client_credentials', clientId: 'hub', clientSecret: '${JOBS_SECRET}' },
          },
        },
      },
      { env: { JOBS_SECRET: 's3cret' }, hub: { logger: silentLogger } },
    );
    cleanups.push(() => hub.close());
    await hub.start();
    expect(textOf(await (await connectToHub(hub)).callTool('jobs_hello'))).toBe('hello from jobs');
    expect(as.events.filter((event) => event.endpoint === 'token')).toMatchObject([
      { grantType: 'client_credentials', clientId: 'hub', status: 200 },
    ]);
    // Requests before the grant carry no token (their 401 starts it); every one that does names the scheme.
    const schemes = authorizationsSeen(jobs).flatMap((header) => (header === undefined ? [] : [header.split(' ')[0]]));
    expect(new Set(schemes)).toEqual(new Set([scheme]));
  });
});

/** The hub served over Streamable HTTP with the top-level `auth` of `config` (and its servers). */
async function servedHub(config: (hubUrl: string) => Record<string, unknown>, env: Record<string, string> = {}) {
  let handler: McpHttpHandler | undefined;
  const { origin } = await listenHttp(lateListener(() => handler));
  const url = `${origin}/mcp`;
  const parsed = parseConfig(config(url), { env });
  const hub = new Hub({ ...parsed.options, logger: silentLogger });
  cleanups.push(() => hub.close());
  await hub.start();
  handler = createMcpHttpHandler(hub.server, { path: '/mcp', ...(parsed.http.auth && { auth: parsed.http.auth }) });
  cleanups.push(() => handler!.close());
  return { url, hub };
}

async function connectOverHttp(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'downstream', version: '1' });
  cleanups.push(() => client.close());
  return client.connect(new StreamableHttpClientTransport(url, { headers: { authorization: `Bearer ${token}` } }));
}

describe("the hub's own endpoint", () => {
  const protectedHub = async (as: AuthorizationServer) => {
    const open = await upstreamServer('open', undefined);
    return servedHub((hubUrl) => ({
      mcpServers: { open: { url: open.url } },
      auth: { resource: hubUrl, authorizationServers: [as.issuer], jwks: as.url('/jwks') },
    }));
  };

  it('refuses a client without a token with 401 and the resource metadata challenge', async () => {
    const as = await authorizationServer();
    const { url } = await protectedHub(as);
    const response = await postInitialize(url);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('resource_metadata=');
  });

  it('serves a client whose token is for the hub', async () => {
    const as = await authorizationServer();
    const { url } = await protectedHub(as);
    const client = await connectOverHttp(url, await as.issueToken({ audience: url }));
    expect(textOf(await client.callTool('open_hello'))).toBe('hello from open');
  });
});

describe('no token passthrough', () => {
  it("never sends a downstream client's token to an upstream", async () => {
    const as = await authorizationServer();
    const open = await upstreamServer('open', undefined);
    const search = await upstreamServer('search', as);
    const upstreamToken = await as.issueToken({ audience: search.url });
    const { url } = await servedHub(
      (hubUrl) => ({
        mcpServers: {
          open: { url: open.url },
          search: { url: search.url, auth: { type: 'bearer', tokenEnv: 'SEARCH_TOKEN' } },
        },
        auth: { resource: hubUrl, authorizationServers: [as.issuer], jwks: as.url('/jwks') },
      }),
      { SEARCH_TOKEN: upstreamToken },
    );
    const downstreamToken = await as.issueToken({ audience: url });
    const client = await connectOverHttp(url, downstreamToken);
    await client.callTool('open_hello');
    await client.callTool('search_hello');
    const everyHeaderValue = [...open.seen, ...search.seen].flatMap((request) => Object.values(request.headers).flat());
    expect(everyHeaderValue.some((value) => value?.includes(downstreamToken))).toBe(false);
    expect(new Set(authorizationsSeen(open))).toEqual(new Set([undefined]));
    expect(new Set(authorizationsSeen(search))).toEqual(new Set([`Bearer ${upstreamToken}`]));
  });
});
