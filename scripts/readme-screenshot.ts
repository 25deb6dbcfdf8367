/**
 * The README's picture of the trace viewer (docs/images/trace-viewer.png), made from the demo's own trace:
 * `npx tsx scripts/readme-screenshot.ts`. It starts the demo (examples/demo.ts) on a free port with
 * `--trace-file`, makes the calls the demo prints with the CLI (a stateless call, a countdown with progress in
 * the handshake era, a resource read, an unknown tool), stops the demo, writes the page with
 * `switchboard trace view`, and photographs it in Debian's Chromium with the countdown's row selected.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUT = join(ROOT, 'docs/images/trace-viewer.png');
const tsx = (file: string, ...args: string[]) => [process.execPath, '--import', 'tsx', join(ROOT, file), ...args];

/** Runs `command` to its end; rejects when it fails. */
function run(command: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk));
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${command.join(' ')}: ${code}\n${err}`)),
    );
  });
}

/** Starts the demo and resolves with its origin once it has printed how to connect. */
function startDemo(traceFile: string): Promise<{ demo: ChildProcess; origin: string }> {
  const demo = spawn(process.execPath, tsx('examples/demo.ts', '--port', '0', '--trace-file', traceFile).slice(1), {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    demo.stdout!.on('data', (chunk: Buffer) => {
      out += chunk;
      const origin = /mcp-switchboard demo on (http:\/\/[^:]+:\d+)/.exec(out)?.[1];
      if (origin && out.includes('Ctrl-C stops the demo')) resolve({ demo, origin });
    });
    demo.on('exit', (code) => reject(new Error(`The demo exited with ${code} before it was ready`)));
  });
}

const dir = mkdtempSync(join(tmpdir(), 'switchboard-screenshot-'));
try {
  const traceFile = join(dir, 'demo.ndjson');
  const { demo, origin } = await startDemo(traceFile);
  const call = (...args: string[]) => run(tsx('lib/cli/main.ts', 'call', ...args));
  await call(`${origin}/tools/mcp`, 'tools/call', '{"name":"add","arguments":{"a":2,"b":3}}');
  await call('--era', 'handshake', `${origin}/tools/mcp`, 'tools/call', '{"name":"countdown","arguments":{"from":3}}');
  await call(`${origin}/notes/mcp`, 'resources/read', '{"uri":"notes://index"}');
  await call(`${origin}/tools/mcp`, 'tools/call', '{"name":"launch","arguments":{}}').catch(() => undefined);
  const exited = new Promise((resolve) => demo.once('exit', resolve));
  demo.kill('SIGINT');
  await exited;

  const page = join(dir, 'demo.html');
  await run(tsx('lib/cli/main.ts', 'trace', 'view', traceFile, '--out', page));
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  try {
    const tab = await browser.newPage({ viewport: { width: 1280, height: 760 } });
    await tab.goto(`file://${page}`);
    await tab.locator('.row', { hasText: 'request tools/call' }).filter({ hasText: 'countdown' }).first().click();
    await tab.screenshot({ path: OUT });
  } finally {
    await browser.close();
  }
  process.stdout.write(`Wrote ${OUT}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
