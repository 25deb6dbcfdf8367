/**
 * The `switchboard` command line. Parsing, help and usage errors run in process (`runCli`); everything that
 * serves or calls runs as real processes (`switchboard serve` as the stdio child or HTTP server,
 * `switchboard call` as the client), as a user would run them.
 */
import http from 'node:http';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runCliCapturing } from '../helpers/cli-in-process';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { createMcpHttpHandler } from '../../transports/http/endpoint';
import {
  buildCli,
  cliCommand,
  freshConfigDirPerTest,
  LongRunning,
  ROOT,
  runToEnd,
  tsxCommand,
} from '../helpers/cli-process';
import { tool } from '../helpers/fixtures';
import { validateEveryModernExchange } from '../helpers/modern-wire';
import { validateEmitted } from '../helpers/pair';
import { problemsOf } from '../helpers/schema';
import { modernProblemsOf } from '../helpers/schema-modern';

const packageVersion = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
const example = (name: string) => join(ROOT, 'examples', name);

let dir: string;
let built: { cli: string; index: string };
const fixture = (name: string) => join(dir, name);
/** The built executable, as `switchboard ...` runs it. */
const switchboard = (...args: string[]) => [process.execPath, built.cli, ...args];
const runSwitchboard = (...args: string[]) => runToEnd(switchboard(...args));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'switchboard-cli-'));
  built = await buildCli(join(dir, 'dist'));
  const files: Record<string, string> = {
    'paged.mjs': `import { defineServer } from './dist/index.mjs';
const tool = (name) => ({ name, inputSchema: { type: 'object' }, handler: () => ({ content: [] }) });
export default defineServer({ name: 'paged', version: '1', pageSize: 1, tools: ['a', 'b', 'c'].map(tool) });`,
    'noisy.mjs': `import { defineServer } from './dist/index.mjs';
console.log('noisy module loaded');
export default defineServer({ name: 'noisy', version: '1', tools: [{
  name: 'shout', inputSchema: { type: 'object' },
  handler: () => { console.log('shouting'); console.info('still shouting'); return { content: [{ type: 'text', text: 'HEY' }] }; },
}] });`,
    'adder.mjs': `import { defineServer, Server } from './dist/index.mjs';
const add = { name: 'add', inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
  handler: ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }) };
const work = { name: 'work', inputSchema: { type: 'object' }, handler: async (_args, ctx) => {
  await ctx.log('info', 'starting', 'worker');
  await ctx.progress(1, 2, 'half way');
  await ctx.progress(2, 2);
  return { content: [{ type: 'text', text: 'worked' }] };
} };
const wait = { name: 'wait', inputSchema: { type: 'object' }, handler: async (_args, ctx) => {
  await ctx.log('info', 'waiting to be cancelled');
  await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
  console.error('the wait was cancelled');
  return { content: [] };
} };
export default new Server(defineServer({ name: 'adder', version: '1', tools: [add, work, wait] }));`,
    'bad-syntax.mjs': 'export default {{\n',
    'throws.mjs': "throw new Error('the module refuses to load');\n",
    'no-default.mjs': 'export const server = 1;\n',
    'number.mjs': 'export default 42;\n',
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(fixture(name), text);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));
freshConfigDirPerTest(() => dir);

const inProcess = runCliCapturing;

const json = (text: string) => JSON.parse(text) as any;

/** The events of an NDJSON trace file: every line one JSON object, the last one ended too. */
function traceFile(path: string): any[] {
  const text = readFileSync(path, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text
    .slice(0, -1)
    .split('\n')
    .map((line) => json(line));
}
/** `in request tools/list`; a reply traced without its method (see below) by its id: `out result #0`. */
const hops = (events: any[]) =>
  events
    .filter((event) => event.kind !== 'lifecycle')
    .map((event) => `${event.direction} ${event.kind} ${event.method ?? `#${event.id}`}`);
const changes = (events: any[], connection: string) =>
  events
    .filter((event) => event.kind === 'lifecycle' && event.connection === connection)
    .map((event) => `${event.from} → ${event.to}`);

describe('help, version and usage errors', () => {
  it('prints the overview', async () => {
    const overview = await inProcess('--help');
    expect(overview.code).toBe(0);
    expect(overview.stdout).toMatch(/^Usage: switchboard <command>/);
    expect(overview.stdout).toContain('serve <module or config.json>');
    expect(overview.stdout).toContain('call <url> <method> [params]');
  });

  it('prints the page of call, however it is asked for', async () => {
    for (const argv of [
      ['help', 'call'],
      ['call', '--help'],
      ['call', 'http://x/mcp', 'ping', '-h'],
    ]) {
      expect((await inProcess(...argv)).stdout).toMatch(/^Usage: switchboard call \[options\] <url>/);
    }
  });

  it('prints the page of serve, however it is asked for', async () => {
    for (const argv of [
      ['help', 'serve'],
      ['serve', '--help'],
    ]) {
      expect((await inProcess(...argv)).stdout).toMatch(/^Usage: switchboard serve <module \| config\.json>/);
    }
  });

  it('prints the version from package.json', async () => {
    expect(await inProcess('--version')).toMatchObject({ code: 0, stdout: packageVersion, stderr: '' });
    expect((await inProcess('-v')).stdout).toBe(packageVersion);
  });

  it.each([
    [[], 'Missing a command'],
    [['launch'], 'Unknown command "launch"'],
    [['--verbose'], 'Unknown option "--verbose"'],
    [['help', 'launch'], 'No help for "launch"'],
    [['serve'], 'Missing the module to serve'],
    [['serve', 'a.js', 'b.js'], 'Unexpected argument "b.js"'],
    [['serve', 'a.js', '--http', '65536'], '--http needs a port number from 0 to 65535'],
    [['serve', 'a.js', '--http', 'eighty'], '--http needs a port number'],
    [['serve', 'a.js', '--http'], 'Option "--http" needs a value'],
    [['serve', 'a.js', '--host', '0.0.0.0'], '--host only applies with --http'],
    [['serve', 'a.js', '--trace=yes'], 'Option "--trace" takes no value'],
    [['serve', 'a.js', '--trace-file'], 'Option "--trace-file" needs a value'],
    [['call', '--trace-file=', 'http://x/mcp', 'ping'], '--trace-file needs the path of the file to write'],
    [['serve', 'a.js', '--bogus'], 'Unknown option "--bogus" for switchboard serve'],
    [['call'], 'Missing the target'],
    [['call', 'http://127.0.0.1:1/mcp'], 'Missing the method'],
    [['call', 'not a url', 'ping'], '"not a url" is not a URL'],
    [['call', 'ftp://example.com/mcp', 'ping'], 'Unsupported URL scheme "ftp:"'],
    [['call', 'http://x/mcp', 'tools/call', '{"name":'], 'The params are not valid JSON'],
    [['call', 'http://x/mcp', 'tools/call', '[1,2]'], 'The params must be a JSON object'],
    [['call', 'http://x/mcp', 'ping', '{}', 'extra'], 'Unexpected argument "extra"'],
    [['call', '--timeout', 'soon', 'http://x/mcp', 'ping'], '--timeout needs milliseconds'],
    [['call', '--header', 'no colon', 'http://x/mcp', 'ping'], '--header needs "Name: value"'],
    [['call', '--protocol-version', '2099-01-01', 'http://x/mcp', 'ping'], 'Unsupported protocol version "2099-01-01"'],
    [['call', '--all', 'http://x/mcp', 'tools/call'], '--all follows the pages of a list method'],
    [['call', '--era', 'new', 'http://x/mcp', 'ping'], '--era needs one of auto, handshake, modern, got "new"'],
    [
      ['call', '--era', 'handshake', '--protocol-version', '2026-07-28', 'http://x/mcp', 'ping'],
      '--protocol-version 2026-07-28 is a modern-era revision: it cannot be spoken with --era handshake',
    ],
    [
      // 'legacy', the old name of the handshake era, is read as 'handshake' before any check.
      ['call', '--era', 'legacy', '--protocol-version', '2026-07-28', 'http://x/mcp', 'ping'],
      '--protocol-version 2026-07-28 is a modern-era revision: it cannot be spoken with --era handshake',
    ],
    [
      ['call', '--era', 'modern', '--protocol-version', '2025-11-25', 'http://x/mcp', 'ping'],
      '--protocol-version 2025-11-25 is a handshake-era revision: it cannot be spoken with --era modern',
    ],
    [['call', '--verbose=yes', 'http://x/mcp', 'ping'], 'Option "--verbose" takes no value'],
    [['call', 'ping', '--'], 'Missing the command to run after "--"'],
    [['call', '-H', 'A: b', 'ping', '--', 'node', 's.js'], '--header applies to HTTP targets only'],
    [['call', 'http://x/mcp', 'ping', '--', 'node', 's.js'], 'Give either a URL or a command after "--"'],
  ])('%j is a usage error (exit 2)', async (argv, message) => {
    const run = await inProcess(...argv);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`switchboard: ${message}`);
    expect(run.stderr).toContain('Run "switchboard --help" for usage.');
  });
});

describe('the switchboard executable', () => {
  it('prints help', async () => {
    const help = await runSwitchboard('--help');
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: switchboard/);
  });

  it('prints the version', async () => {
    expect(await runSwitchboard('--version')).toMatchObject({ code: 0, stdout: `${packageVersion}\n` });
  });

  it('exits 2 on a usage error, saying what is wrong', async () => {
    const usage = await runSwitchboard('call', 'ftp://example.com', 'ping');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('Unsupported URL scheme');
  });

  it('is built as a node script with a shebang', () => {
    expect(readFileSync(built.cli, 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
  });
});

describe('serve over stdio, called with switchboard call', () => {
  it('serves a module whose default export is a definition', async () => {
    const run = await runSwitchboard('call', 'tools/list', '--', ...switchboard('serve', fixture('paged.mjs')));
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout).tools).toEqual([{ name: 'a', inputSchema: { type: 'object' } }]);
  });

  it('serves a module whose default export is a Server', async () => {
    const params = '{"name":"add","arguments":{"a":2,"b":3}}';
    const run = await runSwitchboard('call', 'tools/call', params, '--', ...switchboard('serve', fixture('adder.mjs')));
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout)).toEqual({ content: [{ type: 'text', text: '5' }] });
  });

  it('serves a default call and a handshake-era call alike, each saying its era with --verbose', async () => {
    const server = switchboard('serve', '--trace', fixture('adder.mjs'));
    const params = '{"name":"add","arguments":{"a":2,"b":3}}';
    const modern = await runSwitchboard('call', '--verbose', 'tools/call', params, '--', ...server);
    const handshake = await runSwitchboard(
      'call',
      '--verbose',
      '--protocol-version',
      '2025-11-25',
      'tools/call',
      params,
      '--',
      ...server,
    );
    for (const run of [modern, handshake]) {
      expect(run.code, run.stderr).toBe(0);
      expect(json(run.stdout)).toEqual({ content: [{ type: 'text', text: '5' }] });
    }
    expect(modern.stderr.split('\n')).toContain('connected: 2026-07-28 (stateless)');
    expect(modern.stderr).toMatch(/ s\d+ +·· uninitialized → modern/);
    expect(handshake.stderr.split('\n')).toContain('connected: 2025-11-25 (handshake)');
    expect(handshake.stderr).toMatch(/ s\d+ +<- request initialize #0 .*"protocolVersion":"2025-11-25"/);
    expect(handshake.stderr).not.toContain('server/discover');
  });

  it('speaks 2026-07-28 only with --protocol-version 2026-07-28 or --era modern', async () => {
    const server = switchboard('serve', '--trace', fixture('paged.mjs'));
    for (const flags of [
      ['--protocol-version', '2026-07-28'],
      ['--era', 'modern'],
    ]) {
      const run = await runSwitchboard('call', '--verbose', ...flags, 'tools/list', '--', ...server);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr.split('\n')).toContain('connected: 2026-07-28 (stateless)');
    }
  });

  // 'legacy': the handshake era's old name, still accepted.
  it.each(['handshake', 'legacy'])('performs the handshake without probing with --era %s', async (era) => {
    const server = switchboard('serve', '--trace', fixture('paged.mjs'));
    const run = await runSwitchboard('call', '--verbose', '--era', era, 'tools/list', '--', ...server);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr.split('\n')).toContain('connected: 2025-11-25 (handshake)');
    expect(run.stderr).not.toContain('server/discover');
  });

  it('says nothing about the era without --verbose', async () => {
    const run = await runSwitchboard('call', 'tools/list', '--', ...switchboard('serve', fixture('paged.mjs')));
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toContain('connected:');
  });

  it("shows the server's log messages and progress on stderr", async () => {
    const run = await runSwitchboard(
      'call',
      'tools/call',
      '{"name":"work"}',
      '--',
      ...switchboard('serve', fixture('adder.mjs')),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout).content).toEqual([{ type: 'text', text: 'worked' }]);
    expect(run.stderr.split('\n')).toEqual(
      expect.arrayContaining(['[info] worker: starting', 'progress 1/2: half way', 'progress 2/2']),
    );
  });

  it('cancels the request on Ctrl-C and exits 130', async () => {
    const server = switchboard('serve', '--trace', fixture('adder.mjs'));
    const call = LongRunning.run(switchboard('call', 'tools/call', '{"name":"wait"}', '--', ...server));
    await call.waitFor('stderr', /waiting to be cancelled/);
    expect(await call.stop('SIGINT')).toEqual({ code: 130, signal: null });
    expect(call.stdout).toBe('');
    expect(call.stderr).toContain('switchboard: Interrupted: tools/call was cancelled');
    // The cancellation names the request in flight, whichever id the era gave it.
    const [, id] = / s\d+ +<- request tools\/call #(\d+)/.exec(call.stderr) ?? [];
    expect(id).toBeDefined();
    expect(call.stderr).toMatch(new RegExp(` s\\d+ +<- notification notifications/cancelled .*"requestId":${id}[,}]`));
    expect(call.stderr).toContain('the wait was cancelled');
  });

  it('keeps stdout for messages: console output of the module goes to stderr', async () => {
    const server = switchboard('serve', fixture('noisy.mjs'));
    const run = await runSwitchboard('call', 'tools/call', '{"name":"shout"}', '--', ...server);
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout).content).toEqual([{ type: 'text', text: 'HEY' }]);
    // The child's stderr reaches ours: the module's logging, top-level and in the handler.
    expect(run.stderr).toContain('noisy module loaded');
    expect(run.stderr).toContain('shouting');
    expect(run.stderr).toContain('still shouting');
  });

  it('traces the server with serve --trace and the client with call --trace, on stderr', async () => {
    const server = switchboard('serve', '--trace', fixture('paged.mjs'));
    const run = await runSwitchboard('call', '--trace', 'tools/list', '--', ...server);
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout).tools).toHaveLength(1);
    const lines = run.stderr.split('\n');
    const client = lines.filter((line) => / c\d+ /.test(line));
    const served = lines.filter((line) => / s\d+ /.test(line));
    // 2026-07-28: the probe (before the client's connection exists, so only the server traces it), then the call.
    expect(client.some((line) => line.includes('-> request tools/list #0'))).toBe(true);
    expect(client.some((line) => /<- result tools\/list #0 \d+ ms/.test(line))).toBe(true);
    expect(client.some((line) => line.includes('modern → closing'))).toBe(true);
    expect(served.some((line) => line.includes('<- request server/discover'))).toBe(true);
    expect(served.some((line) => line.includes('uninitialized → modern'))).toBe(true);
    expect(served.some((line) => line.includes('<- request tools/list #0'))).toBe(true);
    expect(served.some((line) => /-> result tools\/list #0 \d+ ms .*"tools":\[\{"name":"a"/.test(line))).toBe(true);
    expect(served.some((line) => line.includes('<- request initialize'))).toBe(false);
  });

  it('traces the handshake era the same way when call --protocol-version asks for it', async () => {
    const server = switchboard('serve', '--trace', fixture('paged.mjs'));
    const run = await runSwitchboard(
      'call',
      '--trace',
      '--protocol-version',
      '2025-11-25',
      'tools/list',
      '--',
      ...server,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout).tools).toHaveLength(1);
    const lines = run.stderr.split('\n');
    const client = lines.filter((line) => / c\d+ /.test(line));
    const served = lines.filter((line) => / s\d+ /.test(line));
    expect(served.some((line) => line.includes('server/discover'))).toBe(false);
    expect(client.some((line) => line.includes('-> request initialize #0'))).toBe(true);
    expect(client.some((line) => /<- result tools\/list #1 \d+ ms/.test(line))).toBe(true);
    expect(client.some((line) => line.includes('ready → closing'))).toBe(true);
    expect(served.some((line) => line.includes('<- request initialize #0'))).toBe(true);
    expect(served.some((line) => line.includes('<- notification notifications/initialized'))).toBe(true);
    expect(served.some((line) => /-> result tools\/list #1 \d+ ms/.test(line))).toBe(true);
  });

  it('writes the trace of serve and of call as NDJSON with --trace-file, flushed when each ends', async () => {
    const served = fixture('serve-trace.ndjson');
    const called = fixture('call-trace.ndjson');
    const server = switchboard('serve', '--trace-file', served, fixture('paged.mjs'));
    const run = await runSwitchboard('call', '--trace-file', called, 'tools/list', '--', ...server);
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout).tools).toHaveLength(1);
    // Nothing on stderr: the trace went to the files only.
    expect(run.stderr).toBe('');

    // Traces hold tool arguments and results: for the owner's eyes only.
    for (const file of [served, called]) expect(statSync(file).mode & 0o777).toBe(0o600);
    // The call has ended, so has the server it ran: both files are complete.
    const serverEvents = traceFile(served);
    expect(hops(serverEvents)).toEqual([
      'in request server/discover',
      'out result server/discover',
      'in request tools/list',
      'out result tools/list',
    ]);
    const [connection] = new Set(serverEvents.map((event) => event.connection));
    expect(serverEvents.every((event) => event.connection === connection && event.role === 'server')).toBe(true);
    // Named by the server (its `name`), so that several servers in one trace read apart.
    expect(new Set(serverEvents.map((event) => event.name))).toEqual(new Set(['paged']));
    expect(changes(serverEvents, connection)).toEqual(['uninitialized → modern', 'modern → closed']);
    expect(serverEvents.at(-1)).toMatchObject({ kind: 'lifecycle', to: 'closed', quitKind: 'transport-closed' });
    const listed = serverEvents.find((event) => event.kind === 'result' && event.id === 0);
    expect(listed).toMatchObject({ message: { jsonrpc: '2.0', id: 0, result: { tools: [{ name: 'a' }] } } });
    expect(typeof listed.latencyMs).toBe('number');

    const clientEvents = traceFile(called);
    // The era probe first: its request, its answer, then (below) its verdict.
    expect(hops(clientEvents)).toEqual([
      'out request server/discover',
      'in result server/discover',
      'out request tools/list',
      'in result tools/list',
    ]);
    const received = clientEvents.find((event) => event.kind === 'result' && event.method === 'tools/list');
    expect(received).toMatchObject({ id: 0, message: { result: { tools: [{ name: 'a' }] } } });
    expect(typeof received.latencyMs).toBe('number');
    // The runtime's trace also shows the stdio child's lifecycle actor: pick the client connection's changes.
    const clientConnection = clientEvents.find((event) => event.role === 'client').connection;
    // Named by its target: every run of the command reads the same.
    const ownEvents = clientEvents.filter((event) => event.connection === clientConnection);
    expect(new Set(ownEvents.map((event) => event.name))).toEqual(new Set([server.join(' ')]));
    expect(changes(clientEvents, clientConnection)).toEqual([
      'probing → modern',
      'uninitialized → modern',
      'modern → closing',
      'closing → closed',
    ]);
  });

  it('exits 1 before connecting when the trace file cannot be written', async () => {
    const path = join(dir, 'no-such-directory', 'trace.ndjson');
    const run = await inProcess('call', '--trace-file', path, 'http://127.0.0.1:1/mcp', 'ping');
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`^switchboard: Cannot write the trace file ${path}: ENOENT`));
  });

  it('prints one page of a list as the server sent it', async () => {
    const server = switchboard('serve', fixture('paged.mjs'));
    const page = await runSwitchboard('call', 'tools/list', '--', ...server);
    const first = json(page.stdout);
    expect(typeof first.nextCursor).toBe('string');
    const cursor = JSON.stringify({ cursor: first.nextCursor });
    const next = await runSwitchboard('call', 'tools/list', cursor, '--', ...server);
    expect(json(next.stdout).tools.map((tool: { name: string }) => tool.name)).toEqual(['b']);
  });

  it('prints every page of a list with --all', async () => {
    const server = switchboard('serve', fixture('paged.mjs'));
    const all = await runSwitchboard('call', '--all', 'tools/list', '--', ...server);
    expect(all.code, all.stderr).toBe(0);
    const tools = ['a', 'b', 'c'].map((name) => ({ name, inputSchema: { type: 'object' } }));
    expect(json(all.stdout)).toEqual({ tools });
  });

  it('asks for the revision given with --protocol-version, and sends notifications', async () => {
    const run = await runSwitchboard(
      'call',
      '--trace',
      '--protocol-version',
      '2024-11-05',
      'notifications/cancelled',
      '{"requestId":99,"reason":"changed my mind"}',
      '--',
      ...switchboard('serve', fixture('paged.mjs')),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/-> request initialize #0 .*"protocolVersion":"2024-11-05"/);
    expect(run.stderr).toMatch(/<- result initialize #0 .*"protocolVersion":"2024-11-05"/);
    expect(run.stderr).toContain('-> notification notifications/cancelled');
  });

  it('prints a JSON-RPC error from the server on stderr and exits 1', async () => {
    const server = switchboard('serve', fixture('paged.mjs'));
    const run = await runSwitchboard('call', 'tools/call', '{"name":"nope"}', '--', ...server);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^switchboard: tools\/call: the server answered with error -32602: .*nope/m);
  });

  it('refuses locally a method the server did not declare', async () => {
    const run = await runSwitchboard('call', 'prompts/list', '--', ...switchboard('serve', fixture('paged.mjs')));
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^switchboard: prompts\/list: .*prompts/m);
  });
});

describe('TypeScript modules', () => {
  it('are served when the CLI runs from source through tsx (npx tsx lib/cli/main.ts)', async () => {
    const params = '{"name":"add","arguments":{"a":2,"b":3}}';
    const server = cliCommand('serve', example('tools-server.ts'));
    const run = await runSwitchboard('call', 'tools/call', params, '--', ...server);
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout)).toEqual({ content: [{ type: 'text', text: '{"sum":5}' }], structuredContent: { sum: 5 } });
  });

  it('are served (and traced) by the built CLI run through tsx', async () => {
    // The module's Server comes from the sources, another copy than the built CLI's: its connections join
    // that copy's runtime, so --trace-file follows each of them on its own.
    const trace = fixture('notes-trace.ndjson');
    const server = tsxCommand(built.cli, 'serve', '--trace-file', trace, example('notes-server.ts'));
    const run = await runSwitchboard('call', 'resources/read', '{"uri":"notes://index"}', '--', ...server);
    expect(run.code, run.stderr).toBe(0);
    const [contents] = json(run.stdout).contents;
    expect(contents).toMatchObject({ uri: 'notes://index', mimeType: 'text/markdown' });
    expect(contents.text).toContain('[Groceries](notes://groceries)');
    const events = traceFile(trace);
    const read = events.find((event) => event.kind === 'request' && event.method === 'resources/read');
    expect(read).toBeDefined();
    const answer = events.find((event) => event.kind === 'result' && event.id === read.id);
    expect(answer).toMatchObject({ connection: read.connection, direction: 'out' });
    expect(answer.message.result.contents[0].uri).toBe('notes://index');
    // Closed by stdin's end ('modern → closed'). On a machine loaded enough, the server (compiled by tsx as
    // it starts) may miss the era probe's 3 s and be spoken to in the handshake era, or miss the client's 2 s
    // grace after stdin's end and be stopped by SIGTERM ('… → closing → closed'): the trace ends closed.
    expect(changes(events, read.connection).at(-1)).toMatch(/→ closed$/);
  });

  it('make the built CLI under plain node ask for tsx (exit 1)', async () => {
    // Node before 22.18 refuses the .ts file, later ones its extensionless imports: the advice is the same.
    const run = await runSwitchboard('serve', 'examples/tools-server.ts');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('switchboard: Cannot load "examples/tools-server.ts": ');
    expect(run.stderr).toContain(
      `TypeScript modules need tsx: node --import tsx ${built.cli} serve examples/tools-server.ts`,
    );
  });
});

describe('serve a hub config (the mcpServers shape)', () => {
  it('serves every server the file lists behind one, named by their prefixes', async () => {
    const config = {
      mcpServers: {
        paged: { command: process.execPath, args: [built.cli, 'serve', fixture('paged.mjs')], prefix: 'p' },
        adder: { command: process.execPath, args: [built.cli, 'serve', fixture('adder.mjs')] },
      },
    };
    writeFileSync(fixture('hub.json'), JSON.stringify(config));
    const served = switchboard('serve', fixture('hub.json'));

    const list = await runSwitchboard('call', 'tools/list', '{}', '--all', '--', ...served);
    expect(list.code, list.stderr).toBe(0);
    const names = (json(list.stdout).tools as { name: string }[]).map((tool) => tool.name).sort();
    expect(names).toEqual(['add', 'p__a', 'p__b', 'p__c', 'wait', 'work']);

    const params = '{"name":"add","arguments":{"a":20,"b":22}}';
    const trace = fixture('hub-trace.ndjson');
    const tracedHub = switchboard('serve', '--trace-file', trace, fixture('hub.json'));
    const call = await runSwitchboard('call', 'tools/call', params, '--', ...tracedHub);
    expect(call.code, call.stderr).toBe(0);
    expect(json(call.stdout)).toEqual({ content: [{ type: 'text', text: '42' }] });

    // The trace has the hub's downstream side, each upstream's connection and its supervision.
    const events = traceFile(trace);
    // The downstream call is a 2026-07-28 request: its answer is traced by its id.
    const downstream = events.find((event) => event.role === 'server' && event.method === 'tools/call');
    const answersDownstream = (event: any) =>
      event.connection === downstream.connection && event.kind === 'result' && event.id === downstream.id;
    const forwarded = events
      .filter((event) => event.method === 'tools/call' || answersDownstream(event))
      .map((event) => ({
        upstream: event.upstream,
        role: event.role,
        hop: `${event.direction} ${event.kind}`,
      }));
    expect(forwarded).toEqual([
      { upstream: undefined, role: 'server', hop: 'in request' },
      { upstream: 'adder', role: 'client', hop: 'out request' },
      { upstream: 'adder', role: 'client', hop: 'in result' },
      { upstream: undefined, role: 'server', hop: 'out result' },
    ]);
    for (const name of ['paged', 'adder']) {
      // The hub probes its upstreams: `switchboard serve` speaks 2026-07-28, so no handshake.
      const upstreamClient = events.find((event) => event.upstream === name && event.role === 'client');
      expect(changes(events, upstreamClient.connection)).toContain('uninitialized → modern');
      expect(events.some((event) => event.upstream === name && event.method === 'initialize')).toBe(false);
      expect(changes(events, `upstream:${name}`)).toEqual(
        expect.arrayContaining(['idle → connecting', 'connecting → ready', 'ready → disposed']),
      );
    }
  });

  it("serve --http takes a hub config's switchboard.http limits and allow-lists; flags win over them", async () => {
    const config = {
      mcpServers: { adder: { command: process.execPath, args: [built.cli, 'serve', fixture('adder.mjs')] } },
      switchboard: { http: { maxSessionsPerClient: 1, allowedHosts: ['mcp.example'] } },
    };
    writeFileSync(fixture('http-hub.json'), JSON.stringify(config));
    const initialize = async (url: string, host?: string) => {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          ...(host && { host }),
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        }),
      });
      await response.arrayBuffer();
      return { status: response.status, session: response.headers.get('mcp-session-id') };
    };
    const ping = async (url: string, session: string) => {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          'mcp-session-id': session,
          'mcp-protocol-version': '2025-11-25',
        },
        body: '{"jsonrpc":"2.0","id":2,"method":"ping"}',
      });
      await response.arrayBuffer();
      return response.status;
    };
    const serveWith = async (...flags: string[]) => {
      const { process: server, match } = await LongRunning.start(
        switchboard('serve', fixture('http-hub.json'), '--http', '0', ...flags),
        /over Streamable HTTP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
      );
      return { server, url: match[1]! };
    };

    const { server, url } = await serveWith();
    const first = await initialize(url);
    expect(first.status).toBe(200);
    expect((await initialize(url)).status).toBe(200);
    // A quota of one session per client: the second evicted the first (idle), which is gone now.
    expect(await ping(url, first.session!)).toBe(404);
    // fetch cannot set Host: the allow-list is checked through node:http below.
    const port = Number(new URL(url).port);
    const statusFor = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const request = http.request(
          {
            host: '127.0.0.1',
            port,
            path: '/mcp',
            method: 'POST',
            headers: { host, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          },
          (response) => {
            response.resume();
            resolve(response.statusCode!);
          },
        );
        request.on('error', reject);
        request.end('{"jsonrpc":"2.0","id":1,"method":"ping"}');
      });
    expect(await statusFor('evil.example')).toBe(403);
    expect(await statusFor('mcp.example')).not.toBe(403);
    expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });

    const flagged = await serveWith('--max-sessions-per-client', '2');
    const kept = await initialize(flagged.url);
    expect((await initialize(flagged.url)).status).toBe(200);
    expect(await ping(flagged.url, kept.session!)).toBe(200);
    expect(await flagged.server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it('serve --http --host 127.0.0.2 accepts requests to the URL it prints (Host: 127.0.0.2:<port>)', async () => {
    const { process: server, match } = await LongRunning.start(
      switchboard('serve', fixture('adder.mjs'), '--http', '0', '--host', '127.0.0.2'),
      /over Streamable HTTP at (http:\/\/127\.0\.0\.2:\d+\/mcp)/,
    );
    // fetch sends Host: 127.0.0.2:<port>, the printed address.
    const response = await fetch(match[1]!, {
      method: 'POST',
      headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('"serverInfo"');
    expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it('exits 1 with every mistake of a bad config named', async () => {
    writeFileSync(fixture('bad-hub.json'), JSON.stringify({ mcpServers: { broken: { args: [] }, worse: 3 } }));
    const run = await runSwitchboard('serve', fixture('bad-hub.json'));
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('Cannot serve');
    expect(run.stderr).toContain('broken');
    expect(run.stderr).toContain('worse');
  });
});

describe('serve errors', () => {
  it.each([
    ['missing.mjs', /Cannot find the module ".*missing\.mjs"/],
    [
      'bad-syntax.mjs',
      /Cannot load ".*bad-syntax\.mjs": Unexpected token[^]*bad-syntax\.mjs:1\n {2}export default \{\{/,
    ],
    ['throws.mjs', /Cannot load ".*throws\.mjs": the module refuses to load\n {2}at file:.*throws\.mjs:1/],
    ['no-default.mjs', /".*no-default\.mjs" has no default export: export a server definition/],
    ['number.mjs', /The default export of ".*number\.mjs" is number, not a server/],
  ])('a bad module (%s) exits 1 with a clear message', async (name, message) => {
    const run = await runSwitchboard('serve', fixture(name));
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message);
  });

  it('exits 1 when the port is taken', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as AddressInfo;
      const run = await runSwitchboard('serve', fixture('paged.mjs'), '--http', String(port));
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`switchboard: Cannot listen on 127.0.0.1:${port}: the port is in use`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});

describe('call errors', () => {
  it('exits 1 when the command cannot start', async () => {
    const run = await runSwitchboard('call', 'ping', '--', join(dir, 'no-such-server'));
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^switchboard: Could not start ".*no-such-server": spawn .*ENOENT/m);
  });

  it('exits 1 when the server process ends before answering', async () => {
    const run = await runSwitchboard('call', 'ping', '--', process.execPath, '-e', 'process.exit(3)');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('the process exited with code 3 before answering');
  });

  it('exits 1 when the server never answers', async () => {
    // Reads stdin and says nothing; ends when stdin does, the close ladder's first step.
    const silent = [process.execPath, '-e', 'process.stdin.resume()'];
    const run = await runSwitchboard('call', '--timeout', '300', 'ping', '--', ...silent);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /^switchboard: Could not connect to .*: initialize timed out: no response within 300 ms/m,
    );
  });
});

describe('HTTP', () => {
  const listeners: HttpServer[] = [];
  afterEach(async () => {
    for (const listener of listeners.splice(0)) await closeListener(listener);
  });

  function closeListener(listener: HttpServer): Promise<unknown> {
    listener.closeAllConnections();
    return new Promise((resolve) => listener.close(resolve));
  }

  /** Our server in this process: records each request's headers, checks every message both ways. */
  async function serveHere() {
    const echo = tool('echo', (args) => ({ content: [{ type: 'text', text: JSON.stringify(args) }] }));
    const server = new Server(defineServer({ name: 'here', version: '1', tools: [echo] }));
    const headers: IncomingHttpHeaders[] = [];
    const inboundProblems: string[] = [];
    // 2026-07-28 requests have no connection: their answers are checked by the exchange, their requests here.
    const outboundProblems = validateEveryModernExchange(server);
    const serveModern = server.serveModern.bind(server);
    server.serveModern = (request, reply, requestHeaders) => {
      inboundProblems.push(...modernProblemsOf(request.request as unknown as Record<string, unknown>));
      serveModern(request, reply, requestHeaders);
    };
    const checked = new Proxy(server, {
      get: (target, key) => {
        if (key !== 'connect') return Reflect.get(target, key, target);
        return (...args: Parameters<Server['connect']>) => {
          const connection = target.connect(...args);
          validateEmitted(connection);
          connection.trace$.subscribe((event) => {
            if (event.direction !== 'in' || event.message === undefined) return;
            const version = (connection.protocolVersion ?? '2025-11-25') as Parameters<typeof problemsOf>[1];
            inboundProblems.push(...problemsOf(event.message as Record<string, any>, version, event.method));
          });
          return connection;
        };
      },
    });
    const handler = createMcpHttpHandler(checked);
    const listener = createServer((request, response) => {
      headers.push(request.headers);
      handler(request, response);
    });
    listeners.push(listener);
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/mcp`;
    return { url, headers, inboundProblems, outboundProblems, listener, close: () => handler.close() };
  }

  it('calls a Streamable HTTP server, with the given headers on every request', async () => {
    const here = await serveHere();
    const run = await runSwitchboard(
      'call',
      '-H',
      'Authorization: Bearer s3cret',
      '--header',
      'X-Trace-Id:  42 ',
      here.url,
      'tools/call',
      '{"name":"echo","arguments":{"n":1}}',
    );
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout).content).toEqual([{ type: 'text', text: '{"n":1}' }]);
    // 2026-07-28: the probe, then the call, each a request of its own.
    expect(here.headers.map((headers) => headers['mcp-method'])).toEqual(['server/discover', 'tools/call']);
    for (const headers of here.headers) {
      expect(headers.authorization).toBe('Bearer s3cret');
      expect(headers['x-trace-id']).toBe('42');
    }
    expect(here.inboundProblems).toEqual([]);
    expect(here.outboundProblems).toEqual([]);
    await here.close();
  });

  it('sends the given headers on every request of the handshake era too', async () => {
    const here = await serveHere();
    const run = await runSwitchboard(
      'call',
      '--protocol-version',
      '2025-11-25',
      '-H',
      'Authorization: Bearer s3cret',
      here.url,
      'tools/call',
      '{"name":"echo","arguments":{"n":1}}',
    );
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout).content).toEqual([{ type: 'text', text: '{"n":1}' }]);
    expect(here.headers.length).toBeGreaterThanOrEqual(3); // initialize, initialized, the call
    expect(here.headers.some((headers) => headers['mcp-method'] === 'server/discover')).toBe(false);
    for (const headers of here.headers) expect(headers.authorization).toBe('Bearer s3cret');
    expect(here.inboundProblems).toEqual([]);
    await here.close();
  });

  it('exits 1 when nothing listens at the URL', async () => {
    const here = await serveHere();
    await here.close();
    await closeListener(listeners.pop()!);
    const run = await runSwitchboard('call', here.url, 'ping');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`switchboard: Could not connect to ${here.url}`);
  });

  it('serve --http: serves, traces each session on stderr, stops on SIGTERM', async () => {
    const { process: server, match } = await LongRunning.start(
      switchboard('serve', fixture('adder.mjs'), '--http', '0', '--trace'),
      /over Streamable HTTP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
    );
    const url = match[1]!;
    expect((await server.waitFor('stdout', /try: switchboard call (\S+) tools\/list/))[1]).toBe(url);
    const run = await runSwitchboard('call', url, 'tools/call', '{"name":"add","arguments":{"a":1,"b":41}}');
    expect(run.code, run.stderr).toBe(0);
    expect(json(run.stdout).content).toEqual([{ type: 'text', text: '42' }]);
    // A 2026-07-28 request has no session: each is traced as an exchange of its own, with its latency.
    await server.waitFor('stderr', / x\d+ +-> result tools\/call #0 \d+ ms/);
    expect(server.stderr).toMatch(/ x\d+ +<- request server\/discover /);
    expect(server.stderr).not.toMatch(/ s\d+ /);
    expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });

  it('serve --http: serves a default call and a handshake-era call alike, each saying its era with --verbose', async () => {
    const { process: server, match } = await LongRunning.start(
      switchboard('serve', fixture('adder.mjs'), '--http', '0', '--trace'),
      /over Streamable HTTP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/,
    );
    const params = '{"name":"add","arguments":{"a":1,"b":41}}';
    const modern = await runSwitchboard('call', '--verbose', match[1]!, 'tools/call', params);
    const handshake = await runSwitchboard(
      'call',
      '--verbose',
      '--protocol-version',
      '2025-11-25',
      match[1]!,
      'tools/call',
      params,
    );
    for (const run of [modern, handshake]) {
      expect(run.code, run.stderr).toBe(0);
      expect(json(run.stdout).content).toEqual([{ type: 'text', text: '42' }]);
    }
    expect(modern.stderr.split('\n')).toContain('connected: 2026-07-28 (stateless)');
    expect(handshake.stderr.split('\n')).toContain('connected: 2025-11-25 (handshake)');
    // The handshake-era call has its session, traced as a connection, with the latency of its answer.
    await server.waitFor('stderr', / s\d+ +-> result tools\/call #1 \d+ ms/);
    expect(server.stderr).toMatch(/ s\d+ +<- request initialize #0 .*"protocolVersion":"2025-11-25"/);
    expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});
