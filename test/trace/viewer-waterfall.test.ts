/**
 * The trace viewer's per-request timeline (waterfall) in the detail pane, in a real browser (Debian's
 * `chromium`, driven by `playwright-core`), on traces recorded here: a call with progress that the client
 * cancels, a call that times out and one left unanswered (on a fake clock, so the page looks the same every
 * time), a hub over two upstreams, an elicitation during a call in the handshake era; and on traces written by
 * hand for what the recordings lack (input rounds and retries of the 2026-07-28 revision, a hostile trace).
 * One screenshot of a timeline is compared with its committed reference (UPDATE_VIEWER_SCREENSHOTS=1 rewrites it).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runTraceView } from '../../lib/cli/trace-view';
import { Runtime } from '../../lib/core/runtime';
import { RequestCancelledError, RequestTimeoutError } from '../../lib/jsonrpc/errors';
import { Server } from '../../lib/server/server';
import { toNdjsonLine } from '../../lib/trace/sinks/ndjson';
import type { TraceEvent } from '../../lib/trace/types';
import { recordElicitation, recordHubFanOut } from '../fixtures/trace-viewer/record';
import { fakeClock, openPair } from '../fixtures/traces/session';
import { serverWith, tool } from '../helpers/fixtures';
import { pixelDifference } from './pixel-difference';

const CHROMIUM = '/usr/bin/chromium';
const REFERENCES = new URL('../fixtures/trace-viewer/', import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'trace-waterfall-'));
let browser: Browser;
const traces: Record<string, string> = {};
const pages: { page: Page; errors: string[] }[] = [];

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is missing at ${CHROMIUM}: apt-get install chromium (.ci/run installs it)`);
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  traces.givingUp = await recordGivingUp();
  traces.hub = await recordHubFanOut();
  traces.handshake = await recordElicitation('handshake');
});

afterAll(async () => {
  for (const { page, errors } of pages) {
    expect(errors).toEqual([]);
    await page.close();
  }
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A client calls `slow`, which reports progress twice (at +3 and +7 ms), and cancels it at +9 ms; calls
 * `stuck` with a 50 ms timeout, which runs out at +69 ms; calls `stuck` again and closes while it runs.
 */
async function recordGivingUp(): Promise<string> {
  const clock = fakeClock();
  const runtime = new Runtime({ clock });
  const events: TraceEvent[] = [];
  const subscription = runtime.trace$.subscribe((event) => events.push(event));
  const untilAborted = (signal: AbortSignal) =>
    new Promise<never>((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('stopped'))));
  const server = new Server(
    serverWith([
      tool('slow', async (_args, ctx) => {
        clock.increment(3);
        await ctx.progress(1, 3, 'started');
        clock.increment(4);
        await ctx.progress(2, 3, 'more');
        return untilAborted(ctx.signal);
      }),
      tool('stuck', (_args, ctx) => untilAborted(ctx.signal)),
    ]),
  );
  const { client, serverConnection } = await openPair(server, runtime, runtime, {
    client: { clock },
    server: { clock },
  });
  const controller = new AbortController();
  let reports = 0;
  let twice!: () => void;
  const progressed = new Promise<void>((resolve) => (twice = resolve));
  const slow = client
    .callTool('slow', {}, { signal: controller.signal, onProgress: () => void (++reports === 2 && twice()) })
    .catch((error: unknown) => error);
  await progressed;
  clock.increment(2);
  controller.abort('the user gave up');
  expect(await slow).toBeInstanceOf(RequestCancelledError);
  const timedOut = client.callTool('stuck', {}, { timeout: 50 }).catch((error: unknown) => error);
  await client.ping(); // the server runs `stuck` now
  clock.increment(60);
  expect(await timedOut).toBeInstanceOf(RequestTimeoutError);
  const left = client.callTool('stuck', {}).catch((error: unknown) => error);
  await client.ping();
  clock.increment(5);
  await client.close();
  await left;
  await serverConnection.closed;
  subscription.unsubscribe();
  return events.map((event) => toNdjsonLine(event)).join('\n');
}

/** Writes `ndjson` and its page (`runTraceView`), opens the page; errors in it fail the file. */
async function open(name: string, ndjson: string): Promise<Page> {
  const input = join(dir, `${name}.ndjson`);
  writeFileSync(input, ndjson);
  expect(await runTraceView([input], { out: () => undefined, err: () => undefined })).toBe(0);
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('dialog', (dialog) => errors.push(`dialog: ${dialog.message()}`));
  pages.push({ page, errors });
  await page.goto(pathToFileURL(join(dir, `${name}.html`)).href);
  await page.locator('.row').first().waitFor();
  return page;
}

/** Selects the row whose text is `text` (and its error mark, if any), after a search for its request id. */
async function selectRow(page: Page, text: string, id?: string): Promise<void> {
  await page.fill('#search', id ?? '');
  const cell = page.locator('.cell', { hasText: new RegExp(`^${escape(text)}( ✖ .*)?$`) });
  await page.locator('.row', { has: cell }).click();
  await page.fill('#search', '');
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const barNames = (page: Page) => page.locator('.waterfall .wf-name').allTextContents();
const markTexts = (page: Page) => page.locator('.waterfall .wf-mark-text').allTextContents();
/** Where each drawn thing of the timeline starts and ends (or, `centre`, its middle), in % of its track, rounded. */
const placed = (page: Page, selector: string, centre = false) =>
  page.locator(`.waterfall ${selector}`).evaluateAll(
    (elements, centre) =>
      elements.map((element) => {
        const track = element.parentElement!.getBoundingClientRect();
        const box = element.getBoundingClientRect();
        const at = (x: number) => ((x - track.left) / track.width) * 100;
        return centre
          ? [Math.round(at((box.left + box.right) / 2))]
          : [Math.round(at(box.left)), Math.round(at(box.right))];
      }),
    centre,
  );

describe('a call with progress that the client cancels, one that times out, one left unanswered', () => {
  let page: Page;
  beforeAll(async () => {
    page = await open('giving-up', traces.givingUp!);
  });

  it('draws the cancelled call from its request to its cancellation, with its progress ticks and the mark', async () => {
    await selectRow(page, '→ server request tools/call #1 slow', '1');
    expect(await barNames(page)).toEqual(['tools/call #1 slow on s (client) · cancelled after 9 ms']);
    expect(await markTexts(page)).toEqual([
      '▸ +3 ms progress 1 of 3: started',
      '▸ +7 ms progress 2 of 3: more',
      '⊘ +9 ms cancelled: The request was cancelled by the requester',
    ]);
    await expect(page.locator('.waterfall .wf-scale').textContent()).resolves.toBe('0 ms to 9 ms');
    expect(await placed(page, '.wf-bar')).toEqual([[0, 100]]);
    expect(await placed(page, '.wf-tick', true)).toEqual([[33], [78], [100]]);
    expect(await page.locator('.waterfall .wf-tick').first().getAttribute('title')).toBe(
      '+3 ms progress 1 of 3: started',
    );
  });

  it('shows the same on the server: the progress it sent and the cancellation it received', async () => {
    await selectRow(page, '← client request tools/call #1 slow', '1');
    expect(await barNames(page)).toEqual(['tools/call #1 slow on s (server) · cancelled after 9 ms']);
    expect(await markTexts(page)).toHaveLength(3);
  });

  it('marks the call that timed out, its bar ending at the timeout', async () => {
    await selectRow(page, '→ server request tools/call #2 stuck', '2');
    expect(await barNames(page)).toEqual(['tools/call #2 stuck on s (client) · timed out after 60 ms']);
    expect(await markTexts(page)).toEqual(['⏱ +60 ms timed out: The request timed out']);
    await expect(page.locator('.waterfall .wf-item').getAttribute('class')).resolves.toBe('wf-item timed-out');
  });

  it('draws a call never answered open-ended, to its connection closing', async () => {
    await selectRow(page, '→ server request tools/call #4 stuck', '4');
    expect(await barNames(page)).toEqual([
      'tools/call #4 stuck on s (client) · no answer: the connection closed at +5 ms',
    ]);
    expect(await page.locator('.waterfall .wf-bar.open').count()).toBe(1);
  });

  it('shows the timeline of a request from its answer, and none for a notification', async () => {
    await selectRow(page, '← server result ping #3 0 ms', '3');
    expect(await barNames(page)).toEqual(['ping #3 on s (client) · 0 ms']);
    await selectRow(page, '← server notification notifications/progress 1/3 started');
    expect(await page.locator('.waterfall').count()).toBe(0);
    await expect(page.locator('#detail h2').textContent()).resolves.toContain('notifications/progress');
  });

  it('looks like its reference', async () => {
    await selectRow(page, '→ server request tools/call #1 slow', '1');
    const shot = await page.locator('.waterfall').screenshot();
    await expectLikeReference(shot, 'waterfall-cancelled.png');
  });
});

describe('the trace cut short', () => {
  it('draws an unanswered call open-ended to the end of the trace', async () => {
    const lines = traces.givingUp!.split('\n');
    const cut = lines.findIndex((line) => line.includes('"method":"ping","id":5,'));
    const page = await open('cut', lines.slice(0, cut).join('\n'));
    await selectRow(page, '→ server request tools/call #4 stuck', '4');
    expect(await barNames(page)).toEqual([
      'tools/call #4 stuck on s (client) · no answer by the end of the trace (+0 ms)',
    ]);
    expect(await page.locator('.waterfall .wf-bar.open').count()).toBe(1);
  });
});

describe('a hub over two upstreams', () => {
  let page: Page;
  beforeAll(async () => {
    page = await open('hub', traces.hub!);
  });

  it('puts the forwarded request under the downstream one, on its upstream lane, and goes to it and back', async () => {
    for (const [id, tool, upstream] of [
      ['1', 'note', 'notes'],
      ['2', 'read', 'files'],
    ] as const) {
      await selectRow(page, `← client request tools/call #${id} ${tool}`, id);
      const [downstream, forwarded] = await barNames(page);
      expect(downstream).toMatch(new RegExp(`^tools/call #${id} ${tool} on [^·]+ \\(server\\) · [\\d.]+ ms$`));
      expect(forwarded).toMatch(
        new RegExp(`^↳ forwarded: tools/call #3 ${tool} on ${upstream} \\(upstream client\\) · [\\d.]+ ms$`),
      );
      const [outer, inner] = await placed(page, '.wf-bar');
      expect(inner![0]).toBeGreaterThanOrEqual(outer![0]!);
      expect(inner![1]).toBeLessThanOrEqual(outer![1]! + 1); // a bar of 0 ms is drawn 2 px wide
      await page.locator('.waterfall button.wf-name').click();
      await expect(page.locator('#detail h2').textContent()).resolves.toBe(`→ server request tools/call #3 ${tool}`);
      await page
        .getByRole('button', { name: new RegExp(`^↑ Made for tools/call #${id} ${tool} on .+ \\(server\\)$`) })
        .click();
      await expect(page.locator('#detail h2').textContent()).resolves.toBe(
        `← client request tools/call #${id} ${tool}`,
      );
    }
  });

  it('shows the error of a call no upstream has, with its code', async () => {
    await selectRow(page, '← client request tools/call #3 nowhere', '3');
    await expect(page.locator('.waterfall .wf-error').textContent()).resolves.toMatch(/^✖ -32602 Unknown tool/);
    expect(await page.locator('.waterfall .wf-item.error').count()).toBe(1);
  });
});

describe('an elicitation during a call, in the handshake era', () => {
  it("puts the server's elicitation under the call it serves", async () => {
    const page = await open('elicit', traces.handshake!);
    await selectRow(page, '← client request tools/call #1 greet', '1');
    const names = await barNames(page);
    expect(names[0]).toBe('tools/call #1 greet on s (server) · 0 ms');
    expect(names[1]).toBe('↳ serves: elicitation/create #0 on s (server) · 0 ms');
  });
});

/** Events of one lane, written by hand: `time` in ms after 0. */
const lane = (connection: string, role: 'client' | 'server', name: string) => (event: Record<string, unknown>) =>
  JSON.stringify({ connection, role, name, ...event });

describe('input rounds and retries of the 2026-07-28 revision (written by hand)', () => {
  it('puts the re-sent calls under the first one, named round and retry, each reaching back to it', async () => {
    const client = lane('c1', 'client', 'weather');
    const call = (id: number, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name } });
    const cause = (kind: string) => ({ connection: 'c1', id: 0, kind });
    const page = await open(
      'rounds',
      [
        client({ time: 0, kind: 'request', direction: 'out', method: 'tools/call', id: 0, message: call(0, 'ask') }),
        client({ time: 4, kind: 'result', direction: 'in', method: 'tools/call', id: 0, latencyMs: 4 }),
        client({ time: 5, kind: 'request', direction: 'out', method: 'tools/call', id: 1, cause: cause('round') }),
        client({
          time: 7,
          kind: 'error',
          direction: 'in',
          method: 'tools/call',
          id: 1,
          latencyMs: 2,
          message: { jsonrpc: '2.0', id: 1, error: { code: -32022, message: 'Unsupported protocol version' } },
        }),
        client({ time: 8, kind: 'request', direction: 'out', method: 'tools/call', id: 2, cause: cause('retry') }),
        client({ time: 10, kind: 'result', direction: 'in', method: 'tools/call', id: 2, latencyMs: 2 }),
      ].join('\n'),
    );
    await selectRow(page, '→ server request tools/call #0 ask', '0');
    expect(await barNames(page)).toEqual([
      'tools/call #0 ask on weather (client) · 4 ms',
      '↳ round: tools/call #1 on weather (client) · 2 ms',
      '↳ retry: tools/call #2 on weather (client) · 2 ms',
    ]);
    await expect(page.locator('.waterfall .wf-error').textContent()).resolves.toBe(
      '✖ -32022 Unsupported protocol version',
    );
    expect(await placed(page, '.wf-bar')).toEqual([
      [0, 40],
      [50, 70],
      [80, 100],
    ]);
    await page.locator('.waterfall button.wf-name', { hasText: 'retry' }).click();
    await page.getByRole('button', { name: '↑ Made for tools/call #0 ask on weather (client)' }).click();
    await expect(page.locator('#detail h2').textContent()).resolves.toBe('→ server request tools/call #0 ask');
  });
});

describe('a request recorded before the request it was made for (written by hand)', () => {
  it('is still drawn under it', async () => {
    const upstream = lane('u1', 'client', 'notes');
    const downstream = lane('d1', 'server', 'agent');
    const call = { method: 'tools/call', params: { name: 'note' } };
    const page = await open(
      'early-child',
      [
        upstream({
          time: 1,
          kind: 'request',
          direction: 'out',
          method: 'tools/call',
          id: 7,
          message: call,
          cause: { connection: 'd1', id: 1, kind: 'forwarded' },
        }),
        downstream({ time: 0, kind: 'request', direction: 'in', method: 'tools/call', id: 1, message: call }),
        upstream({ time: 3, kind: 'result', direction: 'in', method: 'tools/call', id: 7, latencyMs: 2 }),
        downstream({ time: 4, kind: 'result', direction: 'out', method: 'tools/call', id: 1, latencyMs: 4 }),
      ].join('\n'),
    );
    await selectRow(page, '← client request tools/call #1 note', '1');
    expect(await barNames(page)).toEqual([
      'tools/call #1 note on agent (server) · 4 ms',
      '↳ forwarded: tools/call #7 note on notes (client) · 2 ms',
    ]);
  });
});

describe('a hostile trace', () => {
  it('keeps the pane small and its text as text, whatever the trace says', async () => {
    const server = lane('s', 'server', '<b>bold</b>');
    const lines = [
      server({
        time: 0,
        kind: 'request',
        direction: 'in',
        method: '<img src=x onerror=alert(1)>',
        id: 'r',
        message: {
          params: { _meta: { progressToken: 't' } },
        },
      }),
    ];
    for (let n = 1; n <= 3000; n++) {
      const params = { progressToken: 't', progress: n, message: '<script>alert(2)</script>' };
      lines.push(
        server({
          time: n,
          kind: 'notification',
          direction: 'out',
          method: 'notifications/progress',
          message: { params },
        }),
      );
    }
    for (let n = 0; n < 500; n++) {
      const cause = { connection: 's', id: 'r', kind: '<i>forwarded</i>' };
      lines.push(server({ time: 3000 + n, kind: 'request', direction: 'out', method: 'x', id: n, cause }));
    }
    const cancel = { params: { requestId: 'r', reason: { not: 'text' } } };
    lines.push(
      server({ time: 4000, kind: 'notification', direction: 'in', method: 'notifications/cancelled', message: cancel }),
    );
    lines.push(
      server({ time: 4001, kind: 'notification', direction: 'in', method: 'notifications/cancelled', message: cancel }),
    );
    lines.push(
      server({
        time: 4002,
        kind: 'request',
        direction: 'in',
        method: 'y',
        id: 'self',
        cause: { connection: 's', id: 'self', kind: 'retry' },
      }),
    );
    const page = await open('hostile', lines.join('\n'));
    await selectRow(page, '← client request <img src=x onerror=alert(1)> #r', 'r');
    const names = await barNames(page);
    expect(names[0]).toBe('<img src=x onerror=alert(1)> #r on <b>bold</b> (server) · cancelled after 4000 ms');
    expect(names).toHaveLength(100);
    expect(names[1]).toBe(
      '↳ <i>forwarded</i>: x #0 on <b>bold</b> (server) · no answer by the end of the trace (+4002 ms)',
    );
    await expect(page.locator('.waterfall > .wf-more').textContent()).resolves.toBe(
      '… and 401 more requests made for it',
    );
    const marks = await markTexts(page);
    expect(marks).toHaveLength(50);
    expect(marks[0]).toBe('▸ +1 ms progress 1: <script>alert(2)</script>');
    expect(marks[49]).toBe('⊘ +4000 ms cancelled: no reason given');
    await expect(page.locator('.waterfall .wf-marks .wf-more').first().textContent()).resolves.toBe(
      '… and 2951 more progress notifications',
    );
    expect(await page.locator('.waterfall .wf-tick').count()).toBe(50);
    expect(await page.locator('.waterfall b, .waterfall img, .waterfall i, .waterfall script').count()).toBe(0);
    await selectRow(page, '← client request y #self', 'self');
    expect(await barNames(page)).toEqual([
      'y #self on <b>bold</b> (server) · no answer by the end of the trace (+0 ms)',
    ]);
    expect(await page.locator('.waterfall .wf-parent').count()).toBe(0);
  });
});

/** Compares a PNG with the committed reference `name`: at most 1% of pixels may differ. */
async function expectLikeReference(shot: Buffer, name: string): Promise<void> {
  const reference = new URL(name, REFERENCES);
  if (process.env.UPDATE_VIEWER_SCREENSHOTS === '1') writeFileSync(reference, shot);
  if (!existsSync(reference)) throw new Error(`No reference ${name}: run with UPDATE_VIEWER_SCREENSHOTS=1`);
  expect(await pixelDifference(browser, shot, readFileSync(reference))).toBeLessThan(0.01);
}
