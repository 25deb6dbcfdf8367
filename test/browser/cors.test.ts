/**
 * CORS from a real page in headless Chromium (Debian's `chromium`, driven by `playwright-core`): a page served
 * by this test from one origin runs MCP over fetch (`mcp-page.js`) against our endpoint on another port, in
 * both eras. Chromium resolves `*.test` to 127.0.0.1 (`--host-resolver-rules`), so every server listens on
 * 127.0.0.1 while the page's origin is a name: `http://app.test:<port>`, which CORS allows (and so the Origin
 * check too); `http://127.0.0.1:<port>`, which the Origin check accepts (a local page) but CORS does not; and
 * `http://evil.test:<port>`, which both refuse. The browser is what enforces CORS here: the last two pages'
 * calls must fail in it, and their POSTs never reach the endpoint.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { Server } from '../../lib/server/server';
import { createMcpHttpHandler } from '../../transports/http/endpoint';
import { text } from '../helpers/content';
import { serverWith, tool } from '../helpers/fixtures';
import { cleanups, listenHttp, type LocalHttpServer } from '../helpers/http';

const CHROMIUM = '/usr/bin/chromium';
const PAGE_SCRIPT = readFileSync(new URL('./mcp-page.js', import.meta.url), 'utf8');
const PAGE = '<!doctype html><meta charset="utf-8"><title>MCP page</title><script src="/mcp-page.js"></script>';

const TOOLS = [
  tool('echo'),
  tool('regional', (args: { region?: string }) => text(`region ${args.region}`), {
    inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } },
  }),
];

interface Outcome {
  readonly handshake: { session?: string; protocolVersion?: string; text?: string; deleted?: number; error?: string };
  readonly stateless: { text?: string; resultType?: string; error?: string };
}

/** Serves the page (any host name) on 127.0.0.1. */
async function servePage(): Promise<number> {
  const { server } = await listenHttp((request, response) => {
    if (request.url === '/mcp-page.js') response.writeHead(200, { 'content-type': 'text/javascript' }).end(PAGE_SCRIPT);
    else response.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
  });
  return (server.address() as AddressInfo).port;
}

let launched: Promise<Browser> | undefined;

/** The file's one Chromium, launched by the first test that needs it; a test fails, saying so, without one. */
function browser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is missing at ${CHROMIUM}: the browser tests need Debian's chromium package (apt-get install chromium; .ci/run installs it)`,
    );
  }
  return (launched ??= chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--host-resolver-rules=MAP *.test 127.0.0.1'],
  }));
}

afterAll(async () => {
  await (await launched)?.close();
});

/** Our endpoint with CORS allowing the `app.test` page; closed after the test. */
async function serveEndpoint(pagePort: number): Promise<{ url: string; endpoint: LocalHttpServer }> {
  const server = new Server(serverWith(TOOLS));
  cleanups.push(() => server.close());
  const handler = createMcpHttpHandler(server, { cors: { origins: [`http://app.test:${pagePort}`] } });
  cleanups.push(() => handler.close());
  const endpoint = await listenHttp(handler);
  return { url: `${endpoint.origin}/mcp`, endpoint };
}

/** Opens the page at `pageOrigin` and runs its MCP exchanges against `url`; the page's console errors too. */
async function runFrom(pageOrigin: string, url: string): Promise<{ outcome: Outcome; console: string[] }> {
  const context = await (await browser()).newContext();
  cleanups.push(() => context.close());
  const page = await context.newPage();
  const console: string[] = [];
  page.on('console', (message) => void (message.type() === 'error' && console.push(message.text())));
  await page.goto(`${pageOrigin}/`);
  const outcome = (await page.evaluate((endpoint) => (window as any).runMcpExchanges(endpoint), url)) as Outcome;
  return { outcome, console };
}

function postsFrom(endpoint: LocalHttpServer, origin: string): number {
  return endpoint.seen.filter((request) => request.method === 'POST' && request.headers.origin === origin).length;
}

// Chromium's first launch takes seconds on a busy machine.
describe('MCP from a page in Chromium, across origins', { timeout: 60_000 }, () => {
  it('works from an origin CORS allows, in both eras: the session id is readable, the mirrored headers pass', async () => {
    const pagePort = await servePage();
    const { url, endpoint } = await serveEndpoint(pagePort);
    const pageOrigin = `http://app.test:${pagePort}`;
    const { outcome, console } = await runFrom(pageOrigin, url);
    expect(outcome, console.join('\n')).toEqual({
      handshake: {
        session: expect.stringMatching(/^[0-9a-f-]{36}$/),
        protocolVersion: '2025-11-25',
        text: 'echo',
        deleted: 204,
      },
      stateless: { text: 'region eu', resultType: 'complete' },
    });
    // The browser asked first (the POSTs carry JSON and MCP headers), and the endpoint said yes.
    expect(endpoint.seen.some((request) => request.method === 'OPTIONS' && request.headers.origin === pageOrigin)).toBe(
      true,
    );
  });

  it('fails in the browser from a local origin CORS does not allow: the preflight is refused, no POST is sent', async () => {
    const pagePort = await servePage();
    const { url, endpoint } = await serveEndpoint(pagePort);
    const pageOrigin = `http://127.0.0.1:${pagePort}`;
    const { outcome } = await runFrom(pageOrigin, url);
    expect(outcome).toEqual({
      handshake: { error: 'TypeError: Failed to fetch' },
      stateless: { error: 'TypeError: Failed to fetch' },
    });
    expect(postsFrom(endpoint, pageOrigin)).toBe(0);
  });

  it('fails in the browser from a foreign origin, which the Origin check refuses too', async () => {
    const pagePort = await servePage();
    const { url, endpoint } = await serveEndpoint(pagePort);
    const pageOrigin = `http://evil.test:${pagePort}`;
    const { outcome } = await runFrom(pageOrigin, url);
    expect(outcome).toEqual({
      handshake: { error: 'TypeError: Failed to fetch' },
      stateless: { error: 'TypeError: Failed to fetch' },
    });
    expect(postsFrom(endpoint, pageOrigin)).toBe(0);
    expect(endpoint.seen.filter((request) => request.headers.origin === pageOrigin).length).toBeGreaterThan(0);
  });
});
