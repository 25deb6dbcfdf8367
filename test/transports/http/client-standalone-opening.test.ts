/**
 * The first messages of a Streamable HTTP session wait for the standalone GET stream's answer: a server that
 * sends its requests on that stream (the official SDK does for a request given no `relatedRequestId`, as the
 * conformance suite's elicitation scenario does) drops them when the stream is not registered yet. Against
 * the official SDK server over real HTTP on 127.0.0.1, with a front that reads the GET late (a GET on a new
 * connection overtaken by the request after it, as on a loaded machine); and against a server that holds
 * the GET's head: the wait is bounded.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Server as SdkServer } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ElicitResultSchema,
  ListToolsRequestSchema,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { Client } from '../../../lib/client/client';
import { StreamableHttpClientTransport } from '../../../transports/http/streamable-client';
import { textOf } from '../../helpers/content';
import { deferred } from '../../helpers/fixtures';
import { cleanups, listenHttp, within } from '../../helpers/http';
import { validateEmitted } from '../../helpers/pair';

/** How long the front holds a GET when no request overtakes it: well below the client's wait for the GET. */
const GET_HELD_MS = 100;

/**
 * The suite's elicitation scenario: the tool elicits with `server.request` and no `relatedRequestId`, so
 * the SDK sends the request on the standalone stream, or nowhere when that stream is not open.
 */
function elicitingServer(): SdkServer {
  const server = new SdkServer({ name: 'eliciting', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [{ name: 'ask', inputSchema: { type: 'object' } }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async () => {
    const answer = await server.request(
      {
        method: 'elicitation/create',
        params: {
          message: 'Your name?',
          requestedSchema: { type: 'object', properties: { name: { type: 'string', default: 'Ada' } } },
        },
      },
      ElicitResultSchema,
    );
    return { content: [{ type: 'text', text: `${answer.action} ${JSON.stringify(answer.content)}` }] };
  });
  return server;
}

/**
 * The SDK's Streamable HTTP server behind a front that reads each GET late: it reaches the SDK only once the
 * SDK has sent the elicitation of a `tools/call` that arrived meanwhile, or after `GET_HELD_MS` when nothing
 * did. `order` records what reached the SDK; `dropped` settles when the SDK sent the elicitation while its
 * session had no GET stream registered. `forget()` drops the sessions (404 from then on, as after a restart).
 */
async function lateGetServer() {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const withStream = new Set<StreamableHTTPServerTransport>();
  const order: string[] = [];
  const dropped = deferred<void>();
  let releaseHeldGet: (() => void) | undefined;

  const openSession = async (request: IncomingMessage, response: ServerResponse, body: unknown) => {
    const server = elicitingServer();
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    const send = transport.send.bind(transport);
    transport.send = async (message: JSONRPCMessage, options) => {
      const elicitation = 'method' in message && message.method === 'elicitation/create';
      if (elicitation && !withStream.has(transport)) dropped.resolve();
      await send(message, options);
      if (elicitation) releaseHeldGet?.();
    };
    cleanups.push(() => server.close());
    await server.connect(transport);
    await transport.handleRequest(request, response, body);
  };

  const site = await listenHttp((request, response) => {
    void (async () => {
      const sessionId = request.headers['mcp-session-id'];
      const transport = sessions.get(String(sessionId));
      if (sessionId !== undefined && !transport) return void response.writeHead(404).end();
      if (request.method === 'GET' && transport) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, GET_HELD_MS);
          releaseHeldGet = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        releaseHeldGet = undefined;
        order.push('GET');
        withStream.add(transport); // the SDK registers the stream as it writes the head
        return transport.handleRequest(request, response);
      }
      let text = '';
      for await (const chunk of request) text += String(chunk);
      const body = text ? (JSON.parse(text) as { method?: string }) : undefined;
      order.push(`${request.method} ${body?.method ?? ''}`.trim());
      if (!transport) return openSession(request, response, body);
      return transport.handleRequest(request, response, body);
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    });
  });
  return { url: `${site.origin}/mcp`, order, dropped: dropped.promise, forget: () => sessions.clear() };
}

/** The tool's answer, or what the server dropped first. */
async function askedOrDropped(client: Client, server: Awaited<ReturnType<typeof lateGetServer>>): Promise<string> {
  const call = client.callTool('ask', {});
  call.catch(() => undefined); // when the elicitation was dropped, the race reports it
  const outcome = await within(
    Promise.race([call, server.dropped.then(() => 'dropped: the GET stream was not open yet')]),
    'the tool call or the dropped elicitation',
  );
  return typeof outcome === 'string' ? outcome : textOf(outcome);
}

/** Our client (handshake era: sessions and their GET stream), accepting every form empty. */
async function connect(url: string): Promise<Client> {
  const client = new Client(
    { name: 'standalone-opening-test', version: '1.0.0' },
    { era: 'handshake', elicitation: { form: async () => ({ action: 'accept', content: {} }) } },
  );
  validateEmitted(client);
  cleanups.push(() => client.close());
  await client.connect(new StreamableHttpClientTransport(url), { timeout: 5000 });
  return client;
}

describe('the standalone GET stream opening', () => {
  it('is answered before the next request goes, so a request the server sends on it is not lost', async () => {
    const server = await lateGetServer();
    const client = await connect(server.url);
    expect(await askedOrDropped(client, server)).toBe('accept {"name":"Ada"}');
    expect(server.order).toEqual([
      'POST initialize',
      'POST notifications/initialized',
      'GET',
      'POST tools/call',
      'POST',
    ]);
  });

  it('is answered before a request that met a 404 goes again on the renewed session', async () => {
    const server = await lateGetServer();
    const client = await connect(server.url);
    await client.listTools(); // 4 requests reached the first session: initialize, initialized, GET, tools/list
    server.forget();
    expect(await askedOrDropped(client, server)).toBe('accept {"name":"Ada"}');
    expect(server.order.slice(4)).toEqual([
      'POST initialize',
      'POST notifications/initialized',
      'GET',
      'POST tools/call',
      'POST',
    ]);
  });

  it('is waited for a bounded time: a server holding the GET head still gets the requests', async () => {
    const server = new SdkServer({ name: 'holding', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [{ name: 'noop', inputSchema: { type: 'object' } }],
    }));
    let transport: StreamableHTTPServerTransport | undefined;
    const heldGets: ServerResponse[] = [];
    const site = await listenHttp((request, response) => {
      if (request.method === 'GET') return void heldGets.push(response); // never answered: no head, no event
      void (async () => {
        if (!transport) {
          transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
          cleanups.push(() => server.close());
          await server.connect(transport);
        }
        await transport.handleRequest(request, response);
      })();
    });
    const client = await connect(`${site.origin}/mcp`);
    const tools = await within(client.listTools(), 'the tool list past the unanswered GET');
    expect(tools.map((tool) => tool.name)).toEqual(['noop']);
    expect(heldGets).toHaveLength(1);
  });
});
