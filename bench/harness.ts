/**
 * The timing harness, one for every contender: each function takes plain operations (closures over a
 * pair or a core) and knows nothing about which implementation it drives.
 */
import { percentileOfSorted } from './stats';

export type Operation = () => Promise<unknown>;

export interface TimedWindow {
  /** Measured time, after an untimed warm-up of `warmupMs`. */
  readonly durationMs: number;
  readonly warmupMs: number;
}

export interface LatencyFigures {
  /** Operations per second of timed time (the sum of the per-operation latencies). */
  readonly perSecond: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly count: number;
}

/** Operations between two clock reads: keeps the clock out of the loop for sub-microsecond operations. */
const CHUNK = 16;

/** Runs `operation` with `concurrency` callers in flight until `durationMs` has passed; returns operations per second. */
async function runFor(operation: Operation, concurrency: number, durationMs: number): Promise<number> {
  const start = performance.now();
  const deadline = start + durationMs;
  const caller = async (): Promise<number> => {
    let done = 0;
    while (performance.now() < deadline) {
      for (let i = 0; i < CHUNK; i++) await operation();
      done += CHUNK;
    }
    return done;
  };
  const counts = await Promise.all(Array.from({ length: concurrency }, caller));
  const elapsedMs = performance.now() - start;
  return (counts.reduce((sum, n) => sum + n, 0) / elapsedMs) * 1000;
}

/** Throughput with `concurrency` operations kept in flight. */
export async function measureThroughput(
  operation: Operation,
  concurrency: number,
  window: TimedWindow,
): Promise<number> {
  await runFor(operation, concurrency, window.warmupMs);
  return runFor(operation, concurrency, window.durationMs);
}

/**
 * Sequential operations, each timed on its own. `afterEach` (say, closing what the operation opened) runs
 * outside the timed region, so throughput is derived from the summed latencies, not from wall time.
 */
export async function measureLatency<T>(
  operation: () => Promise<T>,
  window: TimedWindow,
  afterEach?: (value: T) => Promise<unknown>,
): Promise<LatencyFigures> {
  const run = async (durationMs: number): Promise<number[]> => {
    const latenciesMs: number[] = [];
    const deadline = performance.now() + durationMs;
    while (performance.now() < deadline) {
      const start = performance.now();
      const value = await operation();
      latenciesMs.push(performance.now() - start);
      if (afterEach) await afterEach(value);
    }
    return latenciesMs;
  };
  await run(window.warmupMs);
  const latenciesMs = (await run(window.durationMs)).sort((a, b) => a - b);
  const timedMs = latenciesMs.reduce((sum, ms) => sum + ms, 0);
  return {
    perSecond: (latenciesMs.length / timedMs) * 1000,
    p50Us: percentileOfSorted(latenciesMs, 50) * 1000,
    p99Us: percentileOfSorted(latenciesMs, 99) * 1000,
    count: latenciesMs.length,
  };
}

/** Counts deliveries; `waitFor` resolves once a given number has arrived since the last `reset`. */
export class ArrivalCounter {
  private arrived = 0;
  private target = Infinity;
  private onTarget: (() => void) | undefined;

  readonly arrive = (): void => {
    if (++this.arrived === this.target) this.onTarget?.();
  };

  reset(): void {
    this.arrived = 0;
    this.target = Infinity;
    this.onTarget = undefined;
  }

  waitFor(count: number): Promise<void> {
    if (this.arrived >= count) return Promise.resolve();
    return new Promise((resolve) => {
      this.target = count;
      this.onTarget = resolve;
    });
  }
}

/**
 * Fire-and-forget messages per second: sends in batches of `batchSize` (awaiting each batch, so the
 * sender never runs far ahead of delivery) until the window has passed, then waits until every message
 * sent has arrived. The rate counts from the first send to the last arrival.
 */
export async function measureDelivery(
  send: Operation,
  arrivals: ArrivalCounter,
  batchSize: number,
  window: TimedWindow,
): Promise<number> {
  const run = async (durationMs: number): Promise<number> => {
    arrivals.reset();
    const start = performance.now();
    const deadline = start + durationMs;
    let sent = 0;
    while (performance.now() < deadline) {
      const batch: Promise<unknown>[] = [];
      for (let i = 0; i < batchSize; i++) batch.push(send());
      await Promise.all(batch);
      sent += batchSize;
    }
    await arrivals.waitFor(sent);
    return (sent / (performance.now() - start)) * 1000;
  };
  await run(window.warmupMs);
  return run(window.durationMs);
}

function collectGarbage(): void {
  if (typeof globalThis.gc !== 'function') throw new Error('Heap figures need node --expose-gc (use npm run bench)');
  // Twice: the first pass can leave objects that finalizers or weak references only release on the next.
  globalThis.gc();
  globalThis.gc();
}

export interface HeapFigures {
  /** Heap bytes per item while all of them are alive. */
  readonly bytesPerItem: number;
  /** Heap bytes per item still held after `dispose`: near zero unless something leaks. */
  readonly retainedAfterDisposeBytesPerItem: number;
}

/** Heap per item with `count` items alive at once, and what `dispose` fails to give back. */
export async function measureHeapPerItem<T>(
  create: () => Promise<T>,
  count: number,
  dispose: (items: T[]) => Promise<unknown>,
): Promise<HeapFigures> {
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  const items: T[] = [];
  for (let i = 0; i < count; i++) items.push(await create());
  collectGarbage();
  const alive = process.memoryUsage().heapUsed;
  await dispose(items);
  items.length = 0;
  // Let close work queued on the event loop finish before looking at what is left.
  await new Promise((resolve) => setImmediate(resolve));
  collectGarbage();
  const after = process.memoryUsage().heapUsed;
  return { bytesPerItem: (alive - before) / count, retainedAfterDisposeBytesPerItem: (after - before) / count };
}
