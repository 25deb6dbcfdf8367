/**
 * The hub's overhead: `tools/call` of `echo` through a hub to an in-process upstream versus straight to
 * that upstream (our Client -> memory -> our Server), with the upstream reached directly (the default:
 * the request goes into the upstream's definition with the downstream context) or over its memory
 * connection (`direct: false`, as any other upstream); and the handshake plus the full catalog of a hub of
 * 50 upstreams with 20 tools each, against 50 clients each connecting to and listing one upstream.
 *
 * Standalone: `node --expose-gc --import tsx bench/hub.ts [--quick]`. For bench/run.ts: `HUB_SCENARIOS`
 * (append to SCENARIOS) and `HUB_OVERHEAD` (a ComparisonTable).
 */
import type { Unsubscribable } from 'rxjs';
import { Client } from '../lib/client/client';
import { Hub } from '../lib/compose/hub';
import { silentLogger } from '../lib/core/logger';
import { defineServer, type ServerDefinition } from '../lib/server/definition';
import { Server } from '../lib/server/server';
import type { ToolDefinition } from '../lib/server/tools';
import { createMemoryPair } from '../transports/memory';
import { type ComparisonTable, entrantRow } from './comparisons';
import type { BenchSettings } from './config';
import type { CallPair } from './contender';
import { measureLatency, measureThroughput } from './harness';
import { echoServerDefinition } from './ours';
import type { Scenario } from './scenarios';
import { runWhenMain } from './standalone';

const CLIENT_INFO = { name: 'bench-client', version: '1.0.0' };
const CATALOG_UPSTREAMS = 50;
const CATALOG_TOOLS = 20;

/** Our client on a memory pair (unfrozen: the production path) to `server`. */
async function clientOf(server: Server): Promise<Client> {
  const [clientSide, serverSide] = createMemoryPair({ freeze: false });
  server.connect(serverSide);
  return new Client(CLIENT_INFO).connect(clientSide);
}

function callPair(client: Client, close: () => Promise<unknown>): CallPair {
  return { callEcho: () => client.callTool('echo', { text: 'hi' }), close: async () => void (await close()) };
}

async function straight(): Promise<CallPair> {
  const server = new Server(echoServerDefinition());
  const client = await clientOf(server);
  return callPair(client, () => client.close());
}

/** Our client through a hub to an in-process echo upstream; `watch` may subscribe to the hub (the trace tap rows). */
export async function throughHub(direct: boolean, watch?: (hub: Hub) => Unsubscribable): Promise<CallPair> {
  const hub = new Hub({
    logger: silentLogger,
    upstreams: [{ name: 'echo', source: { kind: 'in-process', server: echoServerDefinition(), direct } }],
  });
  await hub.start();
  const watching = watch?.(hub);
  const client = await clientOf(hub.server);
  return callPair(client, async () => {
    watching?.unsubscribe();
    await client.close();
    await hub.close();
  });
}

const CALL_ENTRANTS: Readonly<Record<string, () => Promise<CallPair>>> = {
  straight,
  hub: () => throughHub(true),
  'hub-connection': () => throughHub(false),
};

/** 50 definitions of 20 tools each (one schema per tool, as real servers have). */
function catalogDefinitions(): ServerDefinition[] {
  return Array.from({ length: CATALOG_UPSTREAMS }, (_, upstream) =>
    defineServer({
      name: `upstream-${upstream}`,
      version: '1.0.0',
      tools: Array.from({ length: CATALOG_TOOLS }, (_, index): ToolDefinition => ({
        name: `tool_${index}`,
        description: `Tool ${index} of upstream ${upstream}`,
        inputSchema: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'number' } } },
        handler: () => ({ content: [] }),
      })),
    }),
  );
}

/** A new hub over the 50 upstreams, started, then one downstream client: handshake and tools/list. */
async function hubCatalog(definitions: readonly ServerDefinition[]): Promise<() => Promise<void>> {
  const hub = new Hub({
    logger: silentLogger,
    naming: { collision: 'rename' },
    upstreams: definitions.map((server, index) => ({ name: `u${index}`, source: { kind: 'in-process', server } })),
  });
  await hub.start();
  const client = await clientOf(hub.server);
  const tools = await client.listTools();
  if (tools.length !== CATALOG_UPSTREAMS * CATALOG_TOOLS) throw new Error(`The hub listed ${tools.length} tools`);
  return async () => {
    await client.close();
    await hub.close();
  };
}

/** What an agent does without a hub: a client per upstream, each connecting and listing. */
async function separateClients(definitions: readonly ServerDefinition[]): Promise<() => Promise<void>> {
  const clients = await Promise.all(definitions.map((definition) => clientOf(new Server(definition))));
  const lists = await Promise.all(clients.map((client) => client.listTools()));
  const count = lists.reduce((sum, list) => sum + list.length, 0);
  if (count !== CATALOG_UPSTREAMS * CATALOG_TOOLS) throw new Error(`The clients listed ${count} tools`);
  return async () => void (await Promise.all(clients.map((client) => client.close())));
}

async function withPair<T>(connect: () => Promise<CallPair>, use: (pair: CallPair) => Promise<T>): Promise<T> {
  const pair = await connect();
  try {
    return await use(pair);
  } finally {
    await pair.close();
  }
}

function catalogEntrant(
  name: string,
  build: (definitions: readonly ServerDefinition[]) => Promise<() => Promise<void>>,
) {
  return {
    name,
    measure: async (settings: BenchSettings) => {
      // Definitions are built once per measurement: the figure is the hub (or the clients), not defineServer.
      const definitions = catalogDefinitions();
      const figures = await measureLatency(
        () => build(definitions),
        settings.window,
        (close) => close(),
      );
      return { perSecond: figures.perSecond, p50Ms: figures.p50Us / 1000, p99Ms: figures.p99Us / 1000 };
    },
  };
}

export const HUB_SCENARIOS: readonly Scenario[] = [
  {
    id: 'hubToolsSequential',
    entrants: Object.entries(CALL_ENTRANTS).map(([name, connect]) => ({
      name,
      measure: (settings: BenchSettings) =>
        withPair(connect, async (pair) => ({ ...(await measureLatency(pair.callEcho, settings.window)) })),
    })),
  },
  {
    id: 'hubToolsConcurrent',
    entrants: Object.entries(CALL_ENTRANTS).map(([name, connect]) => ({
      name,
      measure: (settings: BenchSettings) =>
        withPair(connect, async (pair) => ({
          perSecond: await measureThroughput(pair.callEcho, settings.concurrency, settings.window),
        })),
    })),
  },
  {
    id: 'hubCatalog',
    entrants: [catalogEntrant('hub', hubCatalog), catalogEntrant('clients', separateClients)],
  },
];

const HUB_TARGET = { bound: 'atLeast' as const, ratio: 1 / 1.3, text: '>= 0.77x (the hub adds <= 30%)' };
const LATENCY_TARGET = { bound: 'atMost' as const, ratio: 1.3, text: '<= 1.3x' };

const OVERHEAD_NOTE =
  "straight = our Client -> memory pair -> our Server (echo); hub = our Client -> memory pair -> Hub -> the same kind of Server in process, its requests served straight from its definition with the downstream context (the default); hub-connection = the same hub with direct: false, so each call also crosses the hub's memory connection to the upstream (two round trips, as for any remote upstream). 1 in flight: calls / summed latency; 256 in flight: completed calls / wall time.";
const CATALOG_NOTE =
  'One operation = new Hub over 50 in-process upstreams of 20 tools (collision: rename) + start() (50 handshakes and listings) + a downstream client connect + tools/list of the 1,000 tools; closed outside the timed region. clients = 50 Clients each connecting to and listing its own Server (what an agent does without a hub). ops/s = operations / summed time.';

export const HUB_OVERHEAD: ComparisonTable = {
  title: 'The hub: tools/call through a hub to an in-process upstream vs straight to it; a 50 x 20 catalog',
  subjectName: 'hub',
  baselineName: 'straight',
  comparisons: [
    entrantRow('hubToolsSequential', 'perSecond', 'tools/call, 1 in flight', 'calls/s', 'higher', 'hub', 'straight', {
      target: HUB_TARGET,
      note: OVERHEAD_NOTE,
    }),
    entrantRow('hubToolsSequential', 'p50Us', 'tools/call, 1 in flight, p50', 'us', 'lower', 'hub', 'straight', {
      target: LATENCY_TARGET,
    }),
    entrantRow('hubToolsConcurrent', 'perSecond', 'tools/call, 256 in flight', 'calls/s', 'higher', 'hub', 'straight', {
      target: HUB_TARGET,
    }),
    entrantRow(
      'hubToolsSequential',
      'perSecond',
      'over its connection, 1 in flight',
      'calls/s',
      'higher',
      'hub-connection',
      'straight',
    ),
    entrantRow(
      'hubToolsConcurrent',
      'perSecond',
      'over its connection, 256 in flight',
      'calls/s',
      'higher',
      'hub-connection',
      'straight',
    ),
    entrantRow(
      'hubCatalog',
      'p50Ms',
      'hub of 50 x 20: start + handshake + tools/list, p50',
      'ms',
      'lower',
      'hub',
      'clients',
      {
        note: CATALOG_NOTE,
      },
    ),
    entrantRow('hubCatalog', 'p99Ms', 'hub of 50 x 20, p99', 'ms', 'lower', 'hub', 'clients'),
  ],
};

runWhenMain(import.meta.url, HUB_SCENARIOS, [HUB_OVERHEAD]);
