/**
 * Causal traces on a client's side (issue 27, item 1): in the stateless revision a call's `input_required`
 * rounds and its -32022 retry are requests of their own, each naming the call's first request as its cause;
 * the era probe, its refusal and the fallback are trace events of the client's connection, against real
 * servers: ours over HTTP, the SDK v1's (handshake era) over stdio, an endpoint answering the probe 404, and a
 * stdio child that never answers. The builders of lib/trace/event.ts are counted to show a probe nobody
 * traces builds no event.
 */
import { describe, expect, it, vi } from 'vitest';
import { Client } from '../../lib/client/client';
import { EraCache } from '../../lib/client/era-cache';
import { ModernClient } from '../../lib/client/modern-client';
import { ModernRequestStamp } from '../../lib/client/modern-request-stamp';
import { Runtime } from '../../lib/core/runtime';
import type { JsonObject } from '../../lib/jsonrpc/types';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { formatTraceEvent } from '../../lib/trace/format';
import { createMcpHttpHandler } from '../../transports/http/endpoint';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { createMemoryPair } from '../../transports/memory';
import { StdioClientTransport } from '../../transports/stdio';
import { text } from '../helpers/content';
import { cleanups, listenHttp } from '../helpers/http';
import { fixturePath } from '../helpers/paths';
import { traceRecording } from '../helpers/trace-recording';

const built = vi.hoisted(() => ({ events: 0 }));

vi.mock('../../lib/trace/event', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../lib/trace/event')>();
  const counted =
    <A extends unknown[], R>(build: (...args: A) => R) =>
    (...args: A): R => {
      built.events++;
      return build(...args);
    };
  return {
    ...actual,
    messageTraceEvent: counted(actual.messageTraceEvent),
    connectionLifecycleEvent: counted(actual.connectionLifecycleEvent),
    connectionPartEvent: counted(actual.connectionPartEvent),
  };
});

const askFor = (key: string) => ({
  message: `${key}?`,
  requestedSchema: { type: 'object' as const, properties: { [key]: { type: 'string' as const } } },
});

const definition = defineServer({
  name: 'rounds',
  version: '1.0.0',
  tools: [
    { name: 'echo', inputSchema: { type: 'object' }, handler: (args) => text(JSON.stringify(args)) },
    {
      name: 'greet',
      inputSchema: { type: 'object' },
      handler: async (_args, ctx) => {
        const answer = await ctx.elicit(askFor('name'), { key: 'name' });
        return text(`Hello, ${String(answer.content?.name)}`);
      },
    },
    {
      name: 'twice',
      inputSchema: { type: 'object' },
      // Two rounds: the second ask is made only once the first is answered.
      handler: async (_args, ctx) => {
        const first = await ctx.elicit(askFor('first'), { key: 'first' });
        const last = await ctx.elicit(askFor('last'), { key: 'last' });
        return text(`${String(first.content?.first)} ${String(last.content?.last)}`);
      },
    },
  ],
});

const { events, recording } = traceRecording();

const answerAll = {
  form: (params: { message: string }) => ({
    action: 'accept' as const,
    content: { [params.message.slice(0, -1)]: 'Ada' },
  }),
};

/** A client of the stateless revision, in process, with a form elicitation handler; its events are recorded. */
async function modernClient(): Promise<Client> {
  const runtime = recording();
  const server = new Server(definition, { runtime });
  const [clientSide, serverSide] = createMemoryPair();
  server.connect(serverSide);
  const client = new Client({ name: 'c', version: '1' }, { era: 'modern', runtime, elicitation: answerAll });
  cleanups.push(() => client.close());
  await client.connect(clientSide);
  expect(client.connectedEra).toBe('modern');
  return client;
}

const clientRequests = (client: Client, method: string) =>
  events.filter(
    (event) =>
      event.kind === 'request' &&
      event.direction === 'out' &&
      event.connection === client.id &&
      event.method === method,
  );

describe('input rounds and retries name their call', () => {
  it('an elicitation round names the first request of its call', async () => {
    const client = await modernClient();
    const result = await client.callTool('greet', {});
    expect(result.content).toEqual([{ type: 'text', text: 'Hello, Ada' }]);
    const [first, round, ...rest] = clientRequests(client, 'tools/call');
    expect(rest).toEqual([]);
    expect(first!.cause).toBeUndefined();
    expect(round!.id).not.toBe(first!.id);
    expect(round!.cause).toEqual({ connection: client.id, id: first!.id, kind: 'round' });
    expect(formatTraceEvent(round!)).toContain(`[round ${client.id} #${first!.id}]`);
  });

  it('both retries of a two-round call name its first request', async () => {
    const client = await modernClient();
    const result = await client.callTool('twice', {});
    expect(result.content).toEqual([{ type: 'text', text: 'Ada Ada' }]);
    const calls = clientRequests(client, 'tools/call');
    expect(calls).toHaveLength(3);
    const first = calls[0]!;
    expect(calls.slice(1).map((event) => event.cause)).toEqual([
      { connection: client.id, id: first.id, kind: 'round' },
      { connection: client.id, id: first.id, kind: 'round' },
    ]);
  });

  it('calls in a row are causes of none but their own rounds', async () => {
    const client = await modernClient();
    await client.callTool('echo', {});
    await client.callTool('greet', {});
    const [echo, greet, round] = clientRequests(client, 'tools/call');
    expect(echo!.cause).toBeUndefined();
    expect(greet!.cause).toBeUndefined();
    expect(round!.cause).toEqual({ connection: client.id, id: greet!.id, kind: 'round' });
  });

  it('the retry after a -32022 names the refused request, and so do the rounds after it', async () => {
    const client = await modernClient();
    // A client that speaks a revision the server does not (first) and 2026-07-28: the server refuses the first.
    const ours = ['2026-12-01', '2026-07-28'];
    const stamp = new ModernRequestStamp(ours[0]!, ours, client.capabilities as JsonObject, {
      name: 'c',
      version: '1',
    });
    const calls = new ModernClient(stamp, client, {
      eraCache: undefined,
      eraKey: undefined,
      maxInputRounds: undefined,
    });
    const result = await calls.request('tools/call', { name: 'greet', arguments: {} } as JsonObject, undefined);
    expect(result.content).toEqual([{ type: 'text', text: 'Hello, Ada' }]);
    const [refused, retry, round, ...rest] = clientRequests(client, 'tools/call');
    expect(rest).toEqual([]);
    const refusal = events.find(
      (event) => event.kind === 'error' && event.id === refused!.id && event.role === 'client',
    );
    expect((refusal!.message as { error: { code: number } }).error.code).toBe(-32022);
    expect(refused!.cause).toBeUndefined();
    expect(retry!.cause).toEqual({ connection: client.id, id: refused!.id, kind: 'retry' });
    expect(round!.cause).toEqual({ connection: client.id, id: refused!.id, kind: 'round' });
  });
});

// ---- the era probe ---------------------------------------------------------------------------------------

/** What a person reads of a connection's events: `request out server/discover`, `era-probe probing → modern`. */
function story(client: Client): string[] {
  return events
    .filter((event) => event.connection === client.id)
    .map((event) =>
      event.kind === 'lifecycle'
        ? `${event.actor ?? 'connection'} ${event.from} → ${event.to}`
        : `${event.kind} ${event.direction} ${event.method}`,
    );
}

const probeEvents = (client: Client) =>
  events.filter((event) => event.connection === client.id && event.method === 'server/discover');
const verdictOf = (client: Client) =>
  events.find((event) => event.connection === client.id && event.actor === 'era-probe');

/** Our server over real HTTP, behind `gate` (which may answer a request itself). */
async function ourHttpServer(gate?: (request: import('node:http').IncomingMessage) => number | undefined) {
  const handler = createMcpHttpHandler(new Server(definition));
  cleanups.push(() => handler.close());
  const { origin } = await listenHttp((request, response) => {
    const status = gate?.(request);
    if (status === undefined) handler(request, response);
    else response.writeHead(status).end();
  });
  return `${origin}/mcp`;
}

function tracedClient(options: Record<string, unknown> = {}): Client {
  const client = new Client(
    { name: 'prober', version: '1' },
    { runtime: recording(), eraCache: false, listChanges: 'off', ...options },
  );
  cleanups.push(() => client.close());
  return client;
}

describe('the era probe in the trace', () => {
  it('against a modern server: the request, its result, the verdict, then the connection is modern', async () => {
    const client = tracedClient();
    await client.connect(new StreamableHttpClientTransport(await ourHttpServer()));
    expect(story(client).slice(0, 4)).toEqual([
      'request out server/discover',
      'result in server/discover',
      'era-probe probing → modern',
      'connection uninitialized → modern',
    ]);
    const [request, result] = probeEvents(client);
    expect(result!.id).toBe(request!.id);
    expect(result!.latencyMs).toBeGreaterThanOrEqual(0);
    expect((result!.message as { result: { supportedVersions: string[] } }).result.supportedVersions).toContain(
      '2026-07-28',
    );
    expect(verdictOf(client)).toMatchObject({ role: 'client', reason: 'the server speaks revision 2026-07-28' });
    expect(formatTraceEvent(verdictOf(client)!)).toMatch(
      new RegExp(`${client.id} +·· era-probe probing → modern \\(the server speaks revision 2026-07-28\\)$`),
    );
  });

  it('against a handshake-era server (the SDK v1): -32601, the fallback, then initialize', async () => {
    const client = tracedClient();
    const sdkV1 = fixturePath('sdk-v1-stdio-server.mjs');
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [sdkV1] }));
    expect(client.connectedEra).toBe('handshake');
    expect(story(client).slice(0, 6)).toEqual([
      'request out server/discover',
      'error in server/discover',
      'era-probe probing → handshake',
      'connection uninitialized → initializing',
      'request out initialize',
      'result in initialize',
    ]);
    const refusal = probeEvents(client)[1]!;
    expect((refusal.message as { error: { code: number } }).error.code).toBe(-32601);
    expect(verdictOf(client)!.reason).toMatch(/^server\/discover was answered with error -32601/);
  });

  it('an HTTP 404 without a JSON-RPC body: an error event that says so ends the request, then the fallback', async () => {
    const client = tracedClient();
    const url = await ourHttpServer((request) =>
      request.headers['mcp-method'] === 'server/discover' ? 404 : undefined,
    );
    await client.connect(new StreamableHttpClientTransport(url));
    expect(client.connectedEra).toBe('handshake');
    expect(story(client).slice(0, 4)).toEqual([
      'request out server/discover',
      'error in server/discover',
      'era-probe probing → handshake',
      'connection uninitialized → initializing',
    ]);
    const [request, ended] = probeEvents(client);
    expect(ended).toMatchObject({ id: request!.id, reason: 'no JSON-RPC answer: HTTP 404 without a JSON-RPC body' });
    expect(ended!.message).toBeUndefined();
    expect(verdictOf(client)!.reason).toBe('server/discover got HTTP 404 without a JSON-RPC answer');
  });

  it('a stdio server that never answers: the timeout ends the request, the verdict is handshake', async () => {
    const client = tracedClient({ eraProbeTimeout: 100 });
    const transport = new StdioClientTransport({ command: process.execPath, args: [fixturePath('stdio-sleeper.mjs')] });
    await expect(client.connect(transport, { timeout: 100 })).rejects.toThrow(/initialize/);
    expect(story(client).slice(0, 5)).toEqual([
      'request out server/discover',
      'error in server/discover',
      'era-probe probing → handshake',
      'connection uninitialized → initializing',
      'request out initialize',
    ]);
    expect(probeEvents(client)[1]!.reason).toBe('no JSON-RPC answer: none within 100 ms');
    expect(verdictOf(client)!.reason).toBe('server/discover got no answer within 100 ms');
  });

  it('a probe that fails is a verdict too: failed, with why', async () => {
    const client = tracedClient();
    const url = await ourHttpServer((request) =>
      request.headers['mcp-method'] === 'server/discover' ? 503 : undefined,
    );
    await expect(client.connect(new StreamableHttpClientTransport(url))).rejects.toThrow();
    expect(story(client).slice(0, 3)).toEqual([
      'request out server/discover',
      'error in server/discover',
      'era-probe probing → failed',
    ]);
    expect(probeEvents(client)[1]!.reason).toMatch(/^no JSON-RPC answer: HTTP 503/);
  });

  it('a cached verdict is one event, with no probe', async () => {
    const url = await ourHttpServer();
    const cache = new EraCache();
    await tracedClient({ eraCache: cache }).connect(new StreamableHttpClientTransport(url));
    events.length = 0;
    const client = tracedClient({ eraCache: cache });
    await client.connect(new StreamableHttpClientTransport(url));
    expect(story(client).slice(0, 2)).toEqual(['era-probe idle → modern', 'connection uninitialized → modern']);
    expect(verdictOf(client)!.reason).toBe('cached');
  });

  it('builds no trace event for a probe nobody traces, and some once someone does', async () => {
    const url = await ourHttpServer();
    built.events = 0;
    const quiet = new Client(
      { name: 'quiet', version: '1' },
      { runtime: new Runtime(), eraCache: false, listChanges: 'off' },
    );
    cleanups.push(() => quiet.close());
    await quiet.connect(new StreamableHttpClientTransport(url));
    await quiet.callTool('echo', {});
    expect(built.events).toBe(0);
    await tracedClient().connect(new StreamableHttpClientTransport(url));
    expect(built.events).toBeGreaterThanOrEqual(4);
  });
});
