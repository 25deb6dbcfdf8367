/**
 * The Streamable HTTP client renewing a session the server forgot (404), beyond the single call of
 * `streamable-client.test.ts`: several calls meeting the 404 at once renew the session once and are all
 * answered on the new one, a notification meeting the 404 goes again on the new session (our Client and
 * Server over real `node:http` on 127.0.0.1, with JSON and SSE answers), and the replayed `initialize`'s
 * answer stream, dropped before the answer, is resumed on the new session (a scripted server). Sessions
 * exist in the handshake era only (the 2026-07-28 revision has none to renew), so the client connects with
 * `era: 'handshake'`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { HttpAuthorization } from '../../../lib/auth/http-authorization';
import { Client } from '../../../lib/client/client';
import { Server } from '../../../lib/server/server';
import { createStreamableHttpHandler, type ResponseMode } from '../../../transports/http/streamable-server';
import {
  StreamableHttpClientTransport,
  type HttpClientEvent,
  type StreamableHttpClientOptions,
} from '../../../transports/http/streamable-client';
import { serverWith, tool } from '../../helpers/fixtures';
import { json, textOf } from '../../helpers/content';
import { cleanups, listenHttp, within } from '../../helpers/http';

const definition = serverWith([tool('echo', json)]);

/** Our Client connected to our Server over Streamable HTTP, without the standalone stream (only POSTs meet the 404). */
async function connectedPair(responseMode: ResponseMode) {
  const handler = createStreamableHttpHandler(new Server(definition), { responseMode });
  const site = await listenHttp(handler);
  cleanups.push(() => handler.close());
  const url = `${site.origin}/mcp`;
  const transport = new StreamableHttpClientTransport(url, { standaloneStream: false });
  const events: HttpClientEvent[] = [];
  transport.events.subscribe((event) => events.push(event));
  const client = new Client({ name: 'renewal-test', version: '1.0.0' }, { era: 'handshake', roots: [] });
  cleanups.push(() => client.close());
  await client.connect(transport, { timeout: 5000 });
  /** Ends the session on the server behind the client's back; the requests the server saw from then on. */
  const forget = async () => {
    const session = transport.sessionId!;
    const status = (await fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': session } })).status;
    expect(status).toBe(204);
    const from = site.seen.length;
    return { session, seenSince: () => site.seen.slice(from) };
  };
  return { handler, transport, events, client, forget };
}

describe.each(['json', 'sse'] as const)('renewing a forgotten session, %s answers', (responseMode) => {
  it('renews once when several calls meet the 404 together, and answers every call on the new session', async () => {
    const { handler, transport, events, client, forget } = await connectedPair(responseMode);
    const { session, seenSince } = await forget();
    const calls = Array.from({ length: 5 }, (_, n) => client.callTool('echo', { n }));
    const answers = (await Promise.all(calls)).map((result) => JSON.parse(textOf(result)));
    expect(answers).toEqual([0, 1, 2, 3, 4].map((n) => ({ n })));
    expect(events).toEqual([{ type: 'session-renewed', previousSessionId: session, sessionId: transport.sessionId }]);
    expect(handler.sessionCount).toBe(1);
    const initializes = seenSince().filter((seen) => seen.method === 'POST' && !seen.headers['mcp-session-id']);
    expect(initializes).toHaveLength(1);
  });

  it('sends a notification that met the 404 again on the new session', async () => {
    const { transport, events, client, forget } = await connectedPair(responseMode);
    const { session, seenSince } = await forget();
    await client.setRoots([{ uri: 'file:///renewed', name: 'renewed' }]);
    expect(events).toEqual([{ type: 'session-renewed', previousSessionId: session, sessionId: transport.sessionId }]);
    // The notification on the old session (404), the replayed initialize on none, notifications/initialized
    // and the notification again on the new one.
    const posts = seenSince().filter((seen) => seen.method === 'POST');
    expect(posts.map((seen) => seen.headers['mcp-session-id'])).toEqual([
      session,
      undefined,
      transport.sessionId,
      transport.sessionId,
    ]);
  });
});

/** Reads a request body as JSON. */
async function bodyOf(request: IncomingMessage): Promise<{ id?: string | number; method?: string }> {
  let text = '';
  for await (const chunk of request) text += chunk;
  return JSON.parse(text);
}

const INITIALIZE_RESULT = {
  protocolVersion: '2025-11-25',
  capabilities: { tools: {} },
  serverInfo: { name: 'scripted', version: '1.0.0' },
};

/**
 * A scripted Streamable HTTP server: the first `initialize` opens session `s1`, forgotten at its first
 * request (404); the replayed `initialize` opens `s2`. `dropReplay`: the replayed `initialize`'s answer
 * stream sends one event (an id, no data) and drops; the answer comes on the stream resumed with GET +
 * `Last-Event-ID` on `s2`. `expiredToken`: a request carrying that bearer token gets 401 first.
 */
async function forgetfulServer(script: { dropReplay?: boolean; expiredToken?: string }) {
  const resumptions: { session?: string; lastEventId?: string }[] = [];
  let initializes = 0;
  let forgotten = false;
  const site = await listenHttp(async (request: IncomingMessage, response: ServerResponse) => {
    const session = request.headers['mcp-session-id'] as string | undefined;
    if (request.method === 'GET') {
      resumptions.push({ session, lastEventId: request.headers['last-event-id'] as string | undefined });
      const answer = { jsonrpc: '2.0', id: 'switchboard-renewal-1', result: INITIALIZE_RESULT };
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      return response.end(`id: e2\ndata: ${JSON.stringify(answer)}\n\n`);
    }
    if (request.method !== 'POST') return response.writeHead(405).end();
    const message = await bodyOf(request);
    if (message.method === 'initialize' && ++initializes === 1) {
      const answer = { jsonrpc: '2.0', id: message.id, result: INITIALIZE_RESULT };
      return response
        .writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's1' })
        .end(JSON.stringify(answer));
    }
    if (message.method === 'initialize' && !script.dropReplay) {
      const answer = { jsonrpc: '2.0', id: message.id, result: INITIALIZE_RESULT };
      return response
        .writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 's2' })
        .end(JSON.stringify(answer));
    }
    if (message.method === 'initialize') {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's2' });
      response.write('id: e1\nretry: 10\ndata: \n\n');
      return setTimeout(() => response.socket?.destroy(), 20);
    }
    if (script.expiredToken !== undefined && request.headers.authorization === `Bearer ${script.expiredToken}`) {
      return response.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end();
    }
    if (session === 's1' && message.id !== undefined) forgotten = true;
    if (session !== 's2' && (session !== 's1' || forgotten)) return response.writeHead(404).end();
    if (message.id === undefined) return response.writeHead(202).end();
    const answer = { jsonrpc: '2.0', id: message.id, result: { content: [] } };
    return response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  });
  return { url: `${site.origin}/mcp`, resumptions };
}

/** A transport through the handshake with `forgetfulServer` (on `s1`), recording its events and inbound frames. */
async function openedTransport(url: string, options: StreamableHttpClientOptions = {}) {
  const transport = new StreamableHttpClientTransport(url, { standaloneStream: false, fallback: false, ...options });
  cleanups.push(() => transport.close());
  const events: HttpClientEvent[] = [];
  transport.events.subscribe((event) => events.push(event));
  const inbound: unknown[] = [];
  transport.messages.subscribe((frame) => inbound.push(frame));
  const clientInfo = { name: 'renewal-test', version: '1.0.0' };
  const params = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo };
  await transport.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params });
  transport.setProtocolVersion('2025-11-25');
  await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  /** Sends a `tools/call` with id 2 and waits (bounded) for its exchange to settle. */
  const call = () =>
    within(transport.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo' } }), 'the call');
  return { transport, events, inbound, call };
}

describe('a 404 after the authorization was renewed', () => {
  it('renews the session too: the call that met both is answered on the new session', async () => {
    const { url } = await forgetfulServer({ expiredToken: 'token-1' });
    let token = 0;
    const authorization: HttpAuthorization = {
      authorization: () => `Bearer token-${token}`,
      refused: async () => (token++, true),
    };
    const { events, inbound, call } = await openedTransport(url, { authorization });
    token = 1; // expires at the next request
    await call();
    expect(token).toBe(2);
    expect(events).toEqual([{ type: 'session-renewed', previousSessionId: 's1', sessionId: 's2' }]);
    expect(inbound.map((frame) => (frame as { id: unknown }).id)).toEqual([1, 2]);
  });
});

describe('a renewal whose answer stream drops', () => {
  it('resumes the replayed initialize on the new session, and the call that met the 404 is answered there', async () => {
    const { url, resumptions } = await forgetfulServer({ dropReplay: true });
    const { events, inbound, call } = await openedTransport(url);
    await call();
    expect(resumptions).toEqual([{ session: 's2', lastEventId: 'e1' }]);
    expect(events).toEqual([
      { type: 'reconnecting', stream: 'request', attempt: 1, delayMs: 10, lastEventId: 'e1' },
      { type: 'session-renewed', previousSessionId: 's1', sessionId: 's2' },
    ]);
    expect(inbound.map((frame) => (frame as { id: unknown }).id)).toEqual([1, 2]);
  });
});
