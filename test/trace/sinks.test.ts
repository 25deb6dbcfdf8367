/**
 * The sinks (NDJSON to a file, pretty lines) and redaction, which every sink sees applied: the stream
 * subscribers, the NDJSON and pretty sinks, the file, and the payloads OpenTelemetry records.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpanKind } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { Runtime } from '../../lib/core/runtime';
import type { Logger } from '../../lib/core/logger';
import { Server } from '../../lib/server/server';
import { openTelemetry } from '../../lib/trace/otel';
import { createRedactor, REDACTED } from '../../lib/trace/redact';
import { createNdjsonFileSink } from '../../lib/trace/sinks/file';
import { createNdjsonTraceSink, toNdjsonLine } from '../../lib/trace/sinks/ndjson';
import { createPrettyTraceSink } from '../../lib/trace/sinks/pretty';
import type { TraceEvent } from '../../lib/trace/types';
import { fakeClock, GOLDEN_EPOCH, openPair, runGoldenSession, traceServer } from '../fixtures/traces/session';
import { recordingTracer } from './otel-recording-tracer';

const directory = mkdtempSync(join(tmpdir(), 'switchboard-trace-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const lines = (path: string) => readFileSync(path, 'utf8').split('\n');

describe('the NDJSON file sink', () => {
  describe('given a whole session', () => {
    let session: Awaited<ReturnType<typeof writeGoldenSession>>;
    /** The golden session written to a file sink, closed, and the events the runtime traced. */
    async function writeGoldenSession() {
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
      return { path, sink, seen };
    }
    beforeEach(async () => {
      session = await writeGoldenSession();
    });

    it('ends the last line with a newline too', () => {
      expect(lines(session.path).pop()).toBe('');
    });

    it('writes one valid JSON line per event', () => {
      const written = lines(session.path).slice(0, -1);
      expect(written.map((line) => JSON.parse(line))).toEqual(JSON.parse(JSON.stringify(session.seen)));
      expect(written.length).toBeGreaterThan(30);
    });

    it('accepts a second close', async () => {
      await expect(session.sink.close()).resolves.toBeUndefined();
    });

    it('drops an event sent after close, without writing or throwing', () => {
      const before = lines(session.path).length;
      session.sink.next(session.seen[0]!);
      expect(lines(session.path)).toHaveLength(before);
      expect(session.sink.dropped).toBe(0);
    });
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

  const lifecycleEvent: TraceEvent = { time: 0, connection: 'c1', kind: 'lifecycle', from: 'a', to: 'b' };

  it('appends to an existing file when asked', async () => {
    const path = join(directory, 'append.ndjson');
    const first = createNdjsonFileSink(path);
    first.next(lifecycleEvent);
    await first.close();
    const second = createNdjsonFileSink(path, { append: true });
    second.next(lifecycleEvent);
    await second.close();
    expect(lines(path)).toEqual([toNdjsonLine(lifecycleEvent), toNdjsonLine(lifecycleEvent), '']);
  });

  it('writes the file for its owner only (0600), a file that was there too', async () => {
    const fresh = join(directory, 'fresh.ndjson');
    const existing = join(directory, 'existing.ndjson');
    writeFileSync(existing, '', { mode: 0o644 });
    chmodSync(existing, 0o644);
    for (const path of [fresh, existing]) {
      const sink = createNdjsonFileSink(path, { append: path === existing });
      sink.next(lifecycleEvent);
      await sink.close();
      expect(statSync(path).mode & 0o777).toBe(0o600);
    }
  });

  it('drops, and counts, events while the disk is too far behind', async () => {
    const path = join(directory, 'behind.ndjson');
    const sink = createNdjsonFileSink(path, { maxBufferedBytes: 0 });
    sink.next(lifecycleEvent); // nothing buffered yet: written
    sink.next(lifecycleEvent); // the first line is still on its way: dropped
    await sink.close();
    expect(sink.dropped).toBe(1);
    expect(lines(path)).toEqual([toNdjsonLine(lifecycleEvent), '']);
  });
});

describe('NDJSON and pretty lines', () => {
  const unserializable: TraceEvent = {
    time: GOLDEN_EPOCH,
    connection: 'c1',
    kind: 'invalid',
    direction: 'in',
    message: 1n,
  };

  it('NDJSON marks a message JSON cannot hold as unserializable', () => {
    expect(JSON.parse(toNdjsonLine(unserializable)).message).toBe('[unserializable]');
  });

  it('NDJSON shows an error by name and message', () => {
    const frameError: TraceEvent = { ...unserializable, message: new RangeError('bad frame') };
    expect(JSON.parse(toNdjsonLine(frameError)).message).toEqual({ name: 'RangeError', message: 'bad frame' });
  });

  it('a pretty line shows a message JSON cannot hold', () => {
    const pretty: string[] = [];
    createPrettyTraceSink((line) => pretty.push(line)).next(unserializable);
    expect(pretty).toEqual(['12:00:00.000 c1    <- invalid 1n']);
  });

  describe('the pretty sink with no writer given', () => {
    let write: MockInstance<typeof process.stderr.write>;
    beforeEach(() => {
      write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    });
    afterEach(() => write.mockRestore());
    const closing: TraceEvent = {
      time: GOLDEN_EPOCH,
      connection: 'c7',
      upstream: 'git',
      kind: 'lifecycle',
      from: 'ready',
      to: 'closing',
      quitKind: 'local-close',
      reason: 'bye',
    };

    it('writes pretty lines to stderr', () => {
      createPrettyTraceSink().next(closing);
      expect(write.mock.calls).toEqual([['12:00:00.000 c7@git ·· ready → closing (local-close: bye)\n']]);
    });

    it('writes nothing once closed', async () => {
      const sink = createPrettyTraceSink();
      await sink.close();
      sink.next(closing);
      expect(write).not.toHaveBeenCalled();
    });
  });
});

describe('redaction', () => {
  const SECRET = 'hunter2';
  const redact = createRedactor({ arguments: true, results: true, meta: ['authorization'] });

  describe('applied to a call carrying a secret', () => {
    let seen: Awaited<ReturnType<typeof callWithSecret>>;
    /**
     * A call with the secret in its arguments, _meta and result, traced by a runtime that redacts, into every
     * kind of sink: the runtime's and the connection's subscribers, NDJSON, pretty, a file and OpenTelemetry
     * (payloads recorded).
     */
    async function callWithSecret() {
      const { exporter, tracer } = recordingTracer('t');
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
      await client.close();
      await file.close();
      const shown = {
        ...outputs,
        file: readFileSync(path, 'utf8'),
        spans: exporter.getFinishedSpans().map((span) => span.attributes),
      };
      const serverSpan = exporter
        .getFinishedSpans()
        .find((span) => span.name === 'tools/call secret' && span.kind === SpanKind.SERVER)!;
      return { result, outputs, shown, serverSpan };
    }
    beforeAll(async () => {
      seen = await callWithSecret();
    });
    const redactedParams = {
      name: 'secret',
      arguments: REDACTED,
      _meta: { authorization: REDACTED, 'com.example/visible': 'kept', traceparent: expect.any(String) },
    };

    it('leaves the peers the whole call', () => {
      expect(seen.result).toEqual({ content: [{ type: 'text', text: `token ${SECRET}` }] });
    });

    it.each(['events', 'connection', 'ndjson', 'pretty', 'file', 'spans'] as const)(
      'shows the secret nowhere in the %s sink',
      (sink) => {
        expect(JSON.stringify(seen.shown[sink])).not.toContain(SECRET);
      },
    );

    it('redacts the arguments and the listed _meta keys of a traced request', () => {
      const request = seen.outputs.events.find(
        (e) => e.kind === 'request' && e.method === 'tools/call' && e.direction === 'out',
      );
      expect((request!.message as { params: unknown }).params).toEqual(redactedParams);
    });

    it('redacts the result of a traced response', () => {
      const response = seen.outputs.events.find(
        (e) => e.kind === 'result' && e.method === 'tools/call' && e.direction === 'in',
      );
      expect((response!.message as { result: unknown }).result).toBe(REDACTED);
    });

    it('redacts the request params OpenTelemetry records', () => {
      expect(JSON.parse(String(seen.serverSpan.attributes['mcp_switchboard.request.params']))).toEqual(redactedParams);
    });

    it('redacts the response result OpenTelemetry records', () => {
      expect(seen.serverSpan.attributes['mcp_switchboard.response.result']).toBe(JSON.stringify(REDACTED));
    });
  });

  describe('a redactor that throws', () => {
    let seen: Awaited<ReturnType<typeof callWithThrowingRedactor>>;
    /** An echo call traced by a runtime whose redactor throws, its connections logging errors. */
    async function callWithThrowingRedactor() {
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
      const result = await client.callTool('echo', { text: 'x' });
      await client.close();
      return { result, errors, withMessages: events.filter((e) => e.kind !== 'lifecycle') };
    }
    beforeAll(async () => {
      seen = await callWithThrowingRedactor();
    });

    it('leaves the call alone', () => {
      expect(seen.result).toEqual({ content: [{ type: 'text', text: 'x' }] });
    });

    it('costs each event its message, replaced by the placeholder', () => {
      expect(seen.withMessages.length).toBeGreaterThan(5);
      expect(seen.withMessages.every((e) => e.message === REDACTED)).toBe(true);
    });

    it('is logged as an error', () => {
      expect(seen.errors[0]).toBe('The trace redactor threw: the message is left out of the trace event');
    });
  });
});

describe('createRedactor', () => {
  const request = <P extends object>(method: string, params: P) => ({ jsonrpc: '2.0', id: 1, method, params });

  describe('replacing everything, with the token _meta key listed', () => {
    const redact = createRedactor({ arguments: true, results: true, meta: ['token'] });
    const call = () => request('tools/call', { name: 't', arguments: { a: 1 }, _meta: { token: 't', other: 1 } });

    it('replaces tool arguments and listed _meta keys', () => {
      expect(redact(call(), { kind: 'request', method: 'tools/call' })).toEqual(
        request('tools/call', { name: 't', arguments: REDACTED, _meta: { token: REDACTED, other: 1 } }),
      );
    });

    it('redacts a copy, leaving the original untouched', () => {
      const original = call();
      redact(original, { kind: 'request', method: 'tools/call' });
      expect(original.params.arguments).toEqual({ a: 1 });
    });

    it('replaces prompt arguments', () => {
      expect(
        redact(request('prompts/get', { name: 'p', arguments: { x: 'y' } }), {
          kind: 'request',
          method: 'prompts/get',
        }),
      ).toEqual(request('prompts/get', { name: 'p', arguments: REDACTED }));
    });

    it('replaces a tool result', () => {
      const toolResult = { jsonrpc: '2.0', id: 1, result: { content: [] } };
      expect(redact(toolResult, { kind: 'result', method: 'tools/call' })).toEqual({ ...toolResult, result: REDACTED });
    });

    it('replaces listed _meta keys in another result', () => {
      const otherResult = { jsonrpc: '2.0', id: 1, result: { tools: [], _meta: { token: 'x' } } };
      expect(redact(otherResult, { kind: 'result', method: 'tools/list' })).toEqual({
        ...otherResult,
        result: { tools: [], _meta: { token: REDACTED } },
      });
    });

    it('replaces listed _meta keys in a notification', () => {
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
  });

  describe('replacing arguments and _meta keys that match a predicate', () => {
    const redact = createRedactor({ arguments: true, meta: (key) => key.startsWith('secret/') });
    const list = request('tools/list', {});

    it('returns a message that needs no redaction as is', () => {
      expect(redact(list, { kind: 'request', method: 'tools/list' })).toBe(list);
    });

    it('redacts a batch element by element', () => {
      const batch = [list, request('tools/call', { name: 't', arguments: {}, _meta: { 'secret/a': 1 } })];
      expect(redact(batch, { kind: 'batch', direction: 'in' })).toEqual([
        list,
        request('tools/call', { name: 't', arguments: REDACTED, _meta: { 'secret/a': REDACTED } }),
      ]);
      expect(redact([list], { kind: 'batch' })).toEqual([list]);
    });

    it('returns what is not a message as is', () => {
      expect(redact('not a message', { kind: 'invalid' })).toBe('not a message');
    });
  });

  describe('with replacement functions and a placeholder', () => {
    const redact = createRedactor({
      arguments: (value) => Object.keys(value as object),
      results: (_value, context) => `hidden ${context.method}`,
      meta: ['k'],
      placeholder: null,
    });
    const redactedCall = () =>
      redact(request('tools/call', { name: 't', arguments: { a: 1, b: 2 }, _meta: { k: 1 } }), {
        kind: 'request',
        method: 'tools/call',
      }) as { params: { arguments: unknown; _meta: unknown } };

    it('replaces arguments with what the arguments function returns', () => {
      expect(redactedCall().params.arguments).toEqual(['a', 'b']);
    });

    it('replaces listed _meta keys with the placeholder', () => {
      expect(redactedCall().params._meta).toEqual({ k: null });
    });

    it('replaces a result with what the results function returns for its method', () => {
      expect(redact({ jsonrpc: '2.0', id: 1, result: {} }, { kind: 'result', method: 'tools/call' })).toEqual({
        jsonrpc: '2.0',
        id: 1,
        result: 'hidden tools/call',
      });
    });
  });
});
