/**
 * The demo as a new user meets it: `npm start` (here its underlying command, `tsx examples/demo.ts`, on a
 * free port), then the lines it prints, run as printed: `switchboard call` over HTTP, the MCP inspector,
 * and the `mcpServers` entries over stdio, from another working directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, LongRunning, ROOT, runToEnd, tsxCommand, type Finished } from '../helpers/cli-process';

const INSPECTOR_BIN = join(ROOT, 'node_modules/.bin/mcp-inspector-cli');
// inspector-cli 1.0.3 finds its own package.json relative to the working directory (see
// test/interop/peer-inspector.test.ts).
const INSPECTOR_CWD = join(ROOT, 'node_modules/@modelcontextprotocol/inspector-cli/build');

let dir: string;
let cli: string;
let demo: LongRunning;
let origin: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'switchboard-demo-'));
  ({ cli } = await buildCli(join(dir, 'dist')));
  const started = await LongRunning.start(
    tsxCommand(join(ROOT, 'examples/demo.ts'), '--port', '0'),
    /mcp-switchboard demo on (http:\/\/127\.0\.0\.1:\d+)/,
  );
  demo = started.process;
  origin = started.match[1]!;
  await demo.waitFor('stdout', /Ctrl-C stops the demo/);
});

afterAll(async () => {
  await demo?.stop('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const json = (run: Finished) => {
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
};

/** The `switchboard call` lines the demo printed, with how it said to run switchboard. */
function printedCalls(): { prefix: string; line: string }[] {
  return [...demo.stdout.matchAll(/^ {2}(npx switchboard|npx tsx lib\/cli\/main\.ts) (call .*)$/gm)].map((match) => ({
    prefix: match[1]!,
    line: match[2]!,
  }));
}

/** Runs a printed line through the shell, as a user pasting it would, with this build of switchboard. */
function runPrinted(line: string): Promise<Finished> {
  return runToEnd(['/bin/sh', '-c', `"${process.execPath}" "${cli}" ${line}`]);
}

describe('npm start', () => {
  it('serves the demo on 127.0.0.1 and prints how to connect', () => {
    expect(demo.stdout).toContain(`notes  ${origin}/notes/mcp`);
    expect(demo.stdout).toContain(`tools  ${origin}/tools/mcp`);
    expect(demo.stdout).toContain(
      `npx @modelcontextprotocol/inspector --cli ${origin}/tools/mcp --transport http --method tools/list`,
    );
    expect(printedCalls().length).toBeGreaterThanOrEqual(5);
  });

  it('answers the printed switchboard call lines over HTTP, tracing each message on stderr', async () => {
    const calls = printedCalls().filter(({ line }) => line.includes(origin));
    const results: { line: string; result: any }[] = [];
    for (const { line } of calls) results.push({ line, result: json(await runPrinted(line)) });
    // Each printed line is `call <url> <method> [params]`.
    const byMethod = (method: string) =>
      results.filter(({ line }) => line.split(' ')[2] === method).map(({ result }) => result);

    expect(byMethod('tools/list')[0].tools.map((tool: { name: string }) => tool.name)).toEqual(['add', 'countdown']);
    expect(byMethod('tools/call').map((result) => result.structuredContent ?? result.content[0].text)).toEqual([
      { sum: 5 },
      'Added Hello',
    ]);
    expect(byMethod('resources/read')[0].contents[0].text).toContain('[Groceries](notes://groceries)');
    expect(byMethod('prompts/get')[0].messages).toHaveLength(2);

    // The note added above is there for the next client, and the demo traced every session.
    const index = json(await runPrinted(`call ${origin}/notes/mcp resources/read '{"uri":"notes://index"}'`));
    expect(index.contents[0].text).toContain('[Hello](notes://hello)');
    // Each call is a 2026-07-28 request, traced as an exchange of its own (x1, x2, ...), probe first.
    await demo.waitFor('stderr', / x\d+ +-> result resources\/read #0 \d+ ms/);
    expect(demo.stderr).toMatch(/ x\d+ +<- request server\/discover /);
    // Each request names its server: the two read apart.
    expect(demo.stderr).toMatch(/ x\d+ +<- request tools\/call #0 \(demo-notes\) .*"name":"add_note"/);
    expect(demo.stderr).toMatch(/ x\d+ +<- request tools\/call #0 \(demo-tools\) .*"name":"add"/);
  });

  it("shows the countdown's progress and log messages on the caller's stderr", async () => {
    const run = await runPrinted(`call ${origin}/tools/mcp tools/call '{"name":"countdown","arguments":{"from":2}}'`);
    expect(json(run).content).toEqual([{ type: 'text', text: 'liftoff' }]);
    expect(run.stderr.split('\n')).toEqual(
      expect.arrayContaining(['[info] countdown: 1 to go', 'progress 1/2: 1 to go', 'progress 2/2: 0 to go']),
    );
    await demo.waitFor('stderr', / x\d+ +-> notification notifications\/message .*"0 to go"/);
  });

  it('serves the MCP inspector with the printed command', async () => {
    const url = `${origin}/tools/mcp`;
    const run = await runToEnd([INSPECTOR_BIN, '--cli', url, '--transport', 'http', '--method', 'tools/list'], {
      cwd: INSPECTOR_CWD,
    });
    expect(json(run).tools.map((tool: { name: string }) => tool.name)).toEqual(['add', 'countdown']);
  });

  it('prints mcpServers entries that run each server over stdio from any directory', async () => {
    const snippet = /^\{\n {2}"mcpServers"[^]*?^\}$/m.exec(demo.stdout);
    expect(snippet).not.toBeNull();
    const servers = JSON.parse(snippet![0]).mcpServers as Record<string, { command: string; args: string[] }>;
    expect(Object.keys(servers)).toEqual(['notes', 'tools', 'clock']);
    const listed = Object.fromEntries(
      await Promise.all(
        Object.entries(servers).map(async ([name, { command, args }]) => {
          const run = await runToEnd([process.execPath, cli, 'call', 'tools/list', '--', command, ...args], {
            cwd: dir,
          });
          return [name, json(run).tools.map((tool: { name: string }) => tool.name)] as const;
        }),
      ),
    );
    expect(listed).toEqual({ notes: ['add_note'], tools: ['add', 'countdown'], clock: ['now'] });
  });

  it('runs the clock as a stdio child with the printed line', async () => {
    const [clock] = printedCalls().filter(({ line }) => line.includes('-- npx tsx examples/clock-server.ts'));
    expect(clock).toBeDefined();
    const result = json(await runPrinted(clock!.line));
    expect(result.structuredContent).toMatchObject({ timeZone: 'Asia/Tokyo', iso: expect.any(String) });
  });

  it('stops on Ctrl-C', async () => {
    expect(await demo.stop('SIGINT')).toEqual({ code: 0, signal: null });
  });
});
