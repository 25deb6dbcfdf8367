/**
 * The hub speaks for itself on both sides. Each request it forwards carries the envelope of the hub's own
 * client for that upstream (its client info, its capabilities, the log level its rules chose; nothing in a
 * handshake-era session), never the caller's reserved `_meta` keys; a caller's other `_meta` keys pass. What
 * an upstream stamps about itself in a result's `_meta` (its serverInfo) does not reach the caller as the
 * hub's (a stateless caller learns the hub's from `server/discover`). Every mix of eras: handshake-era and stateless
 * callers, handshake-era and stateless upstreams (ours in process over a memory connection, the official SDK
 * v1 server in memory, the SDK v2 server over Streamable HTTP); each upstream records what it received
 * from its own handler.
 */
import { describe, expect, it } from 'vitest';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server as SdkV1Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client } from '../../lib/client/client';
import type { EraChoice } from '../../lib/client/era-choice';
import { isReservedMetaKey } from '../../lib/compose/forwarded-meta';
import { Hub } from '../../lib/compose/hub';
import type { UpstreamSource } from '../../lib/compose/sources';
import type { JsonObject } from '../../lib/jsonrpc/types';
import { META } from '../../lib/protocol/modern';
import type { ServerContext } from '../../lib/server/context';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { createMemoryPair } from '../../transports/memory';
import { fromSdkTransport } from '../../transports/sdk-adapter';
import { cleanups } from '../helpers/cleanups';
import { text } from '../helpers/content';
import { serveFetchHandler } from '../helpers/fetch-server';
import { validateEmitted } from '../helpers/pair';

const MODERN = '2026-07-28';
const HUB_INFO = { name: 'the-hub', version: '9.9.9' };
const CALLER_INFO = { name: 'the-caller', version: '1.2.3' };
/** What an upstream says about itself in its results, as the SDK v2 server does on every one. */
const UPSTREAM_INFO = { name: 'the-upstream', version: '3.0.0' };
/** A caller key that is not reserved: it passes the hub both ways. */
const NOTE = 'com.example/note';

const reservedKeys = (meta: object | undefined) => Object.keys(meta ?? {}).filter(isReservedMetaKey);

/** Our server, recording the `_meta` of each request its handlers run, and stamping itself on each result. */
function recordingUpstream(seen: JsonObject[]): Server {
  const answer = (context: ServerContext) => {
    seen.push({ ...context._meta });
    return { [META.serverInfo]: UPSTREAM_INFO, [META.protocolVersion]: MODERN, [NOTE]: 'from the upstream' };
  };
  return new Server(
    defineServer({
      name: UPSTREAM_INFO.name,
      version: UPSTREAM_INFO.version,
      tools: [
        {
          name: 'record',
          inputSchema: { type: 'object' },
          handler: (_args, context) => ({ ...text('recorded'), _meta: answer(context) }),
        },
      ],
      resources: [
        {
          uri: 'note://one',
          name: 'one',
          read: (context) => ({ contents: [{ uri: 'note://one', text: 'one' }], _meta: answer(context) }),
        },
      ],
    }),
  );
}

async function startHub(source: UpstreamSource, era: EraChoice) {
  const hub = new Hub({ ...HUB_INFO, upstreams: [{ name: 'up', source, era }] });
  cleanups.push(() => hub.close());
  await hub.start();
  expect(hub.status()[0]).toMatchObject({ state: 'ready' });
  return hub;
}

/** A caller of the hub in `era`, declaring roots (the hub declares none upstream) and asking for `error` logs. */
async function caller(hub: Hub, era: 'handshake' | 'modern'): Promise<Client> {
  const [clientSide, hubSide] = createMemoryPair();
  validateEmitted(hub.connect(hubSide));
  const client = new Client(CALLER_INFO, { era, roots: [{ uri: 'file:///caller', name: 'caller' }] });
  validateEmitted(client);
  cleanups.push(() => client.close());
  await client.connect(clientSide);
  expect(client.connectedEra).toBe(era);
  // Who it talks to: the hub (from `initialize`, or from `server/discover`'s result `_meta`), never an upstream.
  expect(client.serverInfo).toMatchObject(HUB_INFO);
  await client.setLoggingLevel('error');
  return client;
}

/** A call with a `_meta` of the caller's own: a note, and reserved keys a confused caller made up. */
const callRecord = (client: Client) =>
  client.request('tools/call', {
    name: 'record',
    arguments: {},
    _meta: { [NOTE]: 'from the caller', [META.clientInfo]: CALLER_INFO, 'dev.mcp/made-up': true },
  });

/** What the caller's result carries in `_meta`: the upstream's note, nothing it said about itself. */
function expectRelayedMeta(meta: unknown): void {
  expect(meta).toEqual({ [NOTE]: 'from the upstream' });
}

const ERAS = ['handshake', 'modern'] as const;

describe.each(ERAS)('a %s caller of the hub', (callerEra) => {
  it('a stateless upstream gets the envelope of the hub’s client for it, never the caller’s', async () => {
    const seen: JsonObject[] = [];
    const hub = await startHub({ kind: 'in-process', server: recordingUpstream(seen), direct: false }, 'modern');
    const client = await caller(hub, callerEra);
    const result = await callRecord(client);
    const upstreamClient = hub.upstream('up')!.client!;
    expect(upstreamClient.connectedEra).toBe('modern');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toEqual({
      [META.protocolVersion]: MODERN,
      [META.clientInfo]: HUB_INFO,
      [META.clientCapabilities]: upstreamClient.capabilities,
      // The hub's rule: the most verbose level of its clients (`error` from this one; `info` for a stateless
      // caller, which has no session to set one on, the hub's default).
      [META.logLevel]: callerEra === 'handshake' ? 'error' : 'info',
      [NOTE]: 'from the caller',
    });
    expect(upstreamClient.capabilities.roots).toBeUndefined();
    expectRelayedMeta(result._meta);
  });

  it('a handshake-era upstream gets no reserved _meta key at all', async () => {
    const seen: JsonObject[] = [];
    const hub = await startHub({ kind: 'in-process', server: recordingUpstream(seen), direct: false }, 'handshake');
    const client = await caller(hub, callerEra);
    const result = await callRecord(client);
    expect(hub.upstream('up')!.client!.connectedEra).toBe('handshake');
    expect(seen).toEqual([{ [NOTE]: 'from the caller' }]);
    expectRelayedMeta(result._meta);
  });

  it('an in-process upstream called directly runs in the caller’s request, and its result loses what it says of itself', async () => {
    const seen: JsonObject[] = [];
    const hub = await startHub({ kind: 'in-process', server: recordingUpstream(seen) }, 'auto');
    const client = await caller(hub, callerEra);
    const result = await callRecord(client);
    // Its handler is given the downstream request itself (sources.ts, `direct`): no hop, no envelope of its own.
    expect(seen[0]![NOTE]).toBe('from the caller');
    expectRelayedMeta(result._meta);
  });

  it('resources/read: the same rules both ways, with a progress token of the hub’s own', async () => {
    const seen: JsonObject[] = [];
    const hub = await startHub({ kind: 'in-process', server: recordingUpstream(seen), direct: false }, 'handshake');
    const client = await caller(hub, callerEra);
    const result = await client.request('resources/read', {
      uri: 'note://one',
      _meta: { progressToken: 'caller-token', [NOTE]: 'from the caller' },
    });
    expect(seen).toHaveLength(1);
    expect(reservedKeys(seen[0])).toEqual([]);
    expect(seen[0]![NOTE]).toBe('from the caller');
    // The upstream request's own token, not the caller's.
    expect(seen[0]!.progressToken).toBeDefined();
    expect(seen[0]!.progressToken).not.toBe('caller-token');
    expectRelayedMeta(result._meta);
  });

  it('the official SDK v1 server (handshake era) gets no reserved _meta key', async () => {
    const seen: JsonObject[] = [];
    const sdk = new SdkV1Server(UPSTREAM_INFO, { capabilities: { tools: {} } });
    sdk.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [{ name: 'record', inputSchema: { type: 'object' as const } }],
    }));
    sdk.setRequestHandler(CallToolRequestSchema, (request) => {
      seen.push({ ...request.params._meta });
      return { ...text('recorded'), _meta: { [META.serverInfo]: UPSTREAM_INFO, [NOTE]: 'from the upstream' } };
    });
    cleanups.push(() => sdk.close());
    const open = async () => {
      const [ours, theirs] = InMemoryTransport.createLinkedPair();
      await sdk.connect(theirs);
      return fromSdkTransport(ours);
    };
    const hub = await startHub({ kind: 'transport', open }, 'handshake');
    const client = await caller(hub, callerEra);
    const result = await callRecord(client);
    expect(seen).toEqual([{ [NOTE]: 'from the caller' }]);
    expectRelayedMeta(result._meta);
  });

  it('the official SDK v2 server (2026-07-28 over HTTP) sees the hub’s client, and its serverInfo stays with the hub', async () => {
    const envelopes: unknown[] = [];
    const handler = createMcpHandler(() => {
      const server = new McpServer(UPSTREAM_INFO, { capabilities: { tools: {} } });
      server.registerTool('record', { description: 'Records its envelope' }, async (context) => {
        envelopes.push({ envelope: context.mcpReq.envelope, meta: context.mcpReq._meta });
        return text('recorded');
      });
      return server;
    });
    const url = await serveFetchHandler(handler);
    const hub = await startHub({ kind: 'http', url }, 'auto');
    expect(hub.status()[0]).toMatchObject({ protocolVersion: MODERN, serverInfo: UPSTREAM_INFO });
    const client = await caller(hub, callerEra);
    const result = await callRecord(client);
    expect(envelopes).toEqual([
      {
        envelope: {
          [META.protocolVersion]: MODERN,
          [META.clientInfo]: HUB_INFO,
          [META.clientCapabilities]: hub.upstream('up')!.client!.capabilities,
          // No log level: it declares no logging, so the hub asks it for no logs.
        },
        meta: { [NOTE]: 'from the caller' },
      },
    ]);
    // The SDK stamps its serverInfo on every 2026-07-28 result: it stays with the hub.
    expect(result._meta).toBeUndefined();
  });
});

/** An upstream whose tool asks the caller for a completion and a form, each with a `_meta` of its own. */
function askingUpstream(): Server {
  const upstreamMeta = {
    [NOTE]: 'from the upstream',
    progressToken: 'upstream-token',
    'io.modelcontextprotocol/related-task': { taskId: 'upstream-task' },
  };
  return new Server(
    defineServer({
      name: UPSTREAM_INFO.name,
      version: UPSTREAM_INFO.version,
      tools: [
        {
          name: 'ask',
          inputSchema: { type: 'object' },
          handler: async (_args, context) => {
            const sampled = await context.createMessage({
              messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
              maxTokens: 5,
              _meta: upstreamMeta,
            });
            const elicited = await context.elicit({
              mode: 'form',
              message: 'name?',
              requestedSchema: { type: 'object', properties: { name: { type: 'string' } } },
              _meta: upstreamMeta,
            });
            return text(`${sampled.model} ${elicited.action}`);
          },
        },
      ],
    }),
  );
}

describe.each(ERAS)('a %s caller asked for input through the hub', (callerEra) => {
  it.each(['handshake', 'modern'] as const)(
    'by a %s upstream gets the upstream’s own _meta keys, never what it says of its hop',
    async (upstreamEra) => {
      const hub = await startHub({ kind: 'in-process', server: askingUpstream(), direct: false }, upstreamEra);
      const [clientSide, hubSide] = createMemoryPair();
      validateEmitted(hub.connect(hubSide));
      const received: unknown[] = [];
      const client = new Client(CALLER_INFO, {
        era: callerEra,
        sampling: (params) => {
          received.push(params._meta);
          return { role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'm' };
        },
        elicitation: {
          form: (params) => {
            received.push(params._meta);
            return { action: 'accept', content: { name: 'x' } };
          },
        },
      });
      validateEmitted(client);
      cleanups.push(() => client.close());
      await client.connect(clientSide);
      expect(hub.upstream('up')!.client!.connectedEra).toBe(upstreamEra);
      const result = await client.request('tools/call', { name: 'ask', arguments: {} });
      expect(result.content).toEqual(text('m accept').content);
      expect(received).toHaveLength(2);
      for (const meta of received) {
        expect(reservedKeys(meta as object)).toEqual([]);
        expect(meta).toMatchObject({ [NOTE]: 'from the upstream' });
        expect((meta as { progressToken?: unknown }).progressToken).not.toBe('upstream-token');
      }
    },
  );
});

describe('the _meta keys MCP reserves', () => {
  it('are those whose prefix has `modelcontextprotocol` or `mcp` for its second label (the schema’s examples)', () => {
    const reserved = [
      'io.modelcontextprotocol/clientInfo',
      'dev.mcp/x',
      'org.modelcontextprotocol.api/x',
      'com.mcp.tools/x',
    ];
    const free = ['com.example.mcp/x', 'mcp/x', 'progressToken', 'traceparent', 'a.b/mcp.x'];
    expect(reserved.filter(isReservedMetaKey)).toEqual(reserved);
    expect(free.filter(isReservedMetaKey)).toEqual([]);
  });
});
