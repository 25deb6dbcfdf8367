/**
 * The live trace viewer of `switchboard serve … --trace-ui`, as a person uses it: a hub over two upstreams
 * served as a real process (upstreams as child processes), its page opened in Chromium while calls go through
 * the hub; the page a late visitor opens replays the recent past; the page says when the server stops. Who may
 * read it: on loopback, pages naming the listener in their Host header only; elsewhere, the token only.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { cliCommand, LongRunning, ROOT } from '../helpers/cli-process';

const CHROMIUM = '/usr/bin/chromium';
const dir = mkdtempSync(join(tmpdir(), 'trace-live-'));
const upstream = (fixture: string) => ({ command: process.execPath, args: ['--import', 'tsx', join(ROOT, fixture)] });
const HUB = join(dir, 'hub.json');
let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is missing at ${CHROMIUM}: apt-get install chromium (.ci/run installs it)`);
  }
  writeFileSync(
    HUB,
    JSON.stringify({
      mcpServers: { alpha: upstream('test/fixtures/hub-upstream.ts'), beta: upstream('test/fixtures/stdio-server.ts') },
    }),
  );
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});

afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** `serve <hub> --http 0 --trace-ui 0 ...flags`: the process, its MCP endpoint and the trace UI's URL. */
async function serveHub(...flags: string[]) {
  const { process: server, match } = await LongRunning.start(
    cliCommand('serve', HUB, '--http', '0', '--trace-ui', '0', ...flags),
    /over Streamable HTTP at (\S+)/,
  );
  const ui = (await server.waitFor('stderr', /Trace UI: (\S+)/))[1]!;
  return { server, endpoint: match[1]!, ui };
}

/** Calls `tool` through the hub at `endpoint` with a fresh client (in the 2026-07-28 era). */
async function callThrough(
  endpoint: string,
  tool: string,
  args: Record<string, unknown> = {},
  era: 'modern' | 'handshake' = 'modern',
) {
  const client = new Client({ name: 'live-test', version: '1' }, { era, eraCache: false, listChanges: 'off' });
  try {
    await client.connect(new StreamableHttpClientTransport(endpoint));
    return await client.callTool(tool, args);
  } finally {
    await client.close();
  }
}

async function openPage(url: string): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(url);
  await page.locator('#live-status', { hasText: 'Live from' }).waitFor();
  return { page, errors };
}

const laneNames = (page: Page) => page.locator('.lane-head').allTextContents();

describe('serve <hub> --trace-ui 0', () => {
  it('shows calls live, on the lanes of the hub and its upstreams with their causal links, and says when the server stops', async () => {
    const { server, endpoint, ui } = await serveHub();
    expect(ui).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const { page, errors } = await openPage(ui);
    await callThrough(endpoint, 'echo', { said: 'live one' });
    await page.locator('#filter-method').selectOption('tools/call');
    await page.locator('.row.request', { hasText: 'tools/call' }).nth(1).waitFor();
    const lanes = await laneNames(page);
    expect(lanes).toEqual(expect.arrayContaining(['alpha (upstream client)', 'beta (upstream client)']));
    const links = await page.locator('.cause-link').allTextContents();
    expect(links).toHaveLength(1);
    expect(links[0]).toMatch(/^↳ forwarded from .+ #\d+$/);
    const forwarded = page.locator('.row', { has: page.locator('.cause-link') });
    expect(await forwarded.locator('.cell').textContent()).toMatch(/^→ server request tools\/call #\d+ echo/);
    const lane = await forwarded.getAttribute('aria-label');
    expect(lane).toMatch(/^beta \(upstream client\): /);

    await callThrough(endpoint, 'pid');
    await page.locator('.cause-link').nth(1).waitFor();
    expect(
      await page
        .locator('.row', { has: page.locator('.cause-link') })
        .nth(1)
        .getAttribute('aria-label'),
    ).toMatch(/^alpha \(upstream client\): → server request tools\/call #\d+ pid/);

    expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    await page.locator('#live-status', { hasText: 'The server stopped' }).waitFor();
    expect(await page.locator('#live-status').textContent()).toBe(
      'The server stopped: this page shows what it received and gets no more events.',
    );
    expect(errors).toEqual([]);
    await page.close();
  });

  it('replays the recent past to a page opened later, then shows what follows (its filters kept)', async () => {
    const { server, endpoint, ui } = await serveHub();
    await callThrough(endpoint, 'echo', { said: 'before the page' });
    const { page, errors } = await openPage(ui);
    await page.locator('#filter-lane').selectOption({ label: 'beta (upstream client)' });
    await page.locator('.row .cell', { hasText: 'tools/call' }).nth(1).waitFor();
    const laneCount = (await page.locator('#filter-lane option').count()) - 1;
    expect(await page.locator('.row .cell', { hasText: 'echo' }).allTextContents()).toEqual([
      expect.stringMatching(/^→ server request tools\/call #\d+ echo/),
      expect.stringMatching(/^← server result tools\/call #\d+ echo \d+ ms$/),
    ]);
    expect(await page.locator('#summary').textContent()).toMatch(/^live: 127\.0\.0\.1:\d+: \d+ events on \d+ lanes/);

    // A handshake-era client: its session is a connection of the hub's, with a lane of its own (the stateless
    // requests before it share one).
    await callThrough(endpoint, 'echo', { said: 'after' }, 'handshake');
    await page.locator('.row .cell', { hasText: 'echo' }).nth(3).waitFor();
    // The new lanes are in the menu, and the lane chosen still filters what arrives.
    expect(await page.locator('#filter-lane option').count()).toBeGreaterThan(laneCount + 1);
    expect(await page.locator('#filter-lane option:checked').textContent()).toBe('beta (upstream client)');
    const labels = await page.locator('.row').evaluateAll((rows) => rows.map((row) => row.getAttribute('aria-label')));
    expect(labels.every((label) => label!.startsWith('beta (upstream client): '))).toBe(true);
    expect(await page.locator('.row .cell', { hasText: 'echo' }).count()).toBe(4);
    expect(errors).toEqual([]);
    await page.close();
    expect(await server.stop('SIGINT')).toEqual({ code: 0, signal: null });
  });
});

/** GET `path` on `port` of 127.0.0.1 with `host` as the Host header: the status and body. */
function get(port: number, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const asked = request({ host: '127.0.0.1', port, path, headers: { host } }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body }));
      // An event stream does not end: its head and first message are enough.
      if (response.headers['content-type'] === 'text/event-stream') {
        response.once('data', () => {
          resolve({ status: response.statusCode!, body });
          response.destroy();
        });
      }
    });
    asked.on('error', reject);
    asked.end();
  });
}

describe('who may read the trace', () => {
  it('on loopback, refuses a Host header that is not the listener (DNS rebinding), and sends no CORS grant', async () => {
    const { server, ui } = await serveHub();
    const port = Number(new URL(ui).port);
    for (const host of [
      'evil.example',
      `evil.example:${port}`,
      `127.0.0.1:${port + 1}`,
      `localhost.evil.example:${port}`,
    ]) {
      const refused = await get(port, '/events', host);
      expect(refused.status).toBe(403);
      expect(refused.body).not.toContain('"events"');
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`]) {
      expect((await get(port, '/', host)).status).toBe(200);
    }
    const answer = await fetch(new URL('/events', ui), { headers: { origin: 'https://evil.example' } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
    await answer.body!.cancel();
    expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  });
});
