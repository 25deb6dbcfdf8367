/**
 * Interop with the official TypeScript SDKs (no mocks), in process over the SDK's `InMemoryTransport` pair
 * with our end wrapped by `fromSdkTransport`.
 *
 * One suite (test/helpers/interop-cases-*.ts) runs for every combination that applies, in both directions:
 * the SDK v1 client against our server and our client against the SDK v1 McpServer, in the handshake era at
 * every revision; the SDK v2 client against our server, and our client against the SDK v2 McpServer (served
 * by `serveStdio` over in-process pipes), at every handshake revision and in the stateless era (2026-07-28).
 * What does not apply to a combination is in the skip table (test/helpers/interop-skips.ts), with its
 * reason. Then: the SDK client's own choice of revision, errors thrown by our tool handlers, the same
 * conversations over the SDK's stdio transport (serialized), and over real stdio.
 *
 * Everything our side emits is checked against the official schema of the negotiated revision.
 */
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as SdkStdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CreateMessageRequestSchema,
  McpError as SdkMcpError,
  type Progress as SdkProgress,
} from '@modelcontextprotocol/sdk/types.js';
import { PassThrough } from 'node:stream';
import { beforeEach, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { McpError, RequestCancelledError } from '../../lib/jsonrpc/errors';
import type { Progress } from '../../lib/protocol/types';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../../lib/protocol/versions';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { fromSdkTransport } from '../../transports/sdk-adapter';
import { json } from '../helpers/content';
import { deferred } from '../helpers/fixtures';
import { interopRuns, runInteropSuite, sdkClientAgainstOurServer } from '../helpers/interop';
import { INTEROP_SKIPS } from '../helpers/interop-skips';
import { CLIENT_FEATURE_CASES } from '../helpers/interop-cases-client-features';
import { LIFECYCLE_CASES } from '../helpers/interop-cases-lifecycle';
import { PROMPT_CASES } from '../helpers/interop-cases-prompts';
import { RESOURCE_CASES } from '../helpers/interop-cases-resources';
import { STATELESS_CASES } from '../helpers/interop-cases-stateless';
import { TOOL_CASES } from '../helpers/interop-cases-tools';
import { validateEmitted } from '../helpers/pair';
import { cleanups, serveOverSdkTransport, watchSdkClient } from '../helpers/sdk';
import { ourTools, type ServerHooks } from '../fixtures/interop-our-server';
import { watchedSdkToolsServer } from '../fixtures/interop-sdk-server';

const VERSIONS = [...SUPPORTED_PROTOCOL_VERSIONS];
const CASES = [
  ...LIFECYCLE_CASES,
  ...TOOL_CASES,
  ...RESOURCE_CASES,
  ...PROMPT_CASES,
  ...CLIENT_FEATURE_CASES,
  ...STATELESS_CASES,
];
const RUNS = [
  ...interopRuns('server', 'v1', VERSIONS),
  ...interopRuns('server', 'v2', VERSIONS),
  ...interopRuns('client', 'v1', VERSIONS),
  ...interopRuns('client', 'v2', VERSIONS),
];

runInteropSuite({ runs: RUNS, cases: CASES, skip: INTEROP_SKIPS });

describe('the SDK client against our server offering every revision', () => {
  it('asks for 2025-11-25 and gets it', async () => {
    const { connection, negotiated, sent } = await sdkClientAgainstOurServer(
      { ours: 'server', sdk: 'v1', era: 'handshake', version: '2025-11-25' },
      { everyRevision: true },
    );
    expect(connection.protocolVersion).toBe('2025-11-25');
    expect(negotiated()).toBe('2025-11-25');
    expect(sent[0]).toMatchObject({ id: 0, result: { protocolVersion: '2025-11-25' } });
  });
});

describe('errors thrown by our tool handlers, as the SDK client sees them', () => {
  let sdkClient: SdkClient;
  let sdkErrors: Error[];

  beforeEach(async () => {
    const server = new Server(
      defineServer({
        name: 'throwing',
        version: '1',
        tools: [
          {
            name: 'typed',
            inputSchema: { type: 'object' },
            handler: () => {
              throw new McpError(-32000, 'quota exceeded', { retryAfterSeconds: 30 });
            },
          },
          {
            name: 'plain',
            inputSchema: { type: 'object' },
            handler: async () => {
              throw new Error('cannot read the file');
            },
          },
          {
            name: 'ask-model',
            inputSchema: { type: 'object' },
            handler: async (_args, ctx) =>
              json(
                await ctx.createMessage({
                  messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
                  maxTokens: 5,
                }),
              ),
          },
        ],
      }),
    );
    const [ourSide, sdkSide] = InMemoryTransport.createLinkedPair();
    serveOverSdkTransport(server, ourSide);
    sdkClient = new SdkClient({ name: 'sdk', version: '1' }, { capabilities: { sampling: {} } });
    sdkClient.setRequestHandler(CreateMessageRequestSchema, () => {
      throw new SdkMcpError(-1, 'The user rejected the sampling request');
    });
    sdkErrors = watchSdkClient(sdkClient, server);
    await sdkClient.connect(sdkSide);
  });

  it('an McpError is a JSON-RPC error with its code, message and data', async () => {
    const typed = await sdkClient.callTool({ name: 'typed', arguments: {} }).catch((error: unknown) => error);
    expect(typed).toBeInstanceOf(SdkMcpError);
    expect(typed).toMatchObject({ code: -32000, data: { retryAfterSeconds: 30 } });
    expect((typed as Error).message).toContain('quota exceeded');
    expect(sdkErrors).toEqual([]);
  });

  it('any other failure is an isError result with its message', async () => {
    expect(await sdkClient.callTool({ name: 'plain', arguments: {} })).toEqual({
      content: [{ type: 'text', text: 'cannot read the file' }],
      isError: true,
    });
    expect(sdkErrors).toEqual([]);
  });

  it("the client's own refusal, let escape by the handler, is an isError result, not sent back as -1", async () => {
    const refused = await sdkClient.callTool({ name: 'ask-model', arguments: {} });
    expect(refused.isError).toBe(true);
    expect((refused.content as { text: string }[])[0]!.text).toContain('The user rejected the sampling request');
    expect(sdkErrors).toEqual([]);
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
    const hooks: ServerHooks = { slowStarted: deferred(), slowAborted: deferred(), slowFinished: deferred() };
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
    const { hooks, mcp, sdkErrors } = watchedSdkToolsServer();
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
