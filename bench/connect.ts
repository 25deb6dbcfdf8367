/**
 * Connecting, measured the way a hub or an agent opens connections: a new client per pair against one shared
 * server in this process (bench/connect-entrants.ts), every contender in turn.
 * - `connect`: `connectPairs` pairs opened one after the other and kept alive, after connect-then-close
 *   loops (`connectCloseWarmup`, `connectRewarmMs`) and `connectWarmupPairs` untimed pairs; pairs/s = pairs / wall time; all closed
 *   afterwards, untimed.
 * - `connectClose`: our three eras, connect then close, `connectCloseLoops` times after `connectCloseWarmup`.
 * - `connectHeap`: heap per connected pair with `connectHeapPairs` alive, both eras (a stateless client opens
 *   no `subscriptions/listen` stream until something needs list changes).
 *
 * Standalone: `node --expose-gc --import tsx bench/connect.ts [--quick]`. For bench/run.ts: `CONNECT_SCENARIOS`
 * and `CONNECT_ERAS` (a ComparisonTable).
 */
import { atLeast, type Comparison, type ComparisonTable, type Target, entrantRow } from './comparisons';
import type { BenchSettings } from './config';
import { CONNECT_ENTRANTS, OUR_ERAS, type OpenedPair, type OpenPair } from './connect-entrants';
import { measureHeapPerItem } from './harness';
import type { Figures, Scenario } from './scenarios';
import { runWhenMain } from './standalone';

/**
 * Pairs per second, opened one after the other and kept alive; every pair is closed afterwards. First the
 * code is warmed again with connect-then-close loops (at least `connectCloseWarmup`, for at least
 * `connectRewarmMs`): the full GC each entrant starts from (so none pays for another's garbage)
 * deoptimizes code whose embedded maps died with the previous entrant's pairs ("weak objects": about 680
 * deoptimizations per run of our connect loop), and without it our next 2,000 pairs ran at a third of their
 * speed, re-optimizing: a state no steadily connecting process is in.
 */
async function keptAlive(open: OpenPair, settings: BenchSettings): Promise<Figures> {
  const rewarmUntil = performance.now() + settings.connectRewarmMs;
  for (let i = 0; i < settings.connectCloseWarmup || performance.now() < rewarmUntil; i++) await (await open()).close();
  const pairs: OpenedPair[] = [];
  try {
    for (let i = 0; i < settings.connectWarmupPairs; i++) pairs.push(await open());
    const start = performance.now();
    for (let i = 0; i < settings.connectPairs; i++) pairs.push(await open());
    return { perSecond: (settings.connectPairs / (performance.now() - start)) * 1000 };
  } finally {
    await Promise.all(pairs.map((pair) => pair.close()));
  }
}

/** Connect-then-close loops per second. */
async function connectThenClose(open: OpenPair, settings: BenchSettings): Promise<Figures> {
  for (let i = 0; i < settings.connectCloseWarmup; i++) await (await open()).close();
  const start = performance.now();
  for (let i = 0; i < settings.connectCloseLoops; i++) await (await open()).close();
  return { perSecond: (settings.connectCloseLoops / (performance.now() - start)) * 1000 };
}

async function heapPerPair(open: OpenPair, settings: BenchSettings): Promise<Figures> {
  const heap = await measureHeapPerItem(open, settings.connectHeapPairs, (pairs) =>
    Promise.all(pairs.map((pair) => pair.close())),
  );
  return { bytesPerPair: heap.bytesPerItem, retainedAfterCloseBytesPerPair: heap.retainedAfterDisposeBytesPerItem };
}

function scenario(
  id: string,
  entrants: Readonly<Record<string, OpenPair>>,
  measure: (open: OpenPair, settings: BenchSettings) => Promise<Figures>,
): Scenario {
  return {
    id,
    entrants: Object.entries(entrants).map(([name, open]) => ({
      name,
      measure: (settings) => measure(open, settings),
    })),
  };
}

export const CONNECT_SCENARIOS: readonly Scenario[] = [
  scenario('connect', CONNECT_ENTRANTS, keptAlive),
  scenario('connectClose', OUR_ERAS, connectThenClose),
  scenario(
    'connectHeap',
    { 'ours-handshake': OUR_ERAS['ours-handshake']!, 'ours-modern': OUR_ERAS['ours-modern']! },
    heapPerPair,
  ),
];

const AT_MOST_EQUAL: Target = { bound: 'atMost', ratio: 1, text: '<= 1x' };

const CONNECT_NOTE =
  "One shared Server (echo) for our three eras; a new Client per pair on an unfrozen memory pair: auto = the default (a memory pair names no eraKey, so it connects with initialize, after the era choice), handshake = era: 'handshake' (initialize), modern = era: 'modern' (server/discover, no handshake). SDK v1 = @modelcontextprotocol/sdk Client + a new McpServer per pair (InMemoryTransport); SDK v2 = @modelcontextprotocol/client 2.4.0 Client (default negotiation: the handshake era) + a new @modelcontextprotocol/server McpServer per pair (its InMemoryTransport); bare = one JSON-RPC initialize request and answer, JSON.stringify/parse on both ends, a microtask each way. 1,000 pairs opened one after the other and kept alive, after untimed connect-then-close loops (at least 1,000 and 500 ms: the forced GC before each entrant deoptimizes code whose maps died with the previous entrant's pairs) and 50 untimed pairs; pairs/s = pairs / wall time.";
const CLOSE_NOTE = 'Connect then close (awaited), 10,000 times after 1,000 untimed; loops/s = loops / wall time.';
const HEAP_NOTE =
  '(heapUsed after gc with 2,000 connected pairs of the shared Server alive - heapUsed after gc before) / 2,000.';

/** For each of our eras: against SDK v1, SDK v2 and bare. */
const againstOthers = (era: string, note?: string): Comparison[] => [
  entrantRow('connect', 'perSecond', `connect ${era} vs SDK v1`, 'pairs/s', 'higher', `ours-${era}`, 'sdk-v1', {
    target: atLeast(20),
    ...(note !== undefined && { note }),
  }),
  entrantRow('connect', 'perSecond', `connect ${era} vs SDK v2`, 'pairs/s', 'higher', `ours-${era}`, 'sdk-v2', {
    target: atLeast(10),
  }),
  entrantRow('connect', 'perSecond', `connect ${era} vs bare`, 'pairs/s', 'higher', `ours-${era}`, 'bare'),
];

export const CONNECT_ERAS: ComparisonTable = {
  title: 'Connecting in process, one shared Server: our three eras vs SDK v1, SDK v2 and a bare JSON echo',
  subjectName: 'ours',
  baselineName: 'other',
  comparisons: [
    ...againstOthers('auto', CONNECT_NOTE),
    ...againstOthers('handshake'),
    ...againstOthers('modern'),
    entrantRow(
      'connect',
      'perSecond',
      'connect modern vs handshake',
      'pairs/s',
      'higher',
      'ours-modern',
      'ours-handshake',
      {
        target: atLeast(1),
      },
    ),
    entrantRow(
      'connectClose',
      'perSecond',
      'connect + close, modern vs handshake',
      'loops/s',
      'higher',
      'ours-modern',
      'ours-handshake',
      {
        target: atLeast(1),
        note: CLOSE_NOTE,
      },
    ),
    entrantRow(
      'connectClose',
      'perSecond',
      'connect + close, auto vs handshake',
      'loops/s',
      'higher',
      'ours-auto',
      'ours-handshake',
    ),
    entrantRow(
      'connectHeap',
      'bytesPerPair',
      'heap per pair, modern vs handshake',
      'bytes',
      'lower',
      'ours-modern',
      'ours-handshake',
      {
        target: AT_MOST_EQUAL,
        note: HEAP_NOTE,
      },
    ),
  ],
};

runWhenMain(import.meta.url, CONNECT_SCENARIOS, [CONNECT_ERAS]);
