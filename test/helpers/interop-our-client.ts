/**
 * The interop suite's set-ups for our client against the official SDK McpServer (see `runInteropSuite` in
 * ./interop.ts), in process: SDK v1's server connected to one end of SDK v1's in-memory pair (the handshake
 * era only); SDK v2's served by `serveStdio` (`@modelcontextprotocol/server/stdio`) over one end of SDK v2's
 * in-memory pair, which picks the era from what our client opens with (`initialize` or `server/discover`)
 * and builds the server for that era from a factory, as an SDK v2 stdio server does. Our client is pinned to
 * the run's era (`era: 'handshake'` at the run's revision, or `era: 'modern'`) over `fromSdkTransport`.
 */
import {
  InMemoryTransport as SdkV2InMemoryTransport,
  type McpServer as SdkV2McpServer,
} from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport as SdkV2StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { InMemoryTransport as SdkV1InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer as SdkV1McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { PassThrough } from 'node:stream';
import { Subject } from 'rxjs';
import { expect } from 'vitest';
import { Client, type ClientOptions } from '../../lib/client/client';
import type { LoggingMessageParams } from '../../lib/protocol/types';
import type { Implementation } from '../../lib/protocol/types';
import { fromSdkTransport, type SdkTransportLike } from '../../transports/sdk-adapter';
import { StdioServerTransport } from '../../transports/stdio';
import type { Transport } from '../../transports/transport';
import { URL_ELICITATION } from '../fixtures/interop-our-server';
import {
  OUR_ROOTS,
  SAMPLED,
  sdkPrimitivesServer,
  watchedSdkToolsServer,
  type SdkPrimitivesHooks,
  type SdkToolsHooks,
} from '../fixtures/interop-sdk-server';
import { sdkV2PrimitivesServer, sdkV2ToolsServer, type SdkV2Era } from '../fixtures/interop-sdk-v2-server';
import { cleanups } from './cleanups';
import type { InteropRun } from './interop';
import { validateEmitted } from './pair';

/**
 * The SDK McpServer of a run, as far as the cases drive it: SDK v1's and SDK v2's both have these members
 * (their own declarations are too generic for TypeScript to match them to this one).
 */
export interface SdkMcpServer {
  readonly server: {
    onclose?: (() => void) | undefined;
    onerror?: ((error: Error) => void) | undefined;
    getClientVersion(): Implementation | undefined;
    getClientCapabilities(): Record<string, any> | undefined;
    ping(): Promise<unknown>;
    sendResourceUpdated(params: { uri: string }): Promise<void>;
    createElicitationCompletionNotifier(elicitationId: string): () => Promise<void>;
    elicitInput(params: typeof URL_ELICITATION): Promise<unknown>;
  };
  isConnected(): boolean;
  close(): Promise<void>;
  sendLoggingMessage(params: LoggingMessageParams): Promise<void>;
  registerTool(name: string, config: { description: string }, handler: () => Promise<{ content: [] }>): unknown;
  registerResource(
    name: string,
    uri: string,
    config: Record<string, never>,
    read: (uri: URL) => Promise<{ contents: { uri: string; text: string }[] }>,
  ): unknown;
  registerPrompt(name: string, config: { description: string }, get: () => { messages: [] }): unknown;
}

/** How to build the SDK server of a run: SDK v1's, or SDK v2's for the era `serveStdio` names. */
export interface SdkServerBuilders {
  readonly v1: () => SdkV1McpServer;
  readonly v2: (era: SdkV2Era) => SdkV2McpServer;
}

export interface OurClientConnection {
  readonly client: Client;
  readonly mcp: SdkMcpServer;
  /** What the SDK server reported through `onerror` (and, for SDK v2, what `serveStdio` reported). */
  readonly sdkErrors: Error[];
}

/**
 * How our client reaches an SDK v2 server: `pipes`, the stdio binding's newline-delimited JSON over two
 * in-process pipes (our stdio framing on one end, SDK v2's `StdioServerTransport` on the other, so every
 * message is serialized and parsed by both); `sdk-memory`, SDK v2's `InMemoryTransport` pair with our end
 * wrapped by `fromSdkTransport`.
 */
export type SdkV2Link = 'pipes' | 'sdk-memory';

function pipeLink(): [Transport, SdkV2StdioServerTransport] {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  // Our StdioServerTransport is only the framing over two streams: here it carries the client's side.
  const sdkSide = new SdkV2StdioServerTransport(toServer, toClient);
  // A stdio server process exits once its transport has closed, which ends its stdout: here the pipe ends.
  const close = sdkSide.close.bind(sdkSide);
  sdkSide.close = () => close().finally(() => toClient.end());
  return [new StdioServerTransport({ input: toClient, output: toServer }), sdkSide];
}

function sdkV2MemoryLink(): [Transport, SdkV2InMemoryTransport] {
  const [ourSide, sdkSide] = SdkV2InMemoryTransport.createLinkedPair();
  return [fromSdkTransport(ourSide as unknown as SdkTransportLike), sdkSide];
}

/** The options that pin our client to the run's era and revision. */
const pinned = (run: InteropRun): ClientOptions =>
  run.era === 'handshake'
    ? { era: 'handshake', protocolVersion: run.version as ClientOptions['protocolVersion'] }
    : { era: 'modern', protocolVersion: run.version as ClientOptions['protocolVersion'] };

/**
 * Our client of `run`, connected in process to the SDK server `build` makes for the run's SDK, everything it
 * emits schema-checked; both are closed after the test. `options` add to (or replace) the client's.
 */
export async function ourClientAgainst(
  run: InteropRun,
  build: SdkServerBuilders,
  options: ClientOptions = {},
  link: SdkV2Link = 'pipes',
): Promise<OurClientConnection> {
  const sdkErrors: Error[] = [];
  const watched = <T extends { server: { onerror?: unknown } }>(mcp: T): T => {
    mcp.server.onerror = (error: Error) => sdkErrors.push(error);
    return mcp;
  };
  let mcp: SdkMcpServer | undefined;
  let transport: Transport;
  if (run.sdk === 'v1') {
    const v1 = watched(build.v1());
    const [ourSide, sdkSide] = SdkV1InMemoryTransport.createLinkedPair();
    await v1.connect(sdkSide);
    cleanups.push(() => v1.close());
    mcp = v1 as unknown as SdkMcpServer;
    transport = fromSdkTransport(ourSide);
  } else {
    const [ourSide, sdkSide] = link === 'sdk-memory' ? sdkV2MemoryLink() : pipeLink();
    // One instance per connection: serveStdio calls the factory when our client's first message arrives.
    const served = serveStdio(({ era }) => (mcp = watched(build.v2(era)) as unknown as SdkMcpServer) as never, {
      transport: sdkSide,
      onerror: (error) => sdkErrors.push(error),
    });
    cleanups.push(() => served.close());
    transport = ourSide;
  }
  const client = new Client({ name: 'switchboard-client', version: '1.0.0' }, { ...pinned(run), ...options });
  validateEmitted(client);
  cleanups.push(() => client.close());
  await client.connect(transport);
  expect(client.protocolVersion).toBe(run.version);
  return { client, mcp: mcp!, sdkErrors };
}

export interface SdkToolsServerSetup extends OurClientConnection {
  readonly hooks: SdkToolsHooks;
}

/** Our client asking for `run.version` of the SDK McpServer with the lifecycle tools; `options` add to the client's. */
export async function ourClientAgainstSdkServer(
  run: InteropRun,
  options: ClientOptions = {},
): Promise<SdkToolsServerSetup> {
  const v1 = watchedSdkToolsServer();
  const { hooks } = v1;
  const connection = await ourClientAgainst(run, { v1: () => v1.mcp, v2: () => sdkV2ToolsServer(hooks) }, options);
  return { ...connection, hooks };
}

export interface SdkPrimitivesServerSetup extends OurClientConnection {
  readonly hooks: SdkPrimitivesHooks;
  /** What our client's sampling and elicitation handlers were asked. */
  readonly seen: { sampling: unknown[]; form: unknown[]; url: unknown[] };
}

/**
 * Our client (sampling, form and URL elicitation, roots) asking for `run.version` of the SDK McpServer with every
 * primitive; `options` replace the client's defaults.
 */
export async function ourClientAgainstSdkPrimitives(
  run: InteropRun,
  options: ClientOptions = {},
): Promise<SdkPrimitivesServerSetup> {
  const hooks: SdkPrimitivesHooks = {
    subscribed: [],
    unsubscribed: [],
    subscribeSeen: new Subject(),
    unsubscribeSeen: new Subject(),
    rootsChanged: new Subject(),
  };
  const seen = { sampling: [] as unknown[], form: [] as unknown[], url: [] as unknown[] };
  const builders = { v1: () => sdkPrimitivesServer(hooks), v2: (era: SdkV2Era) => sdkV2PrimitivesServer(hooks, era) };
  const connection = await ourClientAgainst(run, builders, {
    sampling: (params) => (seen.sampling.push(params), SAMPLED),
    elicitation: {
      form: (params) => (seen.form.push(params), { action: 'accept', content: { name: 'Ada' } }),
      url: (params) => (seen.url.push(params), { action: 'accept' }),
    },
    roots: OUR_ROOTS,
    ...options,
  });
  return { ...connection, hooks, seen };
}
