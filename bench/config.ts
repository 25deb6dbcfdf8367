/** How long and how often to measure: the full suite, the `--quick` smoke run, and the discarded warm-up pass. */
import type { TimedWindow } from './harness';

export interface BenchSettings {
  readonly mode: 'full' | 'quick';
  readonly runs: number;
  /** Whether a complete, discarded pass over every scenario precedes the timed runs (JIT warm-up). */
  readonly warmupPass: boolean;
  readonly window: TimedWindow;
  /**
   * The window of the stdio and socket rows, each timed twice per entrant (1 and `concurrency` in flight),
   * shorter than `window` so these rows keep the full suite within a few minutes.
   */
  readonly ioWindow: TimedWindow;
  /** Calls in flight for the concurrent tools/call figure. */
  readonly concurrency: number;
  /** Calls in flight for the concurrent HTTP figure (each may hold its own TCP connection). */
  readonly httpConcurrency: number;
  /** Calls in flight for the concurrent figure of the stateless-revision HTTP rows (bench/modern.ts). */
  readonly modernHttpConcurrency: number;
  /** Notifications sent before awaiting their sends. */
  readonly notificationBatch: number;
  /** Pairs alive at once for the heap figure. */
  readonly heapPairs: number;
  /**
   * The connect rows (bench/connect.ts): pairs opened and kept alive, after connect-then-close loops for at
   * least `connectRewarmMs` (and `connectCloseWarmup` loops) and `connectWarmupPairs` untimed pairs.
   */
  readonly connectPairs: number;
  readonly connectWarmupPairs: number;
  readonly connectRewarmMs: number;
  /** Connect-then-close loops of one era, after `connectCloseWarmup` untimed ones. */
  readonly connectCloseLoops: number;
  readonly connectCloseWarmup: number;
  /** Pairs alive at once for the heap figure of each era. */
  readonly connectHeapPairs: number;
  /** `--only <prefix>`: only the scenarios whose id starts with it (and the tables built from them). */
  readonly only?: string;
}

const FULL: BenchSettings = {
  mode: 'full',
  runs: 5,
  warmupPass: true,
  window: { durationMs: 1500, warmupMs: 300 },
  ioWindow: { durationMs: 800, warmupMs: 200 },
  concurrency: 256,
  httpConcurrency: 64,
  modernHttpConcurrency: 16,
  notificationBatch: 256,
  heapPairs: 1000,
  connectPairs: 1000,
  connectWarmupPairs: 50,
  connectRewarmMs: 500,
  connectCloseLoops: 10_000,
  connectCloseWarmup: 1000,
  connectHeapPairs: 2000,
};

const QUICK: BenchSettings = {
  mode: 'quick',
  runs: 1,
  warmupPass: false,
  window: { durationMs: 200, warmupMs: 50 },
  ioWindow: { durationMs: 200, warmupMs: 50 },
  concurrency: 256,
  httpConcurrency: 64,
  modernHttpConcurrency: 16,
  notificationBatch: 256,
  heapPairs: 200,
  connectPairs: 300,
  connectWarmupPairs: 50,
  connectRewarmMs: 100,
  connectCloseLoops: 2000,
  connectCloseWarmup: 200,
  connectHeapPairs: 500,
};

/** The warm-up pass: every code path once, short. */
export function warmupSettings(settings: BenchSettings): BenchSettings {
  const window = { durationMs: 150, warmupMs: 50 };
  return {
    ...settings,
    window,
    ioWindow: window,
    heapPairs: 100,
    connectPairs: 100,
    connectRewarmMs: 20,
    connectCloseLoops: 500,
    connectHeapPairs: 100,
  };
}

export function settingsFrom(argv: readonly string[], env: NodeJS.ProcessEnv): BenchSettings {
  const settings = argv.includes('--quick') || env.BENCH_QUICK === '1' ? QUICK : FULL;
  const onlyIndex = argv.indexOf('--only');
  const only = onlyIndex === -1 ? undefined : argv[onlyIndex + 1];
  if (onlyIndex !== -1 && !only) throw new Error('--only needs a scenario id prefix (e.g. --only http)');
  return only === undefined ? settings : { ...settings, only };
}

/**
 * The client options of the handshake-era comparisons (against SDK v1, which has no other era, and the bare
 * floors): our client would otherwise probe our own server and speak 2026-07-28 (measured in bench/modern*.ts).
 */
export const HANDSHAKE_ERA = { era: 'handshake' } as const;
