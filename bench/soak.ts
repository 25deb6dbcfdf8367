/**
 * `npm run soak -- [--minutes N] [--interval S] [--out file.ndjson]` (not in CI): long loops that a process
 * holding many connections for weeks runs — in-process calls, stdio calls to a child, Streamable HTTP calls,
 * connect/close cycles, and calls through a hub whose stdio upstream flaps (exits every second or so and is
 * restarted) — while the heap (after a full collection), RSS, open descriptors, active handles and timers and
 * child processes are sampled every `--interval` seconds: a line on stdout per sample, an NDJSON record per
 * sample with `--out`. At the end, a linear fit of heap, RSS and descriptors over the second half of the run
 * gives a verdict on drift. Run as `node --expose-gc --import tsx bench/soak.ts`.
 */
import { readdirSync, readFileSync, writeFileSync, appendFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '../lib/client/client';
import { Hub } from '../lib/compose/hub';
import { Server } from '../lib/server/server';
import { createStreamableHttpHandler } from '../transports/http/streamable-server';
import { StreamableHttpClientTransport } from '../transports/http/streamable-client';
import { createMemoryPair } from '../transports/memory';
import { StdioClientTransport } from '../transports/stdio';
import { echoServerDefinition } from './ours';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    interval: { type: 'string', default: '10' },
    out: { type: 'string' },
  },
});
const minutes = Number(values.minutes);
const intervalSeconds = Number(values.interval);
if (!(minutes > 0) || !(intervalSeconds > 0)) {
  process.stderr.write('--minutes and --interval must be positive numbers\n');
  process.exit(2);
}
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) process.stderr.write('warning: run with --expose-gc for heap figures after a full collection\n');

const quiet = { debug() {}, info() {}, warn() {}, error() {} };
const definition = echoServerDefinition();
const server = new Server(definition);
const args = { text: 'soak' };
const stdioChild = fileURLToPath(new URL('./fixtures/stdio-echo-ours.ts', import.meta.url));
const chaosUpstream = fileURLToPath(new URL('../test/fixtures/chaos-upstream.mjs', import.meta.url));

// ---- the loops ---------------------------------------------------------------------------------------

interface Loop {
  readonly name: string;
  ops: number;
  errors: number;
  lastError?: string;
}

const loops: Loop[] = [];
let running = true;

/** Runs `step` until the end, counting what it did; a failing step is counted, the loop goes on. */
async function loop(name: string, step: () => Promise<number>, setup?: () => Promise<() => Promise<void>>) {
  const record: Loop = { name, ops: 0, errors: 0 };
  loops.push(record);
  const teardown = setup ? await setup() : undefined;
  while (running) {
    try {
      record.ops += await step();
    } catch (error) {
      record.errors++;
      record.lastError = (error as Error)?.message?.slice(0, 120);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  await teardown?.();
}

async function burst(client: Client, tool: string, count: number): Promise<number> {
  await Promise.all(Array.from({ length: count }, () => client.callTool(tool, args, { timeout: 30_000 })));
  return count;
}

async function memoryClient(): Promise<Client> {
  const [clientSide, serverSide] = createMemoryPair({ freeze: false });
  server.connect(serverSide);
  return new Client({ name: 'soak', version: '1' }, { logger: quiet }).connect(clientSide);
}

async function inProcessLoop() {
  let client!: Client;
  await loop(
    'in-process calls',
    async () => {
      const done = await burst(client, 'echo', 256);
      await new Promise((resolve) => setImmediate(resolve)); // let the samplers' timers run
      return done;
    },
    async () => {
      client = await memoryClient();
      return () => client.close().then(() => undefined);
    },
  );
}

async function connectCycleLoop() {
  await loop('connect/call/close cycles', async () => {
    const client = await memoryClient();
    await client.callTool('echo', args);
    await client.close();
    await new Promise((resolve) => setImmediate(resolve)); // memory links settle on microtasks: let timers run
    return 1;
  });
}

async function stdioLoop() {
  let client!: Client;
  await loop(
    'stdio calls',
    () => burst(client, 'echo', 32),
    async () => {
      client = await new Client({ name: 'soak', version: '1' }, { logger: quiet }).connect(
        new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', stdioChild] }),
        { timeout: 30_000 },
      );
      return () => client.close().then(() => undefined);
    },
  );
}

async function httpLoop() {
  let client!: Client;
  let listener: http.Server;
  let handler: ReturnType<typeof createStreamableHttpHandler>;
  await loop(
    'HTTP calls',
    () => burst(client, 'echo', 8),
    async () => {
      handler = createStreamableHttpHandler(server, { responseMode: 'json' });
      listener = http.createServer(handler);
      await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/mcp`;
      client = await new Client({ name: 'soak', version: '1' }, { logger: quiet }).connect(
        new StreamableHttpClientTransport(url),
        { timeout: 30_000 },
      );
      return async () => {
        await client.close();
        await handler.close();
        listener.closeAllConnections();
        await new Promise((resolve) => listener.close(resolve));
      };
    },
  );
}

async function hubLoop() {
  let client!: Client;
  let hub!: Hub;
  await loop(
    'hub calls (one upstream flapping)',
    async () => {
      const results = await Promise.allSettled([
        client.callTool('steady__work', {}, { timeout: 30_000 }),
        client.callTool('flap__work', {}, { timeout: 30_000 }),
      ]);
      // The flapping upstream's calls fail while it is down: that is the point, not an error of the loop.
      if (results[0].status === 'rejected') throw results[0].reason;
      await new Promise((resolve) => setTimeout(resolve, 5));
      return 2;
    },
    async () => {
      const upstream = (mode: string, seed: number) => ({
        name: mode,
        source: { kind: 'stdio' as const, command: process.execPath, args: [chaosUpstream, mode, String(seed)] },
        naming: { prefix: mode },
        // Keep restarting whatever the crash count: the soak watches what restarts cost over time.
        supervision: { initialDelayMs: 100, maxDelayMs: 1_000, maxRestarts: Number.MAX_SAFE_INTEGER },
      });
      hub = new Hub({ upstreams: [upstream('steady', 1), upstream('flap', 2)], logger: quiet });
      await hub.start();
      const [clientSide, hubSide] = createMemoryPair({ freeze: false });
      hub.connect(hubSide);
      client = await new Client({ name: 'soak', version: '1' }, { logger: quiet }).connect(clientSide);
      return async () => {
        await client.close();
        await hub.close();
      };
    },
  );
}

// ---- sampling ----------------------------------------------------------------------------------------

interface Sample {
  readonly t: number;
  readonly heapUsed: number;
  readonly rss: number;
  readonly fds: number;
  readonly children: number;
  readonly resources: Record<string, number>;
  readonly ops: Record<string, number>;
  readonly errors: Record<string, number>;
}

/** Our child processes (not zombies), by pid. */
function children(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === process.pid && fields[0] !== 'Z') found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Children there before any loop started (tsx's esbuild service): not the loops' doing. */
const baselineChildren = new Set(children());

function childCount(): number {
  return children().filter((pid) => !baselineChildren.has(pid)).length;
}

function sample(start: number): Sample {
  gc?.();
  const memory = process.memoryUsage();
  const resources: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) resources[type] = (resources[type] ?? 0) + 1;
  return {
    t: Math.round((Date.now() - start) / 100) / 10,
    heapUsed: memory.heapUsed,
    rss: memory.rss,
    fds: readdirSync('/proc/self/fd').length,
    children: childCount(),
    resources,
    ops: Object.fromEntries(loops.map((entry) => [entry.name, entry.ops])),
    errors: Object.fromEntries(loops.map((entry) => [entry.name, entry.errors])),
  };
}

const MiB = 1024 * 1024;

function printSample(s: Sample): void {
  const resources = Object.entries(s.resources)
    .map(([type, count]) => `${type}:${count}`)
    .join(' ');
  const ops = Object.values(s.ops).join('/');
  process.stdout.write(
    `t=${s.t.toFixed(0).padStart(5)}s heap ${(s.heapUsed / MiB).toFixed(1).padStart(6)} MiB  rss ${(s.rss / MiB).toFixed(1).padStart(6)} MiB  fds ${String(s.fds).padStart(4)}  children ${s.children}  ops ${ops}  [${resources}]\n`,
  );
}

/** Least-squares line of y over x: its slope, and the standard deviation of the points around it. */
function fit(points: readonly (readonly [number, number])[]): { slope: number; scatter: number } {
  const n = points.length;
  if (n < 3) return { slope: 0, scatter: 0 };
  const mx = points.reduce((sum, [x]) => sum + x, 0) / n;
  const my = points.reduce((sum, [, y]) => sum + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  const slope = den === 0 ? 0 : num / den;
  const residuals = points.map(([x, y]) => y - (my + slope * (x - mx)));
  const scatter = Math.sqrt(residuals.reduce((sum, r) => sum + r * r, 0) / (n - 2));
  return { slope, scatter };
}

/** Drift per minute over the second half beyond which the verdict is "drift". */
const LIMITS = { heapUsed: 1 * MiB, rss: 4 * MiB, fds: 1 };

function verdict(samples: readonly Sample[]): boolean {
  const half = samples.slice(Math.floor(samples.length / 2));
  let drifting = false;
  process.stdout.write(`\nDrift over the second half (${half.length} samples, linear fit, per minute):\n`);
  const span = (half.at(-1)!.t - half[0]!.t) / 60;
  // The first half without its first sample (taken before the loops started) is the baseline band.
  const baseline = samples.slice(1, Math.max(2, Math.floor(samples.length / 2)));
  const latest = samples.slice(-Math.max(1, Math.floor(samples.length / 4)));
  for (const key of ['heapUsed', 'rss', 'fds'] as const) {
    const { slope: perMinute, scatter } = fit(half.map((s) => [s.t / 60, s[key]] as const));
    const format = (value: number) => (key === 'fds' ? value.toFixed(2) : `${(value / MiB).toFixed(3)} MiB`);
    // Drift: a slope over the limit whose rise across the window stands out of the samples' own scatter, and
    // a floor that moved: the last quarter's lowest sample is above the highest of the first half's band.
    // (RSS swings by tens of MiB between collections; descriptors come and go with a restarting child.)
    const floorRose = Math.min(...latest.map((s) => s[key])) > Math.max(...baseline.map((s) => s[key]));
    const over = perMinute > LIMITS[key] && perMinute * span > 2 * scatter && floorRose;
    const noisy = perMinute > LIMITS[key] && !over;
    drifting ||= over;
    process.stdout.write(
      `  ${key.padEnd(8)} ${format(perMinute).padStart(12)} / min  (limit ${format(LIMITS[key])}, scatter ±${format(scatter)})  ${over ? 'DRIFT' : noisy ? 'within noise' : 'flat'}\n`,
    );
  }
  const last = samples.at(-1)!;
  process.stdout.write(
    `Operations: ${Object.entries(last.ops)
      .map(([name, ops]) => `${name} ${ops}`)
      .join(', ')}\n`,
  );
  process.stdout.write(
    `Errors: ${Object.entries(last.errors)
      .map(([name, count]) => `${name} ${count}`)
      .join(', ')}\n`,
  );
  process.stdout.write(`Verdict: ${drifting ? 'DRIFT' : 'no drift'}\n`);
  return !drifting;
}

async function main(): Promise<void> {
  const start = Date.now();
  if (values.out) writeFileSync(values.out, '');
  process.stdout.write(
    `soak: ${minutes} min, a sample every ${intervalSeconds} s${values.out ? `, NDJSON to ${values.out}` : ''}\n`,
  );
  const samples: Sample[] = [];
  const record = () => {
    const s = sample(start);
    samples.push(s);
    printSample(s);
    if (values.out) appendFileSync(values.out, `${JSON.stringify(s)}\n`);
  };
  record();
  const running$ = [inProcessLoop(), connectCycleLoop(), stdioLoop(), httpLoop(), hubLoop()];
  const timer = setInterval(record, intervalSeconds * 1000);
  await new Promise((resolve) => setTimeout(resolve, minutes * 60_000));
  clearInterval(timer);
  record();
  running = false;
  await Promise.all(running$);
  const healthy = verdict(samples);
  // Every loop has closed what it opened: its child processes must be gone (closing waits for them).
  const leftAtClose = childCount();
  const waitedFrom = Date.now();
  while (childCount() > 0 && Date.now() - waitedFrom < 10_000) await new Promise((resolve) => setTimeout(resolve, 100));
  const after = sample(start);
  process.stdout.write(
    `After stopping every loop: ${leftAtClose} child processes still running as the last close resolved, ` +
      `${after.children} after ${((Date.now() - waitedFrom) / 1000).toFixed(1)} s more; ${after.fds} descriptors\n`,
  );
  await server.close();
  process.exitCode = healthy && leftAtClose === 0 ? 0 : 1;
}

await main();
