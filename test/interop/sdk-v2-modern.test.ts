/**
 * Interop with the official TypeScript SDK v2 client (`@modelcontextprotocol/client` 2.4.0, no mocks) on the
 * stateless revision 2026-07-28: the SDK client, told to negotiate (`versionNegotiation: { mode: 'auto' }`:
 * its default is still the handshake era), against our server over Streamable HTTP on 127.0.0.1 and over
 * stdio, and the same client left in the handshake era against the same HTTP endpoint (both eras on one
 * endpoint).
 *
 * Our handlers ask for input the one way they know (`ctx.elicit`, `ctx.createMessage`, `ctx.listRoots`): on a
 * modern request those become `input_required` rounds, which the SDK fulfils through the handlers it
 * registered with `setRequestHandler` and retries. Every message our server emits on the modern path is
 * checked against the 2026-07-28 schema, every message of a legacy session against its revision's.
 */
import {
  Client as SdkClient,
  ProtocolError as SdkProtocolError,
  StreamableHTTPClientTransport,
  type CallToolResult as SdkCallToolResult,
  type Progress as SdkProgress,
  type SubscriptionFilter,
  type VersionNegotiationMode,
} from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import http from 'node:http';
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
import { validateEveryModernExchange } from '../helpers/modern-wire';
import { within } from '../helpers/wait';

const MODERN = '2026-07-28';
const LOG_LEVEL_KEY = 'io.modelcontextprotocol/logLevel';
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
  const httpServer = http.createServer(handler);
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

  describe('era choice', () => {
    it('settles on the stateless revision 2026-07-28', async () => {
      const { client } = await connectOverHttp(served.url);
      expect([client.getProtocolEra(), client.getNegotiatedProtocolVersion()]).toEqual(['modern', MODERN]);
    });

    it('probes with server/discover on the stateless path and opens no session (no initialize)', async () => {
      const before = served.modern.length;
      const sessions = served.sessions();
      await connectOverHttp(served.url);
      expect(served.modern.slice(before).map((request) => request.method)).toEqual(['server/discover']);
      expect(served.sessions()).toBe(sessions);
    });

    it("reads our server's identity, capabilities and instructions from server/discover", async () => {
      const { client } = await connectOverHttp(served.url);
      expect({
        server: client.getServerVersion(),
        tools: client.getServerCapabilities()?.tools,
        instructions: client.getInstructions(),
      }).toEqual({
        server: { name: 'switchboard-sdk-v2-interop', version: '1.0.0' },
        tools: { listChanged: true },
        instructions: 'A fixture for the official SDK v2 client.',
      });
    });
  });

  describe('tools', () => {
    it('lists every tool', async () => {
      const { client } = await connectOverHttp(served.url);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name).sort()).toEqual(
        interopDefinition.tools!.definitions.map((tool) => tool.name).sort(),
      );
    });

    it('calls a tool that answers text', async () => {
      const { client } = await connectOverHttp(served.url);
      const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
      expect(textOf(result)).toBe('echo: hi');
    });

    it('calls a tool with an outputSchema and gets its structuredContent (validated by the SDK)', async () => {
      const { client } = await connectOverHttp(served.url);
      await client.listTools(); // the SDK validates structured content against the listed outputSchema
      const result = await client.callTool({ name: 'add', arguments: { a: 2, b: 3 } });
      expect(result.structuredContent).toEqual({ sum: 5 });
    });

    it("reads a failing tool's isError result", async () => {
      const { client } = await connectOverHttp(served.url);
      const result = await client.callTool({ name: 'fail', arguments: {} });
      expect({ isError: result.isError, text: textOf(result) }).toEqual({
        isError: true,
        text: expect.stringContaining('This tool always fails'),
      });
    });

    it("delivers the tool's progress to the SDK's onprogress", async () => {
      const { client } = await connectOverHttp(served.url);
      const progress: SdkProgress[] = [];
      await client.callTool({ name: 'count', arguments: {} }, { onprogress: (value) => progress.push(value) });
      expect(progress).toEqual([1, 2, 3].map((step) => ({ progress: step, total: 3, message: `step ${step}` })));
    });

    it('sends the log messages at or above the level the request names in its _meta', async () => {
      const { client } = await connectOverHttp(served.url);
      const logged: unknown[] = [];
      client.setNotificationHandler('notifications/message', (notification) => {
        logged.push([notification.params.level, notification.params.data]);
      });
      await client.callTool({ name: 'chatty', arguments: {}, _meta: { [LOG_LEVEL_KEY]: 'info' } });
      expect(logged).toEqual([
        ['info', 'chatty: working'],
        ['error', 'chatty: something went wrong'],
      ]);
    });

    it('sends no log message when the request names no level', async () => {
      const { client } = await connectOverHttp(served.url);
      const logged: unknown[] = [];
      client.setNotificationHandler('notifications/message', (notification) => void logged.push(notification));
      const result = await client.callTool({ name: 'chatty', arguments: {} });
      expect({ text: textOf(result), logged }).toEqual({ text: 'chatted', logged: [] });
    });
  });

  describe('prompts, resources and completion', () => {
    it('lists the prompts', async () => {
      const { client } = await connectOverHttp(served.url);
      const { prompts } = await client.listPrompts();
      expect(prompts.map((prompt) => prompt.name)).toEqual(['greet']);
    });

    it('gets a prompt with its arguments', async () => {
      const { client } = await connectOverHttp(served.url);
      const prompt = await client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } });
      expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Please greet Ada warmly.' } }]);
    });

    it('lists the resources', async () => {
      const { client } = await connectOverHttp(served.url);
      const { resources } = await client.listResources();
      expect(resources.map((resource) => resource.uri)).toEqual(['docs://readme']);
    });

    it('lists the resource templates', async () => {
      const { client } = await connectOverHttp(served.url);
      const { resourceTemplates } = await client.listResourceTemplates();
      expect(resourceTemplates.map((template) => template.uriTemplate)).toEqual(['notes://{id}']);
    });

    it('reads a resource', async () => {
      const { client } = await connectOverHttp(served.url);
      const { contents } = await client.readResource({ uri: 'docs://readme' });
      expect(contents).toEqual([
        { uri: 'docs://readme', mimeType: 'text/markdown', text: '# Readme\n\nHello from switchboard.' },
      ]);
    });

    it('reads a resource of a template', async () => {
      const { client } = await connectOverHttp(served.url);
      const { contents } = await client.readResource({ uri: 'notes://7' });
      expect(contents).toEqual([{ uri: 'notes://7', mimeType: 'text/plain', text: 'Note 7' }]);
    });

    it('surfaces an unknown resource as an error with code -32602', async () => {
      const { client } = await connectOverHttp(served.url);
      const failure = await client.readResource({ uri: 'docs://missing' }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(SdkProtocolError);
      expect((failure as SdkProtocolError).code).toBe(-32602);
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

    it('completes a prompt argument', async () => {
      const { client } = await connectOverHttp(served.url);
      const { completion } = await client.complete({
        ref: { type: 'ref/prompt', name: 'greet' },
        argument: { name: 'name', value: 'A' },
      });
      expect(completion.values).toEqual(['Ada', 'Alan']);
    });

    it('completes a resource template variable', async () => {
      const { client } = await connectOverHttp(served.url);
      const { completion } = await client.complete({
        ref: { type: 'ref/resource', uri: 'notes://{id}' },
        argument: { name: 'id', value: 'al' },
      });
      expect(completion.values).toEqual(['alpha', 'alps']);
    });
  });

  describe('input requests: input_required rounds fulfilled by the SDK', () => {
    it("answers an elicitation through the SDK's elicitation handler", async () => {
      const { client, asked } = await connectOverHttp(served.url);
      const result = await client.callTool({ name: 'ask_name', arguments: {} });
      expect({ text: textOf(result), asked: asked.elicitations }).toEqual({
        text: 'Hello, Ada!',
        asked: ['What is your name?'],
      });
    });

    it('retries the call once the input is gathered: two tools/call requests, each with its own id', async () => {
      const { client } = await connectOverHttp(served.url);
      const before = callsOf(served, 'ask_name').length;
      await client.callTool({ name: 'ask_name', arguments: {} });
      const legs = callsOf(served, 'ask_name').slice(before);
      expect({ legs: legs.length, ids: new Set(legs.map((leg) => leg.id)).size }).toEqual({ legs: 2, ids: 2 });
    });

    it("answers a sampling request through the SDK's sampling handler", async () => {
      const { client, asked } = await connectOverHttp(served.url);
      const result = await client.callTool({ name: 'ask_model', arguments: {} });
      expect({ text: textOf(result), samplings: asked.samplings }).toEqual({ text: 'The model said: 4', samplings: 1 });
    });

    it("answers a roots request through the SDK's roots handler", async () => {
      const { client, asked } = await connectOverHttp(served.url);
      const result = await client.callTool({ name: 'list_roots', arguments: {} });
      expect({ text: textOf(result), rootLists: asked.rootLists }).toEqual({
        text: 'Roots: file:///work/project',
        rootLists: 1,
      });
    });

    it('answers two input requests of one round, then retries once', async () => {
      const { client, asked } = await connectOverHttp(served.url);
      const before = callsOf(served, 'ask_two_at_once').length;
      const result = await client.callTool({ name: 'ask_two_at_once', arguments: {} });
      expect({
        text: textOf(result),
        elicitations: asked.elicitations.length,
        samplings: asked.samplings,
        legs: callsOf(served, 'ask_two_at_once').length - before,
      }).toEqual({ text: 'name: Ada, model: 4', elicitations: 1, samplings: 1, legs: 2 });
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
  });

  it('served every request above on the stateless path, without opening a session', () => {
    expect({ methods: new Set(served.modern.map((request) => request.method)), sessions: served.sessions() }).toEqual({
      methods: new Set([
        'server/discover',
        'tools/list',
        'tools/call',
        'prompts/list',
        'prompts/get',
        'resources/list',
        'resources/templates/list',
        'resources/read',
        'completion/complete',
      ]),
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

    it('acknowledges the listen with the filter it honours', async () => {
      const { client } = await connectOverHttp(served.url);
      const subscription = await listening(client, {
        toolsListChanged: true,
        resourceSubscriptions: ['docs://readme'],
      });
      expect(subscription.honoredFilter).toEqual({ toolsListChanged: true, resourceSubscriptions: ['docs://readme'] });
    });

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
