/**
 * Interop with the official TypeScript SDKs, in process: the suite runner, and the set-ups of the SDK client
 * against our server (over the SDK's `InMemoryTransport` pair with our end wrapped by `fromSdkTransport`); our
 * client against the SDK server is ./interop-our-client.ts.
 *
 * `runInteropSuite({ runs, cases, skip })` registers every case for every run it applies to. A run is one
 * combination of direction (`ours: 'server'`: the SDK client against our server; `ours: 'client'`: our client
 * against the SDK McpServer), SDK (v1: handshake era only; v2: both eras), era and revision. A case names the
 * eras it applies to and has a body per direction; a case that has no body for a direction, or that fails
 * for a reason outside our code, is listed in `skip` with its reason, the way hono's router suite does it.
 * The runner refuses a case with no body and no skip, and a skip that names no case or matches no run.
 */
import { Client as SdkV2Client, InMemoryTransport as SdkV2InMemoryTransport } from '@modelcontextprotocol/client';
import { Client as SdkV1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Subject } from 'rxjs';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { ModernProtocolVersion } from '../../lib/protocol/modern';
import type { ProtocolVersion } from '../../lib/protocol/versions';
import { LATEST_PROTOCOL_VERSION } from '../../lib/protocol/versions';
import { defineServer, type ServerDefinition } from '../../lib/server/definition';
import { Server, type ServerConnection } from '../../lib/server/server';
import type { ToolDefinition } from '../../lib/server/tools';
import type { SdkTransportLike, SdkTransportSendOptions } from '../../transports/sdk-adapter';
import { ourPrimitivesDefinition, ourTools, type ServerHooks } from '../fixtures/interop-our-server';
import { deferred } from './fixtures';
import { validateEveryModernExchange } from './modern-wire';
import { sdkV1Peer, sdkV2Peer, type SdkClientPeer, type SdkMajor } from './interop-sdk-client';
import { cleanups, serveOverSdkTransport, watchSdkClient } from './sdk';

// ---- the suite --------------------------------------------------------------------------------------

export type Ours = 'client' | 'server';
/** The handshake era (`initialize`, sessions) or the stateless revision 2026-07-28. */
export type Era = 'handshake' | 'stateless';
export type { SdkMajor };

export const STATELESS_VERSION: ModernProtocolVersion = '2026-07-28';
export const BOTH_ERAS: readonly Era[] = ['handshake', 'stateless'];
/** `initialize`, sessions, ping, logging/setLevel, resources/subscribe, server-to-client requests. */
export const HANDSHAKE_ERA: readonly Era[] = ['handshake'];
/** server/discover, input_required rounds, subscriptions/listen, the `_meta` envelope. */
export const STATELESS_ERA: readonly Era[] = ['stateless'];

/** One combination the suite runs in. */
export interface InteropRun {
  readonly ours: Ours;
  readonly sdk: SdkMajor;
  readonly era: Era;
  /** The revision negotiated: one of the handshake era's, or 2026-07-28. */
  readonly version: ProtocolVersion | ModernProtocolVersion;
}

/** One claim of the suite: the eras it applies to, and its body for each direction. */
export interface InteropCase {
  readonly title: string;
  readonly eras: readonly Era[];
  /** The SDK client against our server. */
  readonly server?: (run: InteropRun) => Promise<void>;
  /** Our client against the SDK McpServer. */
  readonly client?: (run: InteropRun) => Promise<void>;
}

export interface InteropSkip {
  readonly reason: string;
  readonly tests: readonly string[];
  /** The runs the skip applies to (every run when absent). */
  readonly when?: (run: InteropRun) => boolean;
}

const applies = (entry: InteropCase, run: InteropRun) => entry.eras.includes(run.era);

/** The runs of one direction and SDK: every handshake revision of `versions`, and the stateless era for SDK v2. */
export function interopRuns(ours: Ours, sdk: SdkMajor, versions: readonly ProtocolVersion[]): InteropRun[] {
  const handshake = versions.map((version): InteropRun => ({ ours, sdk, era: 'handshake', version }));
  return sdk === 'v1' ? handshake : [...handshake, { ours, sdk, era: 'stateless', version: STATELESS_VERSION }];
}

export function runInteropSuite(options: {
  runs: readonly InteropRun[];
  cases: readonly InteropCase[];
  skip?: readonly InteropSkip[];
}): void {
  const { runs, cases, skip = [] } = options;
  const byTitle = new Map(cases.map((entry) => [entry.title, entry]));
  for (const { reason, tests, when = () => true } of skip) {
    for (const title of tests) {
      const entry = byTitle.get(title);
      if (!entry) throw new Error(`The skip table names no case of the suite: "${title}"`);
      if (!runs.some((run) => applies(entry, run) && when(run))) {
        throw new Error(`The skip "${reason}" matches no run "${title}" applies to: remove it`);
      }
    }
  }
  for (const run of runs) {
    const peer =
      run.ours === 'server'
        ? `the SDK ${run.sdk} client against our server`
        : `our client against the SDK ${run.sdk} McpServer`;
    describe(`${peer}, ${run.era} era, negotiating ${run.version}`, () => {
      for (const entry of cases) {
        if (!applies(entry, run)) continue;
        // The first reason listed is the one shown.
        const reason = skip.find(({ tests, when = () => true }) => tests.includes(entry.title) && when(run))?.reason;
        const body = entry[run.ours];
        if (reason !== undefined) it.skip(`${entry.title} [skipped: ${reason}]`, () => undefined);
        else if (body) it(entry.title, () => body(run));
        else
          throw new Error(`"${entry.title}" has no body for ours = ${run.ours}: give one, or a skip with its reason`);
      }
    });
  }
}

// ---- the SDK client against our server --------------------------------------------------------------

/** The SDK's in-memory pair of `run.sdk`; the SDK client takes the first end. */
function linkedPair(run: InteropRun): [SdkTransportLike, SdkTransportLike] {
  const pair = run.sdk === 'v1' ? InMemoryTransport.createLinkedPair() : SdkV2InMemoryTransport.createLinkedPair();
  return pair as unknown as [SdkTransportLike, SdkTransportLike];
}

/** A new SDK client of `run.sdk` declaring `capabilities`; SDK v2's pinned to the run's era. */
function newSdkClient(run: InteropRun, capabilities: Record<string, unknown> = {}): SdkClientPeer {
  const info = { name: 'sdk-client', version: '9.9.9' };
  if (run.sdk === 'v1') return sdkV1Peer(new SdkV1Client(info, { capabilities }));
  const mode = run.era === 'stateless' ? { pin: STATELESS_VERSION } : ('legacy' as const);
  return sdkV2Peer(new SdkV2Client(info, { capabilities, versionNegotiation: { mode } }));
}

/** The revisions our server offers in `run`: the run's own in the handshake era, every one in the stateless era. */
const offered = (run: InteropRun) =>
  run.era === 'handshake' ? { protocolVersions: [run.version as ProtocolVersion] } : {};

/** Our server for `definition`; in the stateless era, what it answers is checked against the 2026-07-28 schema. */
function ourServer(run: InteropRun, definition: ServerDefinition): Server {
  const server = new Server(definition);
  if (run.era === 'stateless') {
    const problems = validateEveryModernExchange(server);
    onTestFinished(() => expect(problems).toEqual([]));
  }
  return server;
}

export interface OurToolsServerSetup {
  readonly sdkClient: SdkClientPeer;
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
 * The SDK client of `run` against our server with the lifecycle tools (`ourTools`). The SDK client always
 * asks for its newest revision: the older ones are reached by restricting our server's `protocolVersions`
 * (`everyRevision` leaves them all).
 */
export async function sdkClientAgainstOurServer(
  run: InteropRun,
  extra: {
    pageSize?: number;
    tools?: ToolDefinition<any>[];
    capabilities?: Record<string, unknown>;
    everyRevision?: boolean;
  } = {},
): Promise<OurToolsServerSetup> {
  const hooks: ServerHooks = { slowStarted: deferred(), slowAborted: deferred(), slowFinished: deferred() };
  const definition = defineServer({
    name: 'switchboard-server',
    version: '1.2.3',
    instructions: 'Use the tools.',
    ...(!extra.everyRevision && offered(run)),
    tools: extra.tools ?? ourTools(hooks),
    ...(extra.pageSize !== undefined && { pageSize: extra.pageSize }),
  });
  const [sdkSide, ourSide] = linkedPair(run);
  let negotiated: string | undefined;
  // The in-memory pair has no setProtocolVersion; the SDK client calls it when present, which shows what it settled on.
  sdkSide.setProtocolVersion = (v) => (negotiated = v);

  const wire: OurToolsServerSetup['wire'] = [];
  const send = ourSide.send.bind(ourSide);
  ourSide.send = (message, options) => {
    wire.push({ message: message as Record<string, any>, options });
    return send(message, options);
  };

  const server = ourServer(run, definition);
  const { connection, sent } = serveOverSdkTransport(server, ourSide);

  const sdkClient = newSdkClient(run, extra.capabilities);
  const sdkErrors = watchSdkClient(sdkClient.raw, server);
  await sdkClient.raw.connect(sdkSide as any);
  return { sdkClient, server, connection, hooks, negotiated: () => negotiated, sdkErrors, sent, wire };
}

export interface OurPrimitivesServerSetup {
  readonly sdkClient: SdkClientPeer;
  readonly server: Server;
  readonly connection: ServerConnection;
  /** Emitting sends notifications/resources/updated for docs://counter to its subscribers. */
  readonly counterChanges: Subject<void>;
  /** What the SDK client reported through `onerror`. */
  readonly sdkErrors: Error[];
  /** Everything our server connection sent. */
  readonly sent: Record<string, any>[];
  /** Everything our server connection was sent. */
  readonly received: Record<string, any>[];
  /** The requests the SDK client's handlers received. */
  readonly asked: { sampling: Record<string, unknown>[]; elicitation: Record<string, unknown>[] };
  roots: { uri: string; name?: string; _meta?: Record<string, unknown> }[];
}

/**
 * The SDK client of `run` (sampling, form and URL elicitation, roots declared) against our server with every
 * primitive (`ourPrimitivesDefinition`), restricted to the run's revision in the handshake era.
 */
export async function sdkClientAgainstOurPrimitives(
  run: InteropRun,
  extra: { tools?: ToolDefinition<any>[] } = {},
): Promise<OurPrimitivesServerSetup> {
  const counterChanges = new Subject<void>();
  const [sdkSide, ourSide] = linkedPair(run);
  const handshakeVersion = run.era === 'handshake' ? (run.version as ProtocolVersion) : LATEST_PROTOCOL_VERSION;
  // Restricting the handshake revisions leaves the stateless one served.
  let definition = ourPrimitivesDefinition(handshakeVersion, counterChanges);
  if (extra.tools) definition = definition.withTools(...extra.tools);
  const server = ourServer(run, definition);
  const { connection, sent, received } = serveOverSdkTransport(server, ourSide);

  const sdkClient = newSdkClient(run, {
    sampling: {},
    elicitation: { form: {}, url: {} },
    roots: { listChanged: true },
  });
  const setup: OurPrimitivesServerSetup = {
    sdkClient,
    server,
    connection,
    counterChanges,
    sdkErrors: watchSdkClient(sdkClient.raw, server),
    sent,
    received,
    asked: { sampling: [], elicitation: [] },
    roots: [{ uri: 'file:///home/ada/project', name: 'project' }],
  };
  sdkClient.onRequest('sampling/createMessage', (params) => {
    setup.asked.sampling.push(params);
    return {
      role: 'assistant',
      content: { type: 'text', text: 'hi from the SDK' },
      model: 'sdk-model',
      stopReason: 'endTurn',
    };
  });
  sdkClient.onRequest('elicitation/create', (params) => {
    setup.asked.elicitation.push(params);
    return params.mode === 'url' ? { action: 'accept' } : { action: 'accept', content: { name: 'Ada' } };
  });
  sdkClient.onRequest('roots/list', () => ({ roots: setup.roots }));
  await sdkClient.raw.connect(sdkSide as any);
  if (run.era === 'handshake') expect(connection.protocolVersion).toBe(run.version);
  return setup;
}

// ---- our client against the SDK server: ./interop-our-client.ts -----------------------------------------

export {
  ourClientAgainst,
  ourClientAgainstSdkPrimitives,
  ourClientAgainstSdkServer,
  type SdkMcpServer,
  type SdkPrimitivesServerSetup,
  type SdkToolsServerSetup,
} from './interop-our-client';
export { cleanups };
