/**
 * `switchboard call` remembers the era a server speaks between runs (lib/cli/call-era-cache.ts): the built
 * CLI as a real process, its config directory a fresh temporary one per test, against a server in this
 * process that counts the probes (`server/discover`) it gets and can stop speaking 2026-07-28.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { createMcpHttpHandler, type McpHttpHandler } from '../../transports/http/endpoint';
import { buildCli, runToEnd } from '../helpers/cli-process';
import { tool } from '../helpers/fixtures';
import { json } from '../helpers/content';

const CONFIG_DIR_ENV = 'MCP_SWITCHBOARD_CONFIG_DIR';
const ECHO = '{"name":"echo","arguments":{"n":1}}';

let dir: string;
let cli: string;
let configDir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'switchboard-cli-era-'));
  cli = (await buildCli(join(dir, 'dist'))).cli;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeEach(() => {
  configDir = mkdtempSync(join(tmpdir(), 'switchboard-cli-era-config-'));
  process.env[CONFIG_DIR_ENV] = configDir; // the CLI processes inherit it
});
afterEach(() => {
  delete process.env[CONFIG_DIR_ENV];
  rmSync(configDir, { recursive: true, force: true });
});

const switchboard = (...args: string[]) => runToEnd([process.execPath, cli, ...args]);
const call = (url: string, ...flags: string[]) => switchboard('call', '--verbose', ...flags, url, 'tools/call', ECHO);

/** The entries of the era cache file, as `switchboard call` wrote them. */
function storedEntries(): any[] {
  return JSON.parse(readFileSync(join(configDir, 'era-cache.json'), 'utf8')).entries;
}

interface Served {
  readonly url: string;
  /** `server/discover` requests received, answered or not. */
  discoveries: number;
  /** `tools/call` requests of 2026-07-28 received, answered or not. */
  modernCalls: number;
  /** Which eras the server answers: both (as ours does), the handshake only (a 2025 server), or 2026-07-28 only. */
  speaks: 'both eras' | 'handshake only' | '2026-07-28 only';
}

const listeners: { listener: HttpServer; handler: McpHttpHandler }[] = [];
afterEach(async () => {
  for (const { listener, handler } of listeners.splice(0)) {
    await handler.close();
    listener.closeAllConnections();
    await new Promise((resolve) => listener.close(resolve));
  }
});

/**
 * Our server over Streamable HTTP. Speaking the handshake only, it answers every 2026-07-28 POST as the
 * TypeScript SDK v1 answers a request before `initialize`: HTTP 400 with an id-less JSON-RPC error.
 */
async function serve(): Promise<Served> {
  const echo = tool('echo', json);
  const handler = createMcpHttpHandler(new Server(defineServer({ name: 'here', version: '1', tools: [echo] })));
  const listener = createServer((request, response) => {
    if (request.headers['mcp-method'] === 'server/discover') served.discoveries++;
    const modern = request.headers['mcp-protocol-version'] === '2026-07-28';
    if (modern && request.headers['mcp-method'] === 'tools/call') served.modernCalls++;
    if (served.speaks === 'handshake only' && modern) {
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(
        '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: Server not initialized"},"id":null}',
      );
      return;
    }
    if (served.speaks === '2026-07-28 only' && !modern) {
      // What a modern-only server answers `initialize`: the revisions it speaks.
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(
        '{"jsonrpc":"2.0","id":null,"error":{"code":-32022,"message":"Unsupported protocol version",' +
          '"data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}}',
      );
      return;
    }
    handler(request, response);
  });
  listeners.push({ listener, handler });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const served: Served = {
    url: `http://127.0.0.1:${(listener.address() as AddressInfo).port}/mcp`,
    discoveries: 0,
    modernCalls: 0,
    speaks: 'both eras',
  };
  return served;
}

function expectEchoed(run: { code: number | null; stdout: string; stderr: string }): void {
  expect(run.code, run.stderr).toBe(0);
  expect(JSON.parse(run.stdout).content).toEqual([{ type: 'text', text: '{"n":1}' }]);
}

/** The call's --verbose lines say the era came from the cache file (no probe) and which one it connected with. */
function expectEraFromCache(run: { stderr: string }, connected: string): void {
  expect(run.stderr.split('\n')).toEqual(
    expect.arrayContaining([`era: from the cache (${join(configDir, 'era-cache.json')}), no probe`, connected]),
  );
}

describe('a server that speaks 2026-07-28', () => {
  it('is not probed by a second call', async () => {
    const server = await serve();
    expectEchoed(await call(server.url));
    expectEchoed(await call(server.url));
    expect(server.discoveries).toBe(1);
  });

  it('is spoken to in 2026-07-28 by the second call, which says the era came from the cache', async () => {
    const server = await serve();
    await call(server.url);
    expectEraFromCache(await call(server.url), 'connected: 2026-07-28 (stateless)');
  });

  it('is remembered in a file readable only by the user', async () => {
    const server = await serve();
    await call(server.url);
    const { mode } = await import('node:fs').then((fs) => fs.statSync(join(configDir, 'era-cache.json')));
    expect(mode & 0o777).toBe(0o600);
  });

  it('is probed again by a call with --no-era-cache', async () => {
    const server = await serve();
    await call(server.url);
    const uncached = await call(server.url, '--no-era-cache');
    expectEchoed(uncached);
    expect([server.discoveries, uncached.stderr.includes('era: probed (--no-era-cache)')]).toEqual([2, true]);
  });

  // 'legacy': the handshake era's old name, still accepted.
  it.each(['handshake', 'legacy'])(
    'is spoken to with the handshake when --era %s forces it, cache or not',
    async (era) => {
      const server = await serve();
      await call(server.url);
      const forced = await call(server.url, '--era', era);
      expectEchoed(forced);
      expect(forced.stderr.split('\n')).toEqual(
        expect.arrayContaining(['era: the handshake, as asked (no probe)', 'connected: 2025-11-25 (handshake)']),
      );
    },
  );

  it('is probed again for another Authorization header (another principal), each remembered apart', async () => {
    const server = await serve();
    await call(server.url, '-H', 'Authorization: Bearer alice');
    await call(server.url, '-H', 'Authorization: Bearer bob');
    expect([server.discoveries, storedEntries().length]).toEqual([2, 2]);
  });

  it('is not probed again for the same Authorization header', async () => {
    const server = await serve();
    await call(server.url, '-H', 'Authorization: Bearer alice');
    await call(server.url, '-H', 'Authorization: Bearer alice');
    expect(server.discoveries).toBe(1);
  });
});

describe('a server that speaks only the handshake', () => {
  it('is not probed by a second call', async () => {
    const server = await serve();
    server.speaks = 'handshake only';
    expectEchoed(await call(server.url));
    const second = await call(server.url);
    expectEchoed(second);
    expect(server.discoveries).toBe(1);
  });

  it('is spoken to with the handshake by the second call, which says the era came from the cache', async () => {
    const server = await serve();
    server.speaks = 'handshake only';
    await call(server.url);
    expectEraFromCache(await call(server.url), 'connected: 2025-11-25 (handshake)');
  });

  it('is remembered "handshake", and an entry written "legacy" (before the rename) is read as it', async () => {
    const server = await serve();
    server.speaks = 'handshake only';
    await call(server.url);
    const file = join(configDir, 'era-cache.json');
    const document = JSON.parse(readFileSync(file, 'utf8'));
    expect(document.entries.map((entry: { era: string }) => entry.era)).toEqual(['handshake']);
    writeFileSync(file, JSON.stringify({ ...document, entries: [{ ...document.entries[0], era: 'legacy' }] }));
    expectEraFromCache(await call(server.url), 'connected: 2025-11-25 (handshake)');
    expect(server.discoveries).toBe(1);
  });
});

describe('a server that stopped speaking 2026-07-28 since the last call', () => {
  it('still answers the call: the stale era is dropped and the server probed again', async () => {
    const server = await serve();
    await call(server.url);
    server.speaks = 'handshake only';
    const after = await call(server.url);
    expectEchoed(after);
    expect([server.discoveries, after.stderr.split('\n')]).toEqual([
      2,
      expect.arrayContaining(['era: probed, remembered in ' + join(configDir, 'era-cache.json')]),
    ]);
  });

  it('has its entry replaced by the handshake era', async () => {
    const server = await serve();
    await call(server.url);
    expect(storedEntries().map((entry) => entry.era)).toEqual(['modern']);
    server.speaks = 'handshake only';
    await call(server.url);
    expect(storedEntries().map((entry) => entry.era)).toEqual(['handshake']);
  });

  it('is not probed by the call after that', async () => {
    const server = await serve();
    await call(server.url);
    server.speaks = 'handshake only';
    await call(server.url);
    expectEchoed(await call(server.url));
    expect(server.discoveries).toBe(2);
  });
});

describe('a server whose remembered era is in doubt', () => {
  it('is probed after a failed request, which is not sent again when the server still speaks 2026-07-28', async () => {
    const server = await serve();
    await call(server.url);
    const unknown = await switchboard(
      'call',
      '--verbose',
      server.url,
      'tools/call',
      '{"name":"no-such-tool","arguments":{}}',
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^era: the remembered modern era is in doubt \(.*\): probing$/m);
    expect([server.discoveries, server.modernCalls]).toEqual([2, 2]); // one probe and one call each
  });

  it('stays remembered as 2026-07-28 then', async () => {
    const server = await serve();
    await call(server.url);
    await switchboard('call', server.url, 'tools/call', '{"name":"no-such-tool","arguments":{}}');
    expect(storedEntries().map((entry) => entry.era)).toEqual(['modern']);
  });
});

describe('a server that stopped speaking the handshake since the last call', () => {
  it('still answers the call, in 2026-07-28', async () => {
    const server = await serve();
    server.speaks = 'handshake only';
    await call(server.url);
    server.speaks = '2026-07-28 only';
    const after = await call(server.url);
    expectEchoed(after);
    expect(after.stderr).toMatch(/^era: the remembered handshake era is in doubt \(.*\): probing$/m);
    expect(after.stderr.split('\n')).toContain('connected: 2026-07-28 (stateless)');
  });

  it('has its entry replaced by 2026-07-28', async () => {
    const server = await serve();
    server.speaks = 'handshake only';
    await call(server.url);
    server.speaks = '2026-07-28 only';
    await call(server.url);
    expect(storedEntries().map((entry) => entry.era)).toEqual(['modern']);
  });
});
