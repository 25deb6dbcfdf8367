/**
 * What is measured. A scenario has entrants (ours, the SDK, or variants of ours); each entrant's `measure`
 * returns named figures for one run. The same harness call serves every entrant of a scenario.
 */
import type { BenchSettings } from './config';
import type { CallPair, Contender, PairFactory } from './contender';
import { ArrivalCounter, measureDelivery, measureHeapPerItem, measureLatency, measureThroughput } from './harness';
import { HTTP_ENTRANTS, type HttpCallPair } from './http';
import { throughHub } from './hub';
import { defaultRuntime } from '../lib/core/runtime';
import { connectOnSharedServer, connectTraced, ours } from './ours';
import { sdk } from './sdk';
import { SOCKET_ENTRANTS } from './sockets';
import { STDIO_ENTRANTS } from './stdio';

export type Figures = Readonly<Record<string, number>>;

export interface Entrant {
  readonly name: string;
  measure(settings: BenchSettings): Promise<Figures>;
}

export interface Scenario {
  readonly id: string;
  readonly entrants: readonly Entrant[];
}

const CONTENDERS: readonly Contender[] = [ours, sdk];

/** Opens a pair or probe, uses it, and closes it whatever happens. */
async function withResource<R extends { close(): Promise<unknown> }, T>(
  open: () => Promise<R>,
  use: (resource: R) => Promise<T>,
): Promise<T> {
  const resource = await open();
  try {
    return await use(resource);
  } finally {
    await resource.close();
  }
}

/** One entrant per contender, each measured by the same function. */
function headToHead(
  id: string,
  measure: (contender: Contender, settings: BenchSettings) => Promise<Figures>,
): Scenario {
  return {
    id,
    entrants: CONTENDERS.map((contender) => ({
      name: contender.name,
      measure: (settings) => measure(contender, settings),
    })),
  };
}

/** One entrant per handshake variant of every contender (ours on a shared Server, ours with a Server per pair, the SDK). */
function perHandshakeVariant(
  id: string,
  measure: (connect: PairFactory, settings: BenchSettings) => Promise<Figures>,
): Scenario {
  const entrants = CONTENDERS.flatMap((contender) =>
    Object.entries(contender.handshakeVariants).map(([name, connect]) => ({
      name,
      measure: (settings: BenchSettings) => measure(connect, settings),
    })),
  );
  return { id, entrants };
}

/** One entrant per named connection factory (the stdio, socket and HTTP rows). */
function perConnection<P extends CallPair>(
  id: string,
  factories: Readonly<Record<string, () => Promise<P>>>,
  measure: (connect: () => Promise<P>, settings: BenchSettings) => Promise<Figures>,
): Scenario {
  return {
    id,
    entrants: Object.entries(factories).map(([name, connect]) => ({
      name,
      measure: (settings: BenchSettings) => measure(connect, settings),
    })),
  };
}

/**
 * tools/call on one connection, 1 in flight (timed call by call) then `concurrency` in flight (wall time),
 * each after its own warm-up; opening the connection (a child's start-up, the handshake) is not timed.
 */
const toolCallsAtBothConcurrencies = (connect: () => Promise<CallPair>, settings: BenchSettings) =>
  withResource(connect, async (pair) => {
    const sequential = await measureLatency(pair.callEcho, settings.ioWindow);
    const concurrentPerSecond = await measureThroughput(pair.callEcho, settings.concurrency, settings.ioWindow);
    return { sequentialPerSecond: sequential.perSecond, sequentialP50Us: sequential.p50Us, concurrentPerSecond };
  });

/**
 * tools/call over HTTP, 1 then `httpConcurrency` in flight, and the TCP connections the server accepted by the
 * end of each phase: with keep-alive, no more than the calls in flight plus a client's standalone GET stream.
 */
const httpToolCalls = (connect: () => Promise<HttpCallPair>, settings: BenchSettings) =>
  withResource(connect, async (pair) => {
    const sequential = await measureLatency(pair.callEcho, settings.ioWindow);
    const sequentialConnections = await pair.connectionsAccepted();
    const concurrentPerSecond = await measureThroughput(pair.callEcho, settings.httpConcurrency, settings.ioWindow);
    return {
      sequentialPerSecond: sequential.perSecond,
      sequentialP50Us: sequential.p50Us,
      concurrentPerSecond,
      sequentialConnections,
      connections: await pair.connectionsAccepted(),
    };
  });

const sequentialToolCalls = (connect: () => Promise<CallPair>, settings: BenchSettings) =>
  withResource(connect, async (pair) => ({ ...(await measureLatency(pair.callEcho, settings.window)) }));

/** `sequentialToolCalls` on a pair whose trace is observed: the subscribers must have seen events. */
const observedToolCalls = (
  connect: () => Promise<CallPair & { readonly traceEvents: () => number }>,
  settings: BenchSettings,
) =>
  withResource(connect, async (pair) => {
    const figures = await measureLatency(pair.callEcho, settings.window);
    if (pair.traceEvents() === 0) throw new Error('The trace subscribers saw no events: nothing was observed');
    return { ...figures };
  });

/** The pair `connect` opens, given the counter its trace subscriber calls; `traceEvents` reads the count. */
async function counted(
  connect: (count: () => void) => Promise<CallPair>,
): Promise<CallPair & { readonly traceEvents: () => number }> {
  let events = 0;
  const pair = await connect(() => void events++);
  return { ...pair, traceEvents: () => events };
}

/** The unobserved pair with one subscriber on the default runtime's `trace$` (every connection of the process). */
const connectRuntimeObserved = () =>
  counted(async (count) => {
    const pair = await connectOnSharedServer();
    const subscription = defaultRuntime().trace$.subscribe(count);
    return {
      ...pair,
      close: async () => {
        subscription.unsubscribe();
        await pair.close();
      },
    };
  });

/** Through a hub to an in-process upstream (called directly, the default), with one subscriber on `hub.trace$`. */
const connectHubObserved = () => counted((count) => throughHub(true, (hub) => hub.trace$.subscribe(count)));

export const SCENARIOS: readonly Scenario[] = [
  headToHead('correlation', (contender, settings) =>
    withResource(contender.createCorrelationProbe, async (probe) => ({
      perSecond: await measureThroughput(probe.roundTrip, 1, settings.window),
    })),
  ),

  headToHead('toolsSequential', (contender, settings) => sequentialToolCalls(contender.connectPair, settings)),

  headToHead('toolsConcurrent', (contender, settings) =>
    withResource(contender.connectPair, async (pair) => ({
      perSecond: await measureThroughput(pair.callEcho, settings.concurrency, settings.window),
    })),
  ),

  headToHead('notifications', (contender, settings) =>
    withResource(contender.connectPair, async (pair) => {
      const arrivals = new ArrivalCounter();
      pair.onClientNotification(arrivals.arrive);
      return {
        perSecond: await measureDelivery(pair.notifyClient, arrivals, settings.notificationBatch, settings.window),
      };
    }),
  ),

  headToHead('ping', (contender, settings) =>
    withResource(contender.connectPair, async (pair) => ({
      perSecond: await measureThroughput(pair.ping, 1, settings.window),
    })),
  ),

  perHandshakeVariant('handshake', async (connect, settings) => {
    const { perSecond, p50Us, p99Us } = await measureLatency(connect, settings.window, (pair) => pair.close());
    return { perSecond, p50Us, p99Us };
  }),

  perHandshakeVariant('heap', async (connect, settings) => {
    const heap = await measureHeapPerItem(connect, settings.heapPairs, (pairs) =>
      Promise.all(pairs.map((pair) => pair.close())),
    );
    return { bytesPerPair: heap.bytesPerItem, retainedAfterCloseBytesPerPair: heap.retainedAfterDisposeBytesPerItem };
  }),

  perConnection('stdio', STDIO_ENTRANTS, toolCallsAtBothConcurrencies),

  perConnection('socket', SOCKET_ENTRANTS, toolCallsAtBothConcurrencies),

  perConnection('http', HTTP_ENTRANTS, httpToolCalls),

  {
    id: 'traceTap',
    entrants: [
      // `trace$` is never touched here: even reading it creates the Subject.
      { name: 'unobserved', measure: (settings) => sequentialToolCalls(connectOnSharedServer, settings) },
      { name: 'observed', measure: (settings) => observedToolCalls(connectTraced, settings) },
      { name: 'runtimeObserved', measure: (settings) => observedToolCalls(connectRuntimeObserved, settings) },
      { name: 'hubUnobserved', measure: (settings) => sequentialToolCalls(() => throughHub(true), settings) },
      { name: 'hubObserved', measure: (settings) => observedToolCalls(connectHubObserved, settings) },
    ],
  },
];
