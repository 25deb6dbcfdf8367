/**
 * `createMcpFetchHandler` under the runtimes it is for: real Bun and real Deno (the `bun` and `deno` dev
 * dependencies' prebuilt binaries, run by path) serve test/fixtures/runtimes/serve-fetch.ts from source on
 * 127.0.0.1 with their own HTTP servers (`Bun.serve`, `Deno.serve`), and clients on Node reach them: ours in
 * both eras with progress, over Streamable HTTP and the legacy HTTP+SSE endpoints, and the official SDK v1
 * client. Each child is stopped after its tests and must be gone.
 */
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import type { Transport } from '../../transports/transport';
import { LegacySseClientTransport } from '../../transports/http/legacy-sse-client';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { statusOfGet, within } from '../helpers/http';
import { fixturePath } from '../helpers/paths';
import { isAlive } from '../helpers/processes';

const require = createRequire(import.meta.url);
const ROOT = join(dirname(require.resolve('../../package.json')));
const SERVER = fixturePath('runtimes/serve-fetch.ts');

/**
 * The runtime's binary: in its platform package, or where the wrapper package's install script moved it
 * (npm runs that script or not, depending on its settings). A placeholder is a few bytes; the binary is 50 MB+.
 */
function binary(...candidates: string[]): string {
  const found = candidates.map((path) => join(ROOT, 'node_modules', path)).find((path) => sizeOf(path) > 1_000_000);
  if (!found) throw new Error(`None of ${candidates.join(', ')} is installed: npm ci installs them (dev dependencies)`);
  return found;
}

function sizeOf(path: string): number {
  return existsSync(path) ? statSync(path).size : 0;
}

const RUNTIMES = [
  { name: 'bun', command: () => [binary('@oven/bun-linux-x64/bin/bun', 'bun/bin/bun.exe'), 'run', SERVER] },
  {
    name: 'deno',
    command: () => [
      binary('@deno/linux-x64-glibc/deno', 'deno/deno'),
      'run',
      '--allow-net=127.0.0.1',
      '--allow-read',
      '--allow-env',
      // Our sources import without extensions, as TypeScript's bundler resolution allows.
      '--unstable-sloppy-imports',
      SERVER,
    ],
  },
] as const;

/** Starts the server under the runtime; resolves with its URL once it printed its port. */
function start(command: readonly string[]): Promise<{ child: ChildProcess; origin: string }> {
  const child = spawn(command[0]!, command.slice(1), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const failed = (why: string) => reject(new Error(`${command[0]} ${why}: ${output}`));
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const port = /listening (\d+)/.exec(output)?.[1];
      if (port) resolve({ child, origin: `http://127.0.0.1:${port}` });
    });
    child.stderr!.on('data', (chunk: Buffer) => void (output += chunk.toString()));
    child.once('error', (error) => failed(error.message));
    child.once('exit', (code) => failed(`exited with ${code} before listening`));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3_000);
  await exited;
  clearTimeout(timer);
}

describe.each(RUNTIMES)('the fetch handler under $name', ({ name, command }) => {
  let child: ChildProcess;
  let origin: string;

  beforeAll(async () => {
    ({ child, origin } = await within(start(command()), `${name} to listen`, 30_000));
  }, 40_000);

  afterAll(async () => {
    if (!child) return;
    await stop(child);
    expect(isAlive(child.pid!)).toBe(false);
  });

  /** Our client over `transport` in `era`: the call's content and the progress it heard. */
  async function callOver(transport: Transport, era: 'modern' | 'handshake') {
    const client = new Client({ name: 'node', version: '1' }, { era, eraCache: false });
    await within(client.connect(transport), 'connect');
    try {
      const progress: number[] = [];
      const result = await within(
        client.callTool('work', { text: 'hi' }, { onProgress: ({ progress: value }) => progress.push(value) }),
        'the call',
      );
      return { era: client.connectedEra, content: result.content, progress };
    } finally {
      await client.close();
    }
  }

  it.each(['modern', 'handshake'] as const)('serves our client in the %s era, progress first', async (era) => {
    expect(await callOver(new StreamableHttpClientTransport(`${origin}/mcp`), era)).toEqual({
      era,
      content: [{ type: 'text', text: `hi from ${name}` }],
      progress: [1, 2],
    });
  });

  it('serves our client over the legacy HTTP+SSE endpoints', async () => {
    expect(await callOver(new LegacySseClientTransport(`${origin}/sse`), 'handshake')).toEqual({
      era: 'handshake',
      content: [{ type: 'text', text: `hi from ${name}` }],
      progress: [1, 2],
    });
  });

  it('serves the official SDK v1 client, progress included', async () => {
    const client = new SdkClient({ name: 'sdk-v1', version: '1' });
    await within(client.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`))), 'the SDK connect');
    const progress: number[] = [];
    try {
      const result = await within(
        client.callTool({ name: 'work', arguments: { text: 'sdk' } }, undefined, {
          onprogress: ({ progress: value }) => void progress.push(value),
        }),
        'the SDK call',
      );
      expect([result.content, progress]).toEqual([[{ type: 'text', text: `sdk from ${name}` }], [1, 2]]);
    } finally {
      await client.close();
    }
  });

  it('refuses a foreign Host with 403, as on Node', async () => {
    expect(await statusOfGet(`${origin}/mcp`, { host: 'rebound.example', accept: 'text/event-stream' })).toBe(403);
  });
});
