/** The rows of the report: which two series are set side by side, and the targets from the issue. */

export interface SeriesRef {
  readonly scenario: string;
  readonly entrant: string;
  readonly figure: string;
}

export interface Target {
  /** The median ratio (subject ÷ baseline) must be at least / at most this. */
  readonly bound: 'atLeast' | 'atMost';
  readonly ratio: number;
  readonly text: string;
}

export interface Comparison {
  readonly label: string;
  readonly unit: string;
  readonly better: 'higher' | 'lower';
  /** The numerator of the ratio (ours). */
  readonly subject: SeriesRef;
  /** The denominator (the SDK, or ours observed for the trace rows). */
  readonly baseline: SeriesRef;
  readonly target?: Target;
  /** How the figure is taken, printed once under the table for the first row that carries it. */
  readonly note?: string;
}

export interface ComparisonTable {
  readonly title: string;
  readonly subjectName: string;
  readonly baselineName: string;
  readonly comparisons: readonly Comparison[];
}

/** A row setting two entrants side by side on one figure of one scenario (`subject` ÷ `baseline`). */
export function entrantRow(
  scenario: string,
  figure: string,
  label: string,
  unit: string,
  better: 'higher' | 'lower',
  subject: string,
  baseline: string,
  extra: Partial<Pick<Comparison, 'target' | 'note'>> = {},
): Comparison {
  return {
    label,
    unit,
    better,
    subject: { scenario, entrant: subject, figure },
    baseline: { scenario, entrant: baseline, figure },
    ...extra,
  };
}

/** The target of a ratio that must reach `ratio`. */
export const atLeast = (ratio: number): Target => ({ bound: 'atLeast', ratio, text: `>= ${ratio}x` });
const atMostFraction = (denominator: number): Target => ({
  bound: 'atMost',
  ratio: 1 / denominator,
  text: `<= 1/${denominator}`,
});

/** A row: `subjectEntrant` (default ours) ÷ `baselineEntrant` (default the SDK) on one figure of one scenario. */
function compare(
  scenario: string,
  figure: string,
  label: string,
  unit: string,
  better: 'higher' | 'lower',
  extra: { subjectEntrant?: string; baselineEntrant?: string; target?: Target; note?: string } = {},
): Comparison {
  return {
    label,
    unit,
    better,
    subject: { scenario, entrant: extra.subjectEntrant ?? 'ours', figure },
    baseline: { scenario, entrant: extra.baselineEntrant ?? 'sdk', figure },
    ...(extra.target && { target: extra.target }),
    ...(extra.note !== undefined && { note: extra.note }),
  };
}

const CORRELATION_NOTE =
  'ours: CorrelationTable alone, begin() -> resolve() -> await record.promise (no connection, no transport). SDK: it has no standalone correlation core, so Client.ping() against a fake Transport that answers each request inside send(); this includes request building, zod guards and result parse, and the timeout timer. Not like for like.';
const SEQUENTIAL_NOTE =
  'Timed call by call (performance.now() around each awaited call): calls/s = calls / summed latency; p50 and p99 from the same calls. The 256-in-flight and ping rows are completed calls / wall time.';
const NOTIFICATION_NOTE =
  'ours: ServerConnection.notify(), counted on client.notifications$; SDK: server.server.notification(), counted by setNotificationHandler(LoggingMessageNotificationSchema); sent in batches of 256 for the time window, timed from the first send until all have arrived. For the tools/call, ping and notification rows the SDK McpServer declares logging (it refuses to send notifications/message otherwise; ours always declares it); the handshake and heap rows use its default options.';
const HANDSHAKE_NOTE =
  'Timed per pair: transport pair + server side connect (+ new defineServer/Server or McpServer where built per pair) + new Client + connect (initialize round trip + initialized). Each pair is closed after it is timed, outside the timed region; hs/s = pairs / summed handshake time. The SDK builds a new McpServer with default options per pair.';
const HEAP_NOTE =
  '(heapUsed after gc with N connected pairs alive - heapUsed after gc before) / N, N = settings.heapPairs; same pair factories as the handshake rows.';

export const OURS_VS_SDK: ComparisonTable = {
  title: 'mcp-switchboard vs @modelcontextprotocol/sdk v1 (in-process, same process)',
  subjectName: 'ours',
  baselineName: 'SDK',
  comparisons: [
    compare('correlation', 'perSecond', 'correlation core', 'req/s', 'higher', { note: CORRELATION_NOTE }),
    compare('toolsSequential', 'perSecond', 'tools/call, 1 in flight', 'calls/s', 'higher', {
      target: atLeast(5),
      note: SEQUENTIAL_NOTE,
    }),
    compare('toolsSequential', 'p50Us', 'tools/call, 1 in flight, p50', 'us', 'lower'),
    compare('toolsSequential', 'p99Us', 'tools/call, 1 in flight, p99', 'us', 'lower'),
    compare('toolsConcurrent', 'perSecond', 'tools/call, 256 in flight', 'calls/s', 'higher', { target: atLeast(5) }),
    compare('notifications', 'perSecond', 'notifications server -> client', 'msg/s', 'higher', {
      note: NOTIFICATION_NOTE,
    }),
    compare('ping', 'perSecond', 'ping, 1 in flight', 'pings/s', 'higher'),
    compare('handshake', 'perSecond', 'handshakes, shared Server', 'hs/s', 'higher', {
      subjectEntrant: 'ours-shared',
      target: atLeast(20),
      note: HANDSHAKE_NOTE,
    }),
    compare('handshake', 'p50Us', 'handshake p50, shared Server', 'us', 'lower', { subjectEntrant: 'ours-shared' }),
    compare('handshake', 'perSecond', 'handshakes, Server per pair', 'hs/s', 'higher', {
      subjectEntrant: 'ours-per-pair',
      target: atLeast(20),
    }),
    compare('handshake', 'p50Us', 'handshake p50, Server per pair', 'us', 'lower', { subjectEntrant: 'ours-per-pair' }),
    compare('heap', 'bytesPerPair', 'heap per pair, shared Server', 'bytes', 'lower', {
      subjectEntrant: 'ours-shared',
      target: atMostFraction(5),
      note: HEAP_NOTE,
    }),
    compare('heap', 'bytesPerPair', 'heap per pair, Server per pair', 'bytes', 'lower', {
      subjectEntrant: 'ours-per-pair',
      target: atMostFraction(5),
    }),
  ],
};

const STDIO_NOTE =
  'Each entrant spawns its server as a child over pipes: ours = our Client + StdioClientTransport -> node --import tsx bench/fixtures/stdio-echo-ours.ts (our Server, echo tool, StdioServerTransport); SDK = SDK Client + StdioClientTransport -> node bench/fixtures/stdio-echo-sdk.mjs (McpServer, echo tool, SDK StdioServerTransport); bare = a Map of pending ids, JSON.stringify/parse and one write per message -> node bench/fixtures/stdio-echo-bare.mjs (parses each line, replies {jsonrpc, id, result}). Child start-up and the handshake are not timed, nor the JIT warm-up of each fresh child (5,000 sequential then 20 x 256 concurrent untimed calls per connection, the same for every entrant); each concurrency also has its own warm-up. 1 in flight: calls / summed latency; 256 in flight: completed calls / wall time. Absolute figures are cross-process and move with the machine: compare the ratios.';
const SOCKET_NOTE =
  "Our Client and shared Server in this one process, joined by a connected unix socket in os.tmpdir(): FramedTransport (4-byte length + msgpack) on both ends vs StdioServerTransport (LineStream, newline-delimited JSON) over the socket on both ends. Client and server share one event loop, so the figure counts both ends' encode and decode.";

/**
 * The round-trip rows of a transport scenario (`stdio`, `http`) against one baseline entrant, with the
 * issue's target where it has one: calls per second one at a time, its p50, and calls per second with
 * `concurrency` in flight.
 */
function roundTripRows(
  scenario: string,
  label: string,
  concurrency: number,
  note: string,
  baselineEntrant: string,
  target?: Target,
): Comparison[] {
  const extra = { baselineEntrant, ...(target && { target }) };
  return [
    compare(scenario, 'sequentialPerSecond', `${label} tools/call, 1 in flight`, 'calls/s', 'higher', {
      ...extra,
      note,
    }),
    compare(scenario, 'sequentialP50Us', `${label} tools/call, 1 in flight, p50`, 'us', 'lower', { baselineEntrant }),
    compare(
      scenario,
      'concurrentPerSecond',
      `${label} tools/call, ${concurrency} in flight`,
      'calls/s',
      'higher',
      extra,
    ),
  ];
}

const stdioRows = (baselineEntrant: 'bare' | 'sdk', target?: Target) =>
  roundTripRows('stdio', 'stdio', 256, STDIO_NOTE, baselineEntrant, target);

export const STDIO_VS_BARE: ComparisonTable = {
  title: 'stdio, server as a child process: mcp-switchboard vs a bare JSON-lines echo (target: ours >= 80% of bare)',
  subjectName: 'ours',
  baselineName: 'bare',
  comparisons: stdioRows('bare', atLeast(0.8)),
};

export const STDIO_VS_SDK: ComparisonTable = {
  title: 'stdio, server as a child process: mcp-switchboard vs @modelcontextprotocol/sdk v1 (same runs as above)',
  subjectName: 'ours',
  baselineName: 'SDK',
  comparisons: stdioRows('sdk'),
};

const framedVsLines = (figure: string, label: string, unit: string, better: 'higher' | 'lower', note?: string) =>
  compare('socket', figure, label, unit, better, {
    subjectEntrant: 'framed',
    baselineEntrant: 'lines',
    ...(note !== undefined && { note }),
  });

export const FRAMED_VS_LINES: ComparisonTable = {
  title: 'Unix socket, ours on both ends: FramedTransport (msgpack) vs JSON lines',
  subjectName: 'framed',
  baselineName: 'lines',
  comparisons: [
    framedVsLines('sequentialPerSecond', 'tools/call, 1 in flight', 'calls/s', 'higher', SOCKET_NOTE),
    framedVsLines('sequentialP50Us', 'tools/call, 1 in flight, p50', 'us', 'lower'),
    framedVsLines('concurrentPerSecond', 'tools/call, 256 in flight', 'calls/s', 'higher'),
  ],
};

const HTTP_NOTE =
  'Server in a child process on 127.0.0.1 (node --import tsx bench/http.ts --serve-http <entrant>), client in the bench process. ours = our Client + StreamableHttpClientTransport (node:http keep-alive Agent) -> our Server + createStreamableHttpHandler, responseMode json; SDK = SDK Client + StreamableHTTPClientTransport (fetch) -> McpServer + StreamableHTTPServerTransport on node:http, stateful (sessionIdGenerator: randomUUID), enableJsonResponse: true; bare = one JSON POST per call over a node:http keep-alive Agent to a node:http server that parses the body and answers {jsonrpc, id, result} (no MCP). Child start-up and the handshake are not timed. 1 in flight: calls / summed latency; 64 in flight: completed calls / wall time.';

const httpRows = (baselineEntrant: 'sdk' | 'bare', target?: Target) =>
  roundTripRows('http', 'HTTP', 64, HTTP_NOTE, baselineEntrant, target);

export const HTTP_VS_SDK: ComparisonTable = {
  title: 'Streamable HTTP, server as a child process: mcp-switchboard vs @modelcontextprotocol/sdk v1 (JSON responses)',
  subjectName: 'ours',
  baselineName: 'SDK',
  comparisons: httpRows('sdk', atLeast(5)),
};

export const HTTP_VS_BARE: ComparisonTable = {
  title: 'Streamable HTTP: mcp-switchboard vs a bare keep-alive JSON POST echo over node:http (the ceiling; same runs)',
  subjectName: 'ours',
  baselineName: 'bare',
  comparisons: httpRows('bare'),
};

const MODERN_IN_PROCESS_NOTE =
  'One raw JSON-RPC peer (prebuilt request objects, answers matched by id, no client library) on an unfrozen memory pair to a connection of one shared Server with echo and ask_name (bench/modern-in-process.ts). modern = tools/call of echo with the 2026-07-28 _meta envelope, each request served on its own; handshake = initialize once, then tools/call of echo on the session; round = one logical call of ask_name (input_required, then the retry with inputResponses and requestState). The server side only: our client is not in these rows. 1 in flight: calls / summed latency; 256 in flight: completed calls / wall time.';

/** A row of the `modernInProcess` scenario: `subjectEntrant` ÷ `baselineEntrant` on one figure. */
function inProcessRow(
  subjectEntrant: string,
  baselineEntrant: string,
  figure: string,
  label: string,
  unit: string,
  better: 'higher' | 'lower',
  extra: { target?: Target; note?: string } = {},
): Comparison {
  return compare('modernInProcess', figure, label, unit, better, { subjectEntrant, baselineEntrant, ...extra });
}

const NINE_TENTHS = { target: atLeast(0.9) };

/** A `modernInProcess` row of the two eras, the same call: the raw peer's (`''`) or our client's (`client-`). */
function eraRow(
  who: '' | 'client-',
  figure: string,
  inFlight: string,
  unit: string,
  better: 'higher' | 'lower',
  extra: { target?: Target; note?: string } = {},
): Comparison {
  const label = `${who === '' ? '' : 'our Client + Server, '}modern vs handshake, ${inFlight}`;
  return inProcessRow(`${who}modern`, `${who}handshake`, figure, label, unit, better, extra);
}

export const MODERN_IN_PROCESS_ERAS: ComparisonTable = {
  title:
    'In process, the server side (one raw peer): a 2026-07-28 request vs the same call on a handshake-era session (target: modern >= 0.9x handshake), and a call with one elicitation round vs a plain modern call',
  subjectName: 'subject',
  baselineName: 'baseline',
  comparisons: [
    eraRow('', 'sequentialPerSecond', '1 in flight', 'calls/s', 'higher', {
      ...NINE_TENTHS,
      note: MODERN_IN_PROCESS_NOTE,
    }),
    eraRow('', 'sequentialP50Us', '1 in flight, p50', 'us', 'lower'),
    eraRow('', 'concurrentPerSecond', '256 in flight', 'calls/s', 'higher', NINE_TENTHS),
    eraRow('client-', 'sequentialPerSecond', '1 in flight', 'calls/s', 'higher', NINE_TENTHS),
    eraRow('client-', 'concurrentPerSecond', '256 in flight', 'calls/s', 'higher', NINE_TENTHS),
    inProcessRow('modern-round', 'modern', 'sequentialPerSecond', 'round vs plain, 1 in flight', 'calls/s', 'higher'),
    inProcessRow('modern-round', 'modern', 'sequentialP50Us', 'round vs plain, 1 in flight, p50', 'us', 'lower'),
    inProcessRow('modern-round', 'modern', 'concurrentPerSecond', 'round vs plain, 256 in flight', 'calls/s', 'higher'),
  ],
};

const MODERN_HTTP_NOTE =
  'Server in a child process on 127.0.0.1 (node --import tsx bench/http.ts --serve-http <server>), every entrant driven by the same raw client in the bench process (bench/raw-http-client.ts: a keep-alive HTTP/1.1 socket per caller, the request head written by hand and the answer read by a minimal parser, as wrk or autocannon do, so the cost of the client stays small next to the servers; prebuilt JSON bodies; each answer parsed and checked): a 2026-07-28 tools/call of echo (params._meta envelope, MCP-Protocol-Version, Mcp-Method, Mcp-Name; no session). ours = our Server + createMcpHttpHandler; SDK v2 = @modelcontextprotocol/server 2.4.0 createMcpHandler (an McpServer per request, zod input schema) on node:http through a fetch adapter (a web Request per request, as toNodeHandler of @modelcontextprotocol/node); bare = node:http, JSON.parse of the body, a fixed {jsonrpc, id, result}. Each pair first makes 2 s of untimed calls. 1 in flight: calls / summed latency; server CPU: user + system time of the server child over the 1-in-flight phase (its warm-up included) / calls; 16 in flight: completed calls / wall time (client and server share the 2 vCPUs).';

/** The rows of the `modernHttp` scenario: `subject` against `baseline`, with the targets given. */
function modernRows(
  subjectEntrant: string,
  baselineEntrant: string,
  targets: { sequential?: Target; serverCpu?: Target; concurrent?: Target } = {},
  note?: string,
): Comparison[] {
  const extra = (target?: Target) => ({ subjectEntrant, baselineEntrant, ...(target && { target }) });
  return [
    compare('modernHttp', 'sequentialPerSecond', 'tools/call, 1 in flight', 'calls/s', 'higher', {
      ...extra(targets.sequential),
      ...(note !== undefined && { note }),
    }),
    compare('modernHttp', 'sequentialP50Us', 'tools/call, 1 in flight, p50', 'us', 'lower', extra()),
    compare(
      'modernHttp',
      'serverCpuUsPerCall',
      'server CPU per call, 1 in flight',
      'us',
      'lower',
      extra(targets.serverCpu),
    ),
    compare(
      'modernHttp',
      'concurrentPerSecond',
      'tools/call, 16 in flight',
      'calls/s',
      'higher',
      extra(targets.concurrent),
    ),
  ];
}

export const MODERN_HTTP_VS_SDK_V2: ComparisonTable = {
  title:
    'Streamable HTTP, revision 2026-07-28 (stateless), one raw client for all: mcp-switchboard vs @modelcontextprotocol/server 2.4.0 (target: ours >= 5x)',
  subjectName: 'ours',
  baselineName: 'SDK v2',
  comparisons: modernRows('ours', 'sdk-v2', { sequential: atLeast(5), concurrent: atLeast(5) }, MODERN_HTTP_NOTE),
};

export const MODERN_HTTP_VS_BARE: ComparisonTable = {
  title:
    'Streamable HTTP, revision 2026-07-28: mcp-switchboard vs a bare keep-alive JSON POST over node:http (the floor; same runs; target: ours >= 0.9x)',
  subjectName: 'ours',
  baselineName: 'bare',
  comparisons: modernRows('ours', 'bare', { sequential: atLeast(0.9), concurrent: atLeast(0.9) }),
};

/** A logical call with one input round costs at most this many plain calls. */
const ROUND_COST = 2.2;

export const MODERN_HTTP_ROUND: ComparisonTable = {
  title: `Streamable HTTP, revision 2026-07-28: a call with one elicitation round (input_required, then the retry with inputResponses and requestState: two POSTs) vs a plain call (target: at most ${ROUND_COST}x the cost)`,
  subjectName: 'round',
  baselineName: 'plain',
  comparisons: [
    compare('modernHttp', 'sequentialMeanUs', 'logical call, 1 in flight, mean latency', 'us', 'lower', {
      subjectEntrant: 'ours-round',
      baselineEntrant: 'ours',
      target: { bound: 'atMost', ratio: ROUND_COST, text: `<= ${ROUND_COST}x` },
      note: 'ours-round = tools/call of ask_name, whose handler awaits ctx.elicit once: the first POST is answered {resultType: input_required, inputRequests, requestState}, the retry (a new id) carries inputResponses and the requestState byte for byte and gets the complete result; one logical call = both POSTs. plain = the ours row of the tables above (same server, same runs).',
    }),
    compare('modernHttp', 'sequentialP50Us', 'logical call, 1 in flight, p50', 'us', 'lower', {
      subjectEntrant: 'ours-round',
      baselineEntrant: 'ours',
    }),
    compare('modernHttp', 'serverCpuUsPerCall', 'server CPU per logical call, 1 in flight', 'us', 'lower', {
      subjectEntrant: 'ours-round',
      baselineEntrant: 'ours',
      target: { bound: 'atMost', ratio: ROUND_COST, text: `<= ${ROUND_COST}x` },
    }),
    compare('modernHttp', 'concurrentPerSecond', 'logical calls, 16 in flight', 'calls/s', 'higher', {
      subjectEntrant: 'ours-round',
      baselineEntrant: 'ours',
      target: { bound: 'atLeast', ratio: 1 / ROUND_COST, text: `>= 1/${ROUND_COST}x` },
    }),
  ],
};

export const MODERN_HTTP_ERAS: ComparisonTable = {
  title:
    'Streamable HTTP, ours on one endpoint: a 2026-07-28 request (no session) vs a handshake-era session (initialize once, then tools/call with MCP-Session-Id; JSON answers), same raw client',
  subjectName: 'modern',
  baselineName: 'handshake',
  comparisons: modernRows('ours', 'ours-handshake'),
};

export const MODERN_HTTP_FETCH: ComparisonTable = {
  title:
    'Streamable HTTP, revision 2026-07-28, the web-standard handlers: ours (createMcpFetchHandler) vs @modelcontextprotocol/server 2.4.0 (createMcpHandler), both on node:http through the same fetch adapter, same runs',
  subjectName: 'ours (fetch)',
  baselineName: 'SDK v2',
  comparisons: modernRows(
    'ours-fetch',
    'sdk-v2',
    {},
    'ours-fetch = our Server + createMcpFetchHandler (the web port: a WebRequest and a WebReply over each fetch Request and Response), behind the adapter the SDK v2 row uses (bench/modern-servers.ts nodeListenerOf: the body read whole, a web Request built, the Response written back).',
  ),
};

export const MODERN_HTTP_FETCH_COST: ComparisonTable = {
  title:
    'Streamable HTTP, revision 2026-07-28, ours on Node: the fetch handler behind an adapter vs createMcpHttpHandler on node:http (what the web port costs where node:http is at hand), same runs',
  subjectName: 'fetch',
  baselineName: 'node:http',
  comparisons: modernRows('ours-fetch', 'ours'),
};

const httpConnections = (entrant: string, figure: string): SeriesRef => ({ scenario: 'http', entrant, figure });

export const HTTP_CONNECTIONS: SeriesListing = {
  title:
    'HTTP keep-alive: TCP connections the server accepted, after the 1-in-flight phase (handshake included) and in all; with keep-alive at most one per call in flight (64) plus the standalone GET stream ours and the SDK open after initialization',
  unit: 'connections',
  series: [
    { label: 'ours, after 1 in flight', ref: httpConnections('ours', 'sequentialConnections') },
    { label: 'ours, in all', ref: httpConnections('ours', 'connections') },
    { label: 'SDK, after 1 in flight', ref: httpConnections('sdk', 'sequentialConnections') },
    { label: 'SDK, in all', ref: httpConnections('sdk', 'connections') },
    { label: 'bare, in all', ref: httpConnections('bare', 'connections') },
  ],
};

const traceTap = (entrant: string, figure: string): SeriesRef => ({ scenario: 'traceTap', entrant, figure });

const TRACE_TAP_NOTE =
  'observed = a subscriber on client.trace$ and one on the server connection trace$; runtime = one subscriber on the default runtime trace$ (every connection of the process); hub = our Client -> memory pair -> Hub -> an in-process upstream called directly, unobserved or with one subscriber on hub.trace$ (picked from the runtime trace$, so the events of the downstream client are built too). 1 in flight: calls / summed latency.';

export const TRACE_TAP: ComparisonTable = {
  title:
    'Trace tap (ours only): tools/call, 1 in flight, nobody on trace$ vs subscribers on the connections, the runtime or the hub',
  subjectName: 'unobserved',
  baselineName: 'observed',
  comparisons: [
    {
      label: 'tools/call, 1 in flight',
      unit: 'calls/s',
      better: 'higher',
      subject: traceTap('unobserved', 'perSecond'),
      baseline: traceTap('observed', 'perSecond'),
      note: TRACE_TAP_NOTE,
    },
    {
      label: 'tools/call, 1 in flight, p50',
      unit: 'us',
      better: 'lower',
      subject: traceTap('unobserved', 'p50Us'),
      baseline: traceTap('observed', 'p50Us'),
    },
    {
      label: 'runtime trace$, 1 in flight',
      unit: 'calls/s',
      better: 'higher',
      subject: traceTap('unobserved', 'perSecond'),
      baseline: traceTap('runtimeObserved', 'perSecond'),
    },
    {
      label: 'through a hub, hub.trace$, 1 in flight',
      unit: 'calls/s',
      better: 'higher',
      subject: traceTap('hubUnobserved', 'perSecond'),
      baseline: traceTap('hubObserved', 'perSecond'),
    },
  ],
};

/** Single series listed without a ratio (a ratio of two near-zero figures would be noise). */
export interface SeriesListing {
  readonly title: string;
  readonly unit: string;
  readonly series: readonly { readonly label: string; readonly ref: SeriesRef }[];
}

const retainedAfterClose = (entrant: string): SeriesRef => ({
  scenario: 'heap',
  entrant,
  figure: 'retainedAfterCloseBytesPerPair',
});

export const LEAK_CHECK: SeriesListing = {
  title:
    'Leak check: heap still used per pair after closing all the pairs of the heap figure and collecting garbage (about 0 unless closed pairs stay reachable)',
  unit: 'bytes/pair',
  series: [
    { label: 'ours, shared Server', ref: retainedAfterClose('ours-shared') },
    { label: 'ours, Server per pair', ref: retainedAfterClose('ours-per-pair') },
    { label: 'SDK', ref: retainedAfterClose('sdk') },
  ],
};
