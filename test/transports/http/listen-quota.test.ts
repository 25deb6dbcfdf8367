/**
 * The per-client cap on `subscriptions/listen` streams over Streamable HTTP (`maxListenStreamsPerClient`,
 * transports/http/listen-quota.ts), over real sockets on 127.0.0.1. Clients are told apart by a header (the
 * `clientKey` option), so one test process can be several clients. Each stream's slot is held while its
 * response is open: the tests wait for the server's side of a response to close (its 'close' event, after
 * which the quota has let go) before they count on the slot being free.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { firstValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Client } from '../../../lib/client/client';
import { EraCache } from '../../../lib/client/era-cache';
import { listen as listenWith } from '../../../lib/client/listen';
import { McpError } from '../../../lib/jsonrpc/errors';
import type { JsonObject } from '../../../lib/jsonrpc/types';
import { META } from '../../../lib/protocol/modern';
import { defineServer } from '../../../lib/server/definition';
import { Server } from '../../../lib/server/server';
import { ListenQuota } from '../../../transports/http/listen-quota';
import { SseParser } from '../../../transports/http/sse';
import { StreamableHttpClientTransport } from '../../../transports/http/streamable-client';
import { createStreamableHttpHandler } from '../../../transports/http/streamable-server';
import { cleanups, within } from '../../helpers/http';
import { MODERN_VERSION } from '../../helpers/modern-http';
import { modernWireValidator } from '../../helpers/modern-wire';

const PER_CLIENT = 2;
const CLIENT_HEADER = 'x-test-client';
/** Names a request, so the test can find the server's side of its response. */
const TAG_HEADER = 'x-test-tag';

const ENVELOPE = {
  [META.protocolVersion]: MODERN_VERSION,
  [META.clientCapabilities]: {},
  [META.clientInfo]: { name: 'listen-quota', version: '1' },
};

interface Site {
  readonly server: Server;
  readonly http: http.Server;
  readonly port: number;
  /** The server's side of each tagged request: resolves once its response has closed. */
  readonly serverClosed: Map<string, Promise<unknown>>;
}

async function serve(maxListenStreams?: number): Promise<Site> {
  const server = new Server(
    defineServer({
      name: 'listen-quota',
      version: '1.0.0',
      tools: [
        { name: 'echo', description: 'Echoes', inputSchema: { type: 'object' }, handler: () => ({ content: [] }) },
      ],
    }),
    { maxListenStreams },
  );
  const handler = createStreamableHttpHandler(server, {
    keepAliveMs: 0,
    maxListenStreamsPerClient: PER_CLIENT,
    clientKey: (request) => String(request.headers[CLIENT_HEADER]),
  });
  const serverClosed = new Map<string, Promise<unknown>>();
  const site = http.createServer((request, response) => {
    // Resolved after every 'close' listener ran (the quota's included): an emit runs them all before any await resumes.
    serverClosed.set(String(request.headers[TAG_HEADER]), once(response, 'close'));
    handler(request, response);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () => handler.close(),
    () => server.close().then(() => undefined),
    () => new Promise((resolve) => site.close(resolve)),
    () => site.closeAllConnections(),
  );
  return { server, http: site, port: (site.address() as AddressInfo).port, serverClosed };
}

function listenBody(id: string, notifications: unknown = { toolsListChanged: true }): JsonObject {
  return {
    jsonrpc: '2.0',
    id,
    method: 'subscriptions/listen',
    params: { notifications, _meta: ENVELOPE },
  } as JsonObject;
}

/** A listen request as the server answered it: refused (a JSON body), or a stream that stays open. */
interface Listen {
  readonly status: number;
  /** The whole JSON body, or the stream's first event (the acknowledgement). */
  readonly first: JsonObject;
  /** The server's side of the response has closed, and with it the stream's slot. */
  readonly serverClosed: Promise<unknown>;
  /** The client ends the stream by hanging up. */
  hangUp(): void;
}

/** Sends a listen request (tagged with its id) as `client`, on a connection of its own. */
function listen(site: Site, client: string, id: string, notifications?: unknown): Promise<Listen> {
  return within(
    new Promise<Listen>((resolve, reject) => {
      const request = http.request(
        {
          host: '127.0.0.1',
          port: site.port,
          path: '/mcp',
          method: 'POST',
          agent: false,
          headers: {
            accept: 'application/json, text/event-stream',
            'content-type': 'application/json',
            'mcp-protocol-version': MODERN_VERSION,
            'mcp-method': 'subscriptions/listen',
            [CLIENT_HEADER]: client,
            [TAG_HEADER]: id,
          },
        },
        (response) => {
          const streaming = response.headers['content-type']?.startsWith('text/event-stream') === true;
          const parser = new SseParser();
          let text = '';
          let settled = false;
          const settle = (first: JsonObject) => {
            if (settled) return;
            settled = true;
            resolve({
              status: response.statusCode!,
              first,
              serverClosed: site.serverClosed.get(id)!,
              hangUp: () => request.destroy(),
            });
          };
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            if (!streaming) return void (text += chunk);
            const [event] = parser.push(chunk);
            if (event) settle(JSON.parse(event.data));
          });
          response.on('end', () => (streaming ? undefined : settle(JSON.parse(text))));
          response.on('error', () => undefined);
        },
      );
      request.on('error', reject);
      cleanups.push(() => void request.destroy());
      request.end(JSON.stringify(listenBody(id, notifications)));
    }),
    `the answer to listen ${id}`,
  );
}

const ACKNOWLEDGED = 'notifications/subscriptions/acknowledged';

/** Opens `count` streams of `client`, each acknowledged. */
async function fill(site: Site, client: string, prefix: string, count = PER_CLIENT): Promise<Listen[]> {
  const streams = await Promise.all(Array.from({ length: count }, (_, n) => listen(site, client, `${prefix}-${n}`)));
  for (const stream of streams) expect(stream.first.method, 'an open stream').toBe(ACKNOWLEDGED);
  return streams;
}

async function hangUpAll(streams: readonly Listen[]): Promise<void> {
  for (const stream of streams) stream.hangUp();
  await Promise.all(streams.map((stream) => stream.serverClosed));
}

describe('maxListenStreamsPerClient over Streamable HTTP', () => {
  it('answers one more listen of a client at its limit with 429', async () => {
    const site = await serve();
    await fill(site, 'a', 'a');
    const refused = await listen(site, 'a', 'a-over');
    expect(refused.status).toBe(429);
  });

  it("refuses with a JSON-RPC error that echoes the id, with the global cap's code, naming the per-client limit", async () => {
    const site = await serve();
    await fill(site, 'a', 'a');
    const refused = await listen(site, 'a', 'a-over');
    expect(refused.first).toMatchObject({
      jsonrpc: '2.0',
      id: 'a-over',
      error: {
        code: -32603,
        message: expect.stringContaining(`limit ${PER_CLIENT} per client, maxListenStreamsPerClient`),
      },
    });
  });

  it('refuses with an error response the 2026-07-28 schema accepts', async () => {
    const site = await serve();
    await fill(site, 'a', 'a');
    const refused = await listen(site, 'a', 'a-over');
    expect(refused.first.error, 'an error response').toBeDefined();
    expect(modernWireValidator().check('subscriptions/listen', refused.first as never)).toEqual([]);
  });

  it('leaves room for another client when one client asks for every stream of the server', async () => {
    const site = await serve(PER_CLIENT + 1);
    await Promise.all(Array.from({ length: PER_CLIENT + 1 }, (_, n) => listen(site, 'greedy', `g-${n}`)));
    const other = await listen(site, 'b', 'b-0');
    expect(other.first.method).toBe(ACKNOWLEDGED);
  });

  it('frees the slot of a stream whose client hangs up', async () => {
    const site = await serve();
    const [first] = await fill(site, 'a', 'a');
    expect((await listen(site, 'a', 'a-over')).status, 'at the limit').toBe(429);
    await hangUpAll([first!]);
    const again = await listen(site, 'a', 'a-again');
    expect(again.first.method).toBe(ACKNOWLEDGED);
  });

  it('frees every slot when the server closes its streams (each ends with its complete result)', async () => {
    const site = await serve();
    const streams = [...(await fill(site, 'a', 'a')), ...(await fill(site, 'b', 'b'))];
    expect((await listen(site, 'a', 'a-over')).status, 'at the limit').toBe(429);
    await site.server.close();
    await Promise.all(streams.map((stream) => stream.serverClosed));
    const reopened = [...(await fill(site, 'a', 'a2')), ...(await fill(site, 'b', 'b2'))];
    expect(reopened.map((stream) => stream.first.method)).toEqual(Array(2 * PER_CLIENT).fill(ACKNOWLEDGED));
  });

  it('frees the slot of a listen the server refuses itself (a malformed filter): the limit counts the open streams only', async () => {
    const site = await serve();
    await fill(site, 'a', 'a', PER_CLIENT - 1);
    const malformed = await listen(site, 'a', 'a-bad', 'not a filter');
    expect(malformed.first, "the server's own refusal").toMatchObject({ id: 'a-bad', error: { code: -32602 } });
    await malformed.serverClosed;
    await fill(site, 'a', 'a-last', 1);
    expect((await listen(site, 'a', 'a-over')).status).toBe(429);
  });

  it('counts exactly after many open and close cycles, whoever closes: the limit still admits its last stream and refuses one more', async () => {
    const site = await serve();
    for (let cycle = 0; cycle < 12; cycle++) {
      const [first] = await fill(site, 'a', `c${cycle}`, 1);
      await (
        await listen(site, 'a', `c${cycle}-bad`, 'not a filter')
      ).serverClosed;
      const streams = [first!, ...(await fill(site, 'a', `c${cycle}-more`, PER_CLIENT - 1))];
      expect((await listen(site, 'a', `c${cycle}-over`)).status, `cycle ${cycle} at the limit`).toBe(429);
      if (cycle % 3 === 0) for (const stream of streams) stream.hangUp();
      else if (cycle % 3 === 1) await site.server.close();
      else site.http.closeAllConnections();
      await Promise.all(streams.map((stream) => stream.serverClosed));
    }
    await fill(site, 'a', 'final');
    expect((await listen(site, 'a', 'final-over')).status).toBe(429);
  });
});

describe('our client, refused a listen over its limit', () => {
  it("errors the listen with the server's JSON-RPC error (the 429's body), not a transport failure", async () => {
    const site = await serve();
    const client = new Client({ name: 'listen-quota', version: '1' }, { eraCache: new EraCache(), listChanges: 'off' });
    cleanups.push(() => client.close());
    await client.connect(
      new StreamableHttpClientTransport(new URL(`http://127.0.0.1:${site.port}/mcp`), {
        headers: { [CLIENT_HEADER]: 'ours' },
      }),
    );
    await fill(site, 'ours', 'held');
    const refused = await within(
      firstValueFrom(listenWith(client, { toolsListChanged: true })).catch((error: unknown) => error),
      'the refused listen',
    );
    expect(refused).toBeInstanceOf(McpError);
    expect([(refused as McpError).code, (refused as McpError).message]).toEqual([
      -32603,
      expect.stringContaining('maxListenStreamsPerClient'),
    ]);
  });
});

describe('ListenQuota', () => {
  it('holds no slot for a listen whose requester hung up before it was admitted (no close would free it)', async () => {
    const quota = new ListenQuota(1);
    const gone = new Promise<http.ServerResponse>((resolve) => {
      const site = http.createServer(
        (_request, response) => void once(response, 'close').then(() => resolve(response)),
      );
      site.listen(0, '127.0.0.1', () => {
        const request = http.request({ host: '127.0.0.1', port: (site.address() as AddressInfo).port, agent: false });
        request.on('error', () => undefined);
        request.end();
        site.once('request', () => request.destroy());
      });
      cleanups.push(
        () => new Promise((done) => site.close(done)),
        () => site.closeAllConnections(),
      );
    });
    const response = await within(gone, 'the hung-up response');
    expect(quota.admit('a', 1, response), 'admitted: nothing to refuse').toBe(true);
    expect(quota.countOf('a')).toBe(0);
  });
});
