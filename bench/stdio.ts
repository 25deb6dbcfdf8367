/**
 * The stdio rows: `tools/call` of `echo` from this process to a server running as a child process.
 * - ours: our `Client` over our `StdioClientTransport`, child bench/fixtures/stdio-echo-ours.ts (`node --import tsx`);
 * - sdk: the SDK `Client` over the SDK `StdioClientTransport`, child bench/fixtures/stdio-echo-sdk.mjs;
 * - bare: no MCP, a Map of pending ids and one JSON line per message each way, child bench/fixtures/stdio-echo-bare.mjs.
 * Each factory resolves once the child answers (after the handshake for ours and the SDK) and has been warmed
 * up, so neither child start-up nor the child's JIT warm-up is timed. Every child is killed by `close()`, and any
 * still alive when this process exits is killed then.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as SdkStdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client } from '../lib/client/client';
import { HANDSHAKE_ERA } from './config';
import { StdioClientTransport } from '../transports/stdio';
import type { CallPair } from './contender';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
const CLIENT_INFO = { name: 'bench-client', version: '1.0.0' };
const ECHO_ARGUMENTS = { text: 'hi' };

/**
 * Untimed calls on every new connection, the same number for every entrant. Each run starts a fresh child
 * whose JIT has seen no call (the bench's warm-up pass only warms this process), and the timed windows
 * start 200 ms in: measured, our child needs ~4,000 calls to reach its steady latency and the bare echo
 * ~3,000, so without this the 1-in-flight window timed part of our child's warm-up and little of bare's.
 */
const WARMUP_SEQUENTIAL_CALLS = 5_000;
const WARMUP_BURSTS = 20;
const WARMUP_BURST_SIZE = 256;

async function warmUp(pair: CallPair): Promise<void> {
  for (let i = 0; i < WARMUP_SEQUENTIAL_CALLS; i++) await pair.callEcho();
  for (let i = 0; i < WARMUP_BURSTS; i++) {
    await Promise.all(Array.from({ length: WARMUP_BURST_SIZE }, () => pair.callEcho()));
  }
}

/** Connects, then warms the connection up; closes it if the warm-up fails. */
function warmedUp(connect: () => Promise<CallPair>): () => Promise<CallPair> {
  return async () => {
    const pair = await connect();
    await openOrClose(() => warmUp(pair), pair.close);
    return pair;
  };
}

/** Kill functions of the children still alive: the safety net for a run that fails or is interrupted. */
const liveChildren = new Set<() => void>();
let reaperInstalled = false;

function track(kill: () => void): () => void {
  if (!reaperInstalled) {
    reaperInstalled = true;
    process.once('exit', () => {
      for (const killChild of liveChildren) killChild();
    });
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
  }
  liveChildren.add(kill);
  return () => liveChildren.delete(kill);
}

function killQuietly(pid: number | null | undefined): void {
  if (pid == null) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // ESRCH: already gone.
  }
}

/** Runs `connect`; if it fails, closes what it opened before rethrowing. */
async function openOrClose<T>(connect: () => Promise<T>, close: () => Promise<unknown>): Promise<T> {
  try {
    return await connect();
  } catch (error) {
    await close().catch(() => undefined);
    throw error;
  }
}

async function connectOurs(): Promise<CallPair> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', fixture('stdio-echo-ours.ts')],
    cwd: REPO_ROOT,
  });
  // Our transport starts the child in its own process group: the safety net kills the group.
  const untrack = track(() => killQuietly(transport.pid === undefined ? undefined : -transport.pid));
  const shutdown = async () => {
    await transport.close();
    untrack();
  };
  const client = await openOrClose(() => new Client(CLIENT_INFO, HANDSHAKE_ERA).connect(transport), shutdown);
  return {
    callEcho: () => client.callTool('echo', ECHO_ARGUMENTS),
    close: async () => {
      await client.close().catch(() => undefined);
      await shutdown();
    },
  };
}

async function connectSdk(): Promise<CallPair> {
  const transport = new SdkStdioClientTransport({
    command: process.execPath,
    args: [fixture('stdio-echo-sdk.mjs')],
    cwd: REPO_ROOT,
    stderr: 'inherit',
  });
  const client = new SdkClient(CLIENT_INFO);
  const untrack = track(() => killQuietly(transport.pid));
  const shutdown = async () => {
    await client.close(); // closes the transport: stdin end, then SIGTERM, then SIGKILL
    untrack();
  };
  await openOrClose(() => client.connect(transport), shutdown);
  return {
    callEcho: () => client.callTool({ name: 'echo', arguments: ECHO_ARGUMENTS }),
    close: shutdown,
  };
}

interface Pending {
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/** The floor: correlation by a Map of pending ids, JSON.stringify/parse, one write per message. */
async function connectBare(): Promise<CallPair> {
  const child = spawn(process.execPath, [fixture('stdio-echo-bare.mjs')], {
    cwd: REPO_ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const untrack = track(() => killQuietly(child.pid));
  const pending = new Map<number, Pending>();
  let nextId = 0;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const failAll = (error: Error) => {
    for (const entry of pending.values()) entry.reject(error);
    pending.clear();
  };
  child.once('error', failAll);
  child.once('exit', (code, signal) => failAll(new Error(`bare echo child exited (${code ?? signal})`)));
  child.stdin.on('error', () => undefined); // EPIPE after the child is gone: reported through its exit

  let buffered = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    buffered += chunk;
    let start = 0;
    let end: number;
    while ((end = buffered.indexOf('\n', start)) !== -1) {
      const message = JSON.parse(buffered.slice(start, end)) as { id: number; result: unknown };
      start = end + 1;
      const entry = pending.get(message.id);
      if (entry) {
        pending.delete(message.id);
        entry.resolve(message.result);
      }
    }
    buffered = buffered.slice(start);
  });

  const callEcho = (): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      child.stdin.write(
        JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'echo', arguments: ECHO_ARGUMENTS },
        }) + '\n',
      );
    });
  const close = async () => {
    child.stdin.end();
    const timer = setTimeout(() => killQuietly(child.pid), 2000);
    await exited;
    clearTimeout(timer);
    untrack();
  };
  // The first answer proves the child is up: start-up stays out of the timed calls.
  await openOrClose(callEcho, close);
  return { callEcho, close };
}

export const STDIO_ENTRANTS: Readonly<Record<'ours' | 'sdk' | 'bare', () => Promise<CallPair>>> = {
  ours: warmedUp(connectOurs),
  sdk: warmedUp(connectSdk),
  bare: warmedUp(connectBare),
};
