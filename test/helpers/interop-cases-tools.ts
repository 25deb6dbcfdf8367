/**
 * The interop suite, part 2: tools (listing, calling, errors, progress, list changes) and logging, for both
 * directions (see `runInteropSuite` in ./interop.ts).
 */
import type { LoggingMessageNotificationParams, Progress as SdkProgress } from '@modelcontextprotocol/client';
import { filter, firstValueFrom, take, toArray } from 'rxjs';
import { expect } from 'vitest';
import type { Client } from '../../lib/client/client';
import { McpError } from '../../lib/jsonrpc/errors';
import type { JsonRpcNotification } from '../../lib/jsonrpc/types';
import type { LoggingMessageParams, Progress } from '../../lib/protocol/types';
import { isAtLeast } from '../../lib/protocol/versions';
import type { ToolDefinition } from '../../lib/server/tools';
import { RICH_TOOL } from '../fixtures/interop-our-server';
import { deferred } from './fixtures';
import {
  ourClientAgainstSdkPrimitives,
  ourClientAgainstSdkServer,
  sdkClientAgainstOurPrimitives,
  sdkClientAgainstOurServer,
  BOTH_ERAS,
  HANDSHAKE_ERA,
  type InteropCase,
} from './interop';
import type { SdkClientPeer } from './interop-sdk-client';

/** The next `count` notifications/message our client receives. */
function messages(client: Client, count: number): Promise<JsonRpcNotification[]> {
  return firstValueFrom(
    client.notifications$.pipe(
      filter((message) => message.method === 'notifications/message'),
      take(count),
      toArray(),
    ),
  );
}

/** The next `count` log messages the SDK client receives (its handler replaced each time). */
function sdkLogs(sdkClient: SdkClientPeer, count: number): Promise<LoggingMessageNotificationParams[]> {
  const seen: LoggingMessageNotificationParams[] = [];
  const done = deferred<LoggingMessageNotificationParams[]>();
  sdkClient.onNotification('notifications/message', (params) => {
    seen.push(params);
    if (seen.length === count) done.resolve(seen);
  });
  return done.promise;
}

export const TOOL_CASES: InteropCase[] = [
  {
    title: 'lists tools with the fields this revision carries',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurServer(run);
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
      if (isAtLeast(run.version, '2025-03-26')) expected.annotations = RICH_TOOL.annotations;
      if (isAtLeast(run.version, '2025-06-18')) {
        expected.title = RICH_TOOL.title;
        expected.outputSchema = RICH_TOOL.outputSchema;
        expected._meta = RICH_TOOL._meta;
      }
      if (isAtLeast(run.version, '2025-11-25')) expected.icons = RICH_TOOL.icons;
      expect(weather).toEqual(expected);
    },
    client: async (run) => {
      const { client, sdkErrors } = await ourClientAgainstSdkServer(run);
      const tools = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['echo', 'add', 'progress', 'slow', 'never', 'log']);
      expect(tools[0]).toMatchObject({
        name: 'echo',
        title: 'Echo',
        annotations: { readOnlyHint: true },
        inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      });
      expect(tools[1]?.outputSchema).toMatchObject({ type: 'object', properties: { sum: { type: 'number' } } });
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: 'calls a tool',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient, sdkErrors } = await sdkClientAgainstOurServer(run);
      expect(await sdkClient.callTool({ name: 'echo', arguments: { text: 'hello' } })).toEqual({
        content: [{ type: 'text', text: 'hello' }],
      });
      expect(sdkErrors).toEqual([]);
    },
    client: async (run) => {
      const { client, sdkErrors } = await ourClientAgainstSdkServer(run);
      expect(await client.callTool('echo', { text: 'hi' })).toEqual({ content: [{ type: 'text', text: 'hi' }] });
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: 'carries structured content the client checks against the outputSchema',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurServer(run);
      const { tools } = await sdkClient.listTools(); // the SDK client learns output schemas from listTools
      const structured = { city: 'Oslo', celsius: 21.5 };
      const result = await sdkClient.callTool({ name: 'weather', arguments: { city: 'Oslo' } });
      expect(result.content).toEqual([{ type: 'text', text: JSON.stringify(structured) }]);
      if (isAtLeast(run.version, '2025-06-18')) {
        expect(tools.find((tool) => tool.name === 'weather')?.outputSchema).toBeDefined();
        expect(result.structuredContent).toEqual(structured);
      } else {
        // Before 2025-06-18 there is no structuredContent: the JSON text block carries it.
        expect(result.structuredContent).toBeUndefined();
      }
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkServer(run);
      await client.listTools();
      // Our client checks structuredContent against the outputSchema it listed.
      expect(await client.callTool('add', { a: 2, b: 3 })).toEqual({
        content: [{ type: 'text', text: '5' }],
        structuredContent: { sum: 5 },
      });
    },
  },
  {
    title: 'answers concurrent calls',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurServer(run);
      const texts = Array.from({ length: 25 }, (_, index) => `call ${index}`);
      const results = await Promise.all(texts.map((text) => sdkClient.callTool({ name: 'echo', arguments: { text } })));
      expect(results.map((result) => (result.content as { text: string }[])[0]?.text)).toEqual(texts);
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkServer(run);
      const texts = Array.from({ length: 25 }, (_, index) => `call ${index}`);
      const results = await Promise.all(texts.map((text) => client.callTool('echo', { text })));
      expect(results.map((result) => (result.content[0] as { text: string }).text)).toEqual(texts);
    },
  },
  {
    title: 'answers invalid arguments with an isError result',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurServer(run);
      const result = await sdkClient.callTool({ name: 'echo', arguments: { text: 42 } });
      expect(result.isError).toBe(true);
      expect((result.content as { text: string }[])[0]?.text).toMatch(/Invalid arguments for tool echo/);
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkServer(run);
      const invalid = await client.callTool('echo', { text: 42 });
      expect(invalid.isError).toBe(true);
      expect((invalid.content[0] as { text: string }).text).toMatch(/Invalid arguments for tool echo/);
    },
  },
  {
    title: 'answers an unknown tool with a -32602 error',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurServer(run);
      const failure = await sdkClient.callTool({ name: 'nope', arguments: {} }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(sdkClient.ProtocolError);
      expect(failure).toMatchObject({ code: -32602 });
      expect((failure as Error).message).toMatch(/Unknown tool: nope/);
    },
  },
  {
    title: "reads the SDK server's answer to an unknown tool",
    eras: BOTH_ERAS,
    client: async (run) => {
      const { client } = await ourClientAgainstSdkServer(run);
      if (run.sdk === 'v1') {
        // SDK v1 reports an unknown tool as a tool error, not as a -32602 protocol error.
        expect(await client.callTool('nope', {})).toEqual({
          content: [{ type: 'text', text: 'MCP error -32602: Tool nope not found' }],
          isError: true,
        });
      } else {
        const failure = await client.callTool('nope', {}).catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(McpError);
        expect(failure).toMatchObject({ code: -32602, message: 'Tool nope not found' });
      }
    },
  },
  {
    title: 'turns a throwing handler into an isError result with its message',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurServer(run);
      expect(await sdkClient.callTool({ name: 'fail', arguments: {} })).toEqual({
        content: [{ type: 'text', text: 'the tool broke' }],
        isError: true,
      });
    },
  },
  {
    title: 'sends a request to the client from inside a tool call, related to that call',
    eras: HANDSHAKE_ERA,
    server: async (run) => {
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
      const { connection, wire, sdkClient } = await sdkClientAgainstOurServer(run, {
        tools,
        capabilities: { roots: {} },
      });
      sdkClient.onRequest('roots/list', () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));
      expect(connection.clientCapabilities).toEqual({ roots: {} });
      expect(await sdkClient.callTool({ name: 'roots', arguments: {} })).toEqual({
        content: [{ type: 'text', text: 'file:///work' }],
      });
      const call = wire.find((entry) => entry.message.method === 'roots/list')!;
      expect(call.options?.relatedRequestId).toBeDefined();
    },
  },
  {
    title: 'tells the client when the tools change',
    eras: HANDSHAKE_ERA,
    server: async (run) => {
      const { sdkClient, server } = await sdkClientAgainstOurServer(run);
      const changed = deferred();
      sdkClient.onNotification('notifications/tools/list_changed', () => changed.resolve());
      server.update((definition) =>
        definition.withTools({ name: 'late', inputSchema: { type: 'object' }, handler: () => ({ content: [] }) }),
      );
      await changed.promise;
      expect((await sdkClient.listTools()).tools.map((tool) => tool.name)).toContain('late');
    },
    client: async (run) => {
      const { client, mcp } = await ourClientAgainstSdkServer(run);
      const changed = firstValueFrom(
        client.notifications$.pipe(filter((note) => note.method === 'notifications/tools/list_changed')),
      );
      mcp.registerTool('late', { description: 'Added later' }, async () => ({ content: [] }));
      await changed;
      expect((await client.listTools()).map((tool) => tool.name)).toContain('late');
    },
  },
  {
    title: 'pages tools/list when there are more tools than the page size',
    eras: BOTH_ERAS,
    server: async (run) => {
      const tools: ToolDefinition<any>[] = ['t1', 't2', 't3', 't4', 't5'].map((name) => ({
        name,
        inputSchema: { type: 'object' },
        handler: () => ({ content: [{ type: 'text', text: name }] }),
      }));
      const { sdkClient, sent } = await sdkClientAgainstOurServer(run, { pageSize: 2, tools });
      const listed: string[] = [];
      let cursor: string | undefined;
      // SDK v1 hands back one page per call; SDK v2 walks the pages itself.
      for (let page = 0; page < 10; page++) {
        const result = await sdkClient.listTools(cursor === undefined ? undefined : { cursor });
        listed.push(...result.tools.map((tool) => tool.name));
        cursor = result.nextCursor;
        if (cursor === undefined) break;
      }
      expect(listed).toEqual(['t1', 't2', 't3', 't4', 't5']);
      const pages = sent.filter((message) => message.result?.tools);
      expect(pages.map((message) => message.result.tools.map((tool: { name: string }) => tool.name))).toEqual([
        ['t1', 't2'],
        ['t3', 't4'],
        ['t5'],
      ]);
      expect(cursor).toBeUndefined();
    },
  },
  {
    title: "delivers a handler's progress to the caller",
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient, sdkErrors } = await sdkClientAgainstOurServer(run);
      const reports: SdkProgress[] = [];
      const result = await sdkClient.callTool(
        { name: 'progress', arguments: {} },
        {
          onprogress: (progress) => reports.push(progress),
        },
      );
      expect(result).toEqual({ content: [{ type: 'text', text: 'done' }] });
      // `message` exists since 2025-03-26: our server drops it for older peers.
      expect(reports).toEqual([
        isAtLeast(run.version, '2025-03-26')
          ? { progress: 1, total: 2, message: 'half way' }
          : { progress: 1, total: 2 },
      ]);
      expect(sdkErrors).toEqual([]);
    },
    client: async (run) => {
      const { client, hooks, sdkErrors } = await ourClientAgainstSdkServer(run);
      const reports: Progress[] = [];
      const result = await client.callTool('progress', {}, { onProgress: (progress) => reports.push(progress) });
      expect(result).toEqual({ content: [{ type: 'text', text: 'done' }] });
      expect(await hooks.progressToken.promise).toBeDefined();
      expect(reports).toEqual([{ progressToken: await hooks.progressToken.promise, progress: 1, total: 2 }]);
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: 'hands the SDK transport the request each progress and result belongs to',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient, wire } = await sdkClientAgainstOurServer(run);
      await sdkClient.callTool({ name: 'progress', arguments: {} }, { onprogress: () => undefined });
      // The adapter passes relatedRequestId (HTTP transports route by it).
      const progress = wire.find((entry) => entry.message.method === 'notifications/progress')!;
      const requestId = progress.message.params.progressToken; // the SDK uses the request id as the token
      expect(progress.options).toEqual({ relatedRequestId: requestId });
      expect(wire.find((entry) => entry.message.id === requestId)?.options).toEqual({ relatedRequestId: requestId });
    },
  },
  {
    title: 'delivers every progress of a burst sent right before the result, in order',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient, sdkErrors } = await sdkClientAgainstOurServer(run);
      const reports: number[] = [];
      const result = await sdkClient.callTool(
        { name: 'progress-burst', arguments: { count: 5 } },
        {
          onprogress: (progress) => reports.push(progress.progress),
        },
      );
      expect(result).toEqual({ content: [{ type: 'text', text: 'sent 5' }] });
      expect(reports).toEqual([1, 2, 3, 4, 5]);
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: 'delivers log messages sent during a tool call',
    eras: HANDSHAKE_ERA,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurServer(run);
      const logged = deferred<LoggingMessageNotificationParams>();
      sdkClient.onNotification('notifications/message', (params) => logged.resolve(params));
      await sdkClient.setLoggingLevel('info');
      expect(await sdkClient.callTool({ name: 'log', arguments: {} })).toEqual({
        content: [{ type: 'text', text: 'logged' }],
      });
      expect(await logged.promise).toEqual({ level: 'warning', logger: 'interop', data: { step: 1 } });
    },
    client: async (run) => {
      const { client, mcp } = await ourClientAgainstSdkServer(run);
      const first = messages(client, 2);
      await mcp.sendLoggingMessage({ level: 'info', logger: 'sdk', data: { hello: 'world' } });
      expect(await client.callTool('log', {})).toEqual({ content: [{ type: 'text', text: 'logged' }] });
      expect((await first).map((message) => message.params)).toEqual([
        { level: 'info', logger: 'sdk', data: { hello: 'world' } },
        { level: 'info', logger: 'tool', data: 'from a tool' },
      ]);
    },
  },
  {
    title: 'sends only the log messages at or above the level the client set',
    eras: HANDSHAKE_ERA,
    server: async (run) => {
      const { sdkClient, sdkErrors } = await sdkClientAgainstOurPrimitives(run);
      const logs = sdkLogs(sdkClient, 2);
      expect(await sdkClient.setLoggingLevel('warning')).toEqual({});
      expect(await sdkClient.callTool({ name: 'log', arguments: {} })).toEqual({
        content: [{ type: 'text', text: 'logged' }],
      });
      expect(await logs).toEqual([
        { level: 'warning', logger: 'interop', data: { step: 2 } },
        { level: 'error', logger: 'interop', data: 'last' },
      ]);
      expect(sdkErrors).toEqual([]);
    },
    client: async (run) => {
      const { client, mcp } = await ourClientAgainstSdkServer(run);
      // logging/setLevel filters what the SDK server sends.
      await client.request('logging/setLevel', { level: 'error' });
      const next = messages(client, 1);
      await mcp.sendLoggingMessage({ level: 'info', data: 'filtered out' });
      await mcp.sendLoggingMessage({ level: 'error', data: 'kept' });
      expect((await next).map((message) => message.params)).toEqual([{ level: 'error', data: 'kept' }]);
    },
  },
  {
    title: 'sends every level once the client lowers its level to debug',
    eras: HANDSHAKE_ERA,
    server: async (run) => {
      const { sdkClient, sdkErrors } = await sdkClientAgainstOurPrimitives(run);
      await sdkClient.setLoggingLevel('warning');
      const logs = sdkLogs(sdkClient, 4);
      await sdkClient.setLoggingLevel('debug');
      await sdkClient.callTool({ name: 'log', arguments: {} });
      expect((await logs).map((params) => params.level)).toEqual(['debug', 'info', 'warning', 'error']);
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: 'sends every level before the client sets one',
    eras: HANDSHAKE_ERA,
    server: async (run) => {
      const { sdkClient, sdkErrors } = await sdkClientAgainstOurPrimitives(run);
      const logs = sdkLogs(sdkClient, 4);
      expect(await sdkClient.callTool({ name: 'log', arguments: {} })).toEqual({
        content: [{ type: 'text', text: 'logged' }],
      });
      expect((await logs).map((params) => params.level)).toEqual(['debug', 'info', 'warning', 'error']);
      expect(sdkErrors).toEqual([]);
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkPrimitives(run);
      const logs = firstValueFrom(client.logs$.pipe(take(4), toArray()));
      expect(await client.callTool('log', {})).toEqual({ content: [{ type: 'text', text: 'logged' }] });
      expect((await logs).map((log) => log.level)).toEqual(['debug', 'info', 'warning', 'error']);
    },
  },
  {
    title: 'delivers the log messages at or above the level set on logs$, from inside and outside a tool',
    eras: BOTH_ERAS,
    client: async (run) => {
      const { client, mcp } = await ourClientAgainstSdkPrimitives(run);
      await client.setLoggingLevel('warning');
      const logs = firstValueFrom(client.logs$.pipe(take(3), toArray()));
      await client.callTool('log', {});
      await mcp.sendLoggingMessage({ level: 'notice', data: 'filtered out' });
      await mcp.sendLoggingMessage({ level: 'critical', logger: 'outside', data: 'outside a tool' });
      expect(await logs).toEqual<LoggingMessageParams[]>([
        { level: 'warning', logger: 'sdk', data: { step: 2 } },
        { level: 'error', data: 'last' },
        { level: 'critical', logger: 'outside', data: 'outside a tool' },
      ]);
    },
  },
];
