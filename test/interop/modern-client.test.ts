/**
 * Our client against real peers of both eras, with the era probe on (`era: 'auto'`, the default):
 * - the official SDK v2 `McpServer` (2.4.0) served over HTTP by `createMcpHandler`: the probe finds it
 *   modern; calls carry the `_meta` envelope and the 2026-07-28 headers, on no session;
 * - `@modelcontextprotocol/server-everything` over stdio (handshake era only): the probe is refused, the
 *   client falls back to `initialize`, and the verdict is cached so the next client does not probe.
 * Everything our client emits is validated against its era's official schema.
 */
import { createMcpHandler, fromJsonSchema, McpServer } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { EraCache } from '../../lib/client/era-cache';
import type { JsonRpcBatch, JsonRpcMessage } from '../../lib/jsonrpc/types';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { StdioClientTransport } from '../../transports/stdio';
import { cleanups } from '../helpers/cleanups';
import { serveFetchHandler, type ArrivedRequest } from '../helpers/fetch-server';
import { recordEmittedEitherEra } from '../helpers/schema-modern';

type Seen = ArrivedRequest;

/** The SDK v2 server: one `echo` tool whose `region` parameter is mirrored in `Mcp-Param-Region`. */
function sdkServer(): McpServer {
  const server = new McpServer({ name: 'sdk-v2-server', version: '2.4.0' }, { capabilities: { tools: {} } });
  server.registerTool(
    'echo',
    {
      description: 'Echoes the message',
      inputSchema: fromJsonSchema<{ message: string; region?: string }>({
        type: 'object',
        properties: { message: { type: 'string' }, region: { type: 'string', 'x-mcp-header': 'Region' } },
        required: ['message'],
      } as Parameters<typeof fromJsonSchema>[0]),
    },
    async ({ message }) => ({ content: [{ type: 'text', text: `echo: ${message}` }] }),
  );
  return server;
}

/** `createMcpHandler` (fetch-shaped) behind a node:http server on 127.0.0.1, recording every request. */
async function serveSdk(): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const url = await serveFetchHandler(
    createMcpHandler(() => sdkServer()),
    (request) => seen.push(request),
  );
  return { url, seen };
}

async function connectOver<T extends StreamableHttpClientTransport | StdioClientTransport>(
  transport: T,
  eraCache: EraCache,
) {
  const client = new Client({ name: 'switchboard-modern', version: '1.0.0' }, { eraCache });
  const emitted = recordEmittedEitherEra(client);
  cleanups.push(() => client.close());
  await client.connect(transport, { timeout: 10_000 });
  return { client, emitted };
}

const bodyOf = (seen: Seen) => JSON.parse(seen.body) as { method: string; params?: Record<string, any> };

describe('our client against the SDK v2 McpServer over Streamable HTTP (createMcpHandler)', () => {
  async function modernSession() {
    const site = await serveSdk();
    const { client, emitted } = await connectOver(new StreamableHttpClientTransport(site.url), new EraCache());
    return { site, client, emitted };
  }

  it('the probe finds the server modern', async () => {
    const { client } = await modernSession();
    expect(client.connectedEra).toBe('modern');
  });

  it('adopts the discovery result: the server info and capabilities', async () => {
    const { client } = await modernSession();
    expect(client.serverInfo).toMatchObject({ name: 'sdk-v2-server' });
    expect(client.serverCapabilities?.tools).toBeDefined();
  });

  it('lists and calls a tool', async () => {
    const { client } = await modernSession();
    expect((await client.listTools()).map((tool) => tool.name)).toEqual(['echo']);
    const result = await client.callTool('echo', { message: 'hi', region: 'eu-west' });
    expect(result.content).toEqual([{ type: 'text', text: 'echo: hi' }]);
  });

  it('sends no initialize, on no session: POSTs only', async () => {
    const { site, client } = await modernSession();
    // A subscriber of notifications$ opens the list-change stream (the SDK server declares tools.listChanged).
    client.notifications$.subscribe({ error: () => undefined });
    await client.listTools();
    expect(site.seen.map((seen) => `${seen.method} ${bodyOf(seen).method}`).sort()).toEqual([
      'POST server/discover',
      'POST subscriptions/listen',
      'POST tools/list',
    ]);
    expect(site.seen.every((seen) => seen.headers['mcp-session-id'] === undefined)).toBe(true);
  });

  it('puts the envelope in every request and the version in its header', async () => {
    const { site, client } = await modernSession();
    await client.listTools();
    for (const seen of site.seen) {
      expect(bodyOf(seen).params?._meta).toMatchObject({
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'switchboard-modern' },
      });
      expect(seen.headers['mcp-protocol-version']).toBe('2026-07-28');
    }
  });

  it('sends Mcp-Method, Mcp-Name and the designated Mcp-Param header with a tools/call', async () => {
    const { site, client } = await modernSession();
    await client.listTools();
    await client.callTool('echo', { message: 'hi', region: 'eu-west' });
    expect(site.seen.at(-1)!.headers).toMatchObject({
      'mcp-method': 'tools/call',
      'mcp-name': 'echo',
      'mcp-param-region': 'eu-west',
    });
  });

  it('sends its log level in the envelope rather than logging/setLevel', async () => {
    const { site, client } = await modernSession();
    await client.setLoggingLevel('warning');
    await client.listTools();
    expect(site.seen.map((seen) => bodyOf(seen).method)).not.toContain('logging/setLevel');
    expect(bodyOf(site.seen.at(-1)!).params?._meta['io.modelcontextprotocol/logLevel']).toBe('warning');
  });

  it('emits only messages valid against the 2026-07-28 schema', async () => {
    const { client, emitted } = await modernSession();
    await client.listTools();
    await client.callTool('echo', { message: 'hi' });
    expect(emitted.count).toBeGreaterThan(1);
    emitted.assertValid();
  });

  it('a second client to the same endpoint adopts the cached verdict without probing', async () => {
    const site = await serveSdk();
    const cache = new EraCache();
    await connectOver(new StreamableHttpClientTransport(site.url), cache);
    const before = site.seen.length;
    const { client } = await connectOver(new StreamableHttpClientTransport(site.url), cache);
    expect(client.connectedEra).toBe('modern');
    expect(site.seen.length).toBe(before);
  });
});

/** A stdio transport that records what the client hands it (the probe included). */
class RecordingStdio extends StdioClientTransport {
  readonly sent: (JsonRpcMessage | JsonRpcBatch)[] = [];

  override send(message: JsonRpcMessage | JsonRpcBatch): Promise<void> {
    this.sent.push(message);
    return super.send(message);
  }
}

const everything = new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url)
  .pathname;
const FAST_SHUTDOWN = { stdinGraceMs: 1000, terminateGraceMs: 1000 };

function everythingTransport(): RecordingStdio {
  return new RecordingStdio({ command: process.execPath, args: [everything, 'stdio'], shutdown: FAST_SHUTDOWN });
}

const methodOf = (message: JsonRpcMessage | JsonRpcBatch) => (message as { method?: string }).method;

describe('our client against server-everything over stdio (handshake era only)', { timeout: 20_000 }, () => {
  it('probes with server/discover, then falls back to initialize', async () => {
    const transport = everythingTransport();
    const { client } = await connectOver(transport, new EraCache());
    expect(client.connectedEra).toBe('handshake');
    expect(transport.sent.slice(0, 2).map(methodOf)).toEqual(['server/discover', 'initialize']);
  });

  it('works after the fallback: tools are listed and called', async () => {
    const { client, emitted } = await connectOver(everythingTransport(), new EraCache());
    const result = await client.callTool('echo', { message: 'after the probe' });
    expect(result.content).toEqual([{ type: 'text', text: 'Echo: after the probe' }]);
    emitted.assertValid();
  });

  it('caches the verdict by command line: a second client does not probe', async () => {
    const cache = new EraCache();
    const first = everythingTransport();
    await connectOver(first, cache);
    const second = everythingTransport();
    const { client } = await connectOver(second, cache);
    expect(client.connectedEra).toBe('handshake');
    expect(methodOf(second.sent[0]!)).toBe('initialize');
  });
});
