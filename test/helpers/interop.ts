/**
 * Interop with the official TypeScript SDK (v1), in process over the SDK's `InMemoryTransport` pair with our
 * end wrapped by `fromSdkTransport`: the set-ups for both directions, and the suite runner.
 *
 * `runInteropSuite({ ours, version, cases, skip })` registers every case of the suite for one direction
 * (`ours: 'server'`: the SDK client against our server; `ours: 'client'`: our client against the SDK McpServer)
 * and one revision. A case that does not apply to a combination is listed in `skip` with its reason, the way
 * hono's router suite does it: a case with no body for a direction must be skipped there, and a skip must
 * name a case that exists.
 */
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  type CreateMessageRequest as SdkCreateMessageRequest,
  type ElicitRequest as SdkElicitRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { Client, ClientOptions } from '../../lib/client/client';
import type { ProtocolVersion } from '../../lib/protocol/versions';
import { defineServer } from '../../lib/server/definition';
import { Server, type ServerConnection } from '../../lib/server/server';
import type { ToolDefinition } from '../../lib/server/tools';
import type { SdkTransportSendOptions } from '../../transports/sdk-adapter';
import { ourPrimitivesDefinition, ourTools, type ServerHooks } from '../fixtures/interop-our-server';
import {
  OUR_ROOTS,
  SAMPLED,
  sdkPrimitivesServer,
  watchedSdkToolsServer,
  type SdkPrimitivesHooks,
  type SdkToolsHooks,
} from '../fixtures/interop-sdk-server';
import { deferred } from './fixtures';
import { cleanups, connectOurClient, serveOverSdkTransport, watchSdkClient } from './sdk';

// ---- the suite --------------------------------------------------------------------------------------

export type Ours = 'client' | 'server';

/** One claim of the suite, with its body for each direction it applies to. */
export interface InteropCase {
  readonly title: string;
  /** The SDK client against our server. */
  readonly server?: (version: ProtocolVersion) => Promise<void>;
  /** Our client against the SDK McpServer. */
  readonly client?: (version: ProtocolVersion) => Promise<void>;
}

export interface InteropSkip {
  readonly reason: string;
  readonly tests: readonly string[];
}

export function runInteropSuite(options: {
  ours: Ours;
  version: ProtocolVersion;
  cases: readonly InteropCase[];
  skip?: readonly InteropSkip[];
}): void {
  const { ours, version, cases, skip = [] } = options;
  const reasons = new Map<string, string>();
  const titles = new Set(cases.map((entry) => entry.title));
  for (const { reason, tests } of skip) {
    for (const title of tests) {
      if (!titles.has(title)) throw new Error(`The skip table names no case of the suite: "${title}"`);
      if (!reasons.has(title)) reasons.set(title, reason); // the first reason listed is the one shown
    }
  }
  const peer = ours === 'server' ? 'the SDK client against our server' : 'our client against the SDK McpServer';
  describe(`${peer}, negotiating ${version}`, () => {
    for (const entry of cases) {
      const reason = reasons.get(entry.title);
      const body = entry[ours];
      if (reason !== undefined) it.skip(`${entry.title} [skipped: ${reason}]`, () => undefined);
      else if (body) it(entry.title, () => body(version));
      else throw new Error(`"${entry.title}" has no body for ours = ${ours}: give one, or a skip with its reason`);
    }
  });
}

// ---- the SDK client against our server --------------------------------------------------------------

export interface OurToolsServerSetup {
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

/**
 * The SDK client against our server with the lifecycle tools (`ourTools`). The SDK client always asks for its
 * newest revision: the older ones are reached by restricting our server's `protocolVersions` to `version`.
 */
export async function sdkClientAgainstOurServer(
  version: ProtocolVersion | undefined,
  extra: { pageSize?: number; tools?: ToolDefinition<any>[]; sdkClient?: SdkClient } = {},
): Promise<OurToolsServerSetup> {
  const hooks: ServerHooks = { slowStarted: deferred(), slowAborted: deferred(), slowFinished: deferred() };
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

  const wire: OurToolsServerSetup['wire'] = [];
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

export interface OurPrimitivesServerSetup {
  readonly sdkClient: SdkClient;
  readonly server: Server;
  readonly connection: ServerConnection;
  /** Emitting sends notifications/resources/updated for docs://counter to its subscribers. */
  readonly counterChanges: Subject<void>;
  /** What the SDK client reported through `onerror`. */
  readonly sdkErrors: Error[];
  /** Everything our server connection sent. */
  readonly sent: Record<string, any>[];
  /** The requests the SDK client's handlers received. */
  readonly asked: { sampling: SdkCreateMessageRequest['params'][]; elicitation: SdkElicitRequest['params'][] };
  roots: { uri: string; name?: string; _meta?: Record<string, unknown> }[];
}

/**
 * The SDK client (sampling, form and URL elicitation, roots declared) against our server with every primitive
 * (`ourPrimitivesDefinition`), restricted to `version`.
 */
export async function sdkClientAgainstOurPrimitives(version: ProtocolVersion): Promise<OurPrimitivesServerSetup> {
  const counterChanges = new Subject<void>();
  const [sdkSide, ourSide] = InMemoryTransport.createLinkedPair();
  const server = new Server(ourPrimitivesDefinition(version, counterChanges));
  const { connection, sent } = serveOverSdkTransport(server, ourSide);

  const sdkClient = new SdkClient(
    { name: 'sdk-client', version: '9.9.9' },
    { capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } } },
  );
  const setup: OurPrimitivesServerSetup = {
    sdkClient,
    server,
    connection,
    counterChanges,
    sdkErrors: watchSdkClient(sdkClient, server),
    sent,
    asked: { sampling: [], elicitation: [] },
    roots: [{ uri: 'file:///home/ada/project', name: 'project' }],
  };
  sdkClient.setRequestHandler(CreateMessageRequestSchema, (request) => {
    setup.asked.sampling.push(request.params);
    return {
      role: 'assistant',
      content: { type: 'text', text: 'hi from the SDK' },
      model: 'sdk-model',
      stopReason: 'endTurn',
    };
  });
  sdkClient.setRequestHandler(ElicitRequestSchema, (request) => {
    setup.asked.elicitation.push(request.params);
    return request.params.mode === 'url' ? { action: 'accept' } : { action: 'accept', content: { name: 'Ada' } };
  });
  sdkClient.setRequestHandler(ListRootsRequestSchema, () => ({ roots: setup.roots }));
  await sdkClient.connect(sdkSide);
  expect(connection.protocolVersion).toBe(version);
  return setup;
}

// ---- our client against the SDK server -------------------------------------------------------------

export interface SdkToolsServerSetup {
  readonly client: Client;
  readonly mcp: McpServer;
  readonly hooks: SdkToolsHooks;
  readonly sdkErrors: Error[];
}

/** Our client asking for `version` of the SDK McpServer with the lifecycle tools; `options` add to the client's. */
export async function ourClientAgainstSdkServer(
  version: ProtocolVersion,
  options: ClientOptions = {},
): Promise<SdkToolsServerSetup> {
  const { hooks, mcp, sdkErrors } = watchedSdkToolsServer();
  const client = await connectOurClient(mcp, { protocolVersion: version, ...options });
  return { client, mcp, hooks, sdkErrors };
}

export interface SdkPrimitivesServerSetup {
  readonly client: Client;
  readonly mcp: McpServer;
  readonly hooks: SdkPrimitivesHooks;
  readonly sdkErrors: Error[];
  /** What our client's sampling and elicitation handlers were asked. */
  readonly seen: { sampling: unknown[]; form: unknown[]; url: unknown[] };
}

/**
 * Our client (sampling, form and URL elicitation, roots) asking for `version` of the SDK McpServer with every
 * primitive; `options` replace the client's defaults.
 */
export async function ourClientAgainstSdkPrimitives(
  version: ProtocolVersion,
  options: ClientOptions = {},
): Promise<SdkPrimitivesServerSetup> {
  const hooks: SdkPrimitivesHooks = {
    subscribed: [],
    unsubscribed: [],
    subscribeSeen: new Subject(),
    unsubscribeSeen: new Subject(),
    rootsChanged: new Subject(),
  };
  const mcp = sdkPrimitivesServer(hooks);
  const sdkErrors: Error[] = [];
  mcp.server.onerror = (error) => sdkErrors.push(error);
  const seen = { sampling: [] as unknown[], form: [] as unknown[], url: [] as unknown[] };
  const client = await connectOurClient(mcp, {
    protocolVersion: version,
    sampling: (params) => (seen.sampling.push(params), SAMPLED),
    elicitation: {
      form: (params) => (seen.form.push(params), { action: 'accept', content: { name: 'Ada' } }),
      url: (params) => (seen.url.push(params), { action: 'accept' }),
    },
    roots: OUR_ROOTS,
    ...options,
  });
  expect(client.protocolVersion).toBe(version);
  return { client, mcp, hooks, sdkErrors, seen };
}

export { cleanups };
