/**
 * The server's side of the stateless revision (2026-07-28), beyond what the conformance suite checks: the
 * exchange of one modern request over Streamable HTTP (JSON or SSE, cancellation by closing the response),
 * input_required rounds and their sealed state, cache hints, and the era of a duplex connection chosen by
 * its first request. Everything emitted on the modern path is checked against the 2026-07-28 schema.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Clock } from '../../lib/core/clock';
import type { JsonObject } from '../../lib/jsonrpc/types';
import { META } from '../../lib/protocol/modern';
import { defineServer, type ServerSpec } from '../../lib/server/definition';
import { Server, type ServerOptions } from '../../lib/server/server';
import type { ServerContext } from '../../lib/server/context';
import { createKeyRing } from '../../lib/server/request-state';
import { createMemoryPair } from '../../transports/memory';
import { createMcpHttpHandler, type McpHttpOptions } from '../../transports/http/endpoint';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { Client } from '../../lib/client/client';
import { cleanups, listenHttp, sseReader } from '../helpers/http';
import { modernWireValidator, validateEveryModernExchange } from '../helpers/modern-wire';
import { RawPeer } from '../helpers/raw-peer';
import { mirroredHeaders, postModern } from '../helpers/modern-http';
import { eventually, within } from '../helpers/wait';
import { askName } from '../helpers/fixtures';
import { text } from '../helpers/content';

const VERSION = '2026-07-28';
const ENVELOPE = {
  [META.protocolVersion]: VERSION,
  [META.clientCapabilities]: { elicitation: {}, sampling: {}, roots: {} },
  [META.clientInfo]: { name: 'raw', version: '1' },
};

/** What every stateless result of this server says of it in `_meta`. */
const IDENTITY = { [META.serverInfo]: { name: 'modern-test', version: '1.0.0' } };
/** A complete stateless result carrying `value`. */
const complete = (value: object) => ({ ...value, resultType: 'complete', _meta: IDENTITY });
const NO_ARGUMENTS = { type: 'object' } as const;

/** Runs of each tool's handler, to show what ran and what did not. */
const runs: Record<string, number> = {};
const ran = (name: string) => (runs[name] = (runs[name] ?? 0) + 1);
let cancelled: string[] = [];

const SPEC: ServerSpec = {
  name: 'modern-test',
  version: '1.0.0',
  tools: [
    { name: 'plain', description: 'Answers at once', inputSchema: NO_ARGUMENTS, handler: () => text('plain') },
    {
      name: 'stamped',
      description: 'Answers with a _meta of its own',
      inputSchema: NO_ARGUMENTS,
      handler: () => ({ ...text('stamped'), _meta: { 'com.example/trace': 'abc' } }),
    },
    {
      name: 'greet',
      description: 'Asks for a name',
      inputSchema: { type: 'object', properties: { formal: { type: 'boolean' } } },
      handler: async (args: { formal?: boolean }, ctx: ServerContext) => {
        ran('greet');
        return text(`${args.formal ? 'Good day' : 'Hi'}, ${(await askName(ctx)).name}`);
      },
    },
    {
      name: 'two_rounds',
      description: 'Asks twice, one after the other (default keys)',
      inputSchema: NO_ARGUMENTS,
      handler: async (_args, ctx: ServerContext) => {
        const schema = { type: 'object', properties: { v: { type: 'string' } } } as const;
        const first = await ctx.elicit({ message: 'first?', requestedSchema: schema });
        const second = await ctx.elicit({ message: 'second?', requestedSchema: schema });
        return text(`${JSON.stringify(first.content)} ${JSON.stringify(second.content)}`);
      },
    },
    {
      name: 'all_at_once',
      description: 'Asks for three inputs at once',
      inputSchema: NO_ARGUMENTS,
      handler: async (_args, ctx: ServerContext) => {
        const [roots, sampled] = await Promise.all([
          ctx.listRoots(),
          ctx.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 }),
        ]);
        return text(`${roots.length} roots, model ${sampled.model}`);
      },
    },
    {
      name: 'progress',
      description: 'Reports progress twice',
      inputSchema: NO_ARGUMENTS,
      handler: async (_args, ctx: ServerContext) => {
        await ctx.progress(1, 2);
        await ctx.progress(2, 2);
        return text('done');
      },
    },
    {
      name: 'logs',
      description: 'Logs at debug and at error',
      inputSchema: NO_ARGUMENTS,
      handler: async (_args, ctx: ServerContext) => {
        await ctx.log('debug', 'quiet');
        await ctx.log('error', 'loud');
        return text('logged');
      },
    },
    {
      name: 'hangs',
      description: 'Waits until cancelled',
      inputSchema: NO_ARGUMENTS,
      handler: (_args, ctx: ServerContext) => {
        ran('hangs');
        return new Promise((resolve) =>
          ctx.onCancel((reason) => (cancelled.push(reason.message), resolve(text('late')))),
        );
      },
    },
    {
      name: 'tagged',
      description: 'Mirrors region as a header',
      inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } },
      handler: (args: { region?: string }) => text(`region ${args.region}`),
    },
  ],
  resources: [{ uri: 'test://one', name: 'one', read: () => 'one' }],
};

function modernRequest(id: number, method: string, params: JsonObject = {}, meta: JsonObject = ENVELOPE) {
  return { jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...meta, ...(params._meta as object) } } };
}

let problems: string[];

function newServer(spec: Partial<ServerSpec> = {}, options: ServerOptions = {}): Server {
  const server = new Server(defineServer({ ...SPEC, ...spec }), options);
  problems = validateEveryModernExchange(server);
  return server;
}

beforeEach(() => {
  for (const key of Object.keys(runs)) delete runs[key];
  cancelled = [];
});

afterEach(() => {
  expect(problems).toEqual([]);
});

/** Serves `server` over HTTP and posts modern requests to it. */
async function overHttp(server: Server, options: McpHttpOptions = {}) {
  const handler = createMcpHttpHandler(server, options);
  cleanups.push(() => handler.close());
  const { origin } = await listenHttp(handler);
  const url = `${origin}/mcp`;
  const post = (body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
    postModern(url, body, headers, signal);
  const call = async (id: number, method: string, params: JsonObject = {}, meta?: JsonObject) => {
    const response = await post(modernRequest(id, method, params, meta), mirroredHeaders(method, params));
    return {
      status: response.status,
      type: response.headers.get('content-type'),
      body: (await response.json()) as any,
    };
  };
  return { post, call };
}

describe('a modern request over Streamable HTTP', () => {
  it('is answered 500 with -32603 when serving it throws, and the next request is served', async () => {
    class FailsOnce extends Server {
      failed = false;
      override serveModern(...args: Parameters<Server['serveModern']>): void {
        if (!this.failed) {
          this.failed = true;
          throw new Error('the server broke');
        }
        super.serveModern(...args);
      }
    }
    const server = new FailsOnce(defineServer(SPEC));
    problems = validateEveryModernExchange(server);
    const { call } = await overHttp(server);
    const failed = await call(1, 'tools/call', { name: 'plain', arguments: {} });
    expect([failed.status, failed.body.error.code, failed.body.error.message]).toEqual([
      500,
      -32603,
      'Internal error: the server broke',
    ]);
    expect((await call(2, 'tools/call', { name: 'plain', arguments: {} })).body.result.content).toEqual(
      text('plain').content,
    );
  });

  it('server/discover answers the definition: versions, capabilities, identity in _meta, default cache hint', async () => {
    const { call } = await overHttp(newServer({ instructions: 'Be brief' }));
    const { status, body } = await call(1, 'server/discover');
    expect(status).toBe(200);
    expect(body.result).toMatchObject({
      resultType: 'complete',
      supportedVersions: [VERSION],
      capabilities: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true } },
      instructions: 'Be brief',
      ttlMs: 0,
      cacheScope: 'private',
      _meta: { [META.serverInfo]: { name: 'modern-test', version: '1.0.0' } },
    });
    expect(body.result.capabilities.prompts).toBeUndefined();
  });

  it('uses the cache hints the definition gives, per list', async () => {
    const { call } = await overHttp(newServer({ cacheHints: { tools: { ttlMs: 60_000, cacheScope: 'public' } } }));
    expect((await call(1, 'tools/list')).body.result).toMatchObject({ ttlMs: 60_000, cacheScope: 'public' });
    expect((await call(2, 'resources/list')).body.result).toMatchObject({ ttlMs: 0, cacheScope: 'private' });
  });

  it('refuses a cache hint that is not a non-negative integer when the definition is made', () => {
    expect(() => defineServer({ ...SPEC, cacheHints: { tools: { ttlMs: -1, cacheScope: 'public' } } })).toThrow(
      /ttlMs must be a non-negative integer/,
    );
  });

  it('answers a method the server does not declare 404 / -32601 (no prompts here)', async () => {
    const { call } = await overHttp(newServer());
    const { status, body } = await call(7, 'prompts/list');
    expect(status).toBe(404);
    expect(body).toMatchObject({ id: 7, error: { code: -32601 } });
  });

  it('answers a missing resource -32602 with the uri in data (not -32002)', async () => {
    const { call } = await overHttp(newServer());
    const { body } = await call(3, 'resources/read', { uri: 'test://missing' });
    expect(body.error).toMatchObject({ code: -32602, data: { uri: 'test://missing' } });
  });

  it('answers a plain call as JSON with resultType complete', async () => {
    const { call } = await overHttp(newServer());
    const { type, body } = await call(4, 'tools/call', { name: 'plain', arguments: {} });
    expect(type).toBe('application/json');
    expect(body.result).toEqual(complete(text('plain')));
  });

  it('streams progress on the request’s own SSE response, then the result', async () => {
    const { post } = await overHttp(newServer());
    const params = { name: 'progress', arguments: {}, _meta: { progressToken: 'p1' } };
    const response = await post(modernRequest(5, 'tools/call', params), {
      'mcp-method': 'tools/call',
      'mcp-name': 'progress',
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('x-accel-buffering')).toBe('no');
    const reader = sseReader(response);
    const events = [];
    for (let event = await reader.next(); event; event = await reader.next()) events.push(JSON.parse(event.data));
    expect(events.map((event) => event.method ?? `result ${event.id}`)).toEqual([
      'notifications/progress',
      'notifications/progress',
      'result 5',
    ]);
    expect(events[0].params).toMatchObject({ progressToken: 'p1', progress: 1, total: 2 });
  });

  it('names the server in every result’s _meta, beside what the handler put there', async () => {
    const { call } = await overHttp(newServer());
    const { body } = await call(30, 'tools/call', { name: 'stamped', arguments: {} });
    expect(body.result._meta).toEqual({ ...IDENTITY, 'com.example/trace': 'abc' });
  });

  describe('follows the endpoint’s responseMode, as a handshake-era session does', () => {
    const progressCall = (id: number) =>
      modernRequest(id, 'tools/call', { name: 'progress', arguments: {}, _meta: { progressToken: `p${id}` } });
    const progressHeaders = { 'mcp-method': 'tools/call', 'mcp-name': 'progress' };

    it('json: one JSON body even after progress, the notifications left out', async () => {
      const { post } = await overHttp(newServer(), { responseMode: 'json' });
      const response = await post(progressCall(20), progressHeaders);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect((await response.json()).result).toMatchObject({ ...text('done'), resultType: 'complete' });
    });

    it('sse: a stream even when nothing precedes the answer', async () => {
      const { post } = await overHttp(newServer(), { responseMode: 'sse' });
      const response = await post(modernRequest(21, 'tools/call', { name: 'plain', arguments: {} }), {
        'mcp-method': 'tools/call',
        'mcp-name': 'plain',
      });
      expect(response.headers.get('content-type')).toBe('text/event-stream');
      const reader = sseReader(response);
      const events = [];
      for (let event = await reader.next(); event; event = await reader.next()) events.push(JSON.parse(event.data));
      expect(events).toEqual([{ jsonrpc: '2.0', id: 21, result: complete(text('plain')) }]);
    });

    it('json: subscriptions/listen, which is nothing but its stream, is refused with -32601', async () => {
      const { post } = await overHttp(newServer(), { responseMode: 'json' });
      const listen = modernRequest(22, 'subscriptions/listen', { notifications: { toolsListChanged: true } });
      const response = await post(listen, { 'mcp-method': 'subscriptions/listen' });
      expect(response.status).toBe(404);
      expect((await response.json()).error).toMatchObject({
        code: -32601,
        message: expect.stringContaining('JSON only'),
      });
    });
  });

  it('sends no log message without a log level in _meta', async () => {
    const { call } = await overHttp(newServer());
    const { type, body } = await call(6, 'tools/call', { name: 'logs', arguments: {} });
    expect(type).toBe('application/json');
    expect(body.result.content).toEqual(text('logged').content);
  });

  it('sends the log messages at or above the level the request’s _meta asks for', async () => {
    const { post } = await overHttp(newServer());
    const request = modernRequest(
      8,
      'tools/call',
      { name: 'logs', arguments: {} },
      { ...ENVELOPE, [META.logLevel]: 'warning' },
    );
    const response = await post(request, { 'mcp-method': 'tools/call', 'mcp-name': 'logs' });
    const reader = sseReader(response);
    const first = JSON.parse((await reader.next())!.data);
    expect(first).toMatchObject({ method: 'notifications/message', params: { level: 'error', data: 'loud' } });
    expect(JSON.parse((await reader.next())!.data)).toMatchObject({ id: 8, result: { resultType: 'complete' } });
  });

  it('cancels the handler when the requester closes the response', async () => {
    const { post } = await overHttp(newServer());
    const controller = new AbortController();
    const sent = post(
      modernRequest(9, 'tools/call', { name: 'hangs', arguments: {} }),
      {
        'mcp-method': 'tools/call',
        'mcp-name': 'hangs',
      },
      controller.signal,
    );
    void sent.catch(() => undefined);
    await eventually(() => runs.hangs === 1, 'the handler to start');
    controller.abort();
    await eventually(() => cancelled.length > 0, 'the handler to be cancelled');
    expect(cancelled[0]).toMatch(/closed the response stream/);
  });

  it('is cancelled when our client cancels the call (the client closes the response)', async () => {
    const server = newServer();
    const handler = createMcpHttpHandler(server);
    cleanups.push(() => handler.close());
    const { origin } = await listenHttp(handler);
    const client = new Client({ name: 'canceller', version: '1' }, { eraCache: false });
    cleanups.push(() => client.close());
    await client.connect(new StreamableHttpClientTransport(new URL(`${origin}/mcp`)));
    expect(client.connectedEra).toBe('modern');
    const controller = new AbortController();
    const call = client.callTool('hangs', {}, { signal: controller.signal });
    await eventually(() => runs.hangs === 1, 'the handler to start');
    controller.abort();
    await expect(call).rejects.toThrow();
    await eventually(() => cancelled.length === 1, 'the handler to be cancelled');
  });

  it('refuses Mcp-Param headers that disagree with the arguments: 400 / -32020', async () => {
    const { post } = await overHttp(newServer());
    const response = await post(modernRequest(11, 'tools/call', { name: 'tagged', arguments: { region: 'eu' } }), {
      'mcp-method': 'tools/call',
      'mcp-name': 'tagged',
      'mcp-param-region': 'us',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ id: 11, error: { code: -32020 } });
  });

  it('accepts a modern notification with 202 and serves nothing', async () => {
    const { post } = await overHttp(newServer());
    const notification = {
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 1, _meta: ENVELOPE },
    };
    const response = await post(notification, { 'mcp-method': 'notifications/cancelled' });
    expect(response.status).toBe(202);
  });

  it('leaves a POST naming a session to that session (legacy): an unknown session is 404', async () => {
    const { post } = await overHttp(newServer());
    const response = await post(modernRequest(12, 'tools/list'), {
      'mcp-method': 'tools/list',
      'mcp-session-id': 'nope',
      'mcp-protocol-version': '2025-11-25',
    });
    expect(response.status).toBe(404);
  });
});

type Call = (id: number, method: string, params?: JsonObject) => Promise<{ status: number; body: any }>;

/** The retry of a `greet` round: the user's answer under its key, and the round's state as it came. */
function answerGreet(call: Call, id: number, name: string, requestState: string) {
  return call(id, 'tools/call', {
    name: 'greet',
    arguments: {},
    inputResponses: { name: { action: 'accept', content: { name } } },
    requestState,
  });
}

describe('input_required rounds', () => {
  it('asks with the handler’s key, and completes on the retry that answers it', async () => {
    const { call } = await overHttp(newServer());
    const first = (await call(1, 'tools/call', { name: 'greet', arguments: {} })).body.result;
    expect(first).toMatchObject({
      resultType: 'input_required',
      inputRequests: { name: { method: 'elicitation/create', params: { message: 'Name?' } } },
    });
    expect(typeof first.requestState).toBe('string');
    const retry = await answerGreet(call, 2, 'Ada', first.requestState);
    expect(retry.body.result).toEqual(complete(text('Hi, Ada')));
  });

  it('works without requestState when the answers come with the first request', async () => {
    const { call } = await overHttp(newServer());
    const answered = await call(1, 'tools/call', {
      name: 'greet',
      arguments: { formal: true },
      inputResponses: { name: { action: 'accept', content: { name: 'Ada' } }, extra: 1 },
    });
    expect(answered.body.result.content).toEqual(text('Good day, Ada').content);
  });

  it('carries earlier answers in the state: the second round asks only the second question', async () => {
    const { call } = await overHttp(newServer());
    const round1 = (await call(1, 'tools/call', { name: 'two_rounds', arguments: {} })).body.result;
    expect(Object.keys(round1.inputRequests)).toEqual(['elicitation-1']);
    const round2 = (
      await call(2, 'tools/call', {
        name: 'two_rounds',
        arguments: {},
        inputResponses: { 'elicitation-1': { action: 'accept', content: { v: 'a' } } },
        requestState: round1.requestState,
      })
    ).body.result;
    expect(Object.keys(round2.inputRequests)).toEqual(['elicitation-2']);
    expect(round2.requestState).not.toBe(round1.requestState);
    const done = await call(3, 'tools/call', {
      name: 'two_rounds',
      arguments: {},
      inputResponses: { 'elicitation-2': { action: 'accept', content: { v: 'b' } } },
      requestState: round2.requestState,
    });
    expect(done.body.result.content).toEqual(text('{"v":"a"} {"v":"b"}').content);
  });

  it('collects the asks made at once into one round', async () => {
    const { call } = await overHttp(newServer());
    const round = (await call(1, 'tools/call', { name: 'all_at_once', arguments: {} })).body.result;
    expect(
      Object.fromEntries(Object.entries(round.inputRequests).map(([key, value]: [string, any]) => [key, value.method])),
    ).toEqual({
      'roots-1': 'roots/list',
      'sampling-1': 'sampling/createMessage',
    });
  });

  it('refuses a tampered state before the handler runs', async () => {
    const { call } = await overHttp(newServer());
    const round = (await call(1, 'tools/call', { name: 'greet', arguments: {} })).body.result;
    const before = runs.greet;
    const refused = await call(2, 'tools/call', {
      name: 'greet',
      arguments: {},
      inputResponses: { name: { action: 'accept', content: { name: 'Eve' } } },
      requestState: `${round.requestState}x`,
    });
    expect(refused.body).toMatchObject({ id: 2, error: { code: -32602 } });
    expect(runs.greet).toBe(before);
  });

  it('refuses a state replayed with other arguments (it is bound to the request)', async () => {
    const { call } = await overHttp(newServer());
    const round = (await call(1, 'tools/call', { name: 'greet', arguments: {} })).body.result;
    const replayed = await call(2, 'tools/call', {
      name: 'greet',
      arguments: { formal: true },
      inputResponses: { name: { action: 'accept', content: { name: 'Eve' } } },
      requestState: round.requestState,
    });
    expect(replayed.body.error).toMatchObject({ code: -32602, message: expect.stringMatching(/requestState/) });
  });

  it('refuses a state after its lifetime (on the server’s clock)', async () => {
    let now = 1_000_000;
    const clock: Clock = {
      now: () => now,
      setTimeout: (f, ms) => setTimeout(f, ms),
      clearTimeout: (h) => clearTimeout(h as never),
    };
    const { call } = await overHttp(newServer({}, { clock, inputRounds: { ttlMs: 1_000 } }));
    const round = (await call(1, 'tools/call', { name: 'greet', arguments: {} })).body.result;
    now += 1_001;
    const late = await answerGreet(call, 2, 'Ada', round.requestState);
    expect(late.body.error.code).toBe(-32602);
  });

  it('opens a state sealed by another server holding the same key ring (any replica serves the retry)', async () => {
    const keyRing = createKeyRing({ keys: [{ id: 'k1', secret: 'a'.repeat(32) }] });
    const one = await overHttp(newServer({}, { inputRounds: { keyRing } }));
    const round = (await one.call(1, 'tools/call', { name: 'greet', arguments: {} })).body.result;
    const other = await overHttp(newServer({}, { inputRounds: { keyRing } }));
    const done = await answerGreet(other.call, 2, 'Ada', round.requestState);
    expect(done.body.result.content).toEqual(text('Hi, Ada').content);
  });

  it('refuses a state sealed under another key ring (a replica that does not share the keys)', async () => {
    const one = await overHttp(
      newServer({}, { inputRounds: { keyRing: createKeyRing({ keys: [{ id: 'k1', secret: 'a'.repeat(32) }] }) } }),
    );
    const round = (await one.call(1, 'tools/call', { name: 'greet', arguments: {} })).body.result;
    const other = await overHttp(
      newServer({}, { inputRounds: { keyRing: createKeyRing({ keys: [{ id: 'k2', secret: 'b'.repeat(32) }] }) } }),
    );
    const refused = await answerGreet(other.call, 2, 'Ada', round.requestState);
    expect(refused.body.error.code).toBe(-32602);
  });

  it('fails a request past the round cap', async () => {
    const { call } = await overHttp(newServer({}, { inputRounds: { maxRounds: 1 } }));
    const round1 = (await call(1, 'tools/call', { name: 'two_rounds', arguments: {} })).body.result;
    const round2 = (
      await call(2, 'tools/call', {
        name: 'two_rounds',
        arguments: {},
        inputResponses: { 'elicitation-1': { action: 'accept', content: { v: 'a' } } },
        requestState: round1.requestState,
      })
    ).body.result;
    const capped = await call(3, 'tools/call', {
      name: 'two_rounds',
      arguments: {},
      inputResponses: { 'elicitation-2': { action: 'accept', content: { v: 'b' } } },
      requestState: round2.requestState,
    });
    expect(capped.body.error.message).toMatch(/limit is 1/);
  });

  it('refuses an answer that is not a result of its kind: -32602 naming the key', async () => {
    const { call } = await overHttp(newServer());
    const bad = await call(1, 'tools/call', { name: 'greet', arguments: {}, inputResponses: { name: 12345 } });
    expect(bad.body.error).toMatchObject({ code: -32602, message: expect.stringContaining('inputResponses["name"]') });
  });

  it('answers -32021 (HTTP 400) naming the capability the request did not declare', async () => {
    const { call } = await overHttp(newServer());
    const meta = { ...ENVELOPE, [META.clientCapabilities]: {} };
    const { status, body } = await call(1, 'tools/call', { name: 'greet', arguments: {} }, meta);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { elicitation: {} } } });
  });
});

/** The handshake's request, sent by a raw peer as request `id`. */
function initialize(peer: RawPeer, id: number): Promise<any> {
  const params = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } };
  return peer.request('initialize', params, id);
}

describe('a duplex connection (stdio, in memory): the first request decides the era', () => {
  function connect(server = newServer()) {
    const [peerSide, serverSide] = createMemoryPair();
    const connection = server.connect(serverSide);
    cleanups.push(() => connection.close());
    const peer = new RawPeer(peerSide);
    const validator = modernWireValidator();
    const request = async (id: number, method: string, params: JsonObject = {}) => {
      await peer.send(modernRequest(id, method, params));
      const answer = await peer.next();
      problems.push(...validator.check(method, answer));
      return answer;
    };
    return { connection, peer, request };
  }

  it('a first request with the envelope makes it modern, and requests are served without a handshake', async () => {
    const { connection, request } = connect();
    expect((await request(1, 'tools/call', { name: 'plain', arguments: {} })).result.resultType).toBe('complete');
    expect(connection.state).toBe('modern');
  });

  it('then refuses initialize with -32022 naming the stateless revisions', async () => {
    const { peer, request } = connect();
    await request(1, 'tools/list');
    const answer = await peer.request(
      'initialize',
      { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      2,
    );
    expect(answer.error).toMatchObject({ code: -32022, data: { supported: [VERSION], requested: '2025-11-25' } });
  });

  it('then refuses a request without the envelope (-32602)', async () => {
    const { peer, request } = connect();
    await request(1, 'tools/list');
    expect((await peer.request('tools/list', {}, 2)).error.code).toBe(-32602);
  });

  it('is not latched modern by the probe: a server/discover answered, then initialize opens a legacy session', async () => {
    const { connection, peer, request } = connect();
    expect((await request(1, 'server/discover')).result.supportedVersions).toEqual([VERSION]);
    expect(connection.state).toBe('uninitialized');
    const init = await initialize(peer, 2);
    expect(init.result.protocolVersion).toBe('2025-11-25');
    expect(connection.state).toBe('ready');
  });

  it('is not latched modern by a refused first request: initialize still opens a legacy session', async () => {
    const { connection, peer } = connect();
    const refused = await peer.request('tools/list', { _meta: { [META.protocolVersion]: VERSION } }, 1);
    expect(refused.error.code).toBe(-32602);
    expect(connection.state).toBe('uninitialized');
    const init = await initialize(peer, 2);
    expect(init.result.protocolVersion).toBe('2025-11-25');
    expect(connection.state).toBe('ready');
  });

  it('notifications/cancelled cancels a modern request in flight', async () => {
    const { peer } = connect();
    await peer.send(modernRequest(1, 'tools/call', { name: 'hangs', arguments: {} }));
    await eventually(() => runs.hangs === 1, 'the call to start');
    await peer.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'enough' } });
    await eventually(() => cancelled.length === 1, 'the handler to be cancelled');
    expect(cancelled[0]).toMatch(/was cancelled/);
    expect(await peer.drain()).toEqual([]);
  });

  it('closing the connection cancels the modern requests in flight', async () => {
    const { connection, peer } = connect();
    await peer.send(modernRequest(1, 'tools/call', { name: 'hangs', arguments: {} }));
    await eventually(() => runs.hangs === 1, 'the call to start');
    await connection.close();
    await eventually(() => cancelled.length === 1, 'the handler to be cancelled');
  });

  it('a listen stream over the connection gets the ack and list changes, tagged with its id', async () => {
    const server = newServer();
    const { peer } = connect(server);
    await peer.send(modernRequest(5, 'subscriptions/listen', { notifications: { toolsListChanged: true } }));
    const ack = await peer.next();
    expect(ack).toMatchObject({
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: { [META.subscriptionId]: 5 } },
    });
    server.update((definition) => definition.withoutTools('plain'));
    const changed = await within(peer.next(), 'the list change');
    expect(changed).toMatchObject({
      method: 'notifications/tools/list_changed',
      params: { _meta: { [META.subscriptionId]: 5 } },
    });
  });
});
