/**
 * The live trace viewer under load (issue 27 item 6): the trace UI's server (`serve … --trace-ui`) in process
 * on 127.0.0.1, fed a hub-shaped trace (a downstream lane and four upstream lanes; each call is 4 events) at a
 * steady rate, its page open in headless Chromium (Debian's `chromium`). Reports:
 *  - at `--rate` events/s (default 10,000) for `--seconds` (default 5), with sampling off: the events/s the
 *    page received and rendered (appended to its model and view), how far behind it was when the feed
 *    stopped, the frame intervals while it ran, and the page's JS heap;
 *  - the same feed at the page's default sampling rate, at twice the rate: what share it showed;
 *  - a reader that stops reading while 200,000 events (about 1 KB each) go by: what the server holds for it
 *    and the process's heap, against the same feed with no reader.
 *
 * Standalone: `node --expose-gc --import tsx bench/trace-ui-live.ts [--rate N] [--seconds S]`.
 */
import { request } from 'node:http';
import { chromium, type Page } from 'playwright-core';
import { TraceUiServer } from '../lib/cli/trace-ui/server';
import { emptyViewerPage } from '../lib/cli/viewer-page';
import type { TraceEvent } from '../lib/trace/types';
import { DEFAULT_MAX_RATE } from '../lib/trace/viewer/live';
import { withLive } from '../lib/trace/viewer/page';

const option = (name: string, fallback: number) => Number(process.argv[process.argv.indexOf(name) + 1]) || fallback;
const RATE = option('--rate', 10_000);
const SECONDS = option('--seconds', 5);
const UPSTREAMS = ['notes', 'files', 'search', 'mail'];

/** The 4 events of call number `call`: the downstream request, its forwarding, the upstream answer and ours. */
function callEvents(call: number, padding = ''): TraceEvent[] {
  const upstream = UPSTREAMS[call % UPSTREAMS.length]!;
  const time = Date.now();
  const request = {
    jsonrpc: '2.0',
    id: call,
    method: 'tools/call',
    params: { name: `${upstream}_tool`, arguments: { q: `q${call}${padding}` } },
  };
  const answer = { jsonrpc: '2.0', id: call, result: { content: [{ type: 'text', text: `answer ${call}` }] } };
  const down = { connection: 'downstream', role: 'server', name: 'agent' } as const;
  const up = { connection: upstream, role: 'client', upstream, name: upstream } as const;
  const base = { method: 'tools/call', id: call, time };
  return [
    { ...base, ...down, kind: 'request', direction: 'in', message: request },
    {
      ...base,
      ...up,
      kind: 'request',
      direction: 'out',
      message: request,
      cause: { connection: 'downstream', id: call, kind: 'forwarded' },
    },
    { ...base, ...up, kind: 'result', direction: 'in', latencyMs: 3, message: answer },
    { ...base, ...down, kind: 'result', direction: 'out', latencyMs: 4, message: answer },
  ];
}

/** Feeds `ui` `rate` events a second for `seconds`, in 10 ms steps; resolves with the number fed. */
async function feed(ui: TraceUiServer, rate: number, seconds: number, padding = ''): Promise<number> {
  const started = performance.now();
  let fed = 0;
  let call = 0;
  while (performance.now() - started < seconds * 1000) {
    const due = Math.floor(((performance.now() - started) / 1000) * rate);
    while (fed < due) {
      for (const event of callEvents(call++, padding)) ui.next(event);
      fed += 4;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return fed;
}

/** The events the page holds (its summary line). */
async function pageRows(page: Page): Promise<number> {
  const summary = (await page.locator('#summary').textContent()) ?? '';
  return Number(/: (\d+) events on/.exec(summary)?.[1] ?? 0);
}

/** Until everything queued for the pages is sent (bounded: at most a minute). */
async function drained(ui: TraceUiServer): Promise<void> {
  for (let wait = 0; wait < 600 && ui.status().pages.some((held) => held.queued + held.unsentBytes > 0); wait++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function livePage(maxRate: number | undefined) {
  const ui = await TraceUiServer.listen({
    port: 0,
    host: '127.0.0.1',
    page: withLive(await emptyViewerPage(), 'events'),
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(`http://127.0.0.1:${ui.port}/${maxRate === undefined ? '' : `?max-rate=${maxRate}`}`);
  await page.locator('#live-status', { hasText: 'Live from' }).waitFor();
  return { ui, page };
}

async function keepUp(): Promise<void> {
  const { ui, page } = await livePage(1e9);
  // A string, not a function: tsx would name the inner function with a helper the page does not have.
  await page.evaluate(`
    window.frameGaps = [];
    let last = performance.now();
    requestAnimationFrame(function tick(now) {
      window.frameGaps.push(now - last);
      last = now;
      requestAnimationFrame(tick);
    });
  `);
  const started = performance.now();
  const fed = await feed(ui, RATE, SECONDS);
  const fedMs = performance.now() - started;
  const atStop = await pageRows(page);
  const dropped = () => ui.status().pages[0]?.dropped ?? 0;
  await drained(ui);
  await page.waitForFunction(
    (total) => {
      const held = Number(/: (\d+) events on/.exec(document.getElementById('summary')?.textContent ?? '')?.[1] ?? 0);
      const dropped = /dropped (\d+) events/.exec(document.getElementById('live-status')?.textContent ?? '')?.[1];
      return held + Number(dropped ?? 0) >= total;
    },
    fed,
    { timeout: 60_000 },
  );
  const caughtUpMs = performance.now() - started;
  const gaps = await page.evaluate(() => (window as unknown as { frameGaps: number[] }).frameGaps.slice(1));
  const heap = await page.evaluate(
    () => (performance as unknown as { memory?: { usedJSHeapSize: number } }).memory?.usedJSHeapSize,
  );
  const mean = gaps.reduce((sum, gap) => sum + gap, 0) / gaps.length;
  console.log(`fed ${fed} events in ${(fedMs / 1000).toFixed(1)} s (${Math.round(fed / (fedMs / 1000))}/s)`);
  console.log(
    `  page held ${atStop} when the feed stopped (${fed - atStop} behind), all after ${(caughtUpMs / 1000).toFixed(1)} s: ${Math.round((fed - dropped()) / (caughtUpMs / 1000))} events/s received and rendered, ${dropped()} dropped by the server (the page did not read them in time)`,
  );
  console.log(
    `  frames while it ran: mean ${mean.toFixed(1)} ms, worst ${Math.max(...gaps).toFixed(0)} ms; page JS heap ${heap === undefined ? '?' : `${(heap / 2 ** 20).toFixed(0)} MiB`}`,
  );
  await page.close();
  await ui.close();
}

async function sampled(): Promise<void> {
  const { ui, page } = await livePage(undefined);
  const fed = await feed(ui, DEFAULT_MAX_RATE * 2, SECONDS);
  await drained(ui);
  await new Promise((resolve) => setTimeout(resolve, 500));
  console.log(
    `fed ${fed} at ${DEFAULT_MAX_RATE * 2}/s (default max-rate ${DEFAULT_MAX_RATE}): ${await page.locator('#live-status').textContent()}`,
  );
  await page.close();
  await ui.close();
}

const heapMiB = () => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

async function stalled(withReader: boolean): Promise<void> {
  const ui = await TraceUiServer.listen({ port: 0, host: '127.0.0.1', page: '' });
  const before = heapMiB();
  const reader = withReader
    ? await new Promise<import('node:http').IncomingMessage>((resolve) =>
        request({ host: '127.0.0.1', port: ui.port, path: '/events' }, (response) => {
          response.pause();
          resolve(response);
        }).end(),
      )
    : undefined;
  const padding = 'x'.repeat(800);
  for (let call = 0; call < 50_000; call++) {
    for (const event of callEvents(call, padding)) ui.next(event);
    if (call % 500 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  const after = heapMiB();
  const { ring, pages } = ui.status();
  const held = pages[0];
  console.log(
    `200,000 events of ~1 KB, ${withReader ? 'a reader that stopped reading' : 'no reader'}: heap +${(after - before).toFixed(1)} MiB, ring ${ring.events} events (${(ring.chars / 2 ** 20).toFixed(1)} Mi chars)` +
      (held
        ? `; its queue ${held.queued} events (${(held.queuedChars / 2 ** 20).toFixed(1)} Mi chars), ${held.dropped} dropped, ${(held.unsentBytes / 1024).toFixed(0)} KiB unsent`
        : ''),
  );
  reader?.destroy();
  await ui.close();
}

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  await keepUp();
  await sampled();
  await stalled(false);
  await stalled(true);
} finally {
  await browser.close();
}
