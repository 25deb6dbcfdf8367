/**
 * The trace viewer in a real browser (Debian's `chromium`, driven by `playwright-core`): pages written by
 * `runTraceView` for traces recorded here (the golden session: a plain call with progress, an unknown tool, a
 * cancelled call; a hub over two upstreams; an elicitation in each era), and what a person sees on them:
 * lanes, arrows and their labels, causal links, error marks, the detail pane, filters, search, percentiles.
 * One screenshot is compared with its committed reference (UPDATE_VIEWER_SCREENSHOTS=1 rewrites it).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTraceView } from '../../lib/cli/trace-view';
import { Client } from '../../lib/client/client';
import { Hub } from '../../lib/compose/hub';
import { Runtime } from '../../lib/core/runtime';
import { Server } from '../../lib/server/server';
import { toNdjsonLine } from '../../lib/trace/sinks/ndjson';
import { createMcpHttpHandler } from '../../transports/http/endpoint';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { serverWith, tool } from '../helpers/fixtures';
import { listenHttp } from '../helpers/http';
import { pixelDifference } from './pixel-difference';
import { recordElicitation, recordGoldenSession, recordHubFanOut } from '../fixtures/trace-viewer/record';

const CHROMIUM = '/usr/bin/chromium';
const REFERENCES = new URL('../fixtures/trace-viewer/', import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'trace-viewer-'));
let browser: Browser;
const traces: Record<string, string> = {};

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is missing at ${CHROMIUM}: apt-get install chromium (.ci/run installs it)`);
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  traces.golden = await recordGoldenSession();
  traces.hub = await recordHubFanOut();
  traces.handshake = await recordElicitation('handshake');
  traces.modern = await recordElicitation('modern');
});

afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Writes `ndjson` to a file, its page with `runTraceView`, and opens the page (errors in it fail the test). */
async function open(name: string, ndjson: string): Promise<Page> {
  const input = join(dir, `${name}.ndjson`);
  writeFileSync(input, ndjson);
  const lines: string[] = [];
  expect(await runTraceView([input], { out: (line) => lines.push(line), err: (line) => lines.push(line) })).toBe(0);
  expect(lines).toEqual([`Wrote ${join(dir, `${name}.html`)}`]);
  const page = await browser.newPage({ viewport: { width: 1100, height: 640 } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('dialog', (dialog) => errors.push(`dialog: ${dialog.message()}`));
  await page.goto(pathToFileURL(join(dir, `${name}.html`)).href);
  await page.locator('.row').first().waitFor();
  afterChecks.push(async () => {
    expect(errors).toEqual([]);
    await page.close();
  });
  return page;
}

const afterChecks: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const check of afterChecks) await check();
});

const rowTexts = (page: Page) => page.locator('.row .cell').allTextContents();
const laneNames = (page: Page) => page.locator('.lane-head').allTextContents();

describe('the golden session (a plain call with progress, an unknown tool, a cancelled call)', () => {
  let page: Page;
  beforeAll(async () => {
    page = await open('golden', traces.golden!);
  });

  it('shows one lane per connection, named by id and role', async () => {
    expect(await laneNames(page)).toEqual(['s (client)', 's (server)']);
    await expect(page.locator('#summary').textContent()).resolves.toBe('golden.ndjson: 35 events on 2 lanes, 35 shown');
  });

  it('draws each message as an arrow on its lane, which way it goes in words, with its method, id and tool', async () => {
    const rows = await rowTexts(page);
    expect(rows).toContain('→ server request tools/call #1 work');
    expect(rows).toContain('← client request tools/call #1 work');
    expect(rows).toContain('→ client result tools/call #1 work 10 ms');
    expect(rows).toContain('← server notification notifications/progress 1/2 halfway');
    expect(rows).toContain('◆ uninitialized → initializing');
    await expect(page.locator('.row.request.cancelled .cell').first().textContent()).resolves.toBe(
      '→ server request tools/call #3 wait',
    );
  });

  it('marks an error with its code and message', async () => {
    const marks = await page.locator('.row.error .error-mark').allTextContents();
    expect(marks[0]).toBe('✖ -32602 Unknown tool: missing');
  });

  it('shows the message JSON of a clicked event in the detail pane, and goes to its answer', async () => {
    await page.locator('.row', { hasText: '→ server request tools/call #1 work' }).click();
    await expect(page.locator('#detail h2').textContent()).resolves.toBe('→ server request tools/call #1 work');
    const json = JSON.parse((await page.locator('#detail pre').textContent())!);
    expect(json.params).toMatchObject({ name: 'work', arguments: { n: 1 } });
    await expect(page.locator('#detail dl').textContent()).resolves.toContain('duration10 ms');
    await page.getByRole('button', { name: 'Go to the answer' }).click();
    await expect(page.locator('#detail h2').textContent()).resolves.toBe('← server result tools/call #1 work 10 ms');
    await expect(page.locator('.row.selected .cell').textContent()).resolves.toBe(
      '← server result tools/call #1 work 10 ms',
    );
  });

  it('narrows the rows by status, connection, tool and minimum duration, and finds a request id', async () => {
    await page.selectOption('#filter-status', 'error');
    expect(await rowTexts(page)).toHaveLength(4);
    await page.selectOption('#filter-lane', { label: 's (server)' });
    expect(await rowTexts(page)).toEqual([
      '← client request tools/call #2 missing ✖ -32602 Unknown tool: missing',
      '→ client error tools/call #2 missing 0 ms ✖ -32602 Unknown tool: missing',
    ]);
    await page.selectOption('#filter-status', '');
    await page.selectOption('#filter-lane', '');
    await page.selectOption('#filter-tool', 'work');
    await page.fill('#filter-duration', '5');
    expect(await rowTexts(page)).toEqual([
      '→ server request tools/call #1 work',
      '← client request tools/call #1 work',
      '→ client result tools/call #1 work 10 ms',
      '← server result tools/call #1 work 10 ms',
    ]);
    await page.selectOption('#filter-tool', '');
    await page.fill('#filter-duration', '');
    await page.fill('#search', '#4');
    expect(await rowTexts(page)).toEqual([
      '→ server request ping #4',
      '← client request ping #4',
      '→ client result ping #4 0 ms',
      '← server result ping #4 0 ms',
    ]);
    await expect(page.locator('#summary').textContent()).resolves.toContain('4 shown');
    await page.fill('#search', '');
  });

  it('tabulates latency percentiles per method', async () => {
    await page.locator('#latency summary').click();
    const work = page.locator('#latency tr', { has: page.locator('th', { hasText: /^tools\/call$/ }) });
    expect(await work.locator('td').allTextContents()).toEqual(['2', '0', '10', '10', '10']);
    await page.locator('#latency summary').click();
  });

  it('looks like its reference', async () => {
    await page.locator('.row', { hasText: '→ server request tools/call #1 work' }).click();
    await page.locator('.rows').evaluate((element) => (element.scrollTop = 0));
    await expectScreenshot(page, 'golden.png');
  });
});

describe('a hub over two upstreams', () => {
  let page: Page;
  beforeAll(async () => {
    page = await open('hub', traces.hub!);
  });

  it('gives every upstream connection a lane named by its upstream', async () => {
    const lanes = await laneNames(page);
    expect(lanes).toEqual([
      'upstream c1',
      'upstream c2',
      'notes (upstream client)',
      'files (upstream client)',
      'notes (upstream server)',
      'files (upstream server)',
      'mcp-switchboard-hub (client)',
      'mcp-switchboard-hub (server)',
    ]);
  });

  it('draws the link from each forwarded request to the downstream request it serves', async () => {
    await page.selectOption('#filter-method', 'tools/call'); // only the rows in sight are rendered
    const links = await page.locator('.cause-link').allTextContents();
    expect(links).toEqual([
      '↳ forwarded from mcp-switchboard-hub (server) #1',
      '↳ forwarded from mcp-switchboard-hub (server) #2',
    ]);
    const forwarded = page.locator('.row', { has: page.locator('.cause-link') }).first();
    await expect(forwarded.locator('.cell').textContent()).resolves.toBe('→ server request tools/call #3 note');
    await forwarded.click();
    await page.getByRole('button', { name: 'Go to the cause' }).click();
    await expect(page.locator('#detail h2').textContent()).resolves.toBe('← client request tools/call #1 note');
    await page.selectOption('#filter-method', '');
  });

  it('tabulates latency per upstream', async () => {
    const upstreams = await page.locator('#latency table').nth(1).locator('tbody th').allTextContents();
    expect(upstreams).toEqual(['files', 'notes']);
  });

  it('marks the call no upstream has as an error', async () => {
    await page.selectOption('#filter-tool', 'nowhere');
    const marks = await page.locator('.error-mark').allTextContents();
    expect(marks.length).toBeGreaterThan(0);
    for (const mark of marks) expect(mark).toMatch(/^✖ -32602 /);
    await page.selectOption('#filter-tool', '');
  });
});

describe('an elicitation', () => {
  it('in the handshake era: a server→client request that serves the call', async () => {
    const page = await open('elicit-handshake', traces.handshake!);
    const ask = page.locator('.row.s2c', { hasText: 'elicitation/create' }).first();
    await expect(ask.locator('.cell').textContent()).resolves.toBe('→ client request elicitation/create #0');
    await expect(ask.locator('.cause-link').textContent()).resolves.toBe('↳ serves from s (server) #1');
    await ask.click();
    await expect(page.locator('#detail pre').textContent()).resolves.toContain('"message": "Your name?"');
  });

  it('in the 2026-07-28 era: the era probe, then the call answered with its input round, then the retry', async () => {
    const page = await open('elicit-modern', traces.modern!);
    const rows = await rowTexts(page);
    expect(rows.slice(0, 2)).toEqual([
      '→ server request server/discover #switchboard-era-probe-1',
      '← client request server/discover #switchboard-era-probe-1',
    ]);
    expect(rows).toContain('→ server request tools/call #0 greet');
    const retry = page.locator('.row', { hasText: '→ server request tools/call #1 greet' });
    await expect(retry.locator('.cause-link').textContent()).resolves.toBe('↳ round from s (client) #0');
    await page.locator('.row', { hasText: '→ client result tools/call #0 greet' }).click();
    await expect(page.locator('#detail pre').textContent()).resolves.toContain('"method": "elicitation/create"');
  });
});

/** Compares a screenshot of `page` with the committed reference `name`: at most 1% of pixels may differ. */
async function expectScreenshot(page: Page, name: string): Promise<void> {
  const shot = await page.screenshot({ clip: { x: 0, y: 0, width: 720, height: 360 } });
  const reference = new URL(name, REFERENCES);
  if (process.env.UPDATE_VIEWER_SCREENSHOTS === '1') writeFileSync(reference, shot);
  if (!existsSync(reference)) throw new Error(`No reference ${name}: run with UPDATE_VIEWER_SCREENSHOTS=1`);
  const differing = await pixelDifference(browser, shot, readFileSync(reference));
  expect(differing).toBeLessThan(0.01);
}

describe('a server answering stateless requests over HTTP', () => {
  it('puts all its requests on one lane, not one lane each, and names each origin in a causal link', async () => {
    const runtime = new Runtime();
    const events: string[] = [];
    const subscription = runtime.trace$.subscribe((event) => events.push(toNdjsonLine(event)));
    const upstream = new Server(serverWith([tool('echo')]), { runtime });
    const hub = new Hub({
      runtime,
      name: 'web-hub',
      upstreams: [{ name: 'echoes', source: { kind: 'in-process', server: upstream, direct: false } }],
    });
    await hub.start();
    const handler = createMcpHttpHandler(hub.server);
    const { origin } = await listenHttp(handler);
    const client = new Client({ name: 'app', version: '1' }, { runtime, era: 'modern', eraCache: false });
    await client.connect(new StreamableHttpClientTransport(`${origin}/mcp`));
    for (let call = 0; call < 3; call++) await client.callTool('echo', { call });
    await client.close();
    await handler.close();
    await hub.close();
    subscription.unsubscribe();

    const page = await open('stateless', events.join('\n'));
    const lanes = await laneNames(page);
    expect(lanes.filter((lane) => lane.startsWith('web-hub'))).toEqual([
      'web-hub (client)',
      'web-hub (stateless server)',
    ]);
    expect(lanes.filter((lane) => /\bx\d+\b/.test(lane))).toEqual([]);
    await page.selectOption('#filter-method', 'tools/call');
    const links = await page.locator('.cause-link').allTextContents();
    expect(links).toHaveLength(3);
    for (const link of links) expect(link).toMatch(/^↳ forwarded from web-hub \(stateless server\) x\d+ #\d+$/);
    expect(new Set(links).size).toBe(3);
  });
});

describe('other traces and other ways in', () => {
  it('shows hostile trace text as text, and counts the lines that are not events', async () => {
    const hostile = [
      JSON.stringify({
        time: 1,
        connection: '</script><script>alert(1)</script>',
        role: 'client',
        kind: 'request',
        direction: 'out',
        method: '<img src=x onerror=alert(2)>',
        id: 1,
      }),
      'not json',
      '[1,2]',
      JSON.stringify({ time: 2, connection: 'x' }),
    ].join('\n');
    const page = await open('hostile', hostile);
    expect(await laneNames(page)).toEqual(['</script><script>alert(1)</script> (client)']);
    expect(await rowTexts(page)).toEqual(['→ server request <img src=x onerror=alert(2)> #1']);
    await expect(page.locator('#summary').textContent()).resolves.toBe(
      'hostile.ndjson: 1 events on 1 lanes, 1 shown, 3 lines skipped (not trace events)',
    );
  });

  it('renders only the rows in sight of a long trace, and the last one after a scroll to the end', async () => {
    const lines = Array.from({ length: 20_000 }, (_, n) =>
      JSON.stringify({
        time: n,
        connection: 'c',
        role: 'client',
        kind: 'request',
        direction: 'out',
        method: 'ping',
        id: n,
      }),
    );
    const page = await open('long', lines.join('\n'));
    expect(await page.locator('.row').count()).toBeLessThan(80);
    await page.locator('.rows').evaluate((element) => (element.scrollTop = element.scrollHeight));
    await page.locator('.row', { hasText: '#19999' }).waitFor();
    expect(await page.locator('.row').count()).toBeLessThan(80);
  });

  it('takes a trace from the file input and from a file dropped on the page', async () => {
    const page = await open('first', traces.golden!);
    await page.setInputFiles('#file', {
      name: 'hub.ndjson',
      mimeType: 'application/x-ndjson',
      buffer: Buffer.from(traces.hub!),
    });
    await page.locator('#summary', { hasText: /^hub\.ndjson: \d+ events on \d+ lanes/ }).waitFor();
    await page.evaluate((ndjson) => {
      const data = new DataTransfer();
      data.items.add(new File([ndjson], 'dropped.ndjson'));
      document.documentElement.dispatchEvent(
        new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }),
      );
    }, traces.handshake!);
    await page.locator('#summary', { hasText: 'dropped.ndjson' }).waitFor();
    expect(await laneNames(page)).toEqual(['s (client)', 's (server)']);
  });
});

describe('runTraceView', () => {
  const io = () => {
    const lines: string[] = [];
    return { lines, io: { out: (line: string) => lines.push(line), err: (line: string) => lines.push(line) } };
  };

  it('writes the page with --out, readable by its owner only, even over a page that was open to all', async () => {
    const input = join(dir, 'mode.ndjson');
    const out = join(dir, 'mode-page.html');
    writeFileSync(input, traces.golden!);
    writeFileSync(out, 'old', { mode: 0o644 });
    const { lines, io: cli } = io();
    expect(await runTraceView([input, '--out', out], cli)).toBe(0);
    expect(lines).toEqual([`Wrote ${out}`]);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    expect(readFileSync(out, 'utf8')).toContain('data-source="mode.ndjson"');
  });

  it('refuses a missing trace, a wrong command line, and a page that would replace its trace', async () => {
    const { io: cli } = io();
    await expect(runTraceView([join(dir, 'nothing.ndjson')], cli)).rejects.toThrow(
      /^Cannot read the trace .*nothing\.ndjson: ENOENT/,
    );
    await expect(runTraceView([], cli)).rejects.toThrow(/trace view takes one trace file \(0 given\)/);
    await expect(runTraceView(['a.ndjson', '--bogus'], cli)).rejects.toThrow(/Unknown option "--bogus"/);
    await expect(runTraceView(['a.ndjson', '--out', 'a.ndjson'], cli)).rejects.toThrow(/would replace the trace/);
  });

  it('opens the page with the platform opener on --open', async () => {
    const bin = mkdtempSync(join(tmpdir(), 'opener-'));
    const record = join(bin, 'opened');
    writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s' "$1" > '${record}'\n`, { mode: 0o755 });
    const input = join(dir, 'opened.ndjson');
    writeFileSync(input, traces.golden!);
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${path}`;
    try {
      expect(await runTraceView([input, '--open'], io().io)).toBe(0);
    } finally {
      process.env.PATH = path;
    }
    // The stub runs detached: wait (bounded) until it has written the whole path, not just made the file.
    const opened = () => (existsSync(record) ? readFileSync(record, 'utf8') : '');
    for (let attempt = 0; attempt < 400 && opened() !== join(dir, 'opened.html'); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(opened()).toBe(join(dir, 'opened.html'));
    rmSync(bin, { recursive: true, force: true });
  });
});
