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

const atLeast = (ratio: number): Target => ({ bound: 'atLeast', ratio, text: `>= ${ratio}x` });
const atMostFraction = (denominator: number): Target => ({
  bound: 'atMost',
  ratio: 1 / denominator,
  text: `<= 1/${denominator}`,
});

function oursVsSdk(
  scenario: string,
  figure: string,
  label: string,
  unit: string,
  better: 'higher' | 'lower',
  extra: { oursEntrant?: string; sdkEntrant?: string; target?: Target; note?: string } = {},
): Comparison {
  return {
    label,
    unit,
    better,
    subject: { scenario, entrant: extra.oursEntrant ?? 'ours', figure },
    baseline: { scenario, entrant: extra.sdkEntrant ?? 'sdk', figure },
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
    oursVsSdk('correlation', 'perSecond', 'correlation core', 'req/s', 'higher', { note: CORRELATION_NOTE }),
    oursVsSdk('toolsSequential', 'perSecond', 'tools/call, 1 in flight', 'calls/s', 'higher', {
      target: atLeast(5),
      note: SEQUENTIAL_NOTE,
    }),
    oursVsSdk('toolsSequential', 'p50Us', 'tools/call, 1 in flight, p50', 'us', 'lower'),
    oursVsSdk('toolsSequential', 'p99Us', 'tools/call, 1 in flight, p99', 'us', 'lower'),
    oursVsSdk('toolsConcurrent', 'perSecond', 'tools/call, 256 in flight', 'calls/s', 'higher', { target: atLeast(5) }),
    oursVsSdk('notifications', 'perSecond', 'notifications server -> client', 'msg/s', 'higher', {
      note: NOTIFICATION_NOTE,
    }),
    oursVsSdk('ping', 'perSecond', 'ping, 1 in flight', 'pings/s', 'higher'),
    oursVsSdk('handshake', 'perSecond', 'handshakes, shared Server', 'hs/s', 'higher', {
      oursEntrant: 'ours-shared',
      target: atLeast(20),
      note: HANDSHAKE_NOTE,
    }),
    oursVsSdk('handshake', 'p50Us', 'handshake p50, shared Server', 'us', 'lower', { oursEntrant: 'ours-shared' }),
    oursVsSdk('handshake', 'perSecond', 'handshakes, Server per pair', 'hs/s', 'higher', {
      oursEntrant: 'ours-per-pair',
      target: atLeast(20),
    }),
    oursVsSdk('handshake', 'p50Us', 'handshake p50, Server per pair', 'us', 'lower', { oursEntrant: 'ours-per-pair' }),
    oursVsSdk('heap', 'bytesPerPair', 'heap per pair, shared Server', 'bytes', 'lower', {
      oursEntrant: 'ours-shared',
      target: atMostFraction(5),
      note: HEAP_NOTE,
    }),
    oursVsSdk('heap', 'bytesPerPair', 'heap per pair, Server per pair', 'bytes', 'lower', {
      oursEntrant: 'ours-per-pair',
      target: atMostFraction(5),
    }),
  ],
};

export const TRACE_TAP: ComparisonTable = {
  title:
    'Trace tap (ours only): tools/call, 1 in flight, nobody on trace$ vs subscribers on client.trace$ and the server connection trace$',
  subjectName: 'unobserved',
  baselineName: 'observed',
  comparisons: [
    {
      label: 'tools/call, 1 in flight',
      unit: 'calls/s',
      better: 'higher',
      subject: { scenario: 'traceTap', entrant: 'unobserved', figure: 'perSecond' },
      baseline: { scenario: 'traceTap', entrant: 'observed', figure: 'perSecond' },
    },
    {
      label: 'tools/call, 1 in flight, p50',
      unit: 'us',
      better: 'lower',
      subject: { scenario: 'traceTap', entrant: 'unobserved', figure: 'p50Us' },
      baseline: { scenario: 'traceTap', entrant: 'observed', figure: 'p50Us' },
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
