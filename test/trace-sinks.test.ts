/**
 * The sinks (NDJSON to a file, pretty lines) and redaction, which every sink sees applied: the stream
 * subscribers, the NDJSON and pretty sinks, the file, and the payloads OpenTelemetry records.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpanKind } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { Runtime } from '../lib/core/runtime';
import type { Logger } from '../lib/core/logger';
import { Server } from '../lib/server/server';
import { openTelemetry } from '../lib/trace/otel';
import { createRedactor, REDACTED } from '../lib/trace/redact';
import { createNdjsonFileSink } from '../lib/trace/sinks/file';
import { createNdjsonTraceSink, toNdjsonLine } from '../lib/trace/sinks/ndjson';
import { createPrettyTraceSink } from '../lib/trace/sinks/pretty';
import type { TraceEvent } from '../lib/trace/types';
import { fakeClock, GOLDEN_EPOCH, openPair, runGoldenSession, traceServer } from './fixtures/traces/session';

const directory = mkdtempSync(join(tmpdir(), 'switchboard-trace-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const lines = (path: string) => readFileSync(path, 'utf8').split('\n');

describe('the NDJSON file sink', () => {
  it('writes one valid JSON line per event and closes cleanly', async () => {
    const path = join(directory, 'session.ndjson');
    const clock = fakeClock();
    const runtime = new Runtime({ clock });
    const sink = createNdjsonFileSink(path);
    const seen: TraceEvent[] = [];
    const subscription = runtime.trace$.subscribe(sink);
    runtime.trace$.subscribe((event) => seen.push(event));
    const pair = await openPair(new Server(traceServer(clock)), runtime, runtime, {
      client: { clock },
      server: { clock },
    });
    await runGoldenSession(pair, clock);
    subscription.unsubscribe();
    await sink.close();
    await sink.close(); // twice is fine

    const written = lines(path);
    expect(written.pop()).toBe(''); // the last line ends with a newline too
    expect(written.map((line) => JSON.parse(line))).toEqual(JSON.parse(JSON.stringify(seen)));
    expect(written.length).toBeGreaterThan(30);
    sink.next(seen[0]!); // after close: dropped, not written, not thrown
    expect(lines(path)).toHaveLength(written.length + 1);
    expect(sink.dropped).toBe(0);
  });

  it("ends the file when a connection's trace completes, its closed event last", async () => {
    const path = join(directory, 'connection.ndjson');
    const { client } = await openPair(new Server(traceServer()), new Runtime());
    const sink = createNdjsonFileSink(path);
    client.trace$.subscribe(sink);
    await client.ping();
    await client.close();
    await sink.close();
    const last = JSON.parse(lines(path).at(-2)!);
    expect(last).toMatchObject({ kind: 'lifecycle', from: 'closing', to: 'closed', connection: client.id });
  });

  it('reports a file it cannot open from close(), with no unhandled error', async () => {
    const path = join(directory, 'no-such-directory', 'trace.ndjson');
    const sink = createNdjsonFileSink(path);
    sink.next({ time: 0, connection: 'c1', kind: 'lifecycle', from: 'a', to: 'b' });
    await expect(sink.close()).rejects.toThrow(`Cannot write the trace file ${path}: ENOENT`);
  });

  it('appends when asked, and drops (and counts) events while the disk is too far behind', async () => {
    const path = join(directory, 'append.ndjson');
    const event: TraceEvent = { time: 0, connection: 'c1', kind: 'lifecycle', from: 'a', to: 'b' };
    const first = createNdjsonFileSink(path);
    first.next(event);
    await first.close();
    const second = createNdjsonFileSink(path, { append: true, maxBufferedBytes: 0 });
    second.next(event); // nothing buffered yet: written
    second.next(event); // the first line is still on its way: dropped
    await second.close();
    expect(second.dropped).toBe(1);
    expect(lines(path)).toEqual([toNdjsonLine(event), toNdjsonLine(event), '']);
  });
});

describe('NDJSON and pretty lines', () => {
  it('never throw on a message JSON cannot hold, and show errors by name and message', () => {
    const event: TraceEvent = { time: GOLDEN_EPOCH, connection: 'c1', kind: 'invalid', direction: 'in', message: 1n };
    expect(JSON.parse(toNdjsonLine(event)).message).toBe('[unserializable]');
    const frameError: TraceEvent = { ...event, message: new RangeError('bad frame') };
    expect(JSON.parse(toNdjsonLine(frameError)).message).toEqual({ name: 'RangeError', message: 'bad frame' });
    const pretty: string[] = [];
    createPrettyTraceSink((line) => pretty.push(line)).next(event);
    expect(pretty).toEqual(['12:00:00.000 c1    <- invalid 1n']);
  });

  it('writes pretty lines to stderr by default, and nothing once closed', async () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const sink = createPrettyTraceSink();
      const event: TraceEvent = {
        time: GOLDEN_EPOCH,
        connection: 'c7',
        upstream: 'git',
        kind: 'lifecycle',
        from: 'ready',
        to: 'closing',
        quitKind: 'local-close',
        reason: 'bye',
      };
      sink.next(event);
      await sink.close();
      sink.next(event);
      expect(write.mock.calls).toEqual([['12:00:00.000 c7@git ·· ready → closing (local-close: bye)\n']]);
    } finally {
      write.mockRestore();
    }
  });
});

describe('redaction', () => {
  const SECRET = 'hunter2';
  const redact = createRedactor({ arguments: true, results: true, meta: ['authorization'] });

  it('is applied before every sink: subscribers, NDJSON, pretty, the file and OpenTelemetry payloads', async () => {
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('t');
    const runtime = new Runtime({ redact, instrumentation: openTelemetry({ tracer, recordPayloads: true }) });
    const path = join(directory, 'redacted.ndjson');
    const file = createNdjsonFileSink(path);
    const outputs = {
      ndjson: [] as string[],
      pretty: [] as string[],
      events: [] as TraceEvent[],
      connection: [] as TraceEvent[],
    };
    runtime.trace$.subscribe(file);
    runtime.trace$.subscribe(createNdjsonTraceSink((line) => outputs.ndjson.push(line)));
    runtime.trace$.subscribe(createPrettyTraceSink((line) => outputs.pretty.push(line), { maxPayload: 10_000 }));
    runtime.trace$.subscribe((event) => outputs.events.push(event));
    // Redaction changes what the trace shows, so the schema check (which reads the trace) is off here.
    const { client, serverConnection } = await openPair(new Server(traceServer()), runtime, runtime, {
      validate: false,
    });
    serverConnection.trace$.subscribe((event) => outputs.connection.push(event));

    const result = await client.request('tools/call', {
      name: 'secret',
      arguments: { token: SECRET },
      _meta: { authorization: `Bearer ${SECRET}`, 'com.example/visible': 'kept' },
    });
    expect(result).toEqual({ content: [{ type: 'text', text: `token ${SECRET}` }] }); // the peers saw it all
    await client.close();
    await file.close();

    const shown = {
      ...outputs,
      file: readFileSync(path, 'utf8'),
      spans: exporter.getFinishedSpans().map((span) => span.attributes),
    };
    expect(JSON.stringify(shown)).not.toContain(SECRET);
    const request = outputs.events.find(
      (e) => e.kind === 'request' && e.method === 'tools/call' && e.direction === 'out',
    );
    expect((request!.message as { params: unknown }).params).toEqual({
      name: 'secret',
      arguments: REDACTED,
      _meta: { authorization: REDACTED, 'com.example/visible': 'kept', traceparent: expect.any(String) },
    });
    const response = outputs.events.find(
      (e) => e.kind === 'result' && e.method === 'tools/call' && e.direction === 'in',
    );
    expect((response!.message as { result: unknown }).result).toBe(REDACTED);
    const serverSpan = exporter
      .getFinishedSpans()
      .find((span) => span.name === 'tools/call secret' && span.kind === SpanKind.SERVER)!;
    expect(JSON.parse(String(serverSpan.attributes['mcp_switchboard.request.params']))).toEqual({
      name: 'secret',
      arguments: REDACTED,
      _meta: { authorization: REDACTED, 'com.example/visible': 'kept', traceparent: expect.any(String) },
    });
    expect(serverSpan.attributes['mcp_switchboard.response.result']).toBe(JSON.stringify(REDACTED));
  });

  it('a redactor that throws costs the event its message, nothing else', async () => {
    const errors: string[] = [];
    const logger: Logger = { debug() {}, info() {}, warn() {}, error: (message) => void errors.push(message) };
    const runtime = new Runtime({
      redact: () => {
        throw new Error('redactor bug');
      },
    });
    const events: TraceEvent[] = [];
    runtime.trace$.subscribe((event) => events.push(event));
    const { client } = await openPair(new Server(traceServer()), runtime, runtime, {
      validate: false,
      client: { logger },
      server: { logger },
    });
    expect(await client.callTool('echo', { text: 'x' })).toEqual({ content: [{ type: 'text', text: 'x' }] });
    await client.close();
    const withMessages = events.filter((e) => e.kind !== 'lifecycle');
    expect(withMessages.length).toBeGreaterThan(5);
    expect(withMessages.every((e) => e.message === REDACTED)).toBe(true);
    expect(errors[0]).toBe('The trace redactor threw: the message is left out of the trace event');
  });
});

describe('createRedactor', () => {
  const request = <P extends object>(method: string, params: P) => ({ jsonrpc: '2.0', id: 1, method, params });

  it('replaces tool and prompt arguments, tool results and listed _meta keys, in copies', () => {
    const redact = createRedactor({ arguments: true, results: true, meta: ['token'] });
    const call = request('tools/call', { name: 't', arguments: { a: 1 }, _meta: { token: 't', other: 1 } });
    expect(redact(call, { kind: 'request', method: 'tools/call' })).toEqual(
      request('tools/call', { name: 't', arguments: REDACTED, _meta: { token: REDACTED, other: 1 } }),
    );
    expect(call.params.arguments).toEqual({ a: 1 }); // the original is untouched
    expect(
      redact(request('prompts/get', { name: 'p', arguments: { x: 'y' } }), { kind: 'request', method: 'prompts/get' }),
    ).toEqual(request('prompts/get', { name: 'p', arguments: REDACTED }));
    const toolResult = { jsonrpc: '2.0', id: 1, result: { content: [] } };
    expect(redact(toolResult, { kind: 'result', method: 'tools/call' })).toEqual({ ...toolResult, result: REDACTED });
    const otherResult = { jsonrpc: '2.0', id: 1, result: { tools: [], _meta: { token: 'x' } } };
    expect(redact(otherResult, { kind: 'result', method: 'tools/list' })).toEqual({
      ...otherResult,
      result: { tools: [], _meta: { token: REDACTED } },
    });
    const progress = {
      jsonrpc: '2.0',
      method: 'notifications/progress',
      params: { progressToken: 1, progress: 1, _meta: { token: 'x' } },
    };
    expect(redact(progress, { kind: 'notification', method: progress.method })).toEqual({
      ...progress,
      params: { ...progress.params, _meta: { token: REDACTED } },
    });
  });

  it('returns what needs no redaction as is, batches element by element', () => {
    const redact = createRedactor({ arguments: true, meta: (key) => key.startsWith('secret/') });
    const list = request('tools/list', {});
    expect(redact(list, { kind: 'request', method: 'tools/list' })).toBe(list);
    const batch = [list, request('tools/call', { name: 't', arguments: {}, _meta: { 'secret/a': 1 } })];
    expect(redact(batch, { kind: 'batch', direction: 'in' })).toEqual([
      list,
      request('tools/call', { name: 't', arguments: REDACTED, _meta: { 'secret/a': REDACTED } }),
    ]);
    expect(redact([list], { kind: 'batch' })).toEqual([list]);
    expect(redact('not a message', { kind: 'invalid' })).toBe('not a message');
  });

  it('takes replacement functions and a placeholder', () => {
    const redact = createRedactor({
      arguments: (value) => Object.keys(value as object),
      results: (_value, context) => `hidden ${context.method}`,
      meta: ['k'],
      placeholder: null,
    });
    expect(
      redact(request('tools/call', { name: 't', arguments: { a: 1, b: 2 }, _meta: { k: 1 } }), {
        kind: 'request',
        method: 'tools/call',
      }),
    ).toEqual(request('tools/call', { name: 't', arguments: ['a', 'b'], _meta: { k: null } }));
    expect(redact({ jsonrpc: '2.0', id: 1, result: {} }, { kind: 'result', method: 'tools/call' })).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: 'hidden tools/call',
    });
  });
});
