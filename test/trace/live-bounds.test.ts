/**
 * The live trace viewer's bounds, with its server in process over real HTTP on 127.0.0.1 and a runtime's
 * real trace (a client calling a server in process): a reader that stops reading never grows what the server
 * holds for it past its bound (its oldest events go, counted, and it is told); under a flood the page samples
 * whole requests and says so in text.
 */
import { existsSync } from 'node:fs';
import { request, type IncomingMessage } from 'node:http';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { Runtime } from '../../lib/core/runtime';
import { Server } from '../../lib/server/server';
import { tokenFor } from '../../lib/cli/trace-ui/open';
import { TraceUiServer, type TraceUiLimits } from '../../lib/cli/trace-ui/server';
import { emptyViewerPage } from '../../lib/cli/viewer-page';
import { withLive } from '../../lib/trace/viewer/page';
import { createMemoryPair } from '../../transports/memory';
import { text } from '../helpers/content';
import { serverWith, tool } from '../helpers/fixtures';

const CHROMIUM = '/usr/bin/chromium';
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is missing at ${CHROMIUM}: apt-get install chromium (.ci/run installs it)`);
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
afterAll(async () => {
  await browser?.close();
});

/** A runtime whose client calls `echo` (answering `size` characters) on a server in process. */
async function tracedPair(size: number) {
  const runtime = new Runtime();
  const [clientSide, serverSide] = createMemoryPair();
  new Server(serverWith([tool('echo', () => text('x'.repeat(size)))]), { runtime }).connect(serverSide);
  const client = await new Client({ name: 'flood', version: '1' }, { runtime }).connect(clientSide);
  let events = 0;
  const counting = runtime.trace$.subscribe(() => events++);
  return {
    runtime,
    /** Events traced since the pair was made. */
    events: () => events,
    flood: (calls: number) => Promise.all(Array.from({ length: calls }, () => client.callTool('echo', {}))),
    close: async () => {
      counting.unsubscribe();
      await client.close();
    },
  };
}

/** Opens `/events` on `port` and stops reading at once: the response, paused. */
function stalledReader(port: number): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const asked = request({ host: '127.0.0.1', port, path: '/events', headers: { host: `127.0.0.1:${port}` } });
    asked.on('response', (response) => {
      response.pause();
      resolve(response);
    });
    asked.on('error', reject);
    asked.end();
  });
}

/** Reads `response` again, message by message, until a `batch` message satisfies `done`; resolves with it. */
function readUntil(
  response: IncomingMessage,
  done: (batch: { dropped: number }) => boolean,
): Promise<{ dropped: number }> {
  return new Promise((resolve) => {
    let buffered = '';
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      let end: number;
      while ((end = buffered.indexOf('\n\n')) !== -1) {
        const message = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const data = /^event: batch\ndata: (.*)$/s.exec(message)?.[1];
        const batch = data === undefined ? undefined : (JSON.parse(data) as { dropped: number });
        if (batch && done(batch)) {
          response.off('data', onData);
          return resolve(batch);
        }
      }
    };
    response.on('data', onData);
    response.resume();
  });
}

/**
 * A traced pair of `size` whose trace a live UI server (with `limits`) serves, and a browser page open on it at
 * `query`; `close()` ends all three.
 */
async function livePage(size: number, limits: Partial<TraceUiLimits> = {}, query = '') {
  const pair = await tracedPair(size);
  const ui = await TraceUiServer.listen(
    { port: 0, host: '127.0.0.1', page: withLive(await emptyViewerPage(), 'events') },
    limits,
  );
  pair.runtime.trace$.subscribe(ui);
  const page = await browser.newPage({ viewport: { width: 1200, height: 800 } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`http://127.0.0.1:${ui.port}/${query}`);
  const close = async () => {
    expect(errors).toEqual([]);
    await page.close();
    await pair.close();
    await ui.close();
  };
  return { pair, ui, page, close };
}

describe('a reader that stops reading', () => {
  it("never grows the server's queue for it past its bound: its oldest events go, counted, and it is told", async () => {
    const pair = await tracedPair(20_000);
    const ui = await TraceUiServer.listen(
      { port: 0, host: '127.0.0.1', page: '<!doctype html>' },
      { pageEvents: 200, pageChars: 1024 * 1024, ringEvents: 1000 },
    );
    pair.runtime.trace$.subscribe(ui);
    const reader = await stalledReader(ui.port);
    let dropped = 0;
    // Rounds of 50 calls (2 MB of results each), a few batches apart: far more than the socket takes.
    for (let round = 0; round < 12; round++) {
      await pair.flood(50);
      await new Promise((resolve) => setTimeout(resolve, 150));
      const { ring, pages } = ui.status();
      expect(pages).toHaveLength(1);
      const [page] = pages;
      expect(page!.queued).toBeLessThanOrEqual(200);
      expect(page!.queuedChars).toBeLessThanOrEqual(1024 * 1024);
      // What Node holds unsent for the socket: at most the message written before it stopped draining.
      expect(page!.unsentBytes).toBeLessThanOrEqual(1024 * 1024 + 64 * 1024);
      expect(ring.events).toBeLessThanOrEqual(1000);
      dropped = page!.dropped;
    }
    expect(dropped).toBeGreaterThan(0);
    expect(pair.events()).toBeGreaterThan(dropped);
    // Read again, the reader is told how many it lost (in every message from then on).
    const told = await readUntil(reader, (batch) => batch.dropped >= dropped);
    expect(told.dropped).toBe(dropped);
    reader.destroy();
    await pair.close();
    await ui.close();
  });
});

describe('a flood', () => {
  it('is sampled by the page, whole requests at a time, and the page says so in text', async () => {
    const { pair, page, close } = await livePage(10, {}, '?max-rate=20');
    await page.locator('#live-status', { hasText: 'Live from' }).waitFor();
    await pair.flood(400);
    const total = pair.events();
    const status = page.locator('#live-status');
    await page.waitForFunction(
      (count) => document.getElementById('live-status')?.textContent?.includes(` of ${count} events shown`),
      total,
    );
    const [, shown] = /Sampling: (\d+) of \d+ events shown \(above 20 events\/s, 1 in \d+ requests kept\)\./.exec(
      (await status.textContent())!,
    )!;
    expect(Number(shown)).toBeLessThan(total);
    expect(Number(shown)).toBeGreaterThan(0);
    expect(await page.locator('#summary').textContent()).toMatch(
      new RegExp(`: ${shown} events on 2 lanes, ${shown} shown$`),
    );
    // Whole requests: every request shown has its answer shown (none is left pending).
    await page.locator('#filter-status').selectOption('pending');
    expect(await page.locator('#summary').textContent()).toMatch(/, 0 shown$/);
    await close();
  });
});

describe('a page that cannot keep up', () => {
  it('is told how many events the server dropped for it, in text', async () => {
    const { pair, ui, page, close } = await livePage(10, { pageEvents: 5 });
    await page.locator('#live-status', { hasText: 'Live from' }).waitFor();
    await pair.flood(400);
    const dropped = () => ui.status().pages[0]!.dropped;
    expect(dropped()).toBeGreaterThan(0);
    await page.locator('#live-status', { hasText: `The server dropped ${dropped()} events` }).waitFor();
    expect(await page.locator('#live-status').textContent()).toContain(
      `The server dropped ${dropped()} events this page did not read in time.`,
    );
    await close();
  });
});

describe('a trace opened from a file on the live page', () => {
  it('is shown as it is: live events are not added to it', async () => {
    const { pair, page, close } = await livePage(10);
    await pair.flood(2);
    await page.locator('#summary', { hasText: /^live: 127\.0\.0\.1:\d+: 8 events/ }).waitFor();
    const recorded = JSON.stringify({
      time: 1,
      connection: 'c9',
      role: 'client',
      kind: 'lifecycle',
      from: 'a',
      to: 'b',
    });
    await page
      .locator('#file')
      .setInputFiles({ name: 'saved.ndjson', mimeType: 'text/plain', buffer: Buffer.from(recorded) });
    await page.locator('#summary', { hasText: 'saved.ndjson: 1 events on 1 lanes, 1 shown' }).waitFor();
    await pair.flood(2);
    // The live stream goes on (its next batch arrives), and the file's trace is still all there is.
    await page.locator('#live-status', { hasText: `: ${pair.events()} events received.` }).waitFor();
    expect(await page.locator('#summary').textContent()).toBe('saved.ndjson: 1 events on 1 lanes, 1 shown');
    await close();
  });
});

describe('the live view', () => {
  it('follows the end as rows arrive, unless the reader scrolled away from it', async () => {
    const { pair, page, close } = await livePage(10);
    await page.locator('#live-status', { hasText: 'Live from' }).waitFor();
    const rows = page.locator('#rows');
    const atEnd = () =>
      rows.evaluate((element) => element.scrollTop + element.clientHeight >= element.scrollHeight - 24);
    await pair.flood(100);
    await page.locator('#summary', { hasText: `: ${pair.events()} events on` }).waitFor();
    expect(await rows.evaluate((element) => element.scrollHeight > element.clientHeight * 4)).toBe(true);
    expect(await atEnd()).toBe(true);
    await rows.evaluate((element) => (element.scrollTop = 0));
    await pair.flood(100);
    await page.locator('#summary', { hasText: `: ${pair.events()} events on` }).waitFor();
    expect(await rows.evaluate((element) => element.scrollTop)).toBe(0);
    await close();
  });
});

describe('a trace UI that needs a token (what --trace-ui-host off loopback makes)', () => {
  // On 127.0.0.1 like every test server: the token, not the address, is what is tested here.
  it('answers 401 without the token or with another, and serves the page and its stream with it', async () => {
    const token = tokenFor('192.0.2.1')!;
    const pair = await tracedPair(10);
    const ui = await TraceUiServer.listen({
      port: 0,
      host: '127.0.0.1',
      page: withLive(await emptyViewerPage(), 'events'),
      token,
    });
    pair.runtime.trace$.subscribe(ui);
    const local = (path: string) => `http://127.0.0.1:${ui.port}${path}`;
    for (const path of [
      '/',
      '/events',
      '/status',
      `/?token=${token.slice(1)}`,
      `/events?token=${token}x`,
      '/?token=',
    ]) {
      const answer = await fetch(local(path));
      expect(answer.status).toBe(401);
      expect(await answer.text()).toBe('This trace UI needs the token printed with its URL (?token=...)\n');
    }
    // With the token, any Host header will do (a name for the machine off loopback).
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(local(`/?token=${token}`));
    await pair.flood(2);
    await page.locator('.row .cell', { hasText: 'echo' }).first().waitFor();
    expect(errors).toEqual([]);
    await page.close();
    await pair.close();
    await ui.close();
  });
});
