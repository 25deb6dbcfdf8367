/**
 * In-process interop with the official TypeScript SDK (no mocks): the SDK's `InMemoryTransport` pair with
 * our end wrapped by `fromSdkTransport`.
 *
 * a. The SDK `Client` against our `Server`, for each revision (the SDK client always asks for its newest,
 *    so the older ones are reached by restricting our server's `protocolVersions`).
 * b. Our `Client` against the SDK `McpServer`, asking for each of the four revisions.
 * Then the same over the SDK's stdio transport (serialized), and the adapter's own contract.
 *
 * Everything our side emits is checked against the official schema of the negotiated revision.
 */
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioClientTransport as SdkStdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError as SdkMcpError,
  ToolListChangedNotificationSchema,
  type LoggingMessageNotification,
  type Progress as SdkProgress,
} from '@modelcontextprotocol/sdk/types.js';
import { PassThrough } from 'node:stream';
import { filter, firstValueFrom, take, toArray, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client } from '../lib/client/client';
import {
  ConnectionClosedError,
  McpError,
  RequestCancelledError,
  RequestTimeoutError,
  TransportError,
} from '../lib/jsonrpc/errors';
import type { InboundFrame, JsonRpcMessage, JsonRpcNotification, RequestId } from '../lib/jsonrpc/types';
import type { Progress } from '../lib/protocol/types';
import { SUPPORTED_PROTOCOL_VERSIONS, isAtLeast, type ProtocolVersion } from '../lib/protocol/versions';
import { defineServer } from '../lib/server/definition';
import { Server, type ServerConnection } from '../lib/server/server';
import type { ToolDefinition } from '../lib/server/tools';
import { fromSdkTransport, type SdkTransportLike, type SdkTransportSendOptions } from '../transports/sdk-adapter';
import { validateEmitted } from './helpers/pair';
import { cleanups, connectOurClient, serveOverSdkTransport, watchSdkClient } from './helpers/sdk';
import { deferred } from './helpers/fixtures';

// ---- helpers --------------------------------------------------------------------------------------

type Deferred<T> = ReturnType<typeof deferred<T>>;

/** Resolves with the abort reason once `signal` fires. */
function aborted(signal: AbortSignal): Promise<unknown> {
  if (signal.aborted) return Promise.resolve(signal.reason);
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason), { once: true }));
}

/** One macrotask: every microtask chain already started (a handler finishing, a reply) has run by then. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

const VERSIONS = [...SUPPORTED_PROTOCOL_VERSIONS];

// ---- a. the SDK client against our server ---------------------------------------------------------

interface ServerHooks {
  slowStarted: Deferred<RequestId>;
  slowAborted: Deferred<unknown>;
  slowFinished: Deferred<void>;
}

const RICH_TOOL = {
  name: 'weather',
  title: 'Weather',
  description: 'Current weather for a city',
  inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  outputSchema: {
    type: 'object',
    properties: { city: { type: 'string' }, celsius: { type: 'number' } },
    required: ['city', 'celsius'],
  },
  annotations: { title: 'Weather lookup', readOnlyHint: true, openWorldHint: true },
  icons: [{ src: 'https://example.com/sun.png', mimeType: 'image/png', sizes: ['48x48'] }],
  _meta: { 'example.com/owner': 'interop-tests' },
} as const;

function ourTools(hooks: ServerHooks): ToolDefinition<any>[] {
  return [
    {
      name: 'echo',
      description: 'Echoes its text',
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      handler: ({ text }) => ({ content: [{ type: 'text', text: String(text) }] }),
    },
    {
      ...RICH_TOOL,
      handler: ({ city }) => ({ content: [], structuredContent: { city: String(city), celsius: 21.5 } }),
    },
    {
      name: 'fail',
      inputSchema: { type: 'object' },
      handler: () => {
        throw new Error('the tool broke');
      },
    },
    {
      name: 'progress',
      inputSchema: { type: 'object' },
      handler: async (_args, context) => {
        // Answered at once: the server holds the response until the progress has left, so the SDK client
        // (which runs progress handlers a microtask late but settles responses at once) sees it first.
        await context.progress(1, 2, 'half way');
        return { content: [{ type: 'text', text: 'done' }] };
      },
    },
    {
      name: 'progress-burst',
      inputSchema: { type: 'object' },
      handler: (args, context) => {
        // Several notifications in a row, not awaited, and the result in the same turn.
        const count = Number(args.count ?? 5);
        for (let step = 1; step <= count; step++) void context.progress(step, count);
        return { content: [{ type: 'text', text: `sent ${count}` }] };
      },
    },
    {
      name: 'slow',
      inputSchema: { type: 'object' },
      handler: async (_args, context) => {
        hooks.slowStarted.resolve(context.id);
        hooks.slowAborted.resolve(await aborted(context.signal));
        hooks.slowFinished.resolve();
        return { content: [{ type: 'text', text: 'too late' }] };
      },
    },
    {
      name: 'log',
      inputSchema: { type: 'object' },
      handler: async (_args, context) => {
        await context.log('warning', { step: 1 }, 'interop');
        return { content: [{ type: 'text', text: 'logged' }] };
      },
    },
  ];
}

interface SdkClientSetup {
  readonly sdkClient: SdkClient;
  readonly server: Server;
  readonly connection: ServerConnection;
  readonly hooks: ServerHooks;
  /** The revision the SDK client was told through `setProtocolVersion`. */
  readonly negotiated: () => string | undefined;
  /** What the SDK client reported through `onerror` (unknown ids, stray progress...). */
  readonly sdkErrors: Error[];
  /** Everything our server connection sent. */
  readonly sent: Record<string, any>[];
  /** What reached the SDK transport's `send`: each message with the options the adapter passed. */
  readonly wire: { message: Record<string, any>; options: SdkTransportSendOptions | undefined }[];
}

async function sdkClientAgainstOurServer(
  version: ProtocolVersion | undefined,
  extra: { pageSize?: number; tools?: ToolDefinition<any>[]; sdkClient?: SdkClient } = {},
): Promise<SdkClientSetup> {
  const hooks: ServerHooks = {
    slowStarted: deferred(),
    slowAborted: deferred(),
    slowFinished: deferred(),
  };
  const definition = defineServer({
    name: 'switchboard-server',
    version: '1.2.3',
    instructions: 'Use the tools.',
    ...(version !== undefined && { protocolVersions: [version] }),
    tools: extra.tools ?? ourTools(hooks),
    ...(extra.pageSize !== undefined && { pageSize: extra.pageSize }),
  });
  const [sdkSide, ourSide] = InMemoryTransport.createLinkedPair();
  let negotiated: string | undefined;
  // InMemoryTransport has no setProtocolVersion; the SDK client calls it when present, which shows us what it settled on.
  (sdkSide as InMemoryTransport & { setProtocolVersion?: (version: string) => void }).setProtocolVersion = (v) =>
    (negotiated = v);

  const wire: SdkClientSetup['wire'] = [];
  const send = ourSide.send.bind(ourSide);
  ourSide.send = (message, options) => {
    wire.push({ message, options });
    return send(message, options);
  };

  const server = new Server(definition);
  const { connection, sent } = serveOverSdkTransport(server, ourSide);

  const sdkClient = extra.sdkClient ?? new SdkClient({ name: 'sdk-client', version: '9.9.9' });
  const sdkErrors = watchSdkClient(sdkClient, server);
  await sdkClient.connect(sdkSide);
  return { sdkClient, server, connection, hooks, negotiated: () => negotiated, sdkErrors, sent, wire };
}

describe('the SDK client against our server offering every revision', () => {
  it('asks for 2025-11-25 and gets it', async () => {
    const { connection, negotiated, sent } = await sdkClientAgainstOurServer(undefined);
    expect(connection.protocolVersion).toBe('2025-11-25');
    expect(negotiated()).toBe('2025-11-25');
    expect(sent[0]).toMatchObject({ id: 0, result: { protocolVersion: '2025-11-25' } });
  });
});

describe.each(VERSIONS)('the SDK client against our server, negotiating %s', (version) => {
  it('connects and settles on the revision our server offers', async () => {
    const { sdkClient, connection, negotiated, sdkErrors } = await sdkClientAgainstOurServer(version);
    expect(connection.state).toBe('ready');
    expect(connection.protocolVersion).toBe(version);
    expect(negotiated()).toBe(version);
    expect(connection.clientInfo).toEqual({ name: 'sdk-client', version: '9.9.9' });
    expect(sdkClient.getServerVersion()).toEqual({ name: 'switchboard-server', version: '1.2.3' });
    expect(sdkClient.getServerCapabilities()).toEqual({ logging: {}, tools: { listChanged: true } });
    expect(sdkClient.getInstructions()).toBe('Use the tools.');
    expect(sdkErrors).toEqual([]);
  });

  it('lists tools with the fields this revision carries', async () => {
    const { sdkClient } = await sdkClientAgainstOurServer(version);
    const { tools, nextCursor } = await sdkClient.listTools();
    expect(nextCursor).toBeUndefined();
    expect(tools.map((tool) => tool.name)).toEqual([
      'echo',
      'weather',
      'fail',
      'progress',
      'progress-burst',
      'slow',
      'log',
    ]);
    const weather = tools.find((tool) => tool.name === 'weather')!;
    const expected: Record<string, unknown> = {
      name: 'weather',
      description: RICH_TOOL.description,
      inputSchema: RICH_TOOL.inputSchema,
    };
    if (isAtLeast(version, '2025-03-26')) expected.annotations = RICH_TOOL.annotations;
    if (isAtLeast(version, '2025-06-18')) {
      expected.title = RICH_TOOL.title;
      expected.outputSchema = RICH_TOOL.outputSchema;
      expected._meta = RICH_TOOL._meta;
    }
    if (isAtLeast(version, '2025-11-25')) expected.icons = RICH_TOOL.icons;
    expect(weather).toEqual(expected);
  });

  it('calls a tool', async () => {
    const { sdkClient, sdkErrors } = await sdkClientAgainstOurServer(version);
    expect(await sdkClient.callTool({ name: 'echo', arguments: { text: 'hello' } })).toEqual({
      content: [{ type: 'text', text: 'hello' }],
    });
    expect(sdkErrors).toEqual([]);
  });

  it('returns structured content the SDK client validates against the outputSchema', async () => {
    const { sdkClient } = await sdkClientAgainstOurServer(version);
    const { tools } = await sdkClient.listTools(); // the SDK client learns output schemas from listTools
    const structured = { city: 'Oslo', celsius: 21.5 };
    const result = await sdkClient.callTool({ name: 'weather', arguments: { city: 'Oslo' } });
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(structured) }]);
    if (isAtLeast(version, '2025-06-18')) {
      expect(tools.find((tool) => tool.name === 'weather')?.outputSchema).toBeDefined();
      expect(result.structuredContent).toEqual(structured);
    } else {
      // Before 2025-06-18 there is no structuredContent: the JSON text block carries it.
      expect(result.structuredContent).toBeUndefined();
    }
  });

  it('answers concurrent calls', async () => {
    const { sdkClient } = await sdkClientAgainstOurServer(version);
    const texts = Array.from({ length: 25 }, (_, index) => `call ${index}`);
    const results = await Promise.all(texts.map((text) => sdkClient.callTool({ name: 'echo', arguments: { text } })));
    expect(results.map((result) => (result.content as { text: string }[])[0]?.text)).toEqual(texts);
  });

  it('answers invalid arguments with an isError result', async () => {
    const { sdkClient } = await sdkClientAgainstOurServer(version);
    const result = await sdkClient.callTool({ name: 'echo', arguments: { text: 42 } });
    expect(result.isError).toBe(true);
    expect((result.content as { text: string }[])[0]?.text).toMatch(/Invalid arguments for tool echo/);
  });

  it('answers an unknown tool with a -32602 error the SDK throws as McpError', async () => {
    const { sdkClient } = await sdkClientAgainstOurServer(version);
    const failure = await sdkClient.callTool({ name: 'nope', arguments: {} }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SdkMcpError);
    expect(failure).toMatchObject({ code: -32602 });
    expect((failure as Error).message).toMatch(/Unknown tool: nope/);
  });

  it('turns a throwing handler into an isError result with its message', async () => {
    const { sdkClient } = await sdkClientAgainstOurServer(version);
    expect(await sdkClient.callTool({ name: 'fail', arguments: {} })).toEqual({
      content: [{ type: 'text', text: 'the tool broke' }],
      isError: true,
    });
  });

  it('answers ping, and pings the SDK client', async () => {
    const { sdkClient, connection } = await sdkClientAgainstOurServer(version);
    expect(await sdkClient.ping()).toEqual({});
    expect(await connection.request('ping')).toEqual({});
  });

  it('sends a request to the SDK client from inside a tool call (roots/list)', async () => {
    const sdkClient = new SdkClient({ name: 'sdk-client', version: '9.9.9' }, { capabilities: { roots: {} } });
    sdkClient.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));
    const tools: ToolDefinition<any>[] = [
      {
        name: 'roots',
        inputSchema: { type: 'object' },
        handler: async (_args, context) => {
          const { roots } = (await context.request('roots/list')) as { roots: { uri: string }[] };
          return { content: [{ type: 'text', text: roots.map((root) => root.uri).join(',') }] };
        },
      },
    ];
    const { connection, wire } = await sdkClientAgainstOurServer(version, { tools, sdkClient });
    expect(connection.clientCapabilities).toEqual({ roots: {} });
    expect(await sdkClient.callTool({ name: 'roots', arguments: {} })).toEqual({
      content: [{ type: 'text', text: 'file:///work' }],
    });
    const call = wire.find((entry) => entry.message.method === 'roots/list')!;
    expect(call.options?.relatedRequestId).toBeDefined();
  });

  it('tells the SDK client when the tools change', async () => {
    const { sdkClient, server } = await sdkClientAgainstOurServer(version);
    const changed = deferred();
    sdkClient.setNotificationHandler(ToolListChangedNotificationSchema, () => changed.resolve());
    server.update((definition) =>
      definition.withTools({ name: 'late', inputSchema: { type: 'object' }, handler: () => ({ content: [] }) }),
    );
    await changed.promise;
    expect((await sdkClient.listTools()).tools.map((tool) => tool.name)).toContain('late');
  });

  it('pages tools/list when there are more tools than the page size', async () => {
    const tools: ToolDefinition<any>[] = ['t1', 't2', 't3', 't4', 't5'].map((name) => ({
      name,
      inputSchema: { type: 'object' },
      handler: () => ({ content: [{ type: 'text', text: name }] }),
    }));
    const { sdkClient } = await sdkClientAgainstOurServer(version, { pageSize: 2, tools });
    const pages: string[][] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const result = await sdkClient.listTools(cursor === undefined ? undefined : { cursor });
      pages.push(result.tools.map((tool) => tool.name));
      cursor = result.nextCursor;
      if (cursor === undefined) break;
    }
    expect(pages).toEqual([['t1', 't2'], ['t3', 't4'], ['t5']]);
    expect(cursor).toBeUndefined();
  });

  it("delivers a handler's progress to the SDK's onprogress", async () => {
    const { sdkClient, sdkErrors, wire } = await sdkClientAgainstOurServer(version);
    const reports: SdkProgress[] = [];
    const result = await sdkClient.callTool({ name: 'progress', arguments: {} }, undefined, {
      onprogress: (progress) => reports.push(progress),
    });
    expect(result).toEqual({ content: [{ type: 'text', text: 'done' }] });
    // `message` exists since 2025-03-26: our server drops it for older peers.
    expect(reports).toEqual([
      isAtLeast(version, '2025-03-26') ? { progress: 1, total: 2, message: 'half way' } : { progress: 1, total: 2 },
    ]);
    expect(sdkErrors).toEqual([]);
    // The adapter hands the SDK transport the request each message belongs to (HTTP transports route by it).
    const progress = wire.find((entry) => entry.message.method === 'notifications/progress')!;
    const requestId = progress.message.params.progressToken; // the SDK uses the request id as the token
    expect(progress.options).toEqual({ relatedRequestId: requestId });
    expect(wire.find((entry) => entry.message.id === requestId)?.options).toEqual({ relatedRequestId: requestId });
  });

  it('delivers every progress of a burst sent right before the result, in order', async () => {
    const { sdkClient, sdkErrors } = await sdkClientAgainstOurServer(version);
    const reports: number[] = [];
    const result = await sdkClient.callTool({ name: 'progress-burst', arguments: { count: 5 } }, undefined, {
      onprogress: (progress) => reports.push(progress.progress),
    });
    expect(result).toEqual({ content: [{ type: 'text', text: 'sent 5' }] });
    expect(reports).toEqual([1, 2, 3, 4, 5]);
    expect(sdkErrors).toEqual([]);
  });

  it("aborts the handler's signal when the SDK client cancels, and sends no response", async () => {
    const { sdkClient, hooks, sent, sdkErrors } = await sdkClientAgainstOurServer(version);
    const controller = new AbortController();
    const call = sdkClient.callTool({ name: 'slow', arguments: {} }, undefined, { signal: controller.signal });
    const failure = call.catch((error: unknown) => error);
    const requestId = await hooks.slowStarted.promise;
    controller.abort('the user gave up');
    const reason = await hooks.slowAborted.promise;
    expect(reason).toBeInstanceOf(RequestCancelledError);
    expect(reason).toMatchObject({ method: 'tools/call', reason: 'the user gave up' });
    // The SDK rejects its own call at once, reporting the abort reason as an McpError (-32001, "RequestTimeout").
    expect(await failure).toMatchObject({ code: -32001 });
    expect(((await failure) as Error).message).toMatch(/the user gave up/);
    await hooks.slowFinished.promise;
    await settle();
    expect(sent.filter((message) => message.id === requestId && !('method' in message))).toEqual([]);
    expect(sdkErrors).toEqual([]);
    // The connection is still usable.
    expect(await sdkClient.callTool({ name: 'echo', arguments: { text: 'still here' } })).toEqual({
      content: [{ type: 'text', text: 'still here' }],
    });
  });

  it('sends log messages the SDK client receives', async () => {
    const { sdkClient } = await sdkClientAgainstOurServer(version);
    const logged = deferred<LoggingMessageNotification['params']>();
    sdkClient.setNotificationHandler(LoggingMessageNotificationSchema, (notification) =>
      logged.resolve(notification.params),
    );
    await sdkClient.setLoggingLevel('info');
    expect(await sdkClient.callTool({ name: 'log', arguments: {} })).toEqual({
      content: [{ type: 'text', text: 'logged' }],
    });
    expect(await logged.promise).toEqual({ level: 'warning', logger: 'interop', data: { step: 1 } });
  });

  it("aborts a running handler's signal when the SDK client goes away", async () => {
    const { sdkClient, connection, hooks } = await sdkClientAgainstOurServer(version);
    const call = sdkClient.callTool({ name: 'slow', arguments: {} }).catch((error: unknown) => error);
    await hooks.slowStarted.promise;
    await sdkClient.close();
    expect(await hooks.slowAborted.promise).toBeInstanceOf(ConnectionClosedError);
    expect(await call).toMatchObject({ code: -32000 }); // the SDK's ConnectionClosed
    expect(await connection.closed).toMatchObject({ kind: 'transport-closed' });
  });

  it('closes our connection when the SDK client closes, and the other way round', async () => {
    const first = await sdkClientAgainstOurServer(version);
    await first.sdkClient.close();
    expect(await first.connection.closed).toMatchObject({ kind: 'transport-closed' });

    const second = await sdkClientAgainstOurServer(version);
    const sdkClosed = deferred();
    second.sdkClient.onclose = () => sdkClosed.resolve();
    expect(await second.connection.close()).toMatchObject({ kind: 'local-close' });
    await sdkClosed.promise;
    await expect(second.sdkClient.ping()).rejects.toThrow(/Not connected/);
  });
});

// ---- b. our client against the SDK server ---------------------------------------------------------

interface SdkServerHooks {
  slowStarted: Deferred<void>;
  slowAborted: Deferred<unknown>;
  neverStarted: Deferred<void>;
  neverAborted: Deferred<unknown>;
  progressToken: Deferred<unknown>;
}

interface SdkServerSetup {
  readonly client: Client;
  readonly mcp: McpServer;
  readonly hooks: SdkServerHooks;
  readonly sdkErrors: Error[];
}

function sdkServer(hooks: SdkServerHooks): McpServer {
  const mcp = new McpServer(
    { name: 'sdk-server', version: '2.0.0' },
    { capabilities: { logging: {} }, instructions: 'SDK instructions' },
  );
  mcp.registerTool(
    'echo',
    {
      title: 'Echo',
      description: 'Echoes its text',
      inputSchema: { text: z.string() },
      annotations: { readOnlyHint: true },
    },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  mcp.registerTool(
    'add',
    {
      description: 'Adds two numbers',
      inputSchema: { a: z.number(), b: z.number() },
      outputSchema: { sum: z.number() },
    },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } }),
  );
  mcp.registerTool('progress', { description: 'Reports progress' }, async (extra) => {
    const progressToken = extra._meta?.progressToken;
    hooks.progressToken.resolve(progressToken);
    if (progressToken !== undefined) {
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken, progress: 1, total: 2 },
      });
    }
    return { content: [{ type: 'text', text: 'done' }] };
  });
  mcp.registerTool('slow', { description: 'Runs until cancelled' }, async (extra) => {
    hooks.slowStarted.resolve();
    hooks.slowAborted.resolve(await aborted(extra.signal));
    return { content: [{ type: 'text', text: 'too late' }] };
  });
  mcp.registerTool('never', { description: 'Never answers (until cancelled)' }, async (extra) => {
    hooks.neverStarted.resolve();
    hooks.neverAborted.resolve(await aborted(extra.signal));
    return { content: [{ type: 'text', text: 'too late' }] };
  });
  mcp.registerTool('log', { description: 'Logs while running' }, async (extra) => {
    await extra.sendNotification({
      method: 'notifications/message',
      params: { level: 'info', logger: 'tool', data: 'from a tool' },
    });
    return { content: [{ type: 'text', text: 'logged' }] };
  });
  return mcp;
}

/** An SDK McpServer with its hooks, collecting the errors the SDK reports. */
function watchedSdkServer() {
  const hooks: SdkServerHooks = {
    slowStarted: deferred(),
    slowAborted: deferred(),
    neverStarted: deferred(),
    neverAborted: deferred(),
    progressToken: deferred(),
  };
  const mcp = sdkServer(hooks);
  const sdkErrors: Error[] = [];
  mcp.server.onerror = (error) => sdkErrors.push(error);
  return { hooks, mcp, sdkErrors };
}

async function ourClientAgainstSdkServer(version: ProtocolVersion): Promise<SdkServerSetup> {
  const { hooks, mcp, sdkErrors } = watchedSdkServer();
  const client = await connectOurClient(mcp, { protocolVersion: version });
  return { client, mcp, hooks, sdkErrors };
}

function messages(client: Client, count: number): Promise<JsonRpcNotification[]> {
  return firstValueFrom(
    client.notifications$.pipe(
      filter((message) => message.method === 'notifications/message'),
      take(count),
      toArray(),
    ),
  );
}

describe.each(VERSIONS)('our client against the SDK McpServer, negotiating %s', (version) => {
  it('negotiates the revision it asked for', async () => {
    const { client, mcp, sdkErrors } = await ourClientAgainstSdkServer(version);
    expect(client.state).toBe('ready');
    expect(client.protocolVersion).toBe(version);
    expect(client.serverInfo).toEqual({ name: 'sdk-server', version: '2.0.0' });
    expect(client.serverCapabilities).toMatchObject({ logging: {}, tools: { listChanged: true } });
    expect(client.instructions).toBe('SDK instructions');
    expect(mcp.server.getClientVersion()).toEqual({ name: 'switchboard-client', version: '1.0.0' });
    expect(sdkErrors).toEqual([]);
  });

  it('lists and calls tools', async () => {
    const { client, sdkErrors } = await ourClientAgainstSdkServer(version);
    const tools = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['echo', 'add', 'progress', 'slow', 'never', 'log']);
    expect(tools[0]).toMatchObject({
      name: 'echo',
      title: 'Echo',
      annotations: { readOnlyHint: true },
      inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    });
    expect(tools[1]?.outputSchema).toMatchObject({ type: 'object', properties: { sum: { type: 'number' } } });
    expect(await client.callTool('echo', { text: 'hi' })).toEqual({ content: [{ type: 'text', text: 'hi' }] });
    // Our client checks structuredContent against the outputSchema it listed.
    expect(await client.callTool('add', { a: 2, b: 3 })).toEqual({
      content: [{ type: 'text', text: '5' }],
      structuredContent: { sum: 5 },
    });
    expect(sdkErrors).toEqual([]);
  });

  it('makes concurrent calls', async () => {
    const { client } = await ourClientAgainstSdkServer(version);
    const texts = Array.from({ length: 25 }, (_, index) => `call ${index}`);
    const results = await Promise.all(texts.map((text) => client.callTool('echo', { text })));
    expect(results.map((result) => (result.content[0] as { text: string }).text)).toEqual(texts);
  });

  it('gets tool errors as isError results', async () => {
    const { client } = await ourClientAgainstSdkServer(version);
    const invalid = await client.callTool('echo', { text: 42 });
    expect(invalid.isError).toBe(true);
    expect((invalid.content[0] as { text: string }).text).toMatch(/Invalid arguments for tool echo/);
    // The SDK server reports an unknown tool as a tool error too, not as a -32602 protocol error.
    const unknown = await client.callTool('nope', {});
    expect(unknown).toEqual({
      content: [{ type: 'text', text: 'MCP error -32602: Tool nope not found' }],
      isError: true,
    });
  });

  it('pings', async () => {
    const { client } = await ourClientAgainstSdkServer(version);
    await expect(client.ping()).resolves.toBeUndefined();
  });

  it('receives progress through onProgress', async () => {
    const { client, hooks, sdkErrors } = await ourClientAgainstSdkServer(version);
    const reports: Progress[] = [];
    const result = await client.callTool('progress', {}, { onProgress: (progress) => reports.push(progress) });
    expect(result).toEqual({ content: [{ type: 'text', text: 'done' }] });
    expect(await hooks.progressToken.promise).toBeDefined();
    expect(reports).toEqual([{ progressToken: await hooks.progressToken.promise, progress: 1, total: 2 }]);
    expect(sdkErrors).toEqual([]);
  });

  it('cancels a call: RequestCancelledError here, the SDK handler signal fires there', async () => {
    const { client, hooks, sdkErrors } = await ourClientAgainstSdkServer(version);
    const controller = new AbortController();
    const call = client.callTool('slow', {}, { signal: controller.signal });
    const failure = call.catch((error: unknown) => error);
    await hooks.slowStarted.promise;
    controller.abort('changed my mind');
    const error = await failure;
    expect(error).toBeInstanceOf(RequestCancelledError);
    expect(error).toMatchObject({ method: 'tools/call', reason: 'changed my mind' });
    // The SDK aborts its handler with the reason from notifications/cancelled.
    expect(await hooks.slowAborted.promise).toBe('The request was cancelled by the requester');
    await settle();
    expect(client.pendingRequestCount).toBe(0);
    expect(sdkErrors).toEqual([]);
    expect(await client.callTool('echo', { text: 'again' })).toEqual({ content: [{ type: 'text', text: 'again' }] });
  });

  it('times out a call the server never answers, and tells the server', async () => {
    const { client, hooks, sdkErrors } = await ourClientAgainstSdkServer(version);
    const started = Date.now();
    const error = await client.callTool('never', {}, { timeout: 50 }).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect(error).not.toBeInstanceOf(McpError);
    expect(error).toMatchObject({ method: 'tools/call', limit: 'idle', budgetMs: 50 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    await hooks.neverStarted.promise;
    expect(await hooks.neverAborted.promise).toBe('The request timed out');
    await settle();
    expect(sdkErrors).toEqual([]);
  });

  it('enforces maxTotalTimeout even with resetTimeoutOnProgress', async () => {
    const { client, hooks } = await ourClientAgainstSdkServer(version);
    const error = await client
      .callTool('never', {}, { timeout: 5_000, resetTimeoutOnProgress: true, maxTotalTimeout: 40 })
      .catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect(error).toMatchObject({ limit: 'total', budgetMs: 40 });
    expect(await hooks.neverAborted.promise).toBe('The request timed out');
  });

  it("answers the SDK server's ping", async () => {
    const { mcp } = await ourClientAgainstSdkServer(version);
    expect(await mcp.server.ping()).toEqual({});
  });

  it('receives log messages on notifications$', async () => {
    const { client, mcp } = await ourClientAgainstSdkServer(version);
    const first = messages(client, 2);
    await mcp.sendLoggingMessage({ level: 'info', logger: 'sdk', data: { hello: 'world' } });
    expect(await client.callTool('log', {})).toEqual({ content: [{ type: 'text', text: 'logged' }] });
    expect((await first).map((message) => message.params)).toEqual([
      { level: 'info', logger: 'sdk', data: { hello: 'world' } },
      { level: 'info', logger: 'tool', data: 'from a tool' },
    ]);

    // logging/setLevel filters what the SDK server sends.
    await client.request('logging/setLevel', { level: 'error' });
    const next = messages(client, 1);
    await mcp.sendLoggingMessage({ level: 'info', data: 'filtered out' });
    await mcp.sendLoggingMessage({ level: 'error', data: 'kept' });
    expect((await next).map((message) => message.params)).toEqual([{ level: 'error', data: 'kept' }]);
  });

  it('rejects a pending call with ConnectionClosedError on close, and the SDK handler is aborted', async () => {
    const { client, hooks } = await ourClientAgainstSdkServer(version);
    const call = client.callTool('slow', {}).catch((error: unknown) => error);
    await hooks.slowStarted.promise;
    await client.close();
    expect(await call).toBeInstanceOf(ConnectionClosedError);
    await hooks.slowAborted.promise; // the SDK aborts every running handler when its transport closes
  });

  it('closes, and the SDK server sees the close', async () => {
    const { client, mcp } = await ourClientAgainstSdkServer(version);
    const sdkClosed = deferred();
    mcp.server.onclose = () => sdkClosed.resolve();
    expect(await client.close()).toMatchObject({ kind: 'local-close' });
    await sdkClosed.promise;
    expect(mcp.isConnected()).toBe(false);
    expect(client.state).toBe('closed');
  });
});

// ---- over a serializing SDK transport --------------------------------------------------------------

/**
 * The SDK's stdio transport only reads and writes line-delimited JSON on two streams, so two of them crossed
 * over PassThrough streams make a pair. Unlike the in-memory pair, every message is serialized and the
 * receiving SDK transport parses it with the SDK's JSON-RPC schema (reporting what fails through onerror).
 */
function stdioPair(): [StdioServerTransport, StdioServerTransport] {
  const forward = new PassThrough();
  const backward = new PassThrough();
  return [new StdioServerTransport(backward, forward), new StdioServerTransport(forward, backward)];
}

describe('over the SDK stdio transport', () => {
  it('the SDK client calls our server', async () => {
    const [sdkSide, ourSide] = stdioPair();
    const transportErrors: Error[] = [];
    const hooks: ServerHooks = {
      slowStarted: deferred(),
      slowAborted: deferred(),
      slowFinished: deferred(),
    };
    const server = new Server(defineServer({ name: 'switchboard-server', version: '1.2.3', tools: ourTools(hooks) }));
    const { connection } = serveOverSdkTransport(server, ourSide, { onError: (error) => transportErrors.push(error) });
    const sdkClient = new SdkClient({ name: 'sdk-client', version: '9.9.9' });
    const sdkErrors = watchSdkClient(sdkClient, server);
    await sdkClient.connect(sdkSide);
    expect(connection.protocolVersion).toBe('2025-11-25');
    expect((await sdkClient.listTools()).tools).toHaveLength(7);
    expect(await sdkClient.callTool({ name: 'weather', arguments: { city: 'Oslo' } })).toMatchObject({
      structuredContent: { city: 'Oslo', celsius: 21.5 },
    });
    const reports: SdkProgress[] = [];
    const progress = await sdkClient.callTool({ name: 'progress', arguments: {} }, undefined, {
      onprogress: (report) => reports.push(report),
    });
    expect(progress).toEqual({ content: [{ type: 'text', text: 'done' }] });
    expect(reports).toEqual([{ progress: 1, total: 2, message: 'half way' }]);
    const burst: number[] = [];
    const burstResult = await sdkClient.callTool({ name: 'progress-burst', arguments: { count: 8 } }, undefined, {
      onprogress: (report) => burst.push(report.progress),
    });
    expect(burstResult).toEqual({ content: [{ type: 'text', text: 'sent 8' }] });
    expect(burst).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(sdkErrors).toEqual([]);
    expect(transportErrors).toEqual([]);
  });

  it.each(VERSIONS)('our client calls the SDK McpServer (%s)', async (version) => {
    const [ourSide, sdkSide] = stdioPair();
    const { hooks, mcp, sdkErrors } = watchedSdkServer();
    await mcp.connect(sdkSide);
    const transportErrors: Error[] = [];
    const client = new Client({ name: 'switchboard-client', version: '1.0.0' }, { protocolVersion: version });
    validateEmitted(client);
    cleanups.push(
      () => mcp.close(),
      () => client.close(),
    );
    await client.connect(fromSdkTransport(ourSide, { onError: (error) => transportErrors.push(error) }));
    expect(client.protocolVersion).toBe(version);
    await client.listTools();
    expect(await client.callTool('add', { a: 1, b: 2 })).toMatchObject({ structuredContent: { sum: 3 } });
    const reports: Progress[] = [];
    await client.callTool('progress', {}, { onProgress: (report) => reports.push(report) });
    expect(reports).toHaveLength(1);
    const controller = new AbortController();
    const cancelled = client.callTool('slow', {}, { signal: controller.signal }).catch((error: unknown) => error);
    await hooks.slowStarted.promise;
    controller.abort();
    expect(await cancelled).toBeInstanceOf(RequestCancelledError);
    await hooks.slowAborted.promise;
    await client.ping();
    expect(sdkErrors).toEqual([]);
    expect(transportErrors).toEqual([]);
  });
});

// ---- over real stdio --------------------------------------------------------------------------------

describe('the SDK client over real stdio (our server in a child process)', () => {
  // Our stdio server batches the writes of one turn: without holding a response back until its progress has
  // left, progress and result share a chunk and the SDK client drops the progress.
  it('sees every progress notification before its result, one or many in a row', async () => {
    const sdkClient = new SdkClient({ name: 'sdk-client', version: '9.9.9' });
    const sdkErrors: Error[] = [];
    sdkClient.onerror = (error) => sdkErrors.push(error);
    const transport = new SdkStdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', 'test/fixtures/hostile-server.ts'],
      stderr: 'pipe',
    });
    cleanups.push(() => sdkClient.close());
    await sdkClient.connect(transport);
    const one: SdkProgress[] = [];
    const result = await sdkClient.callTool({ name: 'progress', arguments: {} }, undefined, {
      onprogress: (report) => one.push(report),
    });
    expect(result).toEqual({ content: [{ type: 'text', text: 'done' }] });
    expect(one).toEqual([{ progress: 1, total: 2, message: 'half way' }]);
    for (const count of [3, 10]) {
      const burst: number[] = [];
      const burstResult = await sdkClient.callTool({ name: 'progress-burst', arguments: { count } }, undefined, {
        onprogress: (report) => burst.push(report.progress),
      });
      expect(burstResult).toEqual({ content: [{ type: 'text', text: `sent ${count}` }] });
      expect(burst).toEqual(Array.from({ length: count }, (_, index) => index + 1));
    }
    expect(sdkErrors).toEqual([]);
  });
});

// ---- the adapter's own contract -------------------------------------------------------------------

/**
 * A hand-written transport of the SDK's shape, for what the real `InMemoryTransport` cannot show: a
 * failing start, onerror reports, a close that forgets `onclose`, send options.
 */
class ScriptedTransport implements SdkTransportLike {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: any, extra?: any) => void) | undefined;
  sessionId?: string | undefined;
  readonly calls: string[] = [];
  readonly sent: { message: unknown; options: SdkTransportSendOptions | undefined; argc: number }[] = [];
  startResult: Promise<void> = Promise.resolve();
  sendError: Error | undefined;
  callOnCloseFromClose = true;

  start(): Promise<void> {
    this.calls.push(
      `start(callbacks: ${[this.onmessage, this.onclose, this.onerror].every((callback) => typeof callback === 'function')})`,
    );
    return this.startResult;
  }

  send(...args: [message: unknown, options?: SdkTransportSendOptions]): Promise<void> {
    this.sent.push({ message: args[0], options: args[1], argc: args.length });
    return this.sendError ? Promise.reject(this.sendError) : Promise.resolve();
  }

  close(): Promise<void> {
    this.calls.push('close');
    if (this.callOnCloseFromClose) this.onclose?.();
    return Promise.resolve();
  }
}

/** Subscribes and records what the stream does. */
function observe(messages: Observable<InboundFrame>) {
  const frames: InboundFrame[] = [];
  const state: { completed: boolean; error: unknown } = { completed: false, error: undefined };
  const ended = new Promise<void>((resolve) =>
    messages.subscribe({
      next: (frame) => frames.push(frame),
      error: (error) => {
        state.error = error;
        resolve();
      },
      complete: () => {
        state.completed = true;
        resolve();
      },
    }),
  );
  return { frames, state, ended };
}

const PING: JsonRpcMessage = { jsonrpc: '2.0', id: 1, method: 'ping' };

describe('fromSdkTransport', () => {
  it('installs the callbacks, then starts; onmessage feeds the stream and onclose completes it', async () => {
    const sdk = new ScriptedTransport();
    const transport = fromSdkTransport(sdk);
    expect(sdk.calls).toEqual([]); // nothing happens before someone subscribes
    const { frames, state, ended } = observe(transport.messages);
    expect(sdk.calls).toEqual(['start(callbacks: true)']);
    sdk.onmessage!(PING, { authInfo: undefined });
    expect(frames).toEqual([PING]);
    sdk.onclose!();
    await ended;
    expect(state).toEqual({ completed: true, error: undefined });
    await expect(transport.send(PING)).rejects.toBeInstanceOf(TransportError);
  });

  it('errors the stream with a TransportError when start() fails, and refuses sends', async () => {
    const sdk = new ScriptedTransport();
    const cause = new Error('no such host');
    sdk.startResult = Promise.reject(cause);
    const transport = fromSdkTransport(sdk);
    const { state, ended } = observe(transport.messages);
    const send = transport.send(PING); // issued while start() is pending
    await ended;
    expect(state.error).toBeInstanceOf(TransportError);
    expect(state.error).toMatchObject({ message: expect.stringMatching(/no such host/), cause });
    await expect(send).rejects.toBeInstanceOf(TransportError);
    expect(sdk.sent).toEqual([]);
  });

  it('reports onerror to the onError option without ending the stream', async () => {
    const sdk = new ScriptedTransport();
    const reported: Error[] = [];
    const { frames, state } = observe(fromSdkTransport(sdk, { onError: (error) => reported.push(error) }).messages);
    const problem = new Error('a line that is not JSON-RPC');
    expect(() => sdk.onerror!(problem)).not.toThrow();
    sdk.onmessage!(PING);
    expect(reported).toEqual([problem]);
    expect(frames).toEqual([PING]);
    expect(state).toEqual({ completed: false, error: undefined });

    // Without the option, or with one that throws, the report is dropped: the SDK transport never sees a throw.
    const quiet = new ScriptedTransport();
    observe(fromSdkTransport(quiet).messages);
    expect(() => quiet.onerror!(problem)).not.toThrow();
    const loud = new ScriptedTransport();
    observe(
      fromSdkTransport(loud, {
        onError: () => {
          throw new Error('listener bug');
        },
      }).messages,
    );
    expect(() => loud.onerror!(problem)).not.toThrow();
  });

  it('forwards relatedRequestId, waits for start(), and wraps send failures in TransportError', async () => {
    const sdk = new ScriptedTransport();
    let started!: () => void;
    sdk.startResult = new Promise((resolve) => (started = resolve));
    const transport = fromSdkTransport(sdk);
    observe(transport.messages);
    const first = transport.send(PING);
    const second = transport.send({ jsonrpc: '2.0', id: 7, result: {} }, { relatedRequestId: 7 });
    await settle();
    expect(sdk.sent).toEqual([]); // held until start() resolves
    started();
    await Promise.all([first, second]);
    expect(sdk.sent).toEqual([
      { message: PING, options: undefined, argc: 1 },
      { message: { jsonrpc: '2.0', id: 7, result: {} }, options: { relatedRequestId: 7 }, argc: 2 },
    ]);

    const cause = new Error('socket hang up');
    sdk.sendError = cause;
    const failure = await transport.send(PING).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(TransportError);
    expect(failure).toMatchObject({ cause });
  });

  it('closes once, completing the stream even when the SDK transport does not call onclose', async () => {
    const sdk = new ScriptedTransport();
    sdk.callOnCloseFromClose = false;
    const transport = fromSdkTransport(sdk);
    const { state, ended } = observe(transport.messages);
    await Promise.all([transport.close(), transport.close()]);
    await transport.close();
    await ended;
    expect(state.completed).toBe(true);
    expect(sdk.calls.filter((call) => call === 'close')).toHaveLength(1);
    await expect(transport.send(PING)).rejects.toBeInstanceOf(TransportError);
  });

  it('does not close an SDK transport that already reported onclose', async () => {
    const sdk = new ScriptedTransport();
    const transport = fromSdkTransport(sdk);
    observe(transport.messages);
    sdk.onclose!();
    await transport.close();
    expect(sdk.calls).toEqual(['start(callbacks: true)']);
  });

  it('forwards setProtocolVersion when the SDK transport has it, and reads sessionId live', () => {
    const sdk = new ScriptedTransport();
    const transport = fromSdkTransport(sdk);
    expect(() => transport.setProtocolVersion?.('2025-06-18')).not.toThrow(); // absent: nothing to forward
    const versions: string[] = [];
    (sdk as SdkTransportLike).setProtocolVersion = (version) => versions.push(version);
    transport.setProtocolVersion?.('2025-06-18');
    expect(versions).toEqual(['2025-06-18']);
    expect(transport.sessionId).toBeUndefined();
    sdk.sessionId = 'session-1';
    expect(transport.sessionId).toBe('session-1');
  });

  it('has a single subscriber', async () => {
    const sdk = new ScriptedTransport();
    const transport = fromSdkTransport(sdk);
    observe(transport.messages);
    const second = observe(transport.messages);
    await second.ended;
    expect(second.state.error).toBeInstanceOf(TransportError);
    expect(sdk.calls).toEqual(['start(callbacks: true)']);
  });

  it('carries our client and server over a real SDK InMemoryTransport pair', async () => {
    const [a, b] = InMemoryTransport.createLinkedPair();
    const server = new Server(defineServer({ name: 'ours', version: '1.0.0', tools: [] }));
    const connection = server.connect(fromSdkTransport(b));
    const client = new Client({ name: 'ours', version: '1.0.0' });
    validateEmitted(connection);
    validateEmitted(client);
    cleanups.push(
      () => client.close(),
      () => server.close(),
    );
    await client.connect(fromSdkTransport(a));
    expect(await client.listTools()).toEqual([]);
    await client.close();
    expect(await connection.closed).toMatchObject({ kind: 'transport-closed' });
  });
});
