/**
 * `createMcpFetchHandler` as a Cloudflare Worker under real workerd (the `workerd` dev dependency's binary):
 * test/fixtures/runtimes/worker.ts bundled with esbuild, served on 127.0.0.1, reached from Node by our client
 * and the SDK v2 client (both negotiating their era: the worker serves 2026-07-28 only, `sessions: false`).
 * workerd refuses `new Function`, so this also runs the interpreting JSON Schema validator for real.
 */
import { Client as SdkV2Client, StreamableHTTPClientTransport as SdkV2Transport } from '@modelcontextprotocol/client';
import { build } from 'esbuild';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { eventually, postInitializeUnread, within } from '../helpers/http';
import { fixturePath } from '../helpers/paths';
import { isAlive } from '../helpers/processes';

const ROOT = fixturePath('../..');
const STARTUP_MS = 30_000;

function workerdBinary(): string {
  const candidates = ['@cloudflare/workerd-linux-64/bin/workerd', 'workerd/bin/workerd'].map((path) =>
    join(ROOT, 'node_modules', path),
  );
  const found = candidates.find((path) => existsSync(path) && statSync(path).size > 1_000_000);
  if (!found) throw new Error(`workerd is not installed at ${candidates.join(' or ')}: npm ci installs it`);
  return found;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

function config(port: number): string {
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .mainWorker) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const mainWorker :Workerd.Worker = (
  modules = [ (name = "worker", esModule = embed "worker.js") ],
  compatibilityDate = "2026-11-01",
);
`;
}

let workDir: string;
let child: ChildProcess | undefined;
let origin: string;
let output = '';

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'switchboard-workerd-'));
  await build({
    entryPoints: [fixturePath('runtimes/worker.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['worker', 'browser'],
    target: 'es2022',
    outfile: join(workDir, 'worker.js'),
    logLevel: 'silent',
  });
  const port = await freePort();
  writeFileSync(join(workDir, 'config.capnp'), config(port));
  child = spawn(workerdBinary(), ['serve', 'config.capnp'], { cwd: workDir, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (chunk: Buffer) => void (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => void (output += chunk.toString()));
  origin = `http://127.0.0.1:${port}`;
  const healthy = async () => (await fetch(`${origin}/health`).catch(() => undefined))?.status === 200;
  await eventually(healthy, `workerd to serve (${output})`, STARTUP_MS);
}, STARTUP_MS + 20_000);

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child!.kill('SIGKILL'), 3_000);
    await exited;
    clearTimeout(timer);
    expect(isAlive(child.pid!)).toBe(false);
  }
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('the fetch handler as a Worker under workerd', () => {
  it('serves our client, which settles on 2026-07-28, progress first', async () => {
    const client = new Client({ name: 'node', version: '1' }, { eraCache: false });
    await within(client.connect(new StreamableHttpClientTransport(`${origin}/mcp`)), 'connect');
    try {
      expect(client.connectedEra).toBe('modern');
      const progress: number[] = [];
      const result = await within(
        client.callTool('work', { text: 'hi' }, { onProgress: ({ progress: value }) => progress.push(value) }),
        'the call',
      );
      expect([result.content, progress]).toEqual([[{ type: 'text', text: 'hi from workerd' }], [1, 2]]);
    } finally {
      await client.close();
    }
  });

  it('validates arguments without generating code: bad ones get a tool error that says what is wrong', async () => {
    const client = new Client({ name: 'node', version: '1' }, { eraCache: false });
    await within(client.connect(new StreamableHttpClientTransport(`${origin}/mcp`)), 'connect');
    try {
      const refused = await within(client.callTool('work', { text: 'hi', extra: 1 }), 'the call');
      const text = JSON.stringify(refused.content);
      expect(refused.isError).toBe(true);
      expect(text).toContain('extra');
      expect(text).not.toContain('Code generation');
    } finally {
      await client.close();
    }
  });

  it('serves the SDK v2 client negotiating its era', async () => {
    const client = new SdkV2Client({ name: 'v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await within(client.connect(new SdkV2Transport(new URL(`${origin}/mcp`))), 'the SDK v2 connect');
    try {
      const result = await within(client.callTool({ name: 'work', arguments: { text: 'sdk' } }), 'the SDK call');
      expect(result.content).toEqual([{ type: 'text', text: 'sdk from workerd' }]);
    } finally {
      await client.close();
    }
  });

  it('refuses a handshake-era initialize with -32022, keeping no session', async () => {
    const response = await postInitializeUnread(`${origin}/mcp`);
    const body = (await response.json()) as { error: { code: number } };
    expect([response.status, body.error.code, response.headers.get('mcp-session-id')]).toEqual([400, -32022, null]);
  });
});
