/**
 * `switchboard login`, `logout`, and `call` with stored tokens, as real processes (the built CLI) against a
 * protected server (our HTTP endpoint with `auth`) and the tests' authorization server, both on 127.0.0.1.
 * The config directory is a temporary one per test; the test plays the browser: it reads the authorization
 * URL the CLI prints, GETs it (the authorization server approves with a 302 to the loopback redirect URI)
 * and follows that redirect to the CLI's listener.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createJwtVerifier } from '../../lib/auth/server/jwt-verifier';
import { parseCommandLine } from '../../lib/cli/args';
import { DEFAULT_CALLBACK_PORT, DEFAULT_LOGIN_TIMEOUT_MS } from '../../lib/cli/auth-args';
import { browserCommand, openBrowser } from '../../lib/cli/browser';
import { runCli } from '../../lib/cli/run';
import { defineServer } from '../../lib/server/definition';
import type { ServerContext } from '../../lib/server/context';
import { Server } from '../../lib/server/server';
import { createMcpHttpHandler, type McpHttpHandler } from '../../transports/http/endpoint';
import { buildCli, LongRunning, runToEnd } from '../helpers/cli-process';
import { cleanups, eventually, lateListener, listenHttp } from '../helpers/http';
import {
  startAuthorizationServer,
  type AuthorizationServer,
  type AuthorizationServerOptions,
} from '../helpers/oauth-server';

const DEFINITION = defineServer({
  name: 'protected',
  version: '1.0.0',
  tools: [
    {
      name: 'whoami',
      inputSchema: { type: 'object' },
      handler: (_args, ctx: ServerContext) => ({ content: [{ type: 'text', text: ctx.auth?.subject ?? 'nobody' }] }),
    },
    { name: 'write', inputSchema: { type: 'object' }, scopes: ['mcp:write'], handler: () => ({ content: [] }) },
  ],
});

let buildDir: string;
let cli: string;
beforeAll(async () => {
  buildDir = mkdtempSync(join(tmpdir(), 'switchboard-cli-auth-build-'));
  cli = (await buildCli(join(buildDir, 'dist'))).cli;
}, 60_000);
afterAll(() => rmSync(buildDir, { recursive: true, force: true }));

/** The config directory of this test: every spawned CLI inherits it through the environment. */
let configDir: string;
beforeEach(() => {
  configDir = mkdtempSync(join(tmpdir(), 'switchboard-cli-auth-'));
  process.env['MCP_SWITCHBOARD_CONFIG_DIR'] = configDir;
});
afterEach(() => {
  delete process.env['MCP_SWITCHBOARD_CONFIG_DIR'];
  rmSync(configDir, { recursive: true, force: true });
});

const switchboard = (...args: string[]) => [process.execPath, cli, ...args];

/** Milliseconds added to the clock of both the authorization server and the resource server. */
let clockOffset = 0;
const now = () => Date.now() + clockOffset;
beforeEach(() => {
  clockOffset = 0;
});

interface Setup {
  readonly as: AuthorizationServer;
  /** The protected MCP endpoint. */
  readonly url: string;
}

/** The authorization server and an MCP server that accepts its tokens (JWT checked on the shared clock). */
async function protectedServer(options: AuthorizationServerOptions = {}): Promise<Setup> {
  const as = await startAuthorizationServer({ now, ...options });
  cleanups.push(() => as.close());
  const server = new Server(DEFINITION);
  cleanups.push(() => server.close());
  let handler: McpHttpHandler | undefined;
  const { origin } = await listenHttp(lateListener(() => handler));
  const url = `${origin}/mcp`;
  const verifier = createJwtVerifier({ jwksUrl: as.url('/jwks'), issuer: as.issuer, audience: url, now });
  handler = createMcpHttpHandler(server, { auth: { resource: url, authorizationServers: [as.issuer], verifier } });
  cleanups.push(() => handler!.close());
  return { as, url };
}

/** The browser's part: the authorization URL the CLI printed, the authorization server's 302, the redirect. */
async function authorizeAsBrowser(login: LongRunning): Promise<void> {
  const [, printed] = await login.waitFor('stderr', /^ {2}(http\S+)$/m);
  const approval = await fetch(printed!, { redirect: 'manual' });
  expect(approval.status).toBe(302);
  const back = await fetch(approval.headers.get('location')!);
  await back.text();
}

/** `switchboard login` run to its end, with the test as the browser. */
async function login(url: string, ...options: string[]) {
  const process = LongRunning.run(switchboard('login', '--no-browser', '--callback-port', '0', ...options, url));
  await authorizeAsBrowser(process);
  const { code } = await process.finished();
  return { code, stdout: process.stdout, stderr: process.stderr };
}

const call = (url: string, ...args: string[]) => runToEnd(switchboard('call', url, ...args));

/** The one record file the store holds, parsed, with its mode. */
function storedRecord(): { mode: number; path: string; file: any } {
  const dir = join(configDir, 'auth');
  const files = readdirSync(dir).filter((name) => name.endsWith('.json'));
  expect(files).toHaveLength(1);
  const path = join(dir, files[0]!);
  return { path, mode: statSync(path).mode & 0o777, file: JSON.parse(readFileSync(path, 'utf8')) };
}

const recordFiles = () => {
  try {
    return readdirSync(join(configDir, 'auth')).filter((name) => name.endsWith('.json'));
  } catch {
    return [];
  }
};

describe('switchboard login', () => {
  it('stores the token in a 0600 record under the config directory and confirms with the server', async () => {
    const { url } = await protectedServer();
    const result = await login(url);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Logged in to ${url} (protected 1.0.0)`);
    const { mode, file } = storedRecord();
    expect(mode).toBe(0o600);
    expect(file.server).toBe(url);
    expect(file.record.tokens.accessToken).toEqual(expect.any(String));
  });

  it('prints neither the access token nor the refresh token', async () => {
    const { url } = await protectedServer({ refreshTokens: 'always' });
    const result = await login(url);
    const { tokens } = storedRecord().file.record;
    expect(tokens.refreshToken).toEqual(expect.any(String));
    for (const secret of [tokens.accessToken, tokens.refreshToken]) {
      expect(result.stdout + result.stderr).not.toContain(secret);
    }
  });

  it('prints the scopes granted', async () => {
    const { url } = await protectedServer({ scopesSupported: ['mcp:read', 'mcp:write'] });
    const result = await login(url, '--scope', 'mcp:read');
    expect(result.stdout).toContain('Scopes granted: mcp:read');
  });

  it('logs in with a pre-registered client whose secret comes from SWITCHBOARD_CLIENT_SECRET', async () => {
    const { as, url } = await protectedServer({
      dynamicRegistration: false,
      clients: [
        { clientId: 'switchboard-cli', clientSecret: 'shh-secret', redirectUris: ['http://127.0.0.1/callback'] },
      ],
    });
    process.env['SWITCHBOARD_CLIENT_SECRET'] = 'shh-secret';
    let result;
    try {
      result = await login(url, '--client-id', 'switchboard-cli');
    } finally {
      delete process.env['SWITCHBOARD_CLIENT_SECRET'];
    }
    expect(result.code).toBe(0);
    const tokenRequest = as.events.find((event) => event.endpoint === 'token' && event.status === 200);
    expect(tokenRequest).toMatchObject({ clientId: 'switchboard-cli', authMethod: 'client_secret_basic' });
  });

  it('runs a new authorization when a token is already stored, and replaces it', async () => {
    const { as, url } = await protectedServer();
    await login(url);
    const first = storedRecord().file.record.tokens.accessToken;
    const second = await login(url);
    expect(second.code).toBe(0);
    expect(as.events.filter((event) => event.endpoint === 'authorize')).toHaveLength(2);
    expect(storedRecord().file.record.tokens.accessToken).not.toBe(first);
  });

  it('fails (exit 1) saying why when the authorization server denies the authorization, storing nothing', async () => {
    const { url } = await protectedServer({ denyAuthorization: true });
    const result = await login(url);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `switchboard: Login to ${url} failed: The authorization response was refused: access_denied`,
    );
    expect(recordFiles()).toEqual([]);
  });

  it('says so and stores nothing when the server does not ask for authorization', async () => {
    const server = new Server(DEFINITION);
    cleanups.push(() => server.close());
    const handler = createMcpHttpHandler(server);
    cleanups.push(() => handler.close());
    const { origin } = await listenHttp((request, response) => handler(request, response));
    const result = await runToEnd(switchboard('login', '--no-browser', '--callback-port', '0', `${origin}/mcp`));
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('did not ask for authorization');
    expect(recordFiles()).toEqual([]);
  });

  it('fails with a clear message when the callback port is in use', async () => {
    const { url } = await protectedServer();
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => holder.close(resolve)));
    const port = String((holder.address() as AddressInfo).port);
    const result = await runToEnd(switchboard('login', '--no-browser', '--callback-port', port, url));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`127.0.0.1:${port}: the port is in use`);
    expect(result.stderr).toContain('--callback-port');
  });

  it('fails (exit 1) when the browser does not come back in time, storing nothing', async () => {
    const { url } = await protectedServer();
    const result = await runToEnd(
      switchboard('login', '--no-browser', '--callback-port', '0', '--timeout', '300', url),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Login to .* failed: No OAuth redirect arrived at .* within 300 ms/);
    expect(recordFiles()).toEqual([]);
  });
});

describe('switchboard login and the browser', () => {
  /** Runs `fn` with PATH holding only `openers`: executables by name, with their text. */
  function withOpeners<T>(openers: Record<string, string>, fn: () => T): T {
    const bin = join(configDir, 'bin');
    rmSync(bin, { recursive: true, force: true });
    mkdirSync(bin);
    for (const [name, text] of Object.entries(openers)) {
      writeFileSync(join(bin, name), text);
      chmodSync(join(bin, name), 0o755);
    }
    const path = process.env['PATH'];
    process.env['PATH'] = bin;
    try {
      return fn();
    } finally {
      process.env['PATH'] = path;
    }
  }

  /** Runs `login` (browser allowed) with PATH holding only `openers`. */
  async function loginWithOpeners(url: string, openers: Record<string, string>, ...options: string[]) {
    return withOpeners(openers, () => LongRunning.run(switchboard('login', '--callback-port', '0', ...options, url)));
  }

  /** Openers that write the URL they were given to `opened` (in the config directory) and do nothing else. */
  function recordingOpeners(): { openers: Record<string, string>; opened: string } {
    const opened = join(configDir, 'opened');
    const recorder = `#!/bin/sh\necho "$1" >> '${opened}'\n`;
    return { opened, openers: { 'xdg-open': recorder, open: recorder } };
  }

  it('opens the authorization URL with the platform opener (here a stand-in that plays the browser)', async () => {
    const { url } = await protectedServer();
    // The stand-in gets the URL as its one argument, like xdg-open and open, and goes where a browser would.
    const browser = `#!${process.execPath}
const approval = await fetch(process.argv[2], { redirect: 'manual' });
await (await fetch(approval.headers.get('location'))).text();
`;
    const login = await loginWithOpeners(url, { 'xdg-open': browser, open: browser });
    const { code } = await login.finished();
    expect(code).toBe(0);
    expect(login.stdout).toContain(`Logged in to ${url}`);
  });

  it('logs in all the same when no browser can be opened', async () => {
    const { url } = await protectedServer();
    const login = await loginWithOpeners(url, {});
    await authorizeAsBrowser(login);
    expect((await login.finished()).code).toBe(0);
  });

  it('cancels on Ctrl-C while waiting for the browser, exiting 130', async () => {
    const { url } = await protectedServer();
    const login = LongRunning.run(switchboard('login', '--no-browser', '--callback-port', '0', url));
    await login.waitFor('stderr', /Waiting for the browser/);
    const exit = await login.stop('SIGINT');
    expect(exit.code).toBe(130);
    expect(login.stderr).toContain('Interrupted: the login was cancelled');
  });

  it('opens no file: authorization endpoint (CVE-2025-6514): fails saying why, printing nothing to open', async () => {
    const hostile = 'file:///C:/Windows/System32/calc.exe';
    const { url } = await protectedServer({ metadataOverrides: { authorization_endpoint: hostile } });
    const { openers, opened } = recordingOpeners();
    const login = await loginWithOpeners(url, openers, '--timeout', '5000');
    const { code } = await login.finished();
    expect(code).toBe(1);
    expect(login.stderr).toMatch(/Login to .* failed: "authorization_endpoint" in .* has the scheme "file:"/);
    expect(login.stderr).not.toContain('calc.exe');
    expect(login.stderr).not.toContain('Open this URL');
    expect(existsSync(opened)).toBe(false);
  });

  it('starts the opener for http: and https: URLs only', async () => {
    const { openers, opened } = recordingOpeners();
    const started = withOpeners(openers, () =>
      [
        'file:///C:/Windows/System32/calc.exe',
        'javascript:alert(1)',
        'smb://host/share',
        'not a url',
        'https://as.example/authorize?a=1&b=2',
      ].map((url) => openBrowser(url)),
    );
    expect(started).toEqual([false, false, false, false, true]);
    // The opener is detached: nothing announces that it ran but the line it writes.
    await eventually(() => existsSync(opened) && readFileSync(opened, 'utf8').length > 0, 'the opener to run');
    expect(readFileSync(opened, 'utf8')).toBe('https://as.example/authorize?a=1&b=2\n');
  });

  it('names the opener of each platform', () => {
    const url = 'https://as.example/authorize?a=1&b=2';
    expect(browserCommand(url, 'linux')).toEqual(['xdg-open', url]);
    expect(browserCommand(url, 'darwin')).toEqual(['open', url]);
    expect(browserCommand(url, 'win32')).toEqual(['rundll32', 'url.dll,FileProtocolHandler', url]);
  });
});

describe('switchboard call with a stored login', () => {
  it('calls the protected server with the stored token', async () => {
    const { url } = await protectedServer();
    await login(url);
    const result = await call(url, 'tools/call', '{"name":"whoami"}');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).content[0].text).toBe('user-1');
  });

  it('fails without a login, saying which command makes one', async () => {
    const { url } = await protectedServer();
    const result = await call(url, 'tools/list');
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(`switchboard: ${url} requires authorization: run "switchboard login ${url}"`);
  });

  it('registers no client at the authorization server when there is no login', async () => {
    const { as, url } = await protectedServer();
    await call(url, 'tools/list');
    expect(as.events.filter((event) => event.endpoint === 'register')).toEqual([]);
  });

  it('refreshes an expired token and stores the new one', async () => {
    const { as, url } = await protectedServer({ refreshTokens: 'always' });
    await login(url);
    const before = storedRecord().file.record.tokens;
    clockOffset = 2 * 3600_000; // the token's hour is over, for both servers
    const result = await call(url, 'tools/call', '{"name":"whoami"}');
    expect(result.code).toBe(0);
    expect(as.events.filter((event) => event.grantType === 'refresh_token' && event.status === 200)).toHaveLength(1);
    const after = storedRecord().file.record.tokens;
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.expiresAt).toBeGreaterThan(before.expiresAt);
  });

  it('asks for a new login when the token expired and cannot be refreshed', async () => {
    const { url } = await protectedServer({ refreshTokens: 'never' });
    await login(url);
    clockOffset = 2 * 3600_000;
    const result = await call(url, 'tools/list');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`requires authorization: run "switchboard login ${url}"`);
  });

  it('asks for a login with --scope when the server wants a scope the stored token lacks', async () => {
    const { url } = await protectedServer();
    await login(url, '--scope', 'mcp:read');
    const result = await call(url, 'tools/call', '{"name":"write"}');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `requires authorization: run "switchboard login --scope 'mcp:read mcp:write' ${url}"`,
    );
  });

  it('calls a tool needing a scope after the login with that scope', async () => {
    const { url } = await protectedServer();
    await login(url, '--scope', 'mcp:read mcp:write');
    const result = await call(url, 'tools/call', '{"name":"write"}');
    expect(result.code).toBe(0);
  });

  it('uses the login stored under --client-name', async () => {
    const { url } = await protectedServer();
    await login(url, '--client-name', 'work');
    const named = await call(url, '--client-name', 'work', 'tools/list');
    expect(named.code).toBe(0);
  });

  it('names --client-name in the login it asks for', async () => {
    const { url } = await protectedServer();
    const result = await call(url, '--client-name', 'work', 'tools/list');
    expect(result.stderr).toContain(`requires authorization: run "switchboard login --client-name work ${url}"`);
  });

  it('does not use a login stored under another client name', async () => {
    const { url } = await protectedServer();
    await login(url, '--client-name', 'work');
    const result = await call(url, 'tools/list');
    expect(result.stderr).toContain(`requires authorization: run "switchboard login ${url}"`);
  });

  it('sends the --header Authorization the user gave instead of the stored token', async () => {
    const { as, url } = await protectedServer();
    await login(url);
    const token = await as.issueToken({ audience: url, subject: 'someone-else' });
    const result = await call(url, '-H', `Authorization: Bearer ${token}`, 'tools/call', '{"name":"whoami"}');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).content[0].text).toBe('someone-else');
  });
});

describe('switchboard logout', () => {
  it('removes the stored login, and says so', async () => {
    const { url } = await protectedServer();
    await login(url);
    const result = await runToEnd(switchboard('logout', url));
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Logged out of ${url}`);
    expect(recordFiles()).toEqual([]);
  });

  it('makes the next call ask for a login', async () => {
    const { url } = await protectedServer();
    await login(url);
    await runToEnd(switchboard('logout', url));
    const result = await call(url, 'tools/list');
    expect(result.stderr).toContain('requires authorization');
  });

  it('exits 0 when there was no stored login, saying so', async () => {
    const result = await runToEnd(switchboard('logout', 'http://127.0.0.1:9/mcp'));
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('There was no stored login for http://127.0.0.1:9/mcp');
  });
});

describe('the command lines of login and logout', () => {
  async function inProcess(...argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(argv, { out: (line) => out.push(line), err: (line) => err.push(line) });
    return { code, stdout: out.join('\n'), stderr: err.join('\n') };
  }

  it('gives login its defaults: the fixed callback port, 5 minutes, the browser, the default client name', () => {
    expect(parseCommandLine(['login', 'https://mcp.example.com/mcp'])).toEqual({
      kind: 'login',
      url: new URL('https://mcp.example.com/mcp'),
      clientName: 'mcp-switchboard',
      callbackPort: DEFAULT_CALLBACK_PORT,
      timeoutMs: DEFAULT_LOGIN_TIMEOUT_MS,
      openBrowser: true,
    });
  });

  it('reads every login option', () => {
    const argv = ['login', '--scope', ' a b ', '--client-id', 'id', '--client-secret', 's', '--client-name', 'work'];
    argv.push('--callback-port', '8765', '--timeout', '1000', '--no-browser', 'https://mcp.example.com/mcp');
    expect(parseCommandLine(argv)).toMatchObject({
      scope: 'a b',
      clientId: 'id',
      clientSecret: 's',
      clientName: 'work',
      callbackPort: 8765,
      timeoutMs: 1000,
      openBrowser: false,
    });
  });

  it('reads logout and its client name', () => {
    expect(parseCommandLine(['logout', '--client-name', 'work', 'http://127.0.0.1:3000/mcp'])).toEqual({
      kind: 'logout',
      url: new URL('http://127.0.0.1:3000/mcp'),
      clientName: 'work',
    });
  });

  it.each([
    [['login'], "Missing the server's URL: switchboard login <url>"],
    [['logout'], "Missing the server's URL: switchboard logout <url>"],
    [['login', 'mcp.example.com'], '"mcp.example.com" is not a URL: switchboard login takes the http(s):// URL'],
    [['login', 'ftp://example.com/mcp'], 'Unsupported URL scheme "ftp:"'],
    [['login', 'http://x/mcp', 'more'], 'Unexpected argument "more" after the URL'],
    [['logout', 'http://x/mcp', 'more'], 'Unexpected argument "more" after the URL'],
    [['login', '--client-secret', 's', 'http://x/mcp'], '--client-secret goes with --client-id'],
    [['login', '--callback-port', '70000', 'http://x/mcp'], '--callback-port needs a port number from 0 to 65535'],
    [['login', '--callback-port', 'any', 'http://x/mcp'], '--callback-port needs a port number'],
    [['login', '--timeout', 'soon', 'http://x/mcp'], '--timeout needs milliseconds greater than 0, got "soon"'],
    [['login', '--timeout', '0', 'http://x/mcp'], '--timeout needs milliseconds greater than 0, got "0"'],
    [['login', '--client-id=', 'http://x/mcp'], '--client-id needs a value'],
    [['login', '--client-name=', 'http://x/mcp'], '--client-name needs a value'],
    [['login', '--no-browser=yes', 'http://x/mcp'], 'Option "--no-browser" takes no value'],
    [['login', '--header', 'A: b', 'http://x/mcp'], 'Unknown option "--header" for switchboard login'],
    [['logout', '--scope', 'a', 'http://x/mcp'], 'Unknown option "--scope" for switchboard logout'],
    [['call', '--client-name', 'work', 'ping', '--', 'node', 's.js'], '--client-name applies to HTTP targets only'],
    [['call', '--client-name=', 'http://x/mcp', 'ping'], '--client-name needs a name'],
  ])('%j is a usage error (exit 2)', async (argv, message) => {
    const run = await inProcess(...argv);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`switchboard: ${message}`);
  });

  it('prints the page of login, however it is asked for', async () => {
    for (const argv of [
      ['help', 'login'],
      ['login', '--help'],
      ['login', 'http://x/mcp', '-h'],
    ]) {
      expect((await inProcess(...argv)).stdout).toMatch(/^Usage: switchboard login \[options\] <url>/);
    }
  });

  it('prints the page of logout, however it is asked for', async () => {
    for (const argv of [
      ['help', 'logout'],
      ['logout', '--help'],
    ]) {
      expect((await inProcess(...argv)).stdout).toMatch(/^Usage: switchboard logout /);
    }
  });

  it('lists login and logout in the overview', async () => {
    const { stdout } = await inProcess('--help');
    expect(stdout).toContain('login <url>');
    expect(stdout).toContain('logout <url>');
  });
});
