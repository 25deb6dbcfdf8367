/**
 * `switchboard serve --http` with `--cors-origin` (CORS for browser pages) and `--health` / `--health-path`,
 * and the same from a hub config's `switchboard.http`, served as a real process on 127.0.0.1 and asked as a
 * browser and a load balancer would; their usage errors, in process.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run';
import { itRefusesServeFlags, runCliCapturing } from '../helpers/cli-in-process';
import { ADDER_MODULE, buildCli, LongRunning, runToEnd } from '../helpers/cli-process';

const APP = 'https://app.example';
const OTHER = 'https://other.example';
const EVIL = 'https://evil.example';

let dir: string;
let built: { cli: string; index: string };
const file = (name: string) => join(dir, name);
const switchboard = (...args: string[]) => [process.execPath, built.cli, ...args];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'switchboard-serve-cors-'));
  built = await buildCli(join(dir, 'dist'));
  writeFileSync(file('adder.mjs'), ADDER_MODULE);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `switchboard serve <target> --http 0 ...flags`: the process, its endpoint URL and its origin. */
async function served(target: string, ...flags: string[]) {
  const { process: server, match } = await LongRunning.start(
    switchboard('serve', target, '--http', '0', ...flags),
    /over Streamable HTTP at (\S+)/,
  );
  return { server, url: match[1]!, origin: new URL(match[1]!).origin };
}

function preflight(url: string, origin: string) {
  return fetch(url, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type, mcp-protocol-version',
    },
  });
}

function initialize(url: string, origin: string) {
  return fetch(url, {
    method: 'POST',
    headers: { origin, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'page', version: '1' } },
    }),
  });
}

async function expectPreflightGranted(url: string, origin: string) {
  const answer = await preflight(url, origin);
  expect(answer.status).toBe(204);
  expect(answer.headers.get('access-control-allow-origin')).toBe(origin);
  expect(answer.headers.get('access-control-allow-methods')).toBe('GET, POST, DELETE');
}

async function expectHealthy(url: string) {
  const answer = await fetch(url);
  expect(answer.status).toBe(200);
  expect(await answer.json()).toEqual({ status: 'ok' });
}

describe('serve --cors-origin', () => {
  it('answers the preflight of each origin given (204 with the grant), refuses another (403), grants the POST', async () => {
    const { server, url } = await served(file('adder.mjs'), '--cors-origin', APP, '--cors-origin', OTHER);
    await server.waitFor('stdout', /CORS: pages of https:\/\/app\.example, https:\/\/other\.example may call it/);
    await expectPreflightGranted(url, APP);
    await expectPreflightGranted(url, OTHER);
    const refused = await preflight(url, EVIL);
    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    const opened = await initialize(url, OTHER);
    expect(opened.status).toBe(200);
    expect(opened.headers.get('access-control-allow-origin')).toBe(OTHER);
    expect(opened.headers.get('access-control-expose-headers')).toContain('Mcp-Session-Id');
    await opened.body!.cancel();
    expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it("refuses '*' for a module (no auth to require): exit 2, saying why, before serving", async () => {
    const run = await runToEnd(switchboard('serve', file('adder.mjs'), '--http', '0', '--cors-origin', '*'), {
      timeoutMs: 30_000,
    });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /^switchboard: Cannot serve over HTTP: cors\.origins '\*' is only allowed on an endpoint with auth: without a token to require, any page/m,
    );
  });
});

describe('serve --health', () => {
  it('answers GET /health with 200 {"status":"ok"} (any origin, no session), and says where', async () => {
    const { server, origin } = await served(file('adder.mjs'), '--health');
    expect((await server.waitFor('stdout', /health: (\S+)/))[1]).toBe(`${origin}/health`);
    await expectHealthy(`${origin}/health`);
    expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it('answers at --health-path instead, and nothing at /health; without either, /health is 404', async () => {
    const custom = await served(file('adder.mjs'), '--health-path', '/healthz');
    await expectHealthy(`${custom.origin}/healthz`);
    expect((await fetch(`${custom.origin}/health`)).status).toBe(404);
    expect(await custom.server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    const plain = await served(file('adder.mjs'));
    expect((await fetch(`${plain.origin}/health`)).status).toBe(404);
    expect(await plain.server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});

describe("a hub config's switchboard.http cors and health", () => {
  let hubs = 0;
  const hub = (extra: object) => {
    const name = `hub-${++hubs}.json`;
    const adder = { command: process.execPath, args: [built.cli, 'serve', file('adder.mjs')] };
    writeFileSync(file(name), JSON.stringify({ mcpServers: { adder }, ...extra }));
    return file(name);
  };

  it('serves them; --cors-origin adds to the config origins and --health-path wins over its path', async () => {
    const config = hub({ switchboard: { http: { cors: { origins: [APP] }, health: '/ready' } } });
    const fromConfig = await served(config);
    await expectPreflightGranted(fromConfig.url, APP);
    expect((await preflight(fromConfig.url, OTHER)).status).toBe(403);
    await expectHealthy(`${fromConfig.origin}/ready`);
    expect(await fromConfig.server.stop('SIGTERM')).toEqual({ code: 0, signal: null });

    const withFlags = await served(config, '--cors-origin', OTHER, '--health-path', '/alive');
    await expectPreflightGranted(withFlags.url, APP);
    await expectPreflightGranted(withFlags.url, OTHER);
    await expectHealthy(`${withFlags.origin}/alive`);
    expect((await fetch(`${withFlags.origin}/ready`)).status).toBe(404);
    expect(await withFlags.server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it("serves --cors-origin '*' when the config has auth: any origin's preflight is answered", async () => {
    const auth = {
      resource: 'http://127.0.0.1/mcp',
      authorizationServers: ['https://login.example'],
      jwks: 'http://127.0.0.1:9/jwks', // never fetched: no request here carries a token
    };
    const { server, url } = await served(hub({ auth }), '--cors-origin', '*');
    await server.waitFor('stdout', /CORS: pages of any origin \(with a token\) may call it/);
    await expectPreflightGranted(url, 'https://anywhere.example');
    expect((await initialize(url, 'https://anywhere.example')).status).toBe(401);
    expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it.each([
    [
      { cors: { origins: '*' } },
      'switchboard.http.cors.origins "*" needs the top-level "auth": without a token to require',
    ],
    [{ cors: { origin: [APP] } }, 'Unknown key "origin" in switchboard.http.cors'],
    [{ cors: [APP] }, 'switchboard.http.cors must be an object such as { "origins": ["https://app.example"] }'],
    [{ cors: { origins: APP } }, 'switchboard.http.cors.origins must be a list of strings'],
    [{ cors: { origins: [APP], maxAgeSeconds: -1 } }, 'switchboard.http.cors.maxAgeSeconds must be a whole number'],
    [{ health: 'healthz' }, 'switchboard.http.health must be true, false or a path starting with "/", got "healthz"'],
  ])('%j is a config error (exit 1), named before anything starts', async (http, problem) => {
    const err: string[] = [];
    const args = ['serve', hub({ switchboard: { http } }), '--http', '0'];
    expect(await runCli(args, { out: () => undefined, err: (line) => err.push(line) })).toBe(1);
    expect(err.join('\n')).toContain(problem);
  });
});

describe('--cors-origin, --health and --health-path on the command line', () => {
  itRefusesServeFlags([
    [['--cors-origin', APP], '--cors-origin only applies with --http <port>'],
    [['--health'], '--health only applies with --http <port>'],
    [['--health-path', '/h'], '--health-path only applies with --http <port>'],
    [
      ['--http', '0', '--cors-origin', `${APP}/page`],
      `--cors-origin needs an origin such as https://app.example.com:8443 (or '*'), got "${APP}/page"`,
    ],
    [['--http', '0', '--cors-origin', 'app.example'], '--cors-origin needs an origin such as'],
    [
      ['--http', '0', '--cors-origin', '*', '--cors-origin', APP],
      "--cors-origin '*' allows every origin: give it alone",
    ],
    [['--http', '0', '--cors-origin'], 'Option "--cors-origin" needs a value'],
    [['--http', '0', '--health=/h'], 'Option "--health" takes no value'],
    [['--http', '0', '--health-path', 'healthz'], '--health-path needs a path such as /health, got "healthz"'],
    [['--http', '0', '--health-path', '/mcp'], "--health-path /mcp is the MCP endpoint's path: choose another"],
    [['--http', '0', '--path', '/rpc', '--health-path', '/rpc'], "--health-path /rpc is the MCP endpoint's path"],
    [['--http', '0', '--health-path', '/sse'], '--health-path /sse is taken by the legacy HTTP+SSE endpoints'],
  ]);

  it('help serve describes them', async () => {
    const { code, stdout: help } = await runCliCapturing('help', 'serve');
    expect(code).toBe(0);
    expect(help).toContain('  --cors-origin <origin>\n                  let pages of this origin');
    expect(help).toContain("'*'\n                  (alone) allows any origin, and only with a hub config's \"auth\"");
    expect(help).toContain('  --health        answer GET /health with 200 {"status":"ok"}');
    expect(help).toContain('  --health-path <path>\n                  serve the health endpoint at this path instead');
    expect(help).toContain('"cors": {"origins": [...]}, "health": true or a path');
  });
});
