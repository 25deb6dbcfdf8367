/**
 * The trace viewer at scale (issue 27 item 6): a trace of 100,000 events (a hub's downstream lane and four
 * upstream lanes; calls, answers, progress, some errors), its page written by `runTraceView`, opened in headless
 * Chromium (Debian's `chromium`). Reports the size of the page, the time from navigation to the first rows shown
 * (parse, model and first render included), the JS heap after the load, and the frames of a scroll through the
 * whole trace (virtualised rows: how many are in the DOM, the mean and the worst frame interval).
 *
 * Standalone: `npx tsx bench/trace-viewer.ts [--events N]`.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { runTraceView } from '../lib/cli/trace-view';

const count = Number(process.argv[process.argv.indexOf('--events') + 1]) || 100_000;

/** `n` events: each call is 4 events downstream and upstream (request in, forwarded out, answer in, answer out). */
function syntheticTrace(n: number): string {
  const lines: string[] = [];
  const upstreams = ['notes', 'files', 'search', 'mail'];
  for (let call = 0; lines.length < n; call++) {
    const upstream = upstreams[call % upstreams.length]!;
    const time = 1_735_732_800_000 + call * 3;
    const latency = (call * 7919) % 250;
    const failed = call % 97 === 0;
    const request = {
      jsonrpc: '2.0',
      id: call,
      method: 'tools/call',
      params: { name: `${upstream}_tool`, arguments: { q: `query ${call}` } },
    };
    const answer = failed
      ? { jsonrpc: '2.0', id: call, error: { code: -32602, message: 'Unknown tool' } }
      : { jsonrpc: '2.0', id: call, result: { content: [{ type: 'text', text: `answer ${call}` }] } };
    const cause = { connection: 'downstream', id: call, kind: 'forwarded' };
    const kind = failed ? 'error' : 'result';
    lines.push(
      JSON.stringify({
        time,
        connection: 'downstream',
        role: 'server',
        name: 'agent',
        kind: 'request',
        direction: 'in',
        method: 'tools/call',
        id: call,
        message: request,
      }),
      JSON.stringify({
        time,
        connection: upstream,
        role: 'client',
        upstream,
        name: upstream,
        kind: 'request',
        direction: 'out',
        method: 'tools/call',
        id: call,
        cause,
        message: request,
      }),
      JSON.stringify({
        time: time + latency,
        connection: upstream,
        role: 'client',
        upstream,
        name: upstream,
        kind,
        direction: 'in',
        method: 'tools/call',
        id: call,
        latencyMs: latency,
        message: answer,
      }),
      JSON.stringify({
        time: time + latency,
        connection: 'downstream',
        role: 'server',
        name: 'agent',
        kind,
        direction: 'out',
        method: 'tools/call',
        id: call,
        latencyMs: latency,
        message: answer,
      }),
    );
  }
  return lines.slice(0, n).join('\n');
}

const dir = mkdtempSync(join(tmpdir(), 'trace-viewer-bench-'));
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
try {
  const input = join(dir, 'trace.ndjson');
  writeFileSync(input, syntheticTrace(count));
  const written = performance.now();
  await runTraceView([input], { out: () => undefined, err: () => undefined });
  const pageMs = performance.now() - written;
  const out = join(dir, 'trace.html');
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const session = await page.context().newCDPSession(page);
  await session.send('Performance.enable');
  const started = Date.now();
  await page.goto(pathToFileURL(out).href);
  await page.locator('.row').first().waitFor();
  const loadMs = Date.now() - started;
  const { metrics } = (await session.send('Performance.getMetrics')) as { metrics: { name: string; value: number }[] };
  const heap = metrics.find((metric) => metric.name === 'JSHeapUsedSize')!.value;
  const scroll = await page.evaluate(async () => {
    const rows = document.querySelector<HTMLElement>('.rows')!;
    const frames: number[] = [];
    let last = performance.now();
    let domRows = 0;
    const steps = 300;
    for (let step = 1; step <= steps; step++) {
      rows.scrollTop = (rows.scrollHeight * step) / steps;
      await new Promise((resolve) => requestAnimationFrame(resolve));
      const now = performance.now();
      frames.push(now - last);
      last = now;
      domRows = Math.max(domRows, document.querySelectorAll('.row').length);
    }
    frames.sort((a, b) => a - b);
    return { mean: frames.reduce((a, b) => a + b, 0) / frames.length, worst: frames[frames.length - 1]!, domRows };
  });
  const summary = await page.locator('#summary').textContent();
  console.log(
    `events: ${count} (${(statSync(input).size / 1e6).toFixed(1)} MB NDJSON), page ${(statSync(out).size / 1e6).toFixed(1)} MB written in ${pageMs.toFixed(0)} ms`,
  );
  console.log(`load to first rows: ${loadMs} ms; JS heap after load: ${(heap / 1e6).toFixed(1)} MB`);
  console.log(
    `scroll through the trace in 300 frames: mean ${scroll.mean.toFixed(1)} ms, worst ${scroll.worst.toFixed(1)} ms, at most ${scroll.domRows} rows in the DOM`,
  );
  console.log(summary);
} finally {
  await browser.close();
  rmSync(dir, { recursive: true, force: true });
}
