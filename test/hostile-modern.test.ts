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
import type { JsonObject } from '../lib/jsonrpc/types';
import { META } from '../lib/protocol/modern';
import { defineServer } from '../lib/server/definition';
import type { ServerContext } from '../lib/server/context';
import { InMemoryServerEventBus, LIST_CHANGED_EVENTS } from '../lib/server/event-bus';
import { Server, type ServerOptions } from '../lib/server/server';
import { createMcpHttpServer } from '../transports/http/http-server';
import type { HttpLimits } from '../transports/http/limits';
import { SseParser, type SseEvent } from '../transports/http/sse';
import { createStreamableHttpHandler } from '../transports/http/streamable-server';
import { cleanups, eventually, within } from './helpers/http';

const VERSION = '2026-07-28';
const CAPABILITIES = { elicitation: {}, sampling: {}, roots: {} };
const ENVELOPE = {
  [META.protocolVersion]: VERSION,
  [META.clientCapabilities]: CAPABILITIES,
  [META.clientInfo]: { name: 'hostile', version: '1' },
};
const LIVE_URI = 'test://live';

const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

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
            const answer = await ctx.elicit(
              { message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } },
              { key: 'name' },
            );
            return text(`Hi, ${(answer.content as { name?: string } | undefined)?.name}`);
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
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method: 'POST',
        localAddress,
        agent: false,
        headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers },
      },
      (response) => {
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
      },
    );
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
    expect(serverSide.writableLength, 'bytes waiting for the socket').toBeLessThan(64 * 1024);
  });

  it('buffers a bounded backlog while 120,000 events are published over many ticks', async () => {
    const site = await serveHttp();
    const { serverSide } = await stalledListener(site);
    await flood(site.server, 60_000, 300);
    expect(serverSide.writableLength, 'bytes waiting for the socket').toBeLessThan(64 * 1024);
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
