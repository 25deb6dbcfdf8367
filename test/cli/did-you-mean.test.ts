/**
 * "Did you mean": a mistyped option, command or help topic (parsed in process), and a tool the server does not
 * have (real `switchboard call` runs against `switchboard serve`, a hub's prefixed names included, both eras).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run';
import { buildCli, freshConfigDirPerTest, runToEnd } from '../helpers/cli-process';

async function inProcess(...argv: string[]) {
  const err: string[] = [];
  const code = await runCli(argv, { out: () => undefined, err: (line) => err.push(line) });
  return { code, stderr: err.join('\n') };
}

describe('a mistyped word on the command line', () => {
  it.each([
    [['call', '--trce', 'http://x/mcp', 'ping'], 'Unknown option "--trce" for switchboard call: did you mean --trace?'],
    [
      ['call', '--Verbose', 'http://x/mcp', 'ping'],
      'Unknown option "--Verbose" for switchboard call: did you mean --verbose?',
    ],
    [
      ['call', '--anwser', '{}', 'http://x/mcp', 'ping'],
      'Unknown option "--anwser" for switchboard call: did you mean --answer?',
    ],
    [['serve', 'a.js', '--htp', '0'], 'Unknown option "--htp" for switchboard serve: did you mean --http?'],
    [
      ['serve', 'a.js', '--tls-crt', 'c.pem'],
      'Unknown option "--tls-crt" for switchboard serve: did you mean --tls-cert?',
    ],
    [['login', '--scop', 'a', 'http://x/mcp'], 'Unknown option "--scop" for switchboard login: did you mean --scope?'],
    [['cal', 'http://x/mcp', 'ping'], 'Unknown command "cal": did you mean call?'],
    [['--hlep'], 'Unknown option "--hlep": did you mean --help?'],
    [['help', 'sevre'], 'No help for "sevre": did you mean serve?'],
  ])('%j: exit 2, with the word meant', async (argv, message) => {
    const run = await inProcess(...argv);
    expect(run.code).toBe(2);
    expect(run.stderr.split('\n')[0]).toBe(`switchboard: ${message}`);
  });

  it.each([
    [['call', '--frobnicate', 'http://x/mcp', 'ping'], 'Unknown option "--frobnicate" for switchboard call'],
    [['call', '-x', 'http://x/mcp', 'ping'], 'Unknown option "-x" for switchboard call'],
    [['launch'], 'Unknown command "launch": use serve, call, task, trace, login or logout'],
  ])('%j: exit 2, and no guess when nothing is close', async (argv, message) => {
    const run = await inProcess(...argv);
    expect(run.code).toBe(2);
    expect(run.stderr.split('\n')[0]).toBe(`switchboard: ${message}`);
  });
});

let dir: string;
let built: { cli: string; index: string };
const switchboard = (...args: string[]) => [process.execPath, built.cli, ...args];
const runSwitchboard = (...args: string[]) => runToEnd(switchboard(...args), { timeoutMs: 30_000 });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'switchboard-hint-'));
  built = await buildCli(join(dir, 'dist'));
  writeFileSync(
    join(dir, 'files.mjs'),
    `import { defineServer } from './dist/index.mjs';
const tool = (name) => ({ name, inputSchema: { type: 'object' }, handler: () => ({ content: [] }) });
export default defineServer({ name: 'files', version: '1', tools: ['read', 'write', 'list'].map(tool) });`,
  );
  const upstream = (prefix: string) => ({
    command: process.execPath,
    args: [built.cli, 'serve', join(dir, 'files.mjs')],
    prefix,
  });
  writeFileSync(join(dir, 'hub.json'), JSON.stringify({ mcpServers: { fs: upstream('fs'), disk: upstream('disk') } }));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
freshConfigDirPerTest(() => dir);

const callTool = (era: readonly string[], served: string, name: string) =>
  runSwitchboard(
    'call',
    ...era,
    'tools/call',
    JSON.stringify({ name }),
    '--',
    ...switchboard('serve', join(dir, served)),
  );

describe.each([
  ['the stateless era', []],
  ['the handshake era', ['--era', 'handshake']],
] as const)('a tool the server does not have, in %s', (_name, era) => {
  it('gets the closest name it lists', async () => {
    const run = await callTool(era, 'files.mjs', 'raed');
    expect(run.code).toBe(1);
    expect(run.stderr.split('\n')).toEqual(
      expect.arrayContaining([
        'switchboard: tools/call: the server answered with error -32602: Unknown tool: raed',
        '  no tool is named "raed": did you mean "read"?',
      ]),
    );
  });

  it("gets the closest of a hub's prefixed names", async () => {
    const run = await callTool(era, 'hub.json', 'fs__raed');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('\n  no tool is named "fs__raed": did you mean "fs__read"?');
  });

  it('gets the prefixed names that end with a name given without its prefix', async () => {
    const run = await callTool(era, 'hub.json', 'write');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('\n  no tool is named "write": did you mean one of "disk__write", "fs__write"?');
  });

  it('is told how many tools there are when none is close', async () => {
    const run = await callTool(era, 'files.mjs', 'frobnicate');
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('\n  no tool is named "frobnicate" (the server lists 3 tools: see tools/list)');
  });
});
