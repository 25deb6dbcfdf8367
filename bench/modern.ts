/**
 * The stateless-revision (2026-07-28) rows: `tools/call` POSTs over Streamable HTTP on 127.0.0.1, the server
 * in a child process (bench/http.ts, bench/modern-servers.ts), every entrant driven by the same raw client
 * (`RawJsonPoster` over bench/raw-http-client.ts: keep-alive sockets, the request head written by hand, prebuilt
 * bodies, the answer parsed and checked), so the rows differ by the server alone:
 * - ours: a modern `tools/call` of `echo` (the `_meta` envelope, `MCP-Protocol-Version`, `Mcp-Method`,
 *   `Mcp-Name`), no session;
 * - sdk-v2: the same request to `@modelcontextprotocol/server` 2.4.0 (`createMcpHandler`, an `McpServer` per request);
 * - bare: the same request to a node:http server that parses the body and answers `{ jsonrpc, id, result }`;
 * - ours-round: one logical call of `ask_name` that elicits once: the first POST is answered `input_required`,
 *   the retry carries `inputResponses` and the byte-exact `requestState` and gets the complete result;
 * - ours-handshake: a handshake-era session on the same endpoint (initialize, then `tools/call` of `echo` with
 *   `MCP-Session-Id`), JSON answers.
 */
import type { BenchSettings } from './config';
import type { CallPair } from './contender';
import { measureLatency, measureThroughput, type Operation } from './harness';
import { withServer, type HttpCallPair, type HttpServerName } from './http';
import { ASK_NAME_TOOL } from './modern-servers';
import { RawHttpClient } from './raw-http-client';
import type { Figures, Scenario } from './scenarios';

const MODERN_VERSION = '2026-07-28';
export const HANDSHAKE_VERSION = '2025-11-25';
export const CLIENT_INFO = { name: 'bench-raw-client', version: '1.0.0' };
export const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
  'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
  'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
};
const ECHO_TEXT = 'hi';
const ECHO_ARGUMENTS = { text: ECHO_TEXT };
export const ASKED_NAME = 'Ada';

/** What the server answered: its status, the session header (handshake era) and the parsed JSON body. */
interface JsonAnswer {
  readonly status: number;
  readonly sessionId: string | undefined;
  readonly body: { readonly result?: Record<string, unknown>; readonly error?: unknown } | undefined;
}

type Headers = Readonly<Record<string, string>>;

const BASE_HEADERS: Headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** Posts a body to one URL and reads the JSON answer (an SSE answer is an error here). */
class RawJsonPoster {
  private readonly client: RawHttpClient;

  constructor(url: string) {
    this.client = new RawHttpClient(url);
  }

  async post(body: string, headers: Headers): Promise<JsonAnswer> {
    const answer = await this.client.post(body, { ...BASE_HEADERS, ...headers });
    if (answer.body.length > 0 && answer.contentType !== 'application/json') {
      throw new Error(`expected a JSON answer, got ${answer.contentType} (status ${answer.status})`);
    }
    return {
      status: answer.status,
      sessionId: answer.sessionId,
      body: answer.body.length === 0 ? undefined : JSON.parse(answer.body),
    };
  }

  close(): void {
    this.client.close();
  }
}

/** The result of an answer, or an error naming what came instead. */
function resultOf(answer: JsonAnswer): Record<string, unknown> {
  const result = answer.body?.result;
  if (result === undefined) throw new Error(`expected a result, got ${answer.status} ${JSON.stringify(answer.body)}`);
  return result;
}

export function expectText(result: Record<string, unknown>, text: string): void {
  const content = result.content as { text?: string }[] | undefined;
  if (content?.[0]?.text !== text) throw new Error(`expected the text ${text}, got ${JSON.stringify(result)}`);
}

/** A request body with a fresh id, the rest serialized once. */
function bodyMaker(method: string, params: object): (id: number) => string {
  const tail = `,"method":${JSON.stringify(method)},"params":${JSON.stringify(params)}}`;
  return (id) => `{"jsonrpc":"2.0","id":${id}${tail}`;
}

function modernHeaders(method: string, name: string): Headers {
  return { 'mcp-protocol-version': MODERN_VERSION, 'mcp-method': method, 'mcp-name': name };
}

/** `tools/call` of `echo` on the modern path, one POST per call (also what the bare server is sent). */
async function modernEcho(url: string): Promise<CallPair> {
  const poster = new RawJsonPoster(url);
  const body = bodyMaker('tools/call', { name: 'echo', arguments: ECHO_ARGUMENTS, _meta: ENVELOPE });
  const headers = modernHeaders('tools/call', 'echo');
  let nextId = 1;
  const callEcho = async () => expectText(resultOf(await poster.post(body(nextId++), headers)), ECHO_TEXT);
  return { callEcho, close: async () => poster.close() };
}

/** One logical call of `ask_name`: the `input_required` answer, then the retry that answers it. */
async function modernRound(url: string): Promise<CallPair> {
  const poster = new RawJsonPoster(url);
  const params = { name: ASK_NAME_TOOL, arguments: {}, _meta: ENVELOPE };
  const first = bodyMaker('tools/call', params);
  const inputResponses = { name: { action: 'accept', content: { name: ASKED_NAME } } };
  const headers = modernHeaders('tools/call', ASK_NAME_TOOL);
  let nextId = 1;
  const callEcho = async () => {
    const round = resultOf(await poster.post(first(nextId++), headers));
    if (round.resultType !== 'input_required' || typeof round.requestState !== 'string') {
      throw new Error(`expected an input_required round, got ${JSON.stringify(round)}`);
    }
    const retry = bodyMaker('tools/call', { ...params, inputResponses, requestState: round.requestState });
    expectText(resultOf(await poster.post(retry(nextId++), headers)), `Hi, ${ASKED_NAME}`);
  };
  return { callEcho, close: async () => poster.close() };
}

/** A handshake-era session on the same endpoint, then `tools/call` of `echo` in it. */
async function handshakeSession(url: string): Promise<CallPair> {
  const poster = new RawJsonPoster(url);
  const initialize = bodyMaker('initialize', {
    protocolVersion: HANDSHAKE_VERSION,
    capabilities: {},
    clientInfo: CLIENT_INFO,
  });
  const opened = await poster.post(initialize(0), {});
  resultOf(opened);
  if (opened.sessionId === undefined) throw new Error('initialize was answered without a session id');
  const headers = { 'mcp-session-id': opened.sessionId, 'mcp-protocol-version': HANDSHAKE_VERSION };
  await poster.post('{"jsonrpc":"2.0","method":"notifications/initialized"}', headers);
  const body = bodyMaker('tools/call', { name: 'echo', arguments: ECHO_ARGUMENTS });
  let nextId = 1;
  const callEcho = async () => expectText(resultOf(await poster.post(body(nextId++), headers)), ECHO_TEXT);
  return { callEcho, close: async () => poster.close() };
}

export type ModernEntrantName = 'ours' | 'ours-fetch' | 'sdk-v2' | 'bare' | 'ours-round' | 'ours-handshake';

const ENTRANTS: Readonly<Record<ModernEntrantName, readonly [HttpServerName, (url: string) => Promise<CallPair>]>> = {
  ours: ['ours-dual', modernEcho],
  'ours-fetch': ['ours-fetch', modernEcho],
  'sdk-v2': ['sdk-v2', modernEcho],
  bare: ['bare', modernEcho],
  'ours-round': ['ours-dual', modernRound],
  'ours-handshake': ['ours-dual', handshakeSession],
};

/** One entrant's raw client against its server in a child process started with `serverFlags`. */
export function connectModernEntrant(name: ModernEntrantName, serverFlags?: readonly string[]): Promise<HttpCallPair> {
  const [server, connect] = ENTRANTS[name];
  return withServer(server, connect, serverFlags);
}

/**
 * 1 in flight (timed call by call), with the server child's CPU time per call over that phase (its warm-up
 * included, and the IPC of asking outside it), then `modernHttpConcurrency` in flight (wall time).
 */
async function modernCalls(name: ModernEntrantName, settings: BenchSettings): Promise<Figures> {
  const pair = await connectModernEntrant(name);
  try {
    let calls = 0;
    const counted: Operation = () => (calls++, pair.callEcho());
    const cpuBefore = await pair.serverCpuMicros();
    const sequential = await measureLatency(counted, settings.ioWindow);
    const serverCpuUsPerCall = ((await pair.serverCpuMicros()) - cpuBefore) / calls;
    const concurrency = settings.modernHttpConcurrency;
    const concurrentPerSecond = await measureThroughput(pair.callEcho, concurrency, settings.ioWindow);
    return {
      sequentialPerSecond: sequential.perSecond,
      sequentialMeanUs: 1e6 / sequential.perSecond,
      sequentialP50Us: sequential.p50Us,
      serverCpuUsPerCall,
      concurrentPerSecond,
    };
  } finally {
    await pair.close();
  }
}

export const MODERN_SCENARIOS: readonly Scenario[] = [
  {
    id: 'modernHttp',
    entrants: (Object.keys(ENTRANTS) as ModernEntrantName[]).map((name) => ({
      name,
      measure: (settings: BenchSettings) => modernCalls(name, settings),
    })),
  },
];
