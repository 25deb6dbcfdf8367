/**
 * The stateless revision (2026-07-28) in process: one raw JSON-RPC peer (requests sent as prebuilt objects,
 * answers matched by id, no client library) on a memory pair to a connection of our shared `Server`
 * (bench/modern-servers.ts: `echo` and `ask_name`), so the rows differ by what the server does alone:
 * - modern: `tools/call` of `echo` with the `_meta` envelope, each request served on its own (the connection's
 *   era is chosen by its first request);
 * - handshake: `initialize` once, then `tools/call` of `echo` on the session;
 * - modern-round: one logical call of `ask_name` (the `input_required` answer, then the retry).
 * - client-modern / client-handshake: the same `tools/call` of `echo` through our `Client` (forced into each
 *   era: a memory pair is not probed) against the same server: the whole in-process path of each era.
 */
import type { InboundFrame, JsonObject, JsonRpcResponse, RequestId } from '../lib/jsonrpc/types';
import { Server } from '../lib/server/server';
import { Client } from '../lib/client/client';
import type { EraChoice } from '../lib/client/era-choice';
import { createMemoryPair } from '../transports/memory';
import type { Transport } from '../transports/transport';
import type { BenchSettings } from './config';
import type { CallPair } from './contender';
import { measureLatency, measureThroughput } from './harness';
import { ASKED_NAME, CLIENT_INFO, ENVELOPE, expectText, HANDSHAKE_VERSION } from './modern';
import { ASK_NAME_TOOL, dualEraDefinition } from './modern-servers';
import type { Figures, Scenario } from './scenarios';

/** Sends requests and resolves each with the response carrying its id. */
class RawPeer {
  private readonly pending = new Map<RequestId, (response: JsonRpcResponse) => void>();
  private nextId = 1;

  constructor(private readonly transport: Transport) {
    transport.messages.subscribe((frame) => this.received(frame));
  }

  request(method: string, params: JsonObject): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    const answered = new Promise<JsonRpcResponse>((resolve) => this.pending.set(id, resolve));
    void this.transport.send({ jsonrpc: '2.0', id, method, params });
    return answered.then(resultOf);
  }

  notify(method: string): Promise<void> {
    return this.transport.send({ jsonrpc: '2.0', method });
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  private received(frame: InboundFrame): void {
    const id = (frame as { id?: RequestId }).id;
    const settle = id === undefined ? undefined : this.pending.get(id);
    if (settle === undefined) return;
    this.pending.delete(id!);
    settle(frame as JsonRpcResponse);
  }
}

function resultOf(response: JsonRpcResponse): Record<string, unknown> {
  if ('error' in response) throw new Error(`expected a result, got ${JSON.stringify(response.error)}`);
  return response.result;
}

let sharedServer: Server | undefined;

/** A raw peer connected to the shared server over an unfrozen memory pair (the production path). */
function connectPeer(): RawPeer {
  const [peerSide, serverSide] = createMemoryPair({ freeze: false });
  (sharedServer ??= new Server(dualEraDefinition())).connect(serverSide);
  return new RawPeer(peerSide);
}

const MODERN_ECHO: JsonObject = { name: 'echo', arguments: { text: 'hi' }, _meta: ENVELOPE };
const HANDSHAKE_ECHO: JsonObject = { name: 'echo', arguments: { text: 'hi' } };
const ASK: JsonObject = { name: ASK_NAME_TOOL, arguments: {}, _meta: ENVELOPE };
const INPUT_RESPONSES = { name: { action: 'accept', content: { name: ASKED_NAME } } };

async function modernEcho(): Promise<CallPair> {
  const peer = connectPeer();
  return {
    callEcho: async () => expectText(await peer.request('tools/call', MODERN_ECHO), 'hi'),
    close: () => peer.close(),
  };
}

async function handshakeEcho(): Promise<CallPair> {
  const peer = connectPeer();
  await peer.request('initialize', { protocolVersion: HANDSHAKE_VERSION, capabilities: {}, clientInfo: CLIENT_INFO });
  await peer.notify('notifications/initialized');
  return {
    callEcho: async () => expectText(await peer.request('tools/call', HANDSHAKE_ECHO), 'hi'),
    close: () => peer.close(),
  };
}

async function modernRound(): Promise<CallPair> {
  const peer = connectPeer();
  return {
    callEcho: async () => {
      const round = await peer.request('tools/call', ASK);
      if (typeof round.requestState !== 'string') throw new Error(`expected a round, got ${JSON.stringify(round)}`);
      const retry = { ...ASK, inputResponses: INPUT_RESPONSES, requestState: round.requestState };
      expectText(await peer.request('tools/call', retry), `Hi, ${ASKED_NAME}`);
    },
    close: () => peer.close(),
  };
}

/** Our client in `era`, connected to the shared server over an unfrozen memory pair. */
async function clientEcho(era: EraChoice): Promise<CallPair> {
  const [clientSide, serverSide] = createMemoryPair({ freeze: false });
  (sharedServer ??= new Server(dualEraDefinition())).connect(serverSide);
  const client = new Client({ name: 'bench', version: '1.0.0' }, { era, listChanges: 'off' });
  await client.connect(clientSide);
  const args = { text: 'hi' };
  return {
    callEcho: async () => expectText((await client.callTool('echo', args)) as Record<string, unknown>, 'hi'),
    close: () => client.close().then(() => undefined),
  };
}

const ENTRANTS: Readonly<Record<string, () => Promise<CallPair>>> = {
  modern: modernEcho,
  handshake: handshakeEcho,
  'modern-round': modernRound,
  'client-modern': () => clientEcho('modern'),
  'client-handshake': () => clientEcho('handshake'),
};

/**
 * 1 in flight (timed call by call), then `concurrency` in flight (wall time), on one connection; in the
 * shorter `ioWindow`, which keeps these rows to a few seconds per run.
 */
async function inProcessCalls(connect: () => Promise<CallPair>, settings: BenchSettings): Promise<Figures> {
  const pair = await connect();
  try {
    const sequential = await measureLatency(pair.callEcho, settings.ioWindow);
    const concurrentPerSecond = await measureThroughput(pair.callEcho, settings.concurrency, settings.ioWindow);
    return { sequentialPerSecond: sequential.perSecond, sequentialP50Us: sequential.p50Us, concurrentPerSecond };
  } finally {
    await pair.close();
  }
}

export const MODERN_IN_PROCESS_SCENARIOS: readonly Scenario[] = [
  {
    id: 'modernInProcess',
    entrants: Object.entries(ENTRANTS).map(([name, connect]) => ({
      name,
      measure: (settings: BenchSettings) => inProcessCalls(connect, settings),
    })),
  },
];
