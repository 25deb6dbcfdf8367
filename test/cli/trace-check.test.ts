/** `switchboard trace check` and `trace export` through `runCli`: exit codes, output, --json, the export shapes. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../lib/cli/run';

const GOLDEN = join(__dirname, '../fixtures/traces/session.ndjson');

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, { out: (line) => out.push(line), err: (line) => err.push(line) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('switchboard trace check', () => {
  it('lists the findings and exits 1; --allow excuses them and it exits 0', async () => {
    const failed = await cli('trace', 'check', GOLDEN);
    expect(failed.code).toBe(1);
    // The golden trace names its connections once issue 27's names land: `client`, or `client (s)`.
    expect(failed.out).toMatch(
      /error 2025-01-01T12:00:00\.012Z client( \(s\))? tools\/call #2: error -32602: Unknown tool/,
    );
    expect(failed.out).toContain('Check failed: 2 findings not allowed.');
    const passed = await cli('trace', 'check', '--allow', 'error:-32602', GOLDEN);
    expect(passed.code).toBe(0);
    expect(passed.out).toContain('Check passed.');
  });

  it('prints JSON with --json, skipped lines and a cut last line included', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trace-check-'));
    const file = join(dir, 't.ndjson');
    writeFileSync(file, `${readFileSync(GOLDEN, 'utf8')}garbage\n{"time":`);
    const { code, out } = await cli('trace', 'check', '--json', '--allow', 'error', file);
    expect(code).toBe(0);
    const report = JSON.parse(out);
    expect(report).toMatchObject({ events: 35, failures: 0, read: { skipped: 1, truncatedLastLine: true } });
  });

  it('exits 2 on usage errors, and 1 with a clear message for a missing file', async () => {
    expect((await cli('trace', 'check')).code).toBe(2);
    expect((await cli('trace', 'check', '--allow', 'eror', GOLDEN)).err).toContain('"eror" is not a rule');
    expect((await cli('trace', 'export', GOLDEN)).err).toContain('Missing --format');
    expect((await cli('trace', 'export', '--format', 'hra', GOLDEN)).err).toContain('did you mean har?');
    const missing = await cli('trace', 'check', '/nonexistent/trace.ndjson');
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('Cannot read the trace /nonexistent/trace.ndjson');
  });
});

describe('switchboard trace export', () => {
  it('writes HAR 1.2 with its required fields, one entry per request', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'trace-export-')), 't.har');
    expect((await cli('trace', 'export', GOLDEN, '--format', 'har', '--out', out)).code).toBe(0);
    const har = JSON.parse(readFileSync(out, 'utf8'));
    expect(har.log).toMatchObject({ version: '1.2', creator: { name: 'mcp-switchboard' } });
    expect(har.log.entries).toHaveLength(12);
    for (const entry of har.log.entries) {
      expect(Object.keys(entry)).toEqual(
        expect.arrayContaining(['startedDateTime', 'time', 'request', 'response', 'cache', 'timings']),
      );
      expect(Object.keys(entry.request)).toEqual(
        expect.arrayContaining([
          'method',
          'url',
          'httpVersion',
          'cookies',
          'headers',
          'queryString',
          'headersSize',
          'bodySize',
        ]),
      );
      expect(Object.keys(entry.response)).toEqual(
        expect.arrayContaining([
          'status',
          'statusText',
          'httpVersion',
          'cookies',
          'headers',
          'content',
          'redirectURL',
          'headersSize',
          'bodySize',
        ]),
      );
      expect(entry.response.content).toMatchObject({ size: expect.any(Number), mimeType: 'application/json' });
      expect(entry.timings).toMatchObject({
        send: expect.any(Number),
        wait: expect.any(Number),
        receive: expect.any(Number),
      });
      expect(JSON.parse(entry.request.postData.text).jsonrpc).toBe('2.0');
    }
    const cancelled = har.log.entries.filter((entry: { _outcome: string }) => entry._outcome === 'cancelled');
    expect(cancelled.map((entry: { response: { status: number } }) => entry.response.status)).toEqual([0, 0]);
  });

  it('writes OTLP/JSON spans named and attributed after the MCP conventions, with stable ids', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trace-export-'));
    const [a, b] = [join(dir, 'a.json'), join(dir, 'b.json')];
    await cli('trace', 'export', GOLDEN, '--format', 'otlp', '--out', a);
    await cli('trace', 'export', GOLDEN, '--format', 'otlp', '--out', b);
    expect(readFileSync(a, 'utf8')).toBe(readFileSync(b, 'utf8'));
    const otlp = JSON.parse(readFileSync(a, 'utf8'));
    const spans = otlp.resourceSpans[0].scopeSpans[0].spans;
    expect(spans).toHaveLength(12);
    for (const span of spans) {
      expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(span.spanId).toMatch(/^[0-9a-f]{16}$/);
      expect(span.startTimeUnixNano).toMatch(/^\d+$/);
      expect([2, 3]).toContain(span.kind);
    }
    const unknown = spans.find(
      (span: { name: string; kind: number }) => span.name === 'tools/call missing' && span.kind === 3,
    );
    const attribute = (key: string) => unknown.attributes.find((a: { key: string }) => a.key === key)?.value;
    expect(attribute('mcp.method.name')).toEqual({ stringValue: 'tools/call' });
    expect(attribute('gen_ai.tool.name')).toEqual({ stringValue: 'missing' });
    expect(attribute('jsonrpc.request.id')).toEqual({ stringValue: '2' });
    expect(attribute('error.type')).toEqual({ stringValue: '-32602' });
    expect(unknown.status).toEqual({ code: 2, message: 'Unknown tool: missing' });
  });
});
