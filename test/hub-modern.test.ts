/**
 * The hub with downstream clients of the stateless revision (2026-07-28), its upstreams in the handshake
 * era: a modern request is served from the hub's catalog like a legacy one; what an upstream asks the
 * caller for (sampling, elicitation) becomes an input_required round for the modern caller, and the retry
 * runs the call again with the answer; the hub's list changes reach a downstream listen stream.
 */
import { describe, expect, it } from 'vitest';
import { Hub } from '../lib/compose/hub';
import type { JsonObject } from '../lib/jsonrpc/types';
import { META } from '../lib/protocol/modern';
import { defineServer } from '../lib/server/definition';
import type { ServerContext } from '../lib/server/context';
import { Server } from '../lib/server/server';
import { createMcpHttpHandler } from '../transports/http/endpoint';
import { cleanups, listenHttp, sseReader } from './helpers/http';
import { validateEveryModernExchange } from './helpers/modern-wire';
import { within } from './helpers/wait';

const VERSION = '2026-07-28';
const ENVELOPE = {
  [META.protocolVersion]: VERSION,
  [META.clientCapabilities]: { elicitation: {}, sampling: {} },
  [META.clientInfo]: { name: 'raw', version: '1' },
};
const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

let upstreamCalls = 0;

function upstreamServer(): Server {
  return new Server(
    defineServer({
      name: 'up',
      version: '1.0.0',
      tools: [
        { name: 'echo', inputSchema: { type: 'object' }, handler: (args) => text(JSON.stringify(args)) },
        {
          name: 'greet',
          description: 'Asks the user for a name through the hub',
          inputSchema: { type: 'object' },
          handler: async (_args, ctx: ServerContext) => {
            upstreamCalls++;
            const answer = await ctx.elicit({
              message: 'Name?',
              requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
            });
            return text(`Hello, ${(answer.content as { name?: string } | undefined)?.name}`);
          },
        },
      ],
    }),
  );
}

async function hubOverHttp() {
  const upstream = upstreamServer();
  const hub = new Hub({ upstreams: [{ name: 'up', source: { kind: 'in-process', server: upstream, direct: false } }] });
  cleanups.push(() => hub.close());
  await hub.start();
  const problems = validateEveryModernExchange(hub.server);
  const handler = createMcpHttpHandler(hub.server);
  cleanups.push(() => handler.close());
  const { origin } = await listenHttp(handler);
  const post = (id: number, method: string, params: JsonObject = {}, signal?: AbortSignal) =>
    fetch(`${origin}/mcp`, {
      method: 'POST',
      signal,
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': VERSION,
        'mcp-method': method,
        ...(typeof params.name === 'string' && { 'mcp-name': params.name }),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: ENVELOPE } }),
    });
  const call = async (id: number, method: string, params: JsonObject = {}) =>
    (await (await post(id, method, params)).json()) as any;
  return { hub, upstream, problems, post, call };
}

describe('a modern downstream client of the hub', () => {
  it('lists and calls the upstream tools without a session', async () => {
    const { call, problems } = await hubOverHttp();
    const listed = await call(1, 'tools/list');
    expect(listed.result.tools.map((tool: { name: string }) => tool.name).sort()).toEqual(['echo', 'greet']);
    expect(listed.result).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
    const echoed = await call(2, 'tools/call', { name: 'echo', arguments: { n: 1 } });
    expect(echoed.result).toEqual({ ...text('{"n":1}'), resultType: 'complete' });
    expect(problems).toEqual([]);
  });

  it('gets an upstream’s elicitation as an input_required round, and the retry completes the call', async () => {
    const { call, problems } = await hubOverHttp();
    upstreamCalls = 0;
    const first = await call(1, 'tools/call', { name: 'greet', arguments: {} });
    const round = first.result;
    expect(first.error).toBeUndefined();
    expect(round.resultType).toBe('input_required');
    const [key, request] = Object.entries(round.inputRequests)[0] as [string, any];
    expect(request).toMatchObject({ method: 'elicitation/create', params: { message: 'Name?' } });
    const done = await call(2, 'tools/call', {
      name: 'greet',
      arguments: {},
      inputResponses: { [key]: { action: 'accept', content: { name: 'Ada' } } },
      requestState: round.requestState,
    });
    expect(done.result).toEqual({ ...text('Hello, Ada'), resultType: 'complete' });
    // The round ended the first run of the forwarded call; the retry ran it again.
    expect(upstreamCalls).toBe(2);
    expect(problems).toEqual([]);
  });

  it('hears the hub’s list changes on a listen stream', async () => {
    const { post, upstream, problems } = await hubOverHttp();
    const response = await post(7, 'subscriptions/listen', { notifications: { toolsListChanged: true } });
    const reader = sseReader(response);
    cleanups.push(() => reader.cancel());
    const ack = JSON.parse((await reader.next())!.data);
    expect(ack).toMatchObject({ method: 'notifications/subscriptions/acknowledged' });
    upstream.update((definition) => definition.withoutTools('echo'));
    const changed = JSON.parse((await within(reader.next(), 'the list change'))!.data);
    expect(changed).toMatchObject({
      method: 'notifications/tools/list_changed',
      params: { _meta: { [META.subscriptionId]: 7 } },
    });
    expect(problems).toEqual([]);
  });
});
