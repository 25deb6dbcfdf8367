/**
 * The hub and the stateless revision (2026-07-28), both ways. Modern downstream clients with a handshake-era
 * upstream: a modern request is served from the hub's catalog like a handshake-era one; what the upstream asks the
 * caller for (sampling, elicitation) becomes an input_required round for the modern caller, and the retry
 * runs the call again with the answer; the hub's list changes reach a downstream listen stream. A modern
 * upstream (probed over HTTP) with a handshake-era downstream client: its input_required rounds become
 * requests to the caller, its list changes arrive on a listen stream, its log messages come at the level
 * the downstream client asked for.
 */
import { describe, expect, it } from 'vitest';
import { firstValueFrom, filter } from 'rxjs';
import { Client } from '../../lib/client/client';
import type { LoggingMessageParams } from '../../lib/protocol/types';
import { createMemoryPair } from '../../transports/memory';
import { Hub } from '../../lib/compose/hub';
import type { JsonObject } from '../../lib/jsonrpc/types';
import { META } from '../../lib/protocol/modern';
import { defineServer } from '../../lib/server/definition';
import type { ServerContext } from '../../lib/server/context';
import { Server } from '../../lib/server/server';
import { createMcpHttpHandler } from '../../transports/http/endpoint';
import { cleanups, listenHttp, sseReader } from '../helpers/http';
import { validateEveryModernExchange } from '../helpers/modern-wire';
import { within } from '../helpers/wait';
import { mirroredHeaders, postModern } from '../helpers/modern-http';
import { askName } from '../helpers/fixtures';
import { text } from '../helpers/content';

const VERSION = '2026-07-28';
const ENVELOPE = {
  [META.protocolVersion]: VERSION,
  [META.clientCapabilities]: { elicitation: {}, sampling: {} },
  [META.clientInfo]: { name: 'raw', version: '1' },
};
/** A complete stateless result of the hub: the upstream's answer, with the hub's own identity in `_meta`. */
const fromHub = (hub: Hub, value: object) => ({
  ...value,
  resultType: 'complete',
  _meta: { [META.serverInfo]: { name: hub.server.definition.info.name, version: hub.server.definition.info.version } },
});

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
    postModern(
      `${origin}/mcp`,
      { jsonrpc: '2.0', id, method, params: { ...params, _meta: ENVELOPE } },
      mirroredHeaders(method, params),
      signal,
    );
  const call = async (id: number, method: string, params: JsonObject = {}) =>
    (await (await post(id, method, params)).json()) as any;
  return { hub, upstream, problems, post, call };
}

describe('a modern downstream client of the hub', () => {
  it('lists and calls the upstream tools without a session', async () => {
    const { call, problems, hub } = await hubOverHttp();
    const listed = await call(1, 'tools/list');
    expect(listed.result.tools.map((tool: { name: string }) => tool.name).sort()).toEqual(['echo', 'greet']);
    expect(listed.result).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
    const echoed = await call(2, 'tools/call', { name: 'echo', arguments: { n: 1 } });
    expect(echoed.result).toEqual(fromHub(hub, text('{"n":1}')));
    expect(problems).toEqual([]);
  });

  it('gets an upstream’s elicitation as an input_required round, and the retry completes the call', async () => {
    const { call, problems, hub } = await hubOverHttp();
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
    expect(done.result).toEqual(fromHub(hub, text('Hello, Ada')));
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

/** Our server over HTTP (probed by the hub: it speaks 2026-07-28), and a hub with it as its only upstream. */
async function hubOverModernUpstream() {
  const upstream = new Server(
    defineServer({
      name: 'modern-up',
      version: '1.0.0',
      tools: [
        {
          name: 'greet',
          inputSchema: { type: 'object' },
          handler: async (_args, ctx: ServerContext) => {
            return text(`Hello, ${(await askName(ctx)).name}`);
          },
        },
        {
          name: 'chatter',
          inputSchema: { type: 'object' },
          handler: async (_args, ctx: ServerContext) => {
            await ctx.log('info', 'an info line');
            await ctx.log('error', 'an error line');
            return text('logged');
          },
        },
      ],
    }),
  );
  const problems = validateEveryModernExchange(upstream);
  const handler = createMcpHttpHandler(upstream);
  cleanups.push(() => handler.close());
  const { origin } = await listenHttp(handler);
  const hub = new Hub({ upstreams: [{ name: 'up', source: { kind: 'http', url: `${origin}/mcp` } }] });
  cleanups.push(() => hub.close());
  await hub.start();
  const [clientSide, hubSide] = createMemoryPair();
  hub.connect(hubSide);
  const client = new Client(
    { name: 'handshake-downstream', version: '1' },
    { elicitation: { form: async () => ({ action: 'accept', content: { name: 'Grace' } }) } },
  );
  cleanups.push(() => client.close());
  await client.connect(clientSide);
  return { hub, upstream, client, problems };
}

describe('a modern upstream behind the hub, a handshake-era downstream client', () => {
  it('is probed and spoken to in 2026-07-28', async () => {
    const { hub, client } = await hubOverModernUpstream();
    expect(hub.status()[0]).toMatchObject({ name: 'up', protocolVersion: '2026-07-28' });
    expect(client.connectedEra).toBe('handshake');
  });

  it('turns the upstream’s input_required round into an elicitation request to the caller', async () => {
    const { client, problems } = await hubOverModernUpstream();
    expect(await client.callTool('greet', {})).toEqual(text('Hello, Grace'));
    expect(problems).toEqual([]);
  });

  it('passes the upstream’s list changes (heard on its listen stream) downstream', async () => {
    const { upstream, client } = await hubOverModernUpstream();
    const changed = firstValueFrom(
      client.notifications$.pipe(filter((message) => message.method === 'notifications/tools/list_changed')),
    );
    upstream.update((definition) => definition.withoutTools('chatter'));
    await within(changed, 'the list change downstream');
    expect((await client.listTools()).map((tool) => tool.name)).toEqual(['greet']);
  });

  it('gets the upstream’s log messages at the level the downstream client asked for', async () => {
    const { client } = await hubOverModernUpstream();
    const logs: LoggingMessageParams[] = [];
    client.logs$.subscribe({ next: (log) => logs.push(log), error: () => undefined });
    await client.setLoggingLevel('error');
    const first = firstValueFrom(client.logs$);
    expect(await client.callTool('chatter', {})).toEqual(text('logged'));
    await within(first, 'the error line');
    expect(logs.map((log) => log.data)).toEqual(['an error line']);
  });
});

describe('2026-07-28 on both sides of the hub', () => {
  it('carries an upstream’s input_required round to a modern caller as the hub’s own round, and completes on the retry', async () => {
    const { hub, problems } = await hubOverModernUpstream();
    const downstreamProblems = validateEveryModernExchange(hub.server);
    const handler = createMcpHttpHandler(hub.server);
    cleanups.push(() => handler.close());
    const { origin } = await listenHttp(handler);
    const call = async (id: number, params: JsonObject) =>
      (await (
        await postModern(
          `${origin}/mcp`,
          { jsonrpc: '2.0', id, method: 'tools/call', params: { ...params, _meta: ENVELOPE } },
          mirroredHeaders('tools/call', params),
        )
      ).json()) as any;
    const round = (await call(1, { name: 'greet', arguments: {} })).result;
    expect(round.resultType).toBe('input_required');
    const [key, request] = Object.entries(round.inputRequests)[0] as [string, any];
    expect(request).toMatchObject({ method: 'elicitation/create', params: { message: 'Name?' } });
    const done = await call(2, {
      name: 'greet',
      arguments: {},
      inputResponses: { [key]: { action: 'accept', content: { name: 'Lin' } } },
      requestState: round.requestState,
    });
    expect(done.result).toEqual(fromHub(hub, text('Hello, Lin')));
    expect(problems).toEqual([]);
    expect(downstreamProblems).toEqual([]);
  });
});
