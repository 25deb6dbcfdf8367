/**
 * One scope rule per method (lib/protocol/method-targets.ts), over real HTTP on 127.0.0.1 with a real
 * JWT-verifying `auth` endpoint: every method a client may send, in either era, has an entry in the table;
 * every method that names a scoped item refuses a read-only token with 403 `insufficient_scope` and answers a
 * token with the item's scope, on each way a client reaches the server (a Streamable HTTP session and the
 * HTTP+SSE transport of the handshake era, stateless 2026-07-28 POSTs); and `hideUnauthorized` lists only
 * what a token may use, in both eras. The cases are generated from the table.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import type { JsonObject } from '../../lib/jsonrpc/types';
import { METHOD_TARGETS, type ItemKind } from '../../lib/protocol/method-targets';
import { HANDSHAKE_METHODS, maySend, STATELESS_METHODS } from '../../lib/protocol/methods';
import { META } from '../../lib/protocol/modern';
import { standardHeaders } from '../../lib/protocol/http-headers';
import { defineServer, type ServerDefinition, type ServerSpec } from '../../lib/server/definition';
import { SESSION_HANDLERS } from '../../lib/server/handlers';
import { MODERN_HANDLERS } from '../../lib/server/modern/handlers';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { cleanups, sseReader } from '../helpers/http';
import { startTestIssuer, type TestIssuer } from '../helpers/jwt-issuer';
import { postModern } from '../helpers/modern-http';
import { WHOAMI_TOOL, WRITE_TOOL } from '../helpers/protected-tools';
import { connectPair } from '../helpers/pair';
import { serveProtected, type ProtectedEndpoint } from '../helpers/protected-endpoint';

// ---- the server: one unscoped and one scoped item of each kind ----------------------------------------------

/** The scope every token here has; the endpoint requires nothing of its own. */
const READ = 'mcp:read';

/** The scoped items of each kind a method may name, with the scope each needs. */
const SCOPED: Readonly<Record<ItemKind, readonly { readonly key: string; readonly scope: string }[]>> = {
  tool: [{ key: 'write', scope: 'mcp:write' }],
  prompt: [{ key: 'plan', scope: 'mcp:prompts' }],
  resource: [
    { key: 'test://secret', scope: 'mcp:admin' },
    { key: 'test://vault/x', scope: 'mcp:vault' },
  ],
  resourceTemplate: [{ key: 'test://vault/{name}', scope: 'mcp:vault' }],
};
const ALL_SCOPES = [READ, 'mcp:write', 'mcp:prompts', 'mcp:admin', 'mcp:vault'].join(' ');

const promptNamed = (name: string, scopes?: string[]) => ({
  name,
  arguments: [{ name: 'topic' }],
  ...(scopes && { scopes }),
  complete: { topic: (value: string) => ['alpha', 'beta'].filter((topic) => topic.startsWith(value)) },
  get: (args: Readonly<Record<string, string>>) => [
    { role: 'user' as const, content: { type: 'text' as const, text: `${name} ${args.topic}` } },
  ],
});

const templateAt = (uriTemplate: string, scopes?: string[]) => ({
  uriTemplate,
  name: uriTemplate,
  ...(scopes && { scopes }),
  complete: { name: () => ['x', 'y'] },
  read: (variables: Readonly<Record<string, string | string[]>>) => `${uriTemplate}: ${String(variables.name)}`,
});

const SPEC: ServerSpec = {
  name: 'scoped',
  version: '1.0.0',
  tools: [WRITE_TOOL, WHOAMI_TOOL],
  prompts: [promptNamed('plan', ['mcp:prompts']), promptNamed('open')],
  resources: [
    { uri: 'test://secret', name: 'secret', scopes: ['mcp:admin'], read: () => 'hush' },
    { uri: 'test://public', name: 'public', read: () => 'hello' },
  ],
  resourceTemplates: [templateAt('test://vault/{name}', ['mcp:vault']), templateAt('test://docs/{name}')],
  searchResources: () => [
    { uri: 'test://secret', name: 'secret' },
    { uri: 'test://vault/found', name: 'found' },
    { uri: 'test://public', name: 'public' },
  ],
};

// ---- the endpoint and the three ways to reach it -----------------------------------------------------------

let issuer: TestIssuer;
beforeEach(async () => {
  issuer = await startTestIssuer();
});

function protectedEndpoint(definition: ServerDefinition = defineServer(SPEC)): Promise<ProtectedEndpoint> {
  return serveProtected(definition, (url) => ({
    resource: url,
    authorizationServers: [issuer.issuer],
    jwks: issuer.jwksUrl,
  }));
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** What became of one request: the HTTP status, the challenge, and the first JSON-RPC message answering it. */
interface Answer {
  readonly id: number;
  readonly status: number;
  readonly challenge: string | null;
  readonly message: Record<string, any> | undefined;
}

type Send = (method: string, params: JsonObject) => Promise<Answer>;

interface Way {
  readonly name: string;
  readonly era: 'handshake' | 'modern';
  /** Opens what the way needs with `token` (a session, a stream) and sends requests with it. */
  connect(endpoint: ProtectedEndpoint, token: string): Promise<Send>;
}

let nextId = 1;
const requestOf = (method: string, params: JsonObject) => ({ jsonrpc: '2.0', id: nextId++, method, params });

/** The first JSON-RPC message of a response: its JSON body, or its first SSE event (the stream is then let go). */
async function firstMessage(response: Response): Promise<Record<string, any> | undefined> {
  const type = response.headers.get('content-type') ?? '';
  if (type.startsWith('application/json')) return (await response.json()) as Record<string, any>;
  if (!type.startsWith('text/event-stream')) return void (await response.text());
  const events = sseReader(response);
  try {
    const event = await events.next();
    return event && JSON.parse(event.data);
  } finally {
    await events.cancel();
  }
}

async function answerOf(id: number, response: Response): Promise<Answer> {
  const challenge = response.headers.get('www-authenticate');
  return { id, status: response.status, challenge, message: await firstMessage(response) };
}

const INITIALIZE_PARAMS = {
  protocolVersion: '2025-06-18',
  capabilities: {},
  clientInfo: { name: 'scope-test', version: '1' },
};
const SESSION_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

const streamableSession: Way = {
  name: 'a Streamable HTTP session',
  era: 'handshake',
  async connect(endpoint, token) {
    const post = (body: unknown, sessionId?: string) =>
      fetch(endpoint.url, {
        method: 'POST',
        headers: {
          ...SESSION_HEADERS,
          ...bearer(token),
          ...(sessionId && { 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' }),
        },
        body: JSON.stringify(body),
      });
    const opened = await post(requestOf('initialize', INITIALIZE_PARAMS));
    await firstMessage(opened);
    const sessionId = opened.headers.get('mcp-session-id')!;
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, sessionId)).text();
    return async (method, params) => {
      const request = requestOf(method, params);
      return answerOf(request.id, await post(request, sessionId));
    };
  },
};

const httpSse: Way = {
  name: 'the HTTP+SSE transport',
  era: 'handshake',
  async connect(endpoint, token) {
    const stream = await fetch(`${endpoint.origin}/sse`, {
      headers: { accept: 'text/event-stream', ...bearer(token) },
    });
    const events = sseReader(stream);
    cleanups.push(() => events.cancel());
    const messages = `${endpoint.origin}${(await events.next())!.data}`;
    const post = (body: unknown) =>
      fetch(messages, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer(token) },
        body: JSON.stringify(body),
      });
    await (await post(requestOf('initialize', INITIALIZE_PARAMS))).text();
    await events.next();
    await (await post({ jsonrpc: '2.0', method: 'notifications/initialized' })).text();
    return async (method, params) => {
      const request = requestOf(method, params);
      const response = await post(request);
      if (response.status !== 202) return answerOf(request.id, response);
      await response.text();
      const event = await events.next();
      return { id: request.id, status: 202, challenge: null, message: event && JSON.parse(event.data) };
    };
  },
};

const ENVELOPE = {
  [META.protocolVersion]: '2026-07-28',
  [META.clientCapabilities]: {},
  [META.clientInfo]: { name: 'scope-test', version: '1' },
};

const statelessPosts: Way = {
  name: 'stateless 2026-07-28 POSTs',
  era: 'modern',
  async connect(endpoint, token) {
    return async (method, params) => {
      const request = requestOf(method, { ...params, _meta: ENVELOPE });
      const response = await postModern(endpoint.url, request, { ...standardHeaders(request), ...bearer(token) });
      return answerOf(request.id, response);
    };
  },
};

const WAYS: readonly Way[] = [streamableSession, httpSse, statelessPosts];

/** Whether a client of `era` may send `method`. */
function sentIn(era: 'handshake' | 'modern', method: string): boolean {
  if (era === 'modern') return STATELESS_METHODS.clientRequests[method] !== undefined;
  const spec = HANDSHAKE_METHODS.specs[method];
  return spec !== undefined && maySend(spec, 'client');
}

// ---- the table covers every method ---------------------------------------------------------------------

/** Every method a client may send a server, from both eras' method tables and both eras' handlers. */
const CLIENT_METHODS = [
  ...new Set([
    ...Object.keys(HANDSHAKE_METHODS.specs).filter((method) => maySend(HANDSHAKE_METHODS.specs[method]!, 'client')),
    ...Object.keys(STATELESS_METHODS.clientRequests),
    ...Object.keys(SESSION_HANDLERS),
    ...Object.keys(MODERN_HANDLERS),
  ]),
].sort();

describe('the method table', () => {
  it('walks the methods of both eras (a sanity check of the walk itself)', () => {
    expect(CLIENT_METHODS).toEqual(
      expect.arrayContaining(['initialize', 'tools/call', 'subscriptions/listen', 'server/discover', 'tasks/get']),
    );
    expect(CLIENT_METHODS).not.toContain('sampling/createMessage');
  });

  it.each(CLIENT_METHODS)('has an entry for %s', (method) => {
    expect(METHOD_TARGETS.get(method)).toMatchObject({ guard: expect.any(String), touches: expect.any(String) });
  });

  it('says which kinds of item each item-guarded method names, and how to find their scopes', () => {
    for (const [method, target] of METHOD_TARGETS) {
      if (target.guard !== 'item') continue;
      expect([method, target.items!.length > 0, typeof target.scopes]).toEqual([method, true, 'function']);
    }
  });
});

// ---- each method that names an item, on each way, generated from the table ---------------------------------

/** The params of each item-guarded method naming the item `key` of `kind` (a test case per table entry). */
const PARAMS_NAMING: Readonly<Record<string, (kind: ItemKind, key: string) => JsonObject>> = {
  'tools/call': (_kind, key) => ({ name: key, arguments: {} }),
  'prompts/get': (_kind, key) => ({ name: key, arguments: { topic: 'alpha' } }),
  'resources/read': (_kind, key) => ({ uri: key }),
  'resources/subscribe': (_kind, key) => ({ uri: key }),
  'resources/unsubscribe': (_kind, key) => ({ uri: key }),
  'completion/complete': (kind, key) =>
    kind === 'prompt'
      ? { ref: { type: 'ref/prompt', name: key }, argument: { name: 'topic', value: 'a' } }
      : { ref: { type: 'ref/resource', uri: key }, argument: { name: 'name', value: '' } },
  // One scoped URI among public ones is enough to refuse the whole stream.
  'subscriptions/listen': (_kind, key) => ({ notifications: { resourceSubscriptions: ['test://public', key] } }),
};

const ITEM_METHODS = [...METHOD_TARGETS].filter(([, target]) => target.guard === 'item');

it.each(ITEM_METHODS.map(([method]) => method))('%s has a generated test case', (method) => {
  expect(PARAMS_NAMING[method]).toBeTypeOf('function');
});

for (const [method, target] of ITEM_METHODS) {
  describe(method, () => {
    for (const way of WAYS.filter((way) => sentIn(way.era, method))) {
      for (const kind of target.items!) {
        for (const { key, scope } of SCOPED[kind]) {
          it(`over ${way.name}: ${kind} ${key} refuses a read-only token (403 insufficient_scope), answers one with ${scope}`, async () => {
            const endpoint = await protectedEndpoint();
            const params = PARAMS_NAMING[method]!(kind, key);

            const readOnly = await way.connect(endpoint, await issuer.sign(endpoint.url, { scope: READ }));
            const refused = await readOnly(method, params);
            expect([refused.status, refused.challenge, refused.message?.id, refused.message?.error?.code]).toEqual([
              403,
              expect.stringMatching(new RegExp(`^Bearer error="insufficient_scope", scope="${READ} ${scope}", `)),
              refused.id,
              -32600,
            ]);

            const granted = await way.connect(endpoint, await issuer.sign(endpoint.url, { scope: `${READ} ${scope}` }));
            const answered = await granted(method, params);
            expect([answered.status < 300, answered.message?.error]).toEqual([true, undefined]);
            expect(answered.message?.result ?? answered.message?.params).toBeDefined();
          });
        }
      }
    }
  });
}

/** Params that name no item where the table looks (wrong types everywhere): left to the handler's -32602. */
const MALFORMED: JsonObject = {
  name: 5,
  uri: ['test://secret'],
  ref: { type: 'ref/prompt', name: null },
  argument: { name: 'topic', value: 'a' },
  notifications: { resourceSubscriptions: 'test://secret' },
};

it.each(ITEM_METHODS.map(([method]) => method))(
  '%s with params naming no item is answered -32602 by its handler, not refused or crashed',
  async (method) => {
    const way = WAYS.find((candidate) => sentIn(candidate.era, method))!;
    const endpoint = await protectedEndpoint();
    const send = await way.connect(endpoint, await issuer.sign(endpoint.url, { scope: READ }));
    const answered = await send(method, MALFORMED);
    expect([answered.status < 300, answered.message?.error?.code]).toEqual([true, -32602]);
  },
);

describe('subscriptions/listen', () => {
  it('needs the union of the scopes of every URI it subscribes to', async () => {
    const endpoint = await protectedEndpoint();
    const send = await statelessPosts.connect(endpoint, await issuer.sign(endpoint.url, { scope: READ }));
    const uris = ['test://secret', 'test://public', 'test://vault/a', 'test://vault/b'];
    const refused = await send('subscriptions/listen', { notifications: { resourceSubscriptions: uris } });
    expect([refused.status, refused.challenge]).toEqual([
      403,
      expect.stringContaining(`scope="${READ} mcp:admin mcp:vault"`),
    ]);
  });

  it('needs nothing beyond the endpoint for list changes and public resources', async () => {
    const endpoint = await protectedEndpoint();
    const send = await statelessPosts.connect(endpoint, await issuer.sign(endpoint.url, { scope: READ }));
    const notifications = { toolsListChanged: true, resourceSubscriptions: ['test://public', 'test://docs/a'] };
    const answered = await send('subscriptions/listen', { notifications });
    expect([answered.status, answered.message?.method]).toEqual([200, 'notifications/subscriptions/acknowledged']);
  });
});

// ---- hideUnauthorized -----------------------------------------------------------------------------------

interface Lists {
  readonly tools: string[];
  readonly prompts: string[];
  readonly resources: string[];
  readonly templates: string[];
  readonly found: string[];
}

async function listsOf(client: Client): Promise<Lists> {
  return {
    tools: (await client.listTools()).map((tool) => tool.name),
    prompts: (await client.listPrompts()).map((prompt) => prompt.name),
    resources: (await client.listResources()).map((resource) => resource.uri),
    templates: (await client.listResourceTemplates()).map((template) => template.uriTemplate),
    found: (await client.searchResources('any')).map((resource) => resource.uri),
  };
}

const EVERYTHING: Lists = {
  tools: ['write', 'whoami'],
  prompts: ['plan', 'open'],
  resources: ['test://secret', 'test://public'],
  templates: ['test://vault/{name}', 'test://docs/{name}'],
  found: ['test://secret', 'test://vault/found', 'test://public'],
};

const PUBLIC_ONLY: Lists = {
  tools: ['whoami'],
  prompts: ['open'],
  resources: ['test://public'],
  templates: ['test://docs/{name}'],
  found: ['test://public'],
};

async function httpClient(endpoint: ProtectedEndpoint, scope: string, era: 'handshake' | 'modern'): Promise<Client> {
  const token = await issuer.sign(endpoint.url, { scope });
  const client = new Client({ name: 'scope-test', version: '1.0.0' }, { eraCache: false, era });
  cleanups.push(() => client.close());
  await client.connect(new StreamableHttpClientTransport(endpoint.url, { headers: bearer(token), fallback: false }));
  return client;
}

/** One item per page: a list filtered after paging would show a read-only caller empty pages. */
const hiding = () => defineServer({ ...SPEC, hideUnauthorized: true, pageSize: 1 });

describe.each(['handshake', 'modern'] as const)('hideUnauthorized, in the %s era', (era) => {
  it('lists a read-only token only the items it may use', async () => {
    const endpoint = await protectedEndpoint(hiding());
    expect(await listsOf(await httpClient(endpoint, READ, era))).toEqual(PUBLIC_ONLY);
  });

  it('lists a token with every scope everything', async () => {
    const endpoint = await protectedEndpoint(hiding());
    expect(await listsOf(await httpClient(endpoint, ALL_SCOPES, era))).toEqual(EVERYTHING);
  });

  it('lists a token with some scopes what they grant', async () => {
    const endpoint = await protectedEndpoint(hiding());
    const lists = await listsOf(await httpClient(endpoint, `${READ} mcp:write mcp:vault`, era));
    expect(lists).toEqual({
      ...PUBLIC_ONLY,
      tools: ['write', 'whoami'],
      templates: ['test://vault/{name}', 'test://docs/{name}'],
      found: ['test://vault/found', 'test://public'],
    });
  });

  it('filters before paging: the first page holds the first item the caller may use, and no cursor after the last', async () => {
    const endpoint = await protectedEndpoint(hiding());
    const client = await httpClient(endpoint, READ, era);
    const page = await client.listToolsPage();
    expect([page.tools.map((tool) => tool.name), page.nextCursor]).toEqual([['whoami'], undefined]);
  });

  it('is off by default: a read-only token sees every item', async () => {
    const endpoint = await protectedEndpoint(defineServer({ ...SPEC, pageSize: 1 }));
    expect(await listsOf(await httpClient(endpoint, READ, era))).toEqual(EVERYTHING);
  });
});

describe('hideUnauthorized without authentication', () => {
  it('lists everything: there is no principal to hide from', async () => {
    const { client, server } = await connectPair(hiding());
    cleanups.push(
      () => client.close(),
      () => server.close(),
    );
    expect(await listsOf(client)).toEqual(EVERYTHING);
  });
});
