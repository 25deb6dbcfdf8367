/**
 * The interop suite, part 2: tools (listing, calling, errors, progress, list changes) and logging, for both
 * directions (see `runInteropSuite` in ./interop.ts).
 */
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import {
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError as SdkMcpError,
  ToolListChangedNotificationSchema,
  type LoggingMessageNotification,
  type Progress as SdkProgress,
} from '@modelcontextprotocol/sdk/types.js';
import { filter, firstValueFrom, take, toArray } from 'rxjs';
import { expect } from 'vitest';
import type { Client } from '../../lib/client/client';
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
  type InteropCase,
} from './interop';

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
function sdkLogs(sdkClient: SdkClient, count: number): Promise<LoggingMessageNotification['params'][]> {
  const seen: LoggingMessageNotification['params'][] = [];
  const done = deferred<LoggingMessageNotification['params'][]>();
  sdkClient.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
    seen.push(params);
    if (seen.length === count) done.resolve(seen);
  });
  return done.promise;
}

export const TOOL_CASES: InteropCase[] = [
  {
    title: 'lists tools with the fields this revision carries',
    server: async (version) => {
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
    },
    client: async (version) => {
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
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: 'calls a tool',
    server: async (version) => {
      const { sdkClient, sdkErrors } = await sdkClientAgainstOurServer(version);
      expect(await sdkClient.callTool({ name: 'echo', arguments: { text: 'hello' } })).toEqual({
        content: [{ type: 'text', text: 'hello' }],
      });
      expect(sdkErrors).toEqual([]);
    },
    client: async (version) => {
      const { client, sdkErrors } = await ourClientAgainstSdkServer(version);
      expect(await client.callTool('echo', { text: 'hi' })).toEqual({ content: [{ type: 'text', text: 'hi' }] });
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: 'carries structured content the client checks against the outputSchema',
    server: async (version) => {
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
    },
    client: async (version) => {
      const { client } = await ourClientAgainstSdkServer(version);
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
    server: async (version) => {
      const { sdkClient } = await sdkClientAgainstOurServer(version);
      const texts = Array.from({ length: 25 }, (_, index) => `call ${index}`);
      const results = await Promise.all(texts.map((text) => sdkClient.callTool({ name: 'echo', arguments: { text } })));
      expect(results.map((result) => (result.content as { text: string }[])[0]?.text)).toEqual(texts);
    },
    client: async (version) => {
      const { client } = await ourClientAgainstSdkServer(version);
      const texts = Array.from({ length: 25 }, (_, index) => `call ${index}`);
      const results = await Promise.all(texts.map((text) => client.callTool('echo', { text })));
      expect(results.map((result) => (result.content[0] as { text: string }).text)).toEqual(texts);
    },
  },
  {
    title: 'answers invalid arguments with an isError result',
    server: async (version) => {
      const { sdkClient } = await sdkClientAgainstOurServer(version);
      const result = await sdkClient.callTool({ name: 'echo', arguments: { text: 42 } });
      expect(result.isError).toBe(true);
      expect((result.content as { text: string }[])[0]?.text).toMatch(/Invalid arguments for tool echo/);
    },
    client: async (version) => {
      const { client } = await ourClientAgainstSdkServer(version);
      const invalid = await client.callTool('echo', { text: 42 });
      expect(invalid.isError).toBe(true);
      expect((invalid.content[0] as { text: string }).text).toMatch(/Invalid arguments for tool echo/);
    },
  },
  {
    title: 'answers an unknown tool with a -32602 error',
    server: async (version) => {
      const { sdkClient } = await sdkClientAgainstOurServer(version);
      const failure = await sdkClient.callTool({ name: 'nope', arguments: {} }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(SdkMcpError);
      expect(failure).toMatchObject({ code: -32602 });
      expect((failure as Error).message).toMatch(/Unknown tool: nope/);
    },
  },
  {
    title: "reads the SDK server's isError answer to an unknown tool",
    client: async (version) => {
      const { client } = await ourClientAgainstSdkServer(version);
      // The SDK server reports an unknown tool as a tool error, not as a -32602 protocol error.
      expect(await client.callTool('nope', {})).toEqual({
        content: [{ type: 'text', text: 'MCP error -32602: Tool nope not found' }],
        isError: true,
      });
    },
  },
  {
    title: 'turns a throwing handler into an isError result with its message',
    server: async (version) => {
      const { sdkClient } = await sdkClientAgainstOurServer(version);
      expect(await sdkClient.callTool({ name: 'fail', arguments: {} })).toEqual({
        content: [{ type: 'text', text: 'the tool broke' }],
        isError: true,
      });
    },
  },
  {
    title: 'sends a request to the client from inside a tool call, related to that call',
    server: async (version) => {
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
    },
  },
  {
    title: 'tells the client when the tools change',
    server: async (version) => {
      const { sdkClient, server } = await sdkClientAgainstOurServer(version);
      const changed = deferred();
      sdkClient.setNotificationHandler(ToolListChangedNotificationSchema, () => changed.resolve());
      server.update((definition) =>
        definition.withTools({ name: 'late', inputSchema: { type: 'object' }, handler: () => ({ content: [] }) }),
      );
      await changed.promise;
      expect((await sdkClient.listTools()).tools.map((tool) => tool.name)).toContain('late');
    },
    client: async (version) => {
      const { client, mcp } = await ourClientAgainstSdkServer(version);
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
    server: async (version) => {
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
    },
  },
  {
    title: "delivers a handler's progress to the caller",
    server: async (version) => {
      const { sdkClient, sdkErrors } = await sdkClientAgainstOurServer(version);
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
    },
    client: async (version) => {
      const { client, hooks, sdkErrors } = await ourClientAgainstSdkServer(version);
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
    server: async (version) => {
      const { sdkClient, wire } = await sdkClientAgainstOurServer(version);
      await sdkClient.callTool({ name: 'progress', arguments: {} }, undefined, { onprogress: () => undefined });
      // The adapter passes relatedRequestId (HTTP transports route by it).
      const progress = wire.find((entry) => entry.message.method === 'notifications/progress')!;
      const requestId = progress.message.params.progressToken; // the SDK uses the request id as the token
      expect(progress.options).toEqual({ relatedRequestId: requestId });
      expect(wire.find((entry) => entry.message.id === requestId)?.options).toEqual({ relatedRequestId: requestId });
    },
  },
  {
    title: 'delivers every progress of a burst sent right before the result, in order',
    server: async (version) => {
      const { sdkClient, sdkErrors } = await sdkClientAgainstOurServer(version);
      const reports: number[] = [];
      const result = await sdkClient.callTool({ name: 'progress-burst', arguments: { count: 5 } }, undefined, {
        onprogress: (progress) => reports.push(progress.progress),
      });
      expect(result).toEqual({ content: [{ type: 'text', text: 'sent 5' }] });
      expect(reports).toEqual([1, 2, 3, 4, 5]);
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: 'delivers log messages sent during a tool call',
    server: async (version) => {
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
    },
    client: async (version) => {
      const { client, mcp } = await ourClientAgainstSdkServer(version);
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
    server: async (version) => {
      const { sdkClient, sdkErrors } = await sdkClientAgainstOurPrimitives(version);
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
    client: async (version) => {
      const { client, mcp } = await ourClientAgainstSdkServer(version);
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
    server: async (version) => {
      const { sdkClient, sdkErrors } = await sdkClientAgainstOurPrimitives(version);
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
    server: async (version) => {
      const { sdkClient, sdkErrors } = await sdkClientAgainstOurPrimitives(version);
      const logs = sdkLogs(sdkClient, 4);
      expect(await sdkClient.callTool({ name: 'log', arguments: {} })).toEqual({
        content: [{ type: 'text', text: 'logged' }],
      });
      expect((await logs).map((params) => params.level)).toEqual(['debug', 'info', 'warning', 'error']);
      expect(sdkErrors).toEqual([]);
    },
    client: async (version) => {
      const { client } = await ourClientAgainstSdkPrimitives(version);
      const logs = firstValueFrom(client.logs$.pipe(take(4), toArray()));
      expect(await client.callTool('log', {})).toEqual({ content: [{ type: 'text', text: 'logged' }] });
      expect((await logs).map((log) => log.level)).toEqual(['debug', 'info', 'warning', 'error']);
    },
  },
  {
    title: 'delivers the log messages at or above the level set on logs$, from inside and outside a tool',
    client: async (version) => {
      const { client, mcp } = await ourClientAgainstSdkPrimitives(version);
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
