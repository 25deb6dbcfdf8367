/**
 * The stateless revision (2026-07-28) against hostile peers, over real sockets (a `createMcpHttpServer` on
 * 127.0.0.1, with 127.0.0.2 as a second client address) and over the memory transport (JSON text, as stdio
 * reads it): malformed envelopes at scale, floods of requests and listen streams, peers that stop reading or
 * hang up mid-stream, input rounds never retried, and a duplex peer that interleaves requests, cancels and
 * garbage. Every bad message gets a clear error with its id (or the documented HTTP status), the server keeps
 * serving, and nothing stays behind: no listen stream, no event-bus subscriber, no timer, no request record.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../lib/jsonrpc/types';
import { META } from '../../lib/protocol/modern';
import { defineServer } from '../../lib/server/definition';
import type { ServerContext } from '../../lib/server/context';
import { InMemoryServerEventBus, LIST_CHANGED_EVENTS } from '../../lib/server/event-bus';
import { LISTEN_SEND_WINDOW, MAX_HELD_RESOURCE_URIS } from '../../lib/server/listen';
import { createKeyRing } from '../../lib/server/request-state';
import { Server, type ServerOptions } from '../../lib/server/server';
import { createMemoryPair } from '../../transports/memory';
import { createMcpHttpServer } from '../../transports/http/http-server';
import type { HttpLimits } from '../../transports/http/limits';
import { SseParser, type SseEvent } from '../../transports/http/sse';
import { createStreamableHttpHandler } from '../../transports/http/streamable-server';
import { cleanups, eventually, within } from '../helpers/http';
import { RawPeer } from '../helpers/raw-peer';
import { askName } from '../helpers/fixtures';
import { text } from '../helpers/content';

const VERSION = '2026-07-28';
const SECOND_CLIENT = '127.0.0.2';
const CAPABILITIES = { elicitation: {}, sampling: {}, roots: {} };
const ENVELOPE = {
  [META.protocolVersion]: VERSION,
  [META.clientCapabilities]: CAPABILITIES,
  [META.clientInfo]: { name: 'hostile', version: '1' },
};
const LIVE_URI = 'test://live';

/** What the tools' handlers did: runs started, runs that ended (however), and cancellations. */
const record = { started: 0, ended: 0, cancelled: [] as string[] };

function newServer(options: ServerOptions = {}): Server {
  const definition = defineServer({
    name: 'hostile-modern',
    version: '1.0.0',
    tools: [
      {
        name: 'echo',
        description: 'Echoes its arguments',
        inputSchema: { type: 'object' },
        handler: (args: unknown) => text(JSON.stringify(args)),
      },
      {
        name: 'hangs',
        description: 'Reports progress, then waits until cancelled',
        inputSchema: { type: 'object' },
        handler: async (_args, ctx: ServerContext) => {
          record.started++;
          try {
            await ctx.progress(1, 2);
            return await new Promise((resolve) =>
              ctx.onCancel((reason) => (record.cancelled.push(reason.message), resolve(text('late')))),
            );
          } finally {
            record.ended++;
          }
        },
      },
      {
        name: 'greet',
        description: 'Asks for a name',
        inputSchema: { type: 'object' },
        handler: async (_args, ctx: ServerContext) => {
          record.started++;
          try {
            return text(`Hi, ${(await askName(ctx)).name}`);
          } finally {
            record.ended++;
          }
        },
      },
    ],
    resources: [{ uri: LIVE_URI, name: 'live', read: () => 'now' }],
  });
  return new Server(definition, options);
}

beforeEach(() => {
  record.started = 0;
  record.ended = 0;
  record.cancelled = [];
});

afterEach(() => {
  expect(({} as Record<string, unknown>).polluted, 'Object.prototype untouched').toBeUndefined();
});

function modernBody(id: unknown, method: string, params: JsonObject = {}, meta: JsonObject = ENVELOPE): JsonObject {
  return {
    jsonrpc: '2.0',
    id,
    method,
    params: { ...params, _meta: { ...meta, ...(params._meta as object) } },
  } as JsonObject;
}

/** The headers a modern POST mirrors from its body. */
function mirrored(method: string, name?: string): Record<string, string> {
  return { 'mcp-protocol-version': VERSION, 'mcp-method': method, ...(name !== undefined && { 'mcp-name': name }) };
}

/** What the server holds for modern requests and streams: all of it must return to nothing. */
function expectNothingHeld(server: Server): void {
  expect(server.listenStreams.size, 'open listen streams').toBe(0);
  expect((server.events as InMemoryServerEventBus).subscriberCount, 'event-bus subscribers').toBe(0);
  expect(record.ended, 'every handler run ended').toBe(record.started);
}

/** Active timers of this process (vitest's own included): compared before and after. */
const activeTimers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

// ---- HTTP ------------------------------------------------------------------------------------------------

interface Site {
  readonly server: Server;
  readonly port: number;
  /** Every `ServerResponse` the endpoint was handed, in order (to look at what it buffers). */
  readonly responses: http.ServerResponse[];
}

async function serveHttp(options: ServerOptions = {}, limits: Partial<HttpLimits> = {}): Promise<Site> {
  const server = newServer(options);
  const handler = createStreamableHttpHandler(server, { ...limits, keepAliveMs: 0 });
  const responses: http.ServerResponse[] = [];
  const site = createMcpHttpServer((request, response) => {
    responses.push(response);
    void handler(request, response);
  }, limits);
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () => handler.close(),
    () => server.close().then(() => undefined),
    () => new Promise((resolve) => site.close(resolve)),
    () => site.closeAllConnections(),
  );
  return { server, port: (site.address() as AddressInfo).port, responses };
}

interface Answer {
  readonly status: number;
  readonly type: string | undefined;
  readonly text: string;
}

/** A POST to `/mcp` with `node:http` (no keep-alive, raw header casing) from `localAddress`. */
function postRequest(
  port: number,
  headers: Record<string, string>,
  localAddress: string | undefined,
  onResponse: (response: http.IncomingMessage) => void,
): http.ClientRequest {
  return http.request(
    {
      host: '127.0.0.1',
      port,
      path: '/mcp',
      method: 'POST',
      localAddress,
      agent: false,
      headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers },
    },
    onResponse,
  );
}

/** One POST from `localAddress`; resolves with the whole answer. */
function post(port: number, body: string, headers: Record<string, string>, localAddress?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = postRequest(port, headers, localAddress, (response) => {
      let received = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (received += chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode!, type: response.headers['content-type'], text: received }),
      );
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

/** The JSON-RPC message of an answer: the body, or the last event of an SSE stream. */
function messageOf(answer: Answer): any {
  if (answer.type?.startsWith('text/event-stream')) {
    const events = new SseParser().push(answer.text);
    return JSON.parse(events[events.length - 1]!.data);
  }
  return JSON.parse(answer.text);
}

async function call(port: number, id: unknown, name: string, args: JsonObject = {}, extra: JsonObject = {}) {
  const body = modernBody(id, 'tools/call', { name, arguments: args, ...extra });
  return post(port, JSON.stringify(body), mirrored('tools/call', name));
}

/** A request whose response stays open: its SSE events as they come, and a way to hang up. */
interface OpenStream {
  readonly request: http.ClientRequest;
  readonly response: http.IncomingMessage;
  readonly events: SseEvent[];
  /** Resolves with the next event (waiting for it when none is unread). */
  next(): Promise<SseEvent>;
  hangUp(): void;
}

function openStream(port: number, body: JsonObject, headers: Record<string, string>, localAddress?: string) {
  return new Promise<OpenStream>((resolve, reject) => {
    const request = postRequest(port, headers, localAddress, (response) => {
      const parser = new SseParser();
      const events: SseEvent[] = [];
      let read = 0;
      let wake: (() => void) | undefined;
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        events.push(...parser.push(chunk));
        wake?.();
      });
      response.on('error', () => undefined);
      const stream: OpenStream = {
        request,
        response,
        events,
        async next() {
          while (read >= events.length) await within(new Promise<void>((done) => (wake = done)), 'an SSE event');
          return events[read++]!;
        },
        hangUp: () => request.destroy(),
      };
      cleanups.push(() => void request.destroy());
      resolve(stream);
    });
    request.on('error', reject);
    request.end(JSON.stringify(body));
  });
}

function listenBody(id: unknown, notifications: JsonObject = { toolsListChanged: true }): JsonObject {
  return modernBody(id, 'subscriptions/listen', { notifications });
}

const LISTEN_HEADERS = mirrored('subscriptions/listen');

describe('a listen stream whose client stops reading', () => {
  /** Publishes `count` events of each kind, `perTick` at a time, yielding to I/O between bursts. */
  async function flood(server: Server, count: number, perTick: number): Promise<void> {
    const kinds = [LIST_CHANGED_EVENTS.tools, LIST_CHANGED_EVENTS.prompts, LIST_CHANGED_EVENTS.resources];
    for (let sent = 0; sent < count; sent += perTick) {
      for (let i = 0; i < perTick; i++) {
        server.events.publish(kinds[i % 3]!);
        server.resourceUpdated(LIVE_URI, `${LIVE_URI}/${(sent + i) % 500}`);
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /**
   * What a stalled stream may keep waiting for its socket: what the socket buffers before it asks to drain
   * (its high-water mark: 16 KiB or 64 KiB, by Node's defaults), and one send window of events
   * (`LISTEN_SEND_WINDOW`, 32, each well under 512 bytes). Without the window it grows with every event.
   */
  const backlogBound = (response: http.ServerResponse) => response.writableHighWaterMark + 16 * 1024;

  async function stalledListener(site: Site) {
    const stream = await openStream(
      site.port,
      listenBody(1, {
        toolsListChanged: true,
        promptsListChanged: true,
        resourcesListChanged: true,
        resourceSubscriptions: [LIVE_URI],
      }),
      LISTEN_HEADERS,
    );
    expect(JSON.parse((await stream.next()).data).method).toBe('notifications/subscriptions/acknowledged');
    stream.response.pause();
    return { stream, serverSide: site.responses[site.responses.length - 1]! };
  }

  it('buffers a bounded backlog while 40,000 events are published in one burst', async () => {
    const site = await serveHttp();
    const { serverSide } = await stalledListener(site);
    await flood(site.server, 20_000, 20_000);
    expect(serverSide.writableLength, 'bytes waiting for the socket').toBeLessThan(backlogBound(serverSide));
  });

  it('buffers a bounded backlog while 120,000 events are published over many ticks', async () => {
    const site = await serveHttp();
    const { serverSide } = await stalledListener(site);
    await flood(site.server, 60_000, 300);
    expect(serverSide.writableLength, 'bytes waiting for the socket').toBeLessThan(backlogBound(serverSide));
  });

  it('tells a client that reads again of every kind of change it missed, and ends with nothing held', async () => {
    const site = await serveHttp();
    const { stream } = await stalledListener(site);
    await flood(site.server, 3_000, 3_000);
    stream.response.resume();
    const methods = new Set<string>();
    // The server serves no prompts: the acknowledgement left promptsListChanged out.
    while (methods.size < 3) methods.add(JSON.parse((await stream.next()).data).method);
    expect([...methods].sort()).toEqual([
      'notifications/resources/list_changed',
      'notifications/resources/updated',
      'notifications/tools/list_changed',
    ]);
    stream.hangUp();
    await eventually(() => site.server.listenStreams.size === 0, 'the stream to close (no event announces it)');
    expectNothingHeld(site.server);
  });
});

// ---- malformed envelopes -----------------------------------------------------------------------------------

/** `depth` nested objects around `inner`, as JSON text. */
const deep = (depth: number, inner = '1') => `${'{"a":'.repeat(depth)}${inner}${'}'.repeat(depth)}`;

/** A modern tools/call as text, with `meta` (raw JSON members) added to its envelope and `params` members added. */
function rawCall(id: number, members: { meta?: string; capabilities?: string; params?: string; args?: string }) {
  const capabilities = members.capabilities ?? JSON.stringify(CAPABILITIES);
  const meta = `{"${META.protocolVersion}":"${VERSION}","${META.clientCapabilities}":${capabilities}${members.meta ? `,${members.meta}` : ''}}`;
  const params = `{"name":"echo","arguments":${members.args ?? '{}'}${members.params ? `,${members.params}` : ''},"_meta":${meta}}`;
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${params}}`;
}

const TOO_DEEP = 200;

/** Bodies nested past the 128-level limit in each part of a modern request: refused before anything reads them. */
const DEEP_BODIES: Record<string, [id: number, body: string]> = {
  '_meta (an extra key)': [11, rawCall(11, { meta: `"x-deep":${deep(TOO_DEEP)}` })],
  clientCapabilities: [12, rawCall(12, { capabilities: `{"experimental":${deep(TOO_DEEP)}}` })],
  inputResponses: [13, rawCall(13, { params: `"inputResponses":{"name":${deep(TOO_DEEP)}}` })],
  arguments: [14, rawCall(14, { args: deep(TOO_DEEP) })],
};

/** Malformed claims: each a -32602 naming the claim key, with the request's id. */
const BAD_CLAIMS = ['5', 'null', 'true', '""', '{}', '["2026-07-28"]', deep(20, '"2026-07-28"')];

describe('malformed modern envelopes over HTTP', () => {
  for (const [where, [id, body]] of Object.entries(DEEP_BODIES)) {
    it(`refuses nesting past the limit inside ${where} with 400 and -32600 echoing the id, and serves the next call`, async () => {
      const site = await serveHttp();
      const answer = await post(site.port, body, mirrored('tools/call', 'echo'));
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.text)).toMatchObject({
        id,
        error: { code: -32600, message: expect.stringContaining('128') },
      });
      expect(messageOf(await call(site.port, 2, 'echo', { ok: 1 })).result.content[0].text).toBe('{"ok":1}');
      expectNothingHeld(site.server);
    });
  }

  it('accepts the same parts nested just within the limit', async () => {
    const site = await serveHttp();
    // The envelope, params, _meta and the experimental family take 5 levels of the 128.
    const body = rawCall(15, { capabilities: `{"experimental":${deep(120)}}`, meta: `"x-deep":${deep(120)}` });
    const answer = await post(site.port, body, mirrored('tools/call', 'echo'));
    expect(messageOf(answer)).toMatchObject({ id: 15, result: { resultType: 'complete' } });
  });

  for (const claim of BAD_CLAIMS) {
    it(`refuses the claim ${claim.slice(0, 30)} with 400 and -32602 echoing the id`, async () => {
      const site = await serveHttp();
      const body = `{"jsonrpc":"2.0","id":"c-1","method":"tools/list","params":{"_meta":{"${META.protocolVersion}":${claim},"${META.clientCapabilities}":{}}}}`;
      const answer = await post(site.port, body, mirrored('tools/list'));
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.text)).toMatchObject({
        id: 'c-1',
        error: { code: -32602, data: { key: META.protocolVersion, problem: 'invalid' } },
      });
    });
  }

  it('refuses a requestState over 64 KiB with -32602 echoing the id, without running the handler', async () => {
    const site = await serveHttp();
    const answer = await call(site.port, 21, 'greet', {}, { requestState: 'A'.repeat(70 * 1024) });
    expect(messageOf(answer)).toMatchObject({ id: 21, error: { code: -32602 } });
    expect(messageOf(answer).error.message).toContain('requestState');
    expect(record.started).toBe(0);
  });

  it('refuses a requestState that is not a string, and inputResponses that are not an object', async () => {
    const site = await serveHttp();
    const state = await call(site.port, 22, 'greet', {}, { requestState: { forged: true } });
    expect(messageOf(state)).toMatchObject({ id: 22, error: { code: -32602 } });
    const responses = await call(site.port, 23, 'greet', {}, { inputResponses: ['accept'] });
    expect(messageOf(responses)).toMatchObject({ id: 23, error: { code: -32602 } });
  });

  it('answers a body over maxBodyBytes with 413 and still serves the next call', async () => {
    const site = await serveHttp({}, { maxBodyBytes: 64 * 1024 });
    const answer = await call(site.port, 24, 'echo', { blob: 'x'.repeat(100 * 1024) });
    expect(answer.status).toBe(413);
    expect(messageOf(await call(site.port, 25, 'echo')).result.resultType).toBe('complete');
  });

  it('does not take a capability declared only under "__proto__" (-32021), and nothing is polluted', async () => {
    const site = await serveHttp();
    const body = rawCall(31, {
      capabilities: '{"__proto__":{"elicitation":{}},"constructor":{"prototype":{"elicitation":{}}}}',
    }).replace('"name":"echo"', '"name":"greet"');
    const answer = await post(site.port, body, mirrored('tools/call', 'greet'));
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({ id: 31, error: { code: -32021 } });
  });

  it('does not answer an ask from inputResponses["__proto__"]: the round still asks for it', async () => {
    const site = await serveHttp();
    const responses =
      '"inputResponses":{"__proto__":{"name":{"action":"accept","content":{"name":"Mallory"}}},"constructor":{"action":"accept"}}';
    const body = rawCall(32, { params: responses }).replace('"name":"echo"', '"name":"greet"');
    const answer = messageOf(await post(site.port, body, mirrored('tools/call', 'greet')));
    expect(answer).toMatchObject({ id: 32, result: { resultType: 'input_required', inputRequests: { name: {} } } });
  });

  it('ignores "__proto__" and "constructor" keys in _meta', async () => {
    const site = await serveHttp();
    const body = rawCall(33, { meta: '"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}' });
    const answer = messageOf(await post(site.port, body, mirrored('tools/call', 'echo')));
    expect(answer).toMatchObject({ id: 33, result: { resultType: 'complete' } });
  });

  it('answers 300 malformed envelopes sent at once, each with its own error, and keeps serving', async () => {
    const site = await serveHttp({}, { maxConnectionsPerClient: 400 });
    const bodies = Array.from({ length: 300 }, (_, n) => {
      const kinds = [
        rawCall(n, { capabilities: '"not an object"' }),
        rawCall(n, { meta: `"${META.logLevel}":"loudest"` }),
        rawCall(n, { meta: `"${META.clientInfo}":{"name":1}` }),
        rawCall(n, { meta: `"${META.progressToken}":{"t":1}` }),
      ];
      return kinds[n % kinds.length]!;
    });
    const answers = await Promise.all(bodies.map((body) => post(site.port, body, mirrored('tools/call', 'echo'))));
    answers.forEach((answer, n) => {
      expect(answer.status).toBe(400);
      expect(JSON.parse(answer.text)).toMatchObject({ id: n, error: { code: -32602 } });
    });
    expect(messageOf(await call(site.port, 'after', 'echo')).result.resultType).toBe('complete');
    expectNothingHeld(site.server);
  });
});

// ---- floods ------------------------------------------------------------------------------------------------

describe('floods of modern requests', () => {
  it('a flood of hanging calls from one address does not starve a second address', async () => {
    const site = await serveHttp({}, { maxConnectionsPerClient: 16 });
    // 40 calls that never finish by themselves: only 16 connections of this address are let in.
    const flood = Array.from({ length: 40 }, (_, n) =>
      call(site.port, n, 'hangs').then(
        (answer) => answer.status,
        () => 'cut',
      ),
    );
    await eventually(() => record.started >= 16, 'the admitted calls to start (their handlers say so)');
    const body = JSON.stringify(modernBody('second', 'tools/call', { name: 'echo', arguments: { from: 2 } }));
    const answer = await post(site.port, body, mirrored('tools/call', 'echo'), SECOND_CLIENT);
    expect(messageOf(answer)).toMatchObject({ id: 'second', result: { resultType: 'complete' } });
    expect(record.started, 'no more than the per-address connection limit ran').toBeLessThanOrEqual(16);
    await site.server.close();
    for (const response of site.responses) response.destroy();
    await Promise.all(flood);
    await eventually(() => record.ended === record.started, 'every hanging handler to be cancelled');
    expectNothingHeld(site.server);
  });

  it('a flood of listen streams hits maxListenStreams with a clear error; another client is served once one closes', async () => {
    const site = await serveHttp({ maxListenStreams: 8 }, { maxConnectionsPerClient: 64 });
    const streams = await Promise.all(
      Array.from({ length: 8 }, (_, n) => openStream(site.port, listenBody(n), LISTEN_HEADERS)),
    );
    await Promise.all(streams.map((stream) => stream.next()));
    expect(site.server.listenStreams.size).toBe(8);
    const refusals = await Promise.all(
      Array.from({ length: 20 }, (_, n) => post(site.port, JSON.stringify(listenBody(100 + n)), LISTEN_HEADERS)),
    );
    refusals.forEach((refusal, n) =>
      expect(JSON.parse(refusal.text)).toMatchObject({
        id: 100 + n,
        error: { message: expect.stringContaining('Too many subscriptions/listen streams') },
      }),
    );
    const second = await post(site.port, JSON.stringify(listenBody('b')), LISTEN_HEADERS, SECOND_CLIENT);
    expect(JSON.parse(second.text).error.message).toContain('limit 8');

    streams[0]!.hangUp();
    await eventually(
      () => site.server.listenStreams.size === 7,
      'the closed stream to be forgotten (no event says so)',
    );
    const admitted = await openStream(site.port, listenBody('b2'), LISTEN_HEADERS, SECOND_CLIENT);
    expect(JSON.parse((await admitted.next()).data).method).toBe('notifications/subscriptions/acknowledged');

    for (const stream of [...streams, admitted]) stream.hangUp();
    await eventually(() => site.server.listenStreams.size === 0, 'every stream to be forgotten');
    expectNothingHeld(site.server);
  });
});

// ---- peers that hang up or never come back -----------------------------------------------------------------

describe('peers that hang up or never come back', () => {
  it('a client that hangs up mid-SSE cancels the handler, and nothing is left: no stream, no timer', async () => {
    const site = await serveHttp();
    const timersBefore = activeTimers();
    const body = modernBody(1, 'tools/call', {
      name: 'hangs',
      arguments: {},
      _meta: { ...ENVELOPE, [META.progressToken]: 'p' },
    });
    const stream = await openStream(site.port, body, mirrored('tools/call', 'hangs'));
    expect(JSON.parse((await stream.next()).data).method).toBe('notifications/progress');
    stream.hangUp();
    await eventually(() => record.cancelled.length === 1, 'the handler to hear of the hang-up (its own callback)');
    expect(record.cancelled[0]).toMatch(/closed/);
    await eventually(() => record.ended === 1, 'the handler to end');
    expectNothingHeld(site.server);
    expect(activeTimers(), 'timers of this process').toBeLessThanOrEqual(timersBefore);
  });

  it('an input_required round never retried leaves nothing behind: the retry works on another server', async () => {
    const keyRing = createKeyRing({ keys: [{ id: 'k1', secret: 'h'.repeat(32) }] });
    const first = await serveHttp({ inputRounds: { keyRing } });
    const round = messageOf(await call(first.port, 1, 'greet'));
    expect(round.result.resultType).toBe('input_required');
    // The round's run of the handler is over: the answer went out and the ask failed.
    await eventually(() => record.ended === 1, 'the first run to end');
    expectNothingHeld(first.server);
    await first.server.close();

    // A server that never saw the first round (same keys) finishes the request from what the client sends.
    const second = await serveHttp({ inputRounds: { keyRing } });
    const retry = await call(
      second.port,
      1,
      'greet',
      {},
      {
        requestState: round.result.requestState,
        inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } },
      },
    );
    expect(messageOf(retry).result.content[0].text).toBe('Hi, Ada');
  });
});

// ---- duplex ------------------------------------------------------------------------------------------------

describe('a duplex peer (memory transport, JSON text as stdio reads it)', () => {
  function connect(server = newServer()) {
    const [peerSide, serverSide] = createMemoryPair({ codec: 'json' });
    const connection = server.connect(serverSide);
    cleanups.push(() => connection.close());
    return { server, connection, peer: new RawPeer(peerSide), peerSide };
  }

  const cancel = (requestId: unknown) => ({
    jsonrpc: '2.0',
    method: 'notifications/cancelled',
    params: { requestId, reason: 'hostile' },
  });

  it('refuses nesting past the limit in each part of the envelope with -32600 and the id', async () => {
    const { peer } = connect();
    for (const [, body] of Object.values(DEEP_BODIES)) {
      await peer.sendRaw(body);
      const answer = await peer.next();
      expect(answer).toMatchObject({
        id: Number(/"id":(\d+)/.exec(body)![1]),
        error: { code: -32600 },
      });
    }
    expect(
      (await peer.request('tools/call', modernBody(0, 'x', { name: 'echo', arguments: {} }).params as JsonObject, 'ok'))
        .result.resultType,
    ).toBe('complete');
  });

  it('refuses malformed claims with -32602 and the id, and is not latched modern by them', async () => {
    const { peer, connection } = connect();
    for (const [n, claim] of BAD_CLAIMS.entries()) {
      await peer.sendRaw(
        `{"jsonrpc":"2.0","id":${n},"method":"tools/list","params":{"_meta":{"${META.protocolVersion}":${claim},"${META.clientCapabilities}":{}}}}`,
      );
      expect(await peer.next()).toMatchObject({ id: n, error: { code: -32602 } });
    }
    expect(connection.state).toBe('uninitialized');
  });

  it('serves modern requests interleaved with cancels, cancels of unknown ids and garbage lines', async () => {
    const { server, peer } = connect();
    const garbage = ['{', '[]', '{"jsonrpc":"2.0","id":', 'null', deep(300), '"just a string"'];
    let echoes = 0;
    for (let n = 0; n < 60; n++) {
      await peer.send(modernBody(`h${n}`, 'tools/call', { name: 'hangs', arguments: {} }));
      await peer.sendRaw(garbage[n % garbage.length]!);
      await peer.send(cancel(`unknown-${n}`));
      if (n % 2 === 0) await peer.send(cancel(`h${n}`));
      if (n % 3 === 0) {
        await peer.send(modernBody(`e${n}`, 'tools/call', { name: 'echo', arguments: { n } }));
        echoes++;
      }
    }
    await eventually(() => record.cancelled.length === 30, 'the cancelled handlers to hear of it (their callbacks)');
    const received = await peer.drain();
    const answers = received.filter((message) => 'id' in message || 'error' in message);
    const echoed = answers.filter((message) => String(message.id).startsWith('e'));
    expect(echoed).toHaveLength(echoes);
    for (const answer of echoed)
      expect(answer.result.content[0].text).toBe(JSON.stringify({ n: Number(answer.id.slice(1)) }));
    expect(
      answers.filter((message) => String(message.id).startsWith('h')),
      'a cancelled request is not answered',
    ).toEqual([]);
    const idless = answers.filter((message) => !('id' in message) || message.id === null);
    expect(idless.length, 'one id-less error per garbage line').toBe(60);

    // The cancelled requests left no record: their ids are free again.
    await peer.send(modernBody('h0', 'tools/call', { name: 'echo', arguments: { again: true } }));
    expect((await peer.next()).result.content[0].text).toBe('{"again":true}');
    // A request still in flight keeps its id.
    await peer.send(modernBody('h1', 'tools/call', { name: 'echo', arguments: {} }));
    expect((await peer.next()).error).toMatchObject({
      code: -32600,
      message: expect.stringContaining('already in use'),
    });
    expect(server.listenStreams.size).toBe(0);
  });

  it('closing mid-round cancels every request in flight and ends its listen streams', async () => {
    const { server, peer, connection } = connect();
    await peer.send(
      modernBody('l', 'subscriptions/listen', {
        notifications: { toolsListChanged: true, resourceSubscriptions: [LIVE_URI] },
      }),
    );
    expect((await peer.next()).method).toBe('notifications/subscriptions/acknowledged');
    for (let n = 0; n < 5; n++) await peer.send(modernBody(n, 'tools/call', { name: 'hangs', arguments: {} }));
    await eventually(() => record.started === 5, 'the handlers to start (they say so)');
    expect(server.listenStreams.size).toBe(1);
    await connection.close();
    await eventually(() => record.ended === 5, 'the handlers to be cancelled');
    expect(record.cancelled).toHaveLength(5);
    expectNothingHeld(server);
  });

  it('a burst of 10,000 list changes reaches a duplex peer coalesced', async () => {
    const { server, peer } = connect();
    await peer.send(modernBody('l', 'subscriptions/listen', { notifications: { toolsListChanged: true } }));
    await peer.next();
    for (let n = 0; n < 10_000; n++) server.events.publish(LIST_CHANGED_EVENTS.tools);
    const received = await peer.drain();
    expect(received.length, 'list changes sent for 10,000 published at once').toBeLessThanOrEqual(33);
    expect(received.at(-1)?.method).toBe('notifications/tools/list_changed');
  });

  it('a burst of updates to 10,000 distinct sub-resources is held as at most 256 of them, then as the subscribed one', async () => {
    const { server, peer } = connect();
    await peer.send(modernBody('l', 'subscriptions/listen', { notifications: { resourceSubscriptions: [LIVE_URI] } }));
    await peer.next();
    for (let n = 0; n < 10_000; n++) server.resourceUpdated(LIVE_URI, `${LIVE_URI}/${n}`);
    const uris = (await peer.drain()).map((message) => message.params.uri);
    expect(uris.length).toBeLessThanOrEqual(LISTEN_SEND_WINDOW + MAX_HELD_RESOURCE_URIS + 1);
    expect(uris.at(-1), 'the rest, as an update of the subscribed resource').toBe(LIVE_URI);
    expect(uris.at(-2)).toBe(`${LIVE_URI}/${LISTEN_SEND_WINDOW + MAX_HELD_RESOURCE_URIS - 1}`);
  });
});
