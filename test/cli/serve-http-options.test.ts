/**
 * `switchboard serve --http` with `--path` (where the Streamable HTTP endpoint is) and `--tls-cert`/`--tls-key`
 * (HTTPS, here with a self-signed certificate made by openssl for 127.0.0.1), served as a real process and
 * called by `switchboard call` and by our HTTP client, in both eras.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { itRefusesServeFlags, runCliCapturing } from '../helpers/cli-in-process';
import { Client } from '../../lib/client/client';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { ADDER_MODULE, buildCli, freshConfigDirPerTest, LongRunning, runToEnd } from '../helpers/cli-process';

let dir: string;
let built: { cli: string; index: string };
const file = (name: string) => join(dir, name);
const switchboard = (...args: string[]) => [process.execPath, built.cli, ...args];
const runSwitchboard = (...args: string[]) => runToEnd(switchboard(...args), { timeoutMs: 30_000 });
/** `switchboard call` trusting the test's certificate, as a user would make Node trust a private CA. */
const trustingCall = (...args: string[]) =>
  runToEnd(['env', `NODE_EXTRA_CA_CERTS=${file('cert.pem')}`, ...switchboard('call', ...args)], { timeoutMs: 30_000 });

/** A self-signed certificate (and its key) for 127.0.0.1, valid for a day. */
function selfSigned(name: string): void {
  execFileSync(
    '/usr/bin/openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      file(`${name}-key.pem`),
      '-out',
      file(`${name}.pem`),
    ],
    { stdio: 'ignore' },
  );
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'switchboard-serve-http-'));
  built = await buildCli(join(dir, 'dist'));
  writeFileSync(file('adder.mjs'), ADDER_MODULE);
  selfSigned('cert');
  selfSigned('other');
  writeFileSync(file('not-pem.txt'), 'this is not a certificate\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
freshConfigDirPerTest(() => dir);

const ERAS = [
  ['stateless', []],
  ['handshake', ['--era', 'handshake']],
] as const;
const ADD = '{"name":"add","arguments":{"a":20,"b":22}}';
const textOf = (stdout: string) => JSON.parse(stdout).content[0].text;

/** `switchboard serve adder.mjs --http 0 ...flags`, and the URL its banner names. */
async function served(...flags: string[]) {
  const { process: server, match } = await LongRunning.start(
    switchboard('serve', file('adder.mjs'), '--http', '0', ...flags),
    /over Streamable HTTPS? at (\S+)/,
  );
  return { server, url: match[1]! };
}

describe('serve --path', () => {
  it('serves the endpoint at the path given, and nothing at /mcp', async () => {
    const { server, url } = await served('--path', '/rpc/v1');
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/rpc\/v1$/);
    expect((await server.waitFor('stdout', /try: switchboard call (\S+) tools\/list/))[1]).toBe(url);
    for (const [era, flags] of ERAS) {
      const run = await runSwitchboard('call', ...flags, '--verbose', url, 'tools/call', ADD);
      expect(run.code, run.stderr).toBe(0);
      expect(textOf(run.stdout)).toBe('42');
      expect(run.stderr).toContain(`(${era})`);
    }
    const elsewhere = await runSwitchboard('call', '--no-era-cache', new URL('/mcp', url).href, 'tools/list');
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toMatch(/404/);
    expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});

describe('serve --tls-cert --tls-key', () => {
  it('serves HTTPS that switchboard call reaches when Node trusts the certificate, in both eras', async () => {
    const { server, url } = await served('--tls-cert', file('cert.pem'), '--tls-key', file('cert-key.pem'));
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/mcp$/);
    await server.waitFor('stdout', /legacy HTTP\+SSE \(2024-11-05 clients\): https:\/\/127\.0\.0\.1:\d+\/sse/);
    for (const [era, flags] of ERAS) {
      const run = await trustingCall(...flags, '--verbose', url, 'tools/call', ADD);
      expect(run.code, run.stderr).toBe(0);
      expect(textOf(run.stdout)).toBe('42');
      expect(run.stderr).toContain(`(${era})`);
    }
    // Not trusted: the certificate is refused, nothing is sent in the clear.
    const untrusted = await runSwitchboard('call', '--no-era-cache', url, 'tools/list');
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toMatch(/self-signed certificate/);
    const clear = await runSwitchboard('call', '--no-era-cache', url.replace('https:', 'http:'), 'tools/list');
    expect(clear.code).toBe(1);
    expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it('serves HTTPS at --path to our HTTP client given an agent that trusts the certificate', async () => {
    const { server, url } = await served(
      '--path',
      '/secure',
      '--tls-cert',
      file('cert.pem'),
      '--tls-key',
      file('cert-key.pem'),
    );
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/secure$/);
    for (const era of ['modern', 'handshake'] as const) {
      const agent = new Agent({ ca: readFileSync(file('cert.pem')), keepAlive: true });
      const client = new Client({ name: 'test', version: '1' }, { era, eraCache: false, listChanges: 'off' });
      try {
        await client.connect(new StreamableHttpClientTransport(url, { agent }));
        expect(client.connectedEra).toBe(era);
        expect((await client.listTools()).map((tool) => tool.name)).toEqual(['add']);
      } finally {
        await client.close();
        agent.destroy();
      }
    }
    expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it.each([
    [
      ['--tls-cert', 'missing.pem', '--tls-key', 'cert-key.pem'],
      /^switchboard: Cannot read --tls-cert .*missing\.pem: ENOENT/m,
    ],
    [
      ['--tls-cert', 'cert.pem', '--tls-key', 'missing.pem'],
      /^switchboard: Cannot read --tls-key .*missing\.pem: ENOENT/m,
    ],
    [
      ['--tls-cert', 'not-pem.txt', '--tls-key', 'cert-key.pem'],
      /^switchboard: Cannot serve HTTPS with this certificate and key: /m,
    ],
    [
      ['--tls-cert', 'cert.pem', '--tls-key', 'other-key.pem'],
      /^switchboard: Cannot serve HTTPS with this certificate and key: .*key values mismatch/m,
    ],
  ])('%j: exits 1, saying which file and why', async (flags, message) => {
    const withPaths = flags.map((flag) => (flag.startsWith('--') ? flag : file(flag)));
    const run = await runSwitchboard('serve', file('adder.mjs'), '--http', '0', ...withPaths);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message);
  });
});

describe('serve --path, --tls-cert and --tls-key on the command line', () => {
  itRefusesServeFlags([
    [['--http', '0', '--path', 'mcp'], '--path needs a path such as /mcp, got "mcp"'],
    [['--http', '0', '--path', '/mcp?x=1'], '--path needs a path such as /mcp, got "/mcp?x=1"'],
    [['--http', '0', '--path', '/a b'], '--path needs a path such as /mcp, got "/a b"'],
    [
      ['--http', '0', '--path', '/sse'],
      '--path /sse is taken by the legacy HTTP+SSE endpoints (/sse, /messages): choose another',
    ],
    [['--http', '0', '--path', '/messages'], '--path /messages is taken by the legacy HTTP+SSE endpoints'],
    [['--path', '/x'], '--path only applies with --http <port>'],
    [['--tls-cert', 'c.pem', '--tls-key', 'k.pem'], '--tls-cert only applies with --http <port>'],
    [['--http', '0', '--tls-cert', 'c.pem'], '--tls-cert needs --tls-key <file> too'],
    [['--http', '0', '--tls-key', 'k.pem'], '--tls-key needs --tls-cert <file> too'],
    [['--http', '0', '--tls-cert=', '--tls-key', 'k.pem'], '--tls-cert needs the file of the certificate chain (PEM)'],
    [['--http', '0', '--tls-cert', 'c.pem', '--tls-key='], '--tls-key needs the file of the private key (PEM)'],
  ]);
});

it('help serve describes --path, --tls-cert and --tls-key', async () => {
  const { code, stdout: help } = await runCliCapturing('help', 'serve');
  expect(code).toBe(0);
  expect(help).toContain('  --path <path>   serve Streamable HTTP at this path instead of /mcp');
  expect(help).toContain(
    '  --tls-cert <file> --tls-key <file>\n                  serve HTTPS with this certificate chain',
  );
  expect(help).toContain('--http 8443 --path /rpc --tls-cert cert.pem --tls-key key.pem');
});
