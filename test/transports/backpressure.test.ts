/**
 * Back-pressure over stdio, with real processes: a peer that stops reading cannot grow our memory (we stop
 * reading it, and resume when it drains, losing nothing), a peer that never reads is cut off at a hard cap,
 * and two of our own peers under heavy load both ways never deadlock (see the argument in line-stream.ts).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { TransportError } from '../../lib/jsonrpc/errors';
import { createDuplexPair } from '../../transports/duplex-pair';
import { LineStream } from '../../transports/line-stream';
import { StdioClientTransport, StdioServerTransport } from '../../transports/stdio';
import { isAlive } from '../helpers/processes';
import { fixturePath } from '../helpers/paths';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FLOOD = 150_000;
const MiB = 1024 * 1024;
/** Sends still waiting for drain are rejected when the stream closes at the end of a test. */
const ignore = () => undefined;
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Resident memory of `pid`, in bytes, from /proc. */
function rss(pid: number): number {
  const kiB = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]!;
  return Number(kiB) * 1024;
}

/**
 * One of our stdio programs run as a child, with the test playing its peer by hand over the pipes: the
 * test decides when to read the child's stdout, and counts the answers by id.
 */
class HandPlayedPeer {
  readonly child: ChildProcessWithoutNullStreams;
  readonly answered = new Set<number>();
  readonly requestsFromChild: { id: number; method: string }[] = [];
  private buffered = '';
  private readonly waiters = new Set<() => void>();

  constructor(script: string) {
    this.child = spawn(process.execPath, ['--import', 'tsx', fixturePath(script)], { cwd: ROOT, stdio: 'pipe' });
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => this.take(chunk));
    this.child.stdin.on('error', () => undefined);
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Writes many lines at once (without waiting for drain: the pipe and our buffer hold them). */
  write(lines: readonly string[]): void {
    this.child.stdin.write(lines.join('\n') + '\n');
  }

  /** Stops reading the child's stdout: the pipe fills and the child's writes back up. */
  stopReading(): void {
    this.child.stdout.pause();
  }

  resumeReading(): void {
    this.child.stdout.resume();
  }

  /** Resolves once `check()` holds, rechecked on every message; rejects after `timeoutMs`. */
  until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(wake);
        reject(new Error(`Timed out waiting for ${what}`));
      }, timeoutMs);
      const wake = () => {
        if (!check()) return;
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      this.waiters.add(wake);
    });
  }

  /** Waits until the child has stopped taking our input: what we wrote stays in our buffer. */
  async untilStalled(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = -1;
    for (;;) {
      await delay(500);
      const unsent = this.child.stdin.writableLength;
      if (unsent === last) return;
      if (Date.now() > deadline) throw new Error('The child kept reading');
      last = unsent;
    }
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }

  private take(chunk: string): void {
    this.buffered += chunk;
    let newline: number;
    while ((newline = this.buffered.indexOf('\n')) >= 0) {
      const message = JSON.parse(this.buffered.slice(0, newline));
      this.buffered = this.buffered.slice(newline + 1);
      if (message.method === undefined) this.answered.add(message.id);
      else if (message.id !== undefined) this.requestsFromChild.push(message);
    }
    for (const wake of [...this.waiters]) wake();
  }
}

const peers: HandPlayedPeer[] = [];
afterEach(() => {
  for (const peer of peers.splice(0)) peer.kill();
});

const lines = (count: number, from: number, line: (id: number) => object) =>
  Array.from({ length: count }, (_, i) => JSON.stringify(line(from + i)));

/** Sends `count` messages from id `from`, in slices, so the test's own buffer is filled gradually. */
async function flood(peer: HandPlayedPeer, count: number, from: number, line: (id: number) => object) {
  for (let sent = 0; sent < count; sent += 5000) {
    peer.write(lines(Math.min(5000, count - sent), from + sent, line));
    await delay(0);
  }
}

describe('a stdio server whose client stops reading', () => {
  it(`stops reading too: ${FLOOD} unread tools/list answers keep its RSS bounded, and all arrive once the client reads`, async () => {
    const peer = new HandPlayedPeer('proc-echo-server.ts');
    peers.push(peer);
    const clientInfo = { name: 'hand', version: '1' };
    peer.write([
      JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo },
      }),
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    ]);
    await peer.until(() => peer.answered.has(0), 20_000, 'the handshake');
    // Warm up (JIT, heap) while reading, so the baseline is the server at work.
    const list = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list' });
    await flood(peer, 5000, 1, list);
    await peer.until(() => peer.answered.size === 5001, 30_000, 'the warm-up answers');
    const baseline = rss(peer.pid);

    peer.stopReading();
    await flood(peer, FLOOD, 10_000, list);
    await peer.untilStalled(60_000);
    const grown = rss(peer.pid) - baseline;
    expect(peer.child.stdin.writableLength).toBeGreaterThan(0); // the server did stop reading us
    expect(grown).toBeLessThan(64 * MiB);

    peer.resumeReading();
    await peer.until(() => peer.answered.size === 5001 + FLOOD, 120_000, 'every answer');
    expect(isAlive(peer.pid)).toBe(true);
  }, 240_000);
});

describe('a stdio client whose server stops reading', () => {
  it(`stops reading too: ${FLOOD} unread ping answers keep its RSS bounded, and all arrive once the server reads`, async () => {
    const peer = new HandPlayedPeer('proc-stdio-client.ts');
    peers.push(peer);
    await peer.until(() => peer.requestsFromChild.some((r) => r.method === 'initialize'), 20_000, 'initialize');
    const initialize = peer.requestsFromChild.find((r) => r.method === 'initialize')!;
    peer.write([
      JSON.stringify({
        jsonrpc: '2.0',
        id: initialize.id,
        result: { protocolVersion: '2025-06-18', capabilities: {}, serverInfo: { name: 'hand', version: '1' } },
      }),
    ]);
    const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });
    await flood(peer, 5000, 1, ping);
    await peer.until(() => peer.answered.size === 5000, 30_000, 'the warm-up answers');
    const baseline = rss(peer.pid);

    peer.stopReading();
    await flood(peer, FLOOD, 10_000, ping);
    await peer.untilStalled(60_000);
    const grown = rss(peer.pid) - baseline;
    expect(peer.child.stdin.writableLength).toBeGreaterThan(0);
    expect(grown).toBeLessThan(64 * MiB);

    peer.resumeReading();
    await peer.until(() => peer.answered.size === 5000 + FLOOD, 120_000, 'every answer');
  }, 240_000);
});

describe('our client and our server under heavy load both ways', () => {
  it('200 calls in flight with 200 KB arguments, each echoed back, all complete (no deadlock)', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', fixturePath('proc-echo-server.ts')],
      cwd: ROOT,
    });
    const client = new Client({ name: 'heavy', version: '1' });
    try {
      await client.connect(transport, { timeout: 20_000 });
      const payload = 'x'.repeat(200 * 1024);
      const calls = Array.from({ length: 200 }, (_, n) => client.callTool('echo', { n, payload }, { timeout: 60_000 }));
      const results = await Promise.all(calls);
      results.forEach((result, n) => {
        const text = (result.content[0] as { text: string }).text;
        expect(text.length).toBeGreaterThan(200 * 1024);
        expect(JSON.parse(text).n).toBe(n);
      });
    } finally {
      await client.close();
    }
  }, 120_000);
});

describe('two line streams that both request and answer, heavily, at once', () => {
  /**
   * Each end sends 100 requests with 50 KB params and answers each of the other's with 50 KB: both outputs
   * back up at once. A side that paused whenever its output is backed up would deadlock here (each waiting
   * for the other to read); rule (i) of LineStream (never pause while awaiting a response) prevents it.
   */
  it('every request on both sides is answered', async () => {
    const [leftEnd, rightEnd] = createDuplexPair();
    const options = { pauseReadingAboveBytes: 64 * 1024 };
    const ends = [new LineStream(leftEnd, leftEnd, options), new LineStream(rightEnd, rightEnd, options)];
    const blob = 'z'.repeat(50 * 1024);
    const answered = await Promise.all(
      ends.map(
        (end) =>
          new Promise<number>((resolve, reject) => {
            let answers = 0;
            const timer = setTimeout(() => reject(new Error(`only ${answers} answers: deadlocked`)), 10_000);
            end.messages.subscribe((frame) => {
              const message = frame as { id?: number; method?: string };
              if (message.method === 'work')
                end.send({ jsonrpc: '2.0', id: message.id!, result: { blob } }).catch(ignore);
              else if (++answers === 100) {
                clearTimeout(timer);
                resolve(answers);
              }
            });
            for (let id = 0; id < 100; id++)
              end.send({ jsonrpc: '2.0', id, method: 'work', params: { blob } }).catch(ignore);
          }),
      ),
    );
    expect(answered).toEqual([100, 100]);
    for (const end of ends) end.close(true);
  });
});

describe('the hard cap on unsent output', () => {
  it('fails the transport with a clear error, and refuses further sends, when the peer never reads', async () => {
    const output = new PassThrough({ highWaterMark: 1024 }); // nobody reads it
    const transport = new StdioServerTransport({ input: new PassThrough(), output, maxUnsentBytes: 256 * 1024 });
    const ended = new Promise<unknown>((resolve) =>
      transport.messages.subscribe({ error: resolve, complete: () => resolve('complete') }),
    );
    const note = { jsonrpc: '2.0' as const, method: 'notifications/message', params: { data: 'y'.repeat(1000) } };
    let refusal: unknown;
    for (let i = 0; i < 1000 && !refusal; i++)
      refusal = await Promise.race([transport.send(note).catch((e) => e), delay(0)]);
    expect(refusal).toBeInstanceOf(TransportError);
    expect((refusal as Error).message).toMatch(/not reading.*over the limit of 262144 \(maxUnsentBytes\)/);
    expect(await ended).toBe(refusal);
    await expect(transport.send(note)).rejects.toBe(refusal);
    await transport.close();
  });
});
