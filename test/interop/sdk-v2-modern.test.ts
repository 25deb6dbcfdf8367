/**
 * Interop with the official TypeScript SDK v2 client (`@modelcontextprotocol/client` 2.4.0, no mocks) over
 * real transports: the SDK client, told to negotiate (`versionNegotiation: { mode: 'auto' }`: its default is
 * still the handshake era), against our server over Streamable HTTP on 127.0.0.1 and over stdio, and the same
 * client left in the handshake era against the same HTTP endpoint (both eras on one endpoint). What does not
 * depend on the transport (every primitive, input_required rounds, the `_meta` log level, listen) is in the
 * interop suite's runs of SDK v2 in both eras (test/interop/sdk.test.ts); this file keeps what the transport adds.
 *
 * Our handlers ask for input the one way they know (`ctx.elicit`, `ctx.createMessage`, `ctx.listRoots`): on a
 * modern request those become `input_required` rounds, which the SDK fulfils through the handlers it
 * registered with `setRequestHandler` and retries. Every message our server emits on the modern path is
 * checked against the 2026-07-28 schema, every message of a legacy session against its revision's.
 */
import {
  Client as SdkClient,
  StreamableHTTPClientTransport,
  type CallToolResult as SdkCallToolResult,
  type Progress as SdkProgress,
  type SubscriptionFilter,
  type VersionNegotiationMode,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Stream } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExchangeReply } from '../../lib/core/exchange';
import type { JsonRpcResponse, RequestId } from '../../lib/jsonrpc/types';
import { Server } from '../../lib/server/server';
import { createMcpHttpHandler } from '../../transports/http/endpoint';
import { validateEveryConnection } from '../conformance/validate-connections';
import { interopDefinition, SCHEMA_PROBLEM_MARK } from '../fixtures/modern-stdio-server';
import { cleanups } from '../helpers/cleanups';
import { httpServerFor } from '../helpers/http';
import { validateEveryModernExchange } from '../helpers/modern-wire';
import { within } from '../helpers/wait';

const MODERN = '2026-07-28';
const ROOTS = [{ uri: 'file:///work/project', name: 'project' }];
const ROOT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** One request our server served on the stateless path. */
interface ServedRequest {
  readonly method: string;
  readonly id: RequestId;
  /** `params.name` (tools/call, prompts/get) or `params.uri` (resources/read). */
  readonly target: unknown;
  readonly hasRequestState: boolean;
  /** What our server answered, once it did. */
  answer: JsonRpcResponse | undefined;
}

/** Our server over Streamable HTTP on 127.0.0.1, with what it served on each path; one per describe block. */
interface ServedOverHttp {
  readonly server: Server;
  readonly url: URL;
  /** Requests served on the stateless path, in order. */
  readonly modern: ServedRequest[];
  /** Legacy sessions the endpoint opened (one per `initialize`). */
  readonly sessions: () => number;
  close(): Promise<void>;
}

/** The schema problems of every server this file started (in process or over stdio); asserted empty by the last test. */
const modernProblems: string[][] = [];

/** The problems a stdio server process reports on its stderr (see `--check-modern-wire`). */
function collectSchemaProblems(stderr: Stream | null): void {
  const problems: string[] = [];
  modernProblems.push(problems);
  let pending = '';
  stderr?.on('data', (chunk: Buffer) => {
    const lines = (pending + chunk.toString('utf8')).split('\n');
    pending = lines.pop()!;
    problems.push(...lines.filter((line) => line.startsWith(SCHEMA_PROBLEM_MARK)));
  });
}

async function serveOverHttp(): Promise<ServedOverHttp> {
  const server = validateEveryConnection(new Server(interopDefinition));
  modernProblems.push(validateEveryModernExchange(server));
  const modern: ServedRequest[] = [];
  const serve = server.serveModern.bind(server);
  server.serveModern = (verdict, reply, headers) => {
    const { method, id, params } = verdict.request;
    const served: ServedRequest = {
      method,
      id,
      target: params?.name ?? params?.uri,
      hasRequestState: params?.requestState !== undefined,
      answer: undefined,
    };
    modern.push(served);
    const recording: ExchangeReply = {
      notify: (message) => reply.notify(message),
      answer: (message) => {
        served.answer = message;
        return reply.answer(message);
      },
      onAbort: (hook) => reply.onAbort(hook),
    };
    serve(verdict, recording, headers);
  };
  let sessions = 0;
  const connect = server.connect.bind(server);
  server.connect = (transport, options) => {
    sessions++;
    return connect(transport, options);
  };
  const handler = createMcpHttpHandler(server);
  const httpServer = httpServerFor(handler);
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;
  return {
    server,
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    modern,
    sessions: () => sessions,
    close: async () => {
      await server.close();
      await handler.close();
      httpServer.closeAllConnections();
      await new Promise((resolve) => httpServer.close(resolve));
    },
  };
}

/** What the SDK client's registered handlers were asked. */
interface Asked {
  readonly elicitations: string[];
  readonly samplings: number;
  readonly rootLists: number;
}

interface ConnectedClient {
  readonly client: SdkClient;
  readonly asked: Asked;
}

/**
 * An SDK v2 client declaring elicitation, sampling and roots, with a handler for each: the user answers
 * "Ada" for a name and "green" for a colour, the model says "4".
 */
function sdkClient(mode: VersionNegotiationMode): ConnectedClient {
  const client = new SdkClient(
    { name: 'sdk-v2-interop', version: '1.0.0' },
    {
      capabilities: { elicitation: {}, sampling: {}, roots: { listChanged: true } },
      versionNegotiation: { mode },
    },
  );
  const asked = { elicitations: [] as string[], samplings: 0, rootLists: 0 };
  client.setRequestHandler('elicitation/create', (request) => {
    const message = request.params.message;
    asked.elicitations.push(message);
    const content: Record<string, string> = message.includes('colour') ? { colour: 'green' } : { name: 'Ada' };
    return { action: 'accept', content };
  });
  client.setRequestHandler('sampling/createMessage', () => {
    asked.samplings++;
    return { role: 'assistant', content: { type: 'text', text: '4' }, model: 'test-model' };
  });
  client.setRequestHandler('roots/list', () => {
    asked.rootLists++;
    return { roots: ROOTS };
  });
  cleanups.push(() => client.close());
  return { client, asked };
}

async function connectOverHttp(url: URL, mode: VersionNegotiationMode = 'auto'): Promise<ConnectedClient> {
  const connected = sdkClient(mode);
  await within(connected.client.connect(new StreamableHTTPClientTransport(url)), 'the SDK client to connect');
  return connected;
}

const textOf = (result: SdkCallToolResult | { content: unknown }) =>
  (result.content as { type: string; text?: string }[]).map((block) => block.text ?? `(${block.type})`).join('\n');

const callsOf = (served: ServedOverHttp, tool: string) =>
  served.modern.filter((request) => request.method === 'tools/call' && request.target === tool);

describe('the SDK v2 client, negotiating, against our Streamable HTTP endpoint', () => {
  let served: ServedOverHttp;
  beforeAll(async () => {
    served = await serveOverHttp();
  });
  afterAll(() => served.close());

  // What the HTTP path adds to the interop suite's stateless runs (test/interop/sdk.test.ts, in process): the
  // probe, progress and input_required rounds over POST responses, error answers, no session.
  it('probes with server/discover on the stateless path and opens no session (no initialize)', async () => {
    const before = served.modern.length;
    const sessions = served.sessions();
    const { client } = await connectOverHttp(served.url);
    expect([client.getProtocolEra(), client.getNegotiatedProtocolVersion()]).toEqual(['modern', MODERN]);
    expect(served.modern.slice(before).map((request) => request.method)).toEqual(['server/discover']);
    expect(served.sessions()).toBe(sessions);
  });

  it("delivers the tool's progress to the SDK's onprogress", async () => {
    const { client } = await connectOverHttp(served.url);
    const progress: SdkProgress[] = [];
    await client.callTool({ name: 'count', arguments: {} }, { onprogress: (value) => progress.push(value) });
    expect(progress).toEqual([1, 2, 3].map((step) => ({ progress: step, total: 3, message: `step ${step}` })));
  });

  // The SDK reads -32002 as -32602 too: what our server put on the wire is checked here.
  it('answers an unknown resource with -32602 and the URI in data (the stateless revision drops -32002)', async () => {
    const { client } = await connectOverHttp(served.url);
    await client.readResource({ uri: 'docs://gone' }).catch(() => undefined);
    const read = served.modern.find(
      (request) => request.method === 'resources/read' && request.target === 'docs://gone',
    );
    expect(read?.answer).toMatchObject({ error: { code: -32602, data: { uri: 'docs://gone' } } });
  });

  it('goes through two rounds, echoing the requestState each time', async () => {
    const { client, asked } = await connectOverHttp(served.url);
    const before = callsOf(served, 'ask_twice').length;
    const result = await client.callTool({ name: 'ask_twice', arguments: {} });
    expect({
      text: textOf(result),
      asked: asked.elicitations,
      stateOnEachLeg: callsOf(served, 'ask_twice')
        .slice(before)
        .map((leg) => leg.hasRequestState),
    }).toEqual({
      text: 'name: Ada, colour: green',
      asked: ['What is your name?', 'What is your favourite colour?'],
      stateOnEachLeg: [false, true, true],
    });
  });

  it('served every request above on the stateless path, without opening a session', () => {
    expect({ methods: new Set(served.modern.map((request) => request.method)), sessions: served.sessions() }).toEqual({
      methods: new Set(['server/discover', 'tools/call', 'resources/read']),
      sessions: 0,
    });
  });

  describe('subscriptions/listen', () => {
    /** Resolves with the first notification of `method` the SDK dispatches. */
    function nextNotification(
      client: SdkClient,
      method: 'notifications/tools/list_changed' | 'notifications/resources/updated',
    ) {
      return new Promise<unknown>((resolve) =>
        client.setNotificationHandler(method, (notification) => resolve(notification)),
      );
    }

    async function listening(client: SdkClient, filter: SubscriptionFilter) {
      const subscription = await within(client.listen(filter), 'the listen acknowledgement');
      cleanups.push(() => subscription.close());
      return subscription;
    }

    it('delivers a tool list change once the server is updated, and the new list has the tool', async () => {
      const { client } = await connectOverHttp(served.url);
      const changed = nextNotification(client, 'notifications/tools/list_changed');
      await listening(client, { toolsListChanged: true });
      served.server.update((definition) =>
        definition.withTools({
          name: 'late',
          description: 'Added while the client listened',
          inputSchema: { type: 'object' },
          handler: () => ({ content: [{ type: 'text', text: 'late' }] }),
        }),
      );
      cleanups.push(() => served.server.update((definition) => definition.withoutTools('late')));
      await within(changed, 'notifications/tools/list_changed on the listen stream');
      const { tools } = await client.listTools({}, { cacheMode: 'refresh' });
      expect(tools.map((tool) => tool.name)).toContain('late');
    });

    it('delivers an update of a subscribed resource', async () => {
      const { client } = await connectOverHttp(served.url);
      const updated = nextNotification(client, 'notifications/resources/updated');
      await listening(client, { resourceSubscriptions: ['docs://readme'] });
      served.server.resourceUpdated('docs://readme');
      expect(await within(updated, 'notifications/resources/updated on the listen stream')).toMatchObject({
        params: { uri: 'docs://readme' },
      });
    });
  });
});

describe('the SDK v2 client left in the handshake era, against the same endpoint', () => {
  let served: ServedOverHttp;
  beforeAll(async () => {
    served = await serveOverHttp();
  });
  afterAll(() => served.close());

  it('initializes a legacy session at 2025-11-25 and sends nothing on the stateless path', async () => {
    const { client } = await connectOverHttp(served.url, 'legacy');
    expect({
      era: client.getProtocolEra(),
      version: client.getNegotiatedProtocolVersion(),
      sessions: served.sessions(),
      modern: served.modern.length,
    }).toEqual({ era: 'legacy', version: '2025-11-25', sessions: 1, modern: 0 });
  });

  it('calls a tool', async () => {
    const { client } = await connectOverHttp(served.url, 'legacy');
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'old' } }))).toBe('echo: old');
  });

  it("answers the same handler's elicitation as a server-to-client request", async () => {
    const { client, asked } = await connectOverHttp(served.url, 'legacy');
    const result = await client.callTool({ name: 'ask_name', arguments: {} });
    expect({ text: textOf(result), asked: asked.elicitations, modern: served.modern.length }).toEqual({
      text: 'Hello, Ada!',
      asked: ['What is your name?'],
      modern: 0,
    });
  });

  it('is served next to a negotiating client on the same endpoint', async () => {
    const [legacy, modern] = await Promise.all([
      connectOverHttp(served.url, 'legacy'),
      connectOverHttp(served.url, 'auto'),
    ]);
    const [old, current] = await Promise.all([
      legacy.client.callTool({ name: 'ask_twice', arguments: {} }),
      modern.client.callTool({ name: 'ask_twice', arguments: {} }),
    ]);
    expect([legacy.client.getProtocolEra(), textOf(old), modern.client.getProtocolEra(), textOf(current)]).toEqual([
      'legacy',
      'name: Ada, colour: green',
      'modern',
      'name: Ada, colour: green',
    ]);
  });
});

describe('the SDK v2 client, negotiating, against our server over stdio', () => {
  async function connectOverStdio(mode: VersionNegotiationMode): Promise<ConnectedClient> {
    const connected = sdkClient(mode);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', path.join(ROOT_DIR, 'test/fixtures/modern-stdio-server.ts'), '--check-modern-wire'],
      cwd: ROOT_DIR,
      stderr: 'pipe',
    });
    collectSchemaProblems(transport.stderr);
    await within(connected.client.connect(transport), 'the SDK client to connect over stdio', 15_000);
    return connected;
  }

  it('settles on the stateless revision 2026-07-28', async () => {
    const { client } = await connectOverStdio('auto');
    expect([client.getProtocolEra(), client.getNegotiatedProtocolVersion()]).toEqual(['modern', MODERN]);
  });

  it('lists the tools and calls one with structured content', async () => {
    const { client } = await connectOverStdio('auto');
    const { tools } = await client.listTools();
    const result = await client.callTool({ name: 'add', arguments: { a: 4, b: 5 } });
    expect({ tools: tools.length, sum: result.structuredContent }).toEqual({
      tools: interopDefinition.tools!.definitions.length,
      sum: { sum: 9 },
    });
  });

  it('goes through two input_required rounds', async () => {
    const { client, asked } = await connectOverStdio('auto');
    const result = await client.callTool({ name: 'ask_twice', arguments: {} });
    expect({ text: textOf(result), asked: asked.elicitations.length }).toEqual({
      text: 'name: Ada, colour: green',
      asked: 2,
    });
  });

  it('reads a resource and gets a prompt', async () => {
    const { client } = await connectOverStdio('auto');
    const [{ contents }, prompt] = await Promise.all([
      client.readResource({ uri: 'notes://3' }),
      client.getPrompt({ name: 'greet', arguments: { name: 'Grace' } }),
    ]);
    expect([contents[0], prompt.messages[0]?.content]).toEqual([
      { uri: 'notes://3', mimeType: 'text/plain', text: 'Note 3' },
      { type: 'text', text: 'Please greet Grace warmly.' },
    ]);
  });

  it('the same process script serves the handshake era to a client that does not negotiate', async () => {
    const { client, asked } = await connectOverStdio('legacy');
    const result = await client.callTool({ name: 'ask_name', arguments: {} });
    expect([client.getProtocolEra(), textOf(result), asked.elicitations.length]).toEqual(['legacy', 'Hello, Ada!', 1]);
  });
});

it('everything our server emitted on the stateless path is valid against the 2026-07-28 schema', () => {
  expect(modernProblems.length).toBeGreaterThan(0);
  expect(modernProblems.flat()).toEqual([]);
});
