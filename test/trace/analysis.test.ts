/**
 * Trace analysis (`trace check`): each finding from hand-written events, the NDJSON reader's tolerance, and
 * the findings of real traces recorded from in-process clients and servers in both eras.
 */
import { describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { Runtime } from '../../lib/core/runtime';
import { Server } from '../../lib/server/server';
import { analyzeTrace, type TraceReport } from '../../lib/trace/analysis/analyze';
import { parseAllowEntry } from '../../lib/trace/analysis/findings';
import { emptyReadStats, readTraceEvents } from '../../lib/trace/analysis/ndjson-reader';
import type { TraceEvent } from '../../lib/trace/types';
import { createMemoryPair } from '../../transports/memory';
import { StdioClientTransport } from '../../transports/stdio';
import { cleanups } from '../helpers/cleanups';
import { fixturePath } from '../helpers/paths';
import { traceServer } from '../fixtures/traces/session';

const T = 1_735_732_800_000;
const req = (connection: string, direction: 'in' | 'out', id: number, method = 'tools/call', time = T): TraceEvent => ({
  time,
  connection,
  role: 'client',
  kind: 'request',
  direction,
  method,
  id,
  message: { jsonrpc: '2.0', id, method, params: { name: 'echo' } },
});
const res = (connection: string, direction: 'in' | 'out', id: number, time = T + 5): TraceEvent => ({
  time,
  connection,
  role: 'client',
  kind: 'result',
  direction,
  method: 'tools/call',
  id,
  message: { jsonrpc: '2.0', id, result: {} },
});
const cancel = (connection: string, id: number, reason: string, time = T + 1): TraceEvent => ({
  time,
  connection,
  role: 'client',
  kind: 'notification',
  direction: 'out',
  method: 'notifications/cancelled',
  message: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } },
});
const state = (connection: string, from: string, to: string, role: 'client' | 'server' = 'client'): TraceEvent => ({
  time: T,
  connection,
  role,
  kind: 'lifecycle',
  from,
  to,
});
const rules = (report: TraceReport) => report.findings.map((finding) => finding.rule);

describe('pairing and findings, from hand-written events', () => {
  it('pairs per connection and direction: the same id on two connections, or both ways, is no clash', async () => {
    const report = await analyzeTrace([
      req('a', 'out', 1),
      req('b', 'out', 1),
      req('a', 'in', 1),
      res('a', 'out', 1),
      res('b', 'in', 1),
      res('a', 'in', 1),
    ]);
    expect(report.findings).toEqual([]);
    expect(report.outcomes).toEqual({ result: 3 });
    expect(report.failures).toBe(0);
  });

  it('finds a request never answered, at the end of the trace and at its connection closing', async () => {
    const report = await analyzeTrace([
      req('a', 'out', 1),
      req('b', 'out', 2),
      { ...state('b', 'ready', 'closed'), time: T + 9, reason: 'The transport closed' },
    ]);
    expect(report.findings.map(({ rule, connection, id, detail }) => ({ rule, connection, id, detail }))).toEqual([
      {
        rule: 'unanswered',
        connection: 'b',
        id: 2,
        detail: 'never answered: the connection closed first (The transport closed)',
      },
      { rule: 'unanswered', connection: 'a', id: 1, detail: 'never answered: the trace ends first' },
    ]);
    expect(report.outcomes).toEqual({ closed: 1, unanswered: 1 });
  });

  it('finds a timeout, and the answer that comes after it (as a result, or as the runtime ignored it)', async () => {
    const ignored: TraceEvent = {
      time: T + 20,
      connection: 'a',
      role: 'client',
      kind: 'ignored',
      direction: 'in',
      id: 2,
      reason: 'No request in flight has this id (late or duplicate response)',
      message: { jsonrpc: '2.0', id: 2, result: {} },
    };
    const report = await analyzeTrace([
      req('a', 'out', 1),
      cancel('a', 1, 'The request timed out', T + 10),
      res('a', 'in', 1, T + 12),
      req('a', 'out', 2),
      cancel('a', 2, 'The request was cancelled by the requester'),
      ignored,
    ]);
    expect(rules(report)).toEqual(['timeout', 'late-answer', 'late-answer']);
    expect(report.findings[1]!.detail).toBe('answered after the request timed out');
    expect(report.findings[2]).toMatchObject({
      method: 'tools/call',
      id: 2,
      detail: 'answered after the request was cancelled',
    });
    expect(report.outcomes).toEqual({ 'timed-out': 1, cancelled: 1 });
  });

  it("finds a receiver's answer after the cancellation reached it; an answer withheld is no finding", async () => {
    const serverSide = (event: TraceEvent): TraceEvent => ({ ...event, role: 'server', direction: 'in' });
    const report = await analyzeTrace([
      req('s', 'in', 1),
      serverSide(cancel('s', 1, 'gave up')),
      res('s', 'out', 1),
      req('s', 'in', 2),
      serverSide(cancel('s', 2, 'gave up')),
      { time: T + 3, connection: 's', role: 'server', kind: 'ignored', direction: 'out', method: 'tools/call', id: 2 },
    ]);
    expect(rules(report)).toEqual(['late-answer']);
    expect(report.outcomes).toEqual({ result: 1, cancelled: 1 });
  });

  it('finds invalid frames, answers to unknown ids, ids reused in flight, and errors by code', async () => {
    const error = (id: number | null, code: number): TraceEvent => ({
      time: T,
      connection: 'a',
      role: 'client',
      kind: 'error',
      direction: 'in',
      method: 'tools/call',
      ...(id !== null && { id }),
      message: { jsonrpc: '2.0', id, error: { code, message: 'nope' } },
    });
    const report = await analyzeTrace([
      { time: T, connection: 'a', role: 'server', kind: 'invalid', direction: 'in', reason: 'Not JSON' },
      res('a', 'in', 7),
      req('a', 'out', 1),
      req('a', 'out', 1),
      error(1, -32601),
      error(null, -32700),
    ]);
    expect(rules(report)).toEqual(['invalid-frame', 'unknown-id', 'duplicate-id', 'error', 'error']);
    expect(report.errorsByCode).toEqual({ '-32601': 1, '-32700': 1 });
    const allowed = await analyzeTrace([error(null, -32601)], {
      allow: { rules: new Set(), errorCodes: new Set([-32601]) },
    });
    expect(allowed.failures).toBe(0);
    expect(allowed.findings[0]!.allowed).toBe(true);
  });

  it('finds what the era does not allow, in both eras, and judges nothing before the era is known', async () => {
    const modern = await analyzeTrace([
      req('m', 'out', 0, 'ping'),
      state('m', 'uninitialized', 'modern'),
      req('m', 'out', 1, 'ping'),
      req('m', 'out', 2, 'initialize'),
      { ...req('m', 'in', 3, 'tools/list'), role: 'client' },
    ]);
    expect(modern.findings.filter((f) => f.rule === 'era-violation').map((f) => [f.id, f.detail])).toEqual([
      [1, 'ping does not exist in the 2026-07-28 (stateless) era: the revision has no ping'],
      [2, expect.stringContaining('initialize does not exist in the 2026-07-28 (stateless) era')],
      [3, 'a server may not send tools/list in the 2026-07-28 (stateless) era'],
    ]);
    const handshake = await analyzeTrace([
      state('h', 'uninitialized', 'initializing'),
      req('h', 'out', 1, 'server/discover'),
      req('h', 'out', 2, 'ping'),
    ]);
    expect(handshake.findings.filter((f) => f.rule === 'era-violation').map((f) => f.detail)).toEqual([
      'server/discover does not exist in the handshake era',
    ]);
  });

  it('computes latency percentiles per method and per upstream, and flags answers over --max-latency', async () => {
    const events: TraceEvent[] = [];
    for (let i = 1; i <= 100; i++) {
      events.push({ ...req('u', 'out', i), upstream: 'fs' }, { ...res('u', 'in', i), latencyMs: i });
    }
    const report = await analyzeTrace(events, { maxLatencyMs: 98 });
    expect(report.latencyByMethod).toEqual([{ key: 'tools/call', count: 100, p50: 50, p90: 90, p99: 99, max: 100 }]);
    expect(report.latencyByUpstream).toEqual([{ key: 'fs', count: 100, p50: 50, p90: 90, p99: 99, max: 100 }]);
    expect(report.findings.map((f) => [f.rule, f.id, f.name])).toEqual([
      ['slow', 99, 'fs'],
      ['slow', 100, 'fs'],
    ]);
  });

  it('reads --allow entries, and says what is wrong with one that is no rule', () => {
    expect(parseAllowEntry('timeout')).toEqual({ rule: 'timeout' });
    expect(parseAllowEntry('error:-32601')).toEqual({ errorCode: -32601 });
    expect(parseAllowEntry('eror')).toEqual({ problem: expect.stringContaining('"eror" is not a rule') });
  });
});

describe("a client's era probe", () => {
  const probe = (connection: string, id: string, time = T): TraceEvent => ({
    ...req(connection, 'out', 0, 'server/discover', time),
    id,
    message: { jsonrpc: '2.0', id, method: 'server/discover', params: {} },
  });
  /** The probe's error event: an answer, or (with `reason` and no message) none. */
  const probeError = (connection: string, id: string): TraceEvent => ({
    time: T + 2,
    connection,
    role: 'client',
    kind: 'error',
    direction: 'in',
    method: 'server/discover',
    id,
    latencyMs: 2,
  });
  const refused = (connection: string, id: string, code = -32601): TraceEvent => ({
    ...probeError(connection, id),
    message: { jsonrpc: '2.0', id, error: { code, message: 'Method not found' } },
  });
  const noAnswer = (connection: string, id: string, reason: string): TraceEvent => ({
    ...probeError(connection, id),
    reason,
  });
  const verdict = (connection: string, to: string, from = 'probing'): TraceEvent => ({
    ...state(connection, from, to),
    actor: 'era-probe',
    reason: `why ${to}`,
  });

  it('is no finding when it falls back: a -32601, or an HTTP 404 without a JSON-RPC answer', async () => {
    const report = await analyzeTrace([
      probe('a', 'p1'),
      refused('a', 'p1'),
      verdict('a', 'handshake'),
      state('a', 'uninitialized', 'initializing'),
      probe('b', 'p2'),
      noAnswer('b', 'p2', 'no JSON-RPC answer: HTTP 404 without a JSON-RPC body'),
      verdict('b', 'handshake'),
    ]);
    expect(report.findings).toEqual([]);
    expect(report.failures).toBe(0);
    expect(report.outcomes).toEqual({ error: 2 });
    expect(report.errorsByCode).toEqual({ '-32601': 1, none: 1 });
  });

  it('is no finding when a -32022 leads to a corrective probe that finds the server modern', async () => {
    const report = await analyzeTrace([
      probe('a', 'p1'),
      refused('a', 'p1', -32022),
      verdict('a', 'corrective'),
      probe('a', 'p2'),
      { ...res('a', 'in', 0), id: 'p2', method: 'server/discover' },
      verdict('a', 'modern', 'corrective'),
    ]);
    expect(report.findings).toEqual([]);
  });

  it('is a finding when it failed: its refusal, or the failure itself when nothing was refused', async () => {
    const report = await analyzeTrace([
      probe('a', 'p1'),
      noAnswer('a', 'p1', 'no JSON-RPC answer: HTTP 503 without a JSON-RPC body'),
      verdict('a', 'failed'),
      probe('b', 'p2'),
      { ...res('b', 'in', 0), id: 'p2', method: 'server/discover' },
      verdict('b', 'failed'),
    ]);
    expect(report.findings.map((finding) => [finding.connection, finding.rule, finding.detail])).toEqual([
      ['a', 'error', 'error (no code): no JSON-RPC answer: HTTP 503 without a JSON-RPC body'],
      ['b', 'error', 'the era probe failed: why failed'],
    ]);
    expect(report.failures).toBe(2);
  });

  it('is a finding when the trace or the connection ends before its verdict', async () => {
    const report = await analyzeTrace([
      probe('a', 'p1'),
      refused('a', 'p1'),
      probe('b', 'p2'),
      refused('b', 'p2'),
      { ...state('b', 'uninitialized', 'closed'), reason: 'closed' },
    ]);
    expect(report.findings.map((finding) => `${finding.connection} ${finding.rule} ${finding.code}`).sort()).toEqual([
      'a error -32601',
      'b error -32601',
    ]);
  });

  it("a reconnection's refused probe, on a connection with its era, is a finding at once", async () => {
    const report = await analyzeTrace([
      state('a', 'uninitialized', 'modern'),
      probe('a', 'p1'),
      refused('a', 'p1'),
      verdict('a', 'handshake'),
    ]);
    expect(rules(report)).toEqual(['error']);
  });
});

describe('the NDJSON reader', () => {
  async function* chunks(...parts: string[]) {
    for (const part of parts) yield new TextEncoder().encode(part);
  }

  it('skips and counts lines that are not events, and notes a last line cut short', async () => {
    const stats = emptyReadStats();
    const line = JSON.stringify(req('a', 'out', 1));
    const events: TraceEvent[] = [];
    // An event split across chunks, a multi-byte character split too, garbage, a non-event object.
    const text = `${line.slice(0, 10)}|${line.slice(10)}\nnot json\n{"time":1}\n\n[1]\n${JSON.stringify({ ...res('a', 'in', 1), reason: 'é' })}\n${line.slice(0, 30)}`;
    const bytes = new TextEncoder().encode(text.replace('|', ''));
    const cut = bytes.indexOf(0xc3);
    async function* split() {
      yield bytes.slice(0, 7);
      yield bytes.slice(7, cut + 1);
      yield bytes.slice(cut + 1);
    }
    for await (const event of readTraceEvents(split(), stats)) events.push(event);
    expect(events.map((event) => [event.kind, event.reason])).toEqual([
      ['request', undefined],
      ['result', 'é'],
    ]);
    expect(stats).toMatchObject({ events: 2, skipped: 3, truncatedLastLine: true });
    expect(stats.skippedSamples).toEqual([
      { line: 2, why: 'not JSON' },
      { line: 3, why: 'no "connection"' },
      { line: 5, why: 'not a JSON object' },
    ]);
    void chunks;
  });

  it('drops a line longer than the limit without keeping it, and reads on', async () => {
    const stats = emptyReadStats();
    const line = JSON.stringify(req('a', 'out', 1));
    const long = `{"time":1,"connection":"${'x'.repeat(500)}"}`;
    async function* parts() {
      yield long.slice(0, 200);
      yield long.slice(200) + '\n' + line + '\n';
    }
    const events: TraceEvent[] = [];
    for await (const event of readTraceEvents(parts(), stats, 300)) events.push(event);
    expect(events).toHaveLength(1);
    expect(stats.skippedSamples).toEqual([{ line: 1, why: 'longer than 300 characters' }]);
  });
});

describe('findings of real traces', () => {
  async function record(era: 'handshake' | 'modern', run: (client: Client) => Promise<void>): Promise<TraceReport> {
    const runtime = new Runtime();
    const events: TraceEvent[] = [];
    const subscription = runtime.trace$.subscribe((event) => events.push(JSON.parse(JSON.stringify(event))));
    const server = new Server(traceServer());
    const [clientSide, serverSide] = createMemoryPair();
    const connection = server.connect(serverSide, { runtime });
    const client = new Client({ name: 'c', version: '1' }, { runtime, era });
    cleanups.push(
      () => client.close(),
      () => server.close(),
    );
    await client.connect(clientSide);
    await run(client);
    await client.close();
    await connection.closed;
    subscription.unsubscribe();
    return analyzeTrace(events);
  }

  it('a client that probes a handshake-era server (the SDK v1 over stdio) and falls back: no finding', async () => {
    const runtime = new Runtime();
    const events: TraceEvent[] = [];
    const subscription = runtime.trace$.subscribe((event) => events.push(JSON.parse(JSON.stringify(event))));
    const client = new Client({ name: 'c', version: '1' }, { runtime, eraCache: false });
    cleanups.push(() => client.close());
    const sdkV1 = fixturePath('sdk-v1-stdio-server.mjs');
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [sdkV1] }));
    await client.callTool('echo', {});
    await client.close();
    subscription.unsubscribe();
    const report = await analyzeTrace(events);
    expect(report.errorsByCode).toEqual({ '-32601': 1 });
    expect(report.findings).toEqual([]);
    expect(report.failures).toBe(0);
  });

  for (const era of ['handshake', 'modern'] as const) {
    it(`${era}: a call that times out, a cancelled one, an unknown tool; nothing else`, async () => {
      const report = await record(era, async (client) => {
        await client.callTool('echo', { text: 'hi' });
        await client.callTool('wait', {}, { timeout: 20 }).catch(() => undefined);
        const controller = new AbortController();
        const waiting = client.callTool('wait', {}, { signal: controller.signal }).catch(() => undefined);
        await client.callTool('echo', { text: 'the server is waiting' });
        controller.abort();
        await waiting;
        await client.callTool('missing', {}).catch(() => undefined);
        await client.callTool('echo', { text: 'settled' });
      });
      const found = report.findings.map((f) => `${f.rule} ${f.method} ${f.code ?? ''}`.trim());
      expect(found.filter((f) => f.startsWith('timeout'))).toEqual(['timeout tools/call']);
      expect(found.filter((f) => f.startsWith('error')).every((f) => f === 'error tools/call -32602')).toBe(true);
      expect(found.filter((f) => !f.startsWith('timeout') && !f.startsWith('error'))).toEqual([]);
      expect(report.outcomes['timed-out']).toBeGreaterThanOrEqual(1);
      expect(report.outcomes.cancelled).toBeGreaterThanOrEqual(1);
      expect(report.latencyByMethod.map((row) => row.key)).toContain('tools/call');
    });
  }
});
