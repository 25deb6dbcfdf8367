/**
 * The OpenTelemetry semantic conventions for MCP (lib/trace/otel-semconv.ts names the version): span names,
 * kinds, attributes and parent links for the requests of both eras on both sides, errors and cancellation,
 * and the operation duration metrics, checked with the SDK's InMemorySpanExporter and a meter that records
 * what the metrics API is given (`@opentelemetry/sdk-metrics` is not installed).
 */
import { metrics, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Runtime } from '../../lib/core/runtime';
import { RequestCancelledError } from '../../lib/jsonrpc/errors';
import { Server } from '../../lib/server/server';
import { openTelemetry } from '../../lib/trace/otel';
import { recordingMeter } from './otel-recording-meter';
import { serverWith, tool } from '../helpers/fixtures';
import { fakeClock, openPair } from '../fixtures/traces/session';
import { recordingTracer } from './otel-recording-tracer';

const { exporter, tracer } = recordingTracer('semconv');

const ERAS = [
  { era: 'handshake', version: '2025-11-25', opening: 'initialize' },
  { era: 'modern', version: '2026-07-28', opening: 'server/discover' },
] as const;

const isChild = (child: ReadableSpan, parent: ReadableSpan) =>
  child.spanContext().traceId === parent.spanContext().traceId &&
  child.parentSpanContext?.spanId === parent.spanContext().spanId;

describe.each(ERAS)('in the $era era', ({ era, version, opening }) => {
  let spans: ReadableSpan[];
  let meter: ReturnType<typeof recordingMeter>;

  /** One connection on a fake clock: the opening, `work` (10 ms), a resource, a prompt, an unknown tool, a cancelled wait. */
  beforeAll(async () => {
    exporter.reset();
    meter = recordingMeter();
    const clock = fakeClock();
    const runtime = new Runtime({ clock, instrumentation: openTelemetry({ tracer, meter }) });
    const server = new Server(
      serverWith(
        [
          tool('work', async () => (clock.increment(10), { content: [] })),
          tool(
            'wait',
            (_args, ctx) =>
              new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve({ content: [] }))),
          ),
        ],
        {
          resources: [{ uri: 'mem://note', name: 'note', read: () => 'a note' }],
          prompts: [{ name: 'greet', get: () => [] }],
        },
      ),
    );
    const { client, serverConnection } = await openPair(server, runtime, runtime, {
      client: { clock, era, eraCache: false, listChanges: 'off' },
      server: { clock },
    });
    await client.callTool('work', {}, { onProgress: () => {} });
    await client.readResource('mem://note');
    await client.getPrompt('greet');
    await client.callTool('missing', {}).catch(() => undefined);
    const controller = new AbortController();
    const waiting = client.callTool('wait', {}, { signal: controller.signal }).catch((error: unknown) => error);
    await client.listTools(); // the server is now running `wait`
    controller.abort('enough');
    expect(await waiting).toBeInstanceOf(RequestCancelledError);
    await client.listTools(); // the server has seen the cancel
    await client.close();
    await serverConnection.closed;
    spans = exporter.getFinishedSpans();
  });

  const pair = (name: string) => {
    const named = spans.filter((span) => span.name === name);
    const client = named.filter((span) => span.kind === SpanKind.CLIENT);
    const server = named.filter((span) => span.kind === SpanKind.SERVER);
    expect([client.length, server.length]).toEqual([1, 1]);
    return { client: client[0]!, server: server[0]! };
  };

  it(`names the opening ${opening} on the server side, with its method and request id`, () => {
    const server = spans.filter((span) => span.name === opening && span.kind === SpanKind.SERVER);
    expect(server).toHaveLength(1);
    expect(server[0]!.attributes['mcp.method.name']).toBe(opening);
    expect(server[0]!.attributes['jsonrpc.request.id']).toBeDefined();
  });

  // The client's era probe goes over the bare transport before the connection exists (lib/client/era-probe.ts),
  // so only the handshake's `initialize` has a CLIENT span, a parent of the server's.
  if (era === 'handshake') {
    it('makes the initialize CLIENT span the parent of the SERVER span', () => {
      const { client, server } = pair('initialize');
      expect(isChild(server, client)).toBe(true);
      expect(client.attributes['mcp.method.name']).toBe('initialize');
    });
  }

  it('names a tool call after its tool, with the tool attributes on both sides and no session id', () => {
    const { client, server } = pair('tools/call work');
    expect(isChild(server, client)).toBe(true);
    for (const span of [client, server]) {
      expect(span.attributes).toMatchObject({
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'work',
        'gen_ai.operation.name': 'execute_tool',
        'mcp.protocol.version': version,
      });
      expect(typeof span.attributes['jsonrpc.request.id']).toBe('string');
      // No transport session on a memory link (and none ever in the stateless revision).
      expect(span.attributes['mcp.session.id']).toBeUndefined();
      // Recommended only when it is not 2.0.
      expect(span.attributes['jsonrpc.protocol.version']).toBeUndefined();
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
    }
  });

  it('keeps a resource URI out of the span name, in mcp.resource.uri', () => {
    const { client, server } = pair('resources/read');
    expect(isChild(server, client)).toBe(true);
    for (const span of [client, server]) {
      expect(span.attributes['mcp.resource.uri']).toBe('mem://note');
      expect(span.attributes['gen_ai.operation.name']).toBeUndefined();
    }
  });

  it('names a prompt request after its prompt, in gen_ai.prompt.name', () => {
    const { client, server } = pair('prompts/get greet');
    expect(isChild(server, client)).toBe(true);
    for (const span of [client, server]) expect(span.attributes['gen_ai.prompt.name']).toBe('greet');
  });

  it('marks a JSON-RPC error with its code as error.type and rpc.response.status_code, and its message', () => {
    for (const span of Object.values(pair('tools/call missing'))) {
      expect(span.attributes['error.type']).toBe('-32602');
      expect(span.attributes['rpc.response.status_code']).toBe('-32602');
      expect(span.status.code).toBe(SpanStatusCode.ERROR);
      expect(span.status.message).toMatch(/missing/);
    }
  });

  it('marks a cancelled call with a cancelled event, not as an error', () => {
    for (const span of Object.values(pair('tools/call wait'))) {
      expect(span.events.map((event) => event.name)).toContain('cancelled');
      expect(span.attributes['error.type']).toBeUndefined();
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
    }
  });

  it.each([
    ['mcp.client.operation.duration', 'sender'],
    ['mcp.server.operation.duration', 'receiver'],
  ])('declares %s as a histogram in seconds with the advised buckets', (name) => {
    expect(meter.histograms.get(name)?.options).toMatchObject({
      unit: 's',
      advice: { explicitBucketBoundaries: [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300] },
    });
  });

  it.each(['mcp.client.operation.duration', 'mcp.server.operation.duration'])(
    'records the 10 ms tool call in %s with the low-cardinality attributes only',
    (name) => {
      const calls = meter.histograms
        .get(name)!
        .values.filter((entry) => entry.attributes['gen_ai.tool.name'] === 'work');
      expect(calls).toEqual([
        {
          value: 0.01,
          attributes: {
            'mcp.method.name': 'tools/call',
            'gen_ai.tool.name': 'work',
            'gen_ai.operation.name': 'execute_tool',
            'mcp.protocol.version': version,
          },
        },
      ]);
    },
  );

  it.each(['mcp.client.operation.duration', 'mcp.server.operation.duration'])(
    'records every request in %s, the failed and cancelled ones with their error.type',
    (name) => {
      const values = meter.histograms.get(name)!.values;
      const typeOf = (tool: string) =>
        values.filter((entry) => entry.attributes['gen_ai.tool.name'] === tool).map((entry) => entry.attributes);
      expect(typeOf('missing')).toEqual([
        expect.objectContaining({ 'error.type': '-32602', 'rpc.response.status_code': '-32602' }),
      ]);
      expect(typeOf('wait')).toEqual([expect.objectContaining({ 'error.type': 'cancelled' })]);
      const methods = values.map((entry) => entry.attributes['mcp.method.name']);
      const expected = ['resources/read', 'prompts/get', 'tools/list'];
      if (name.includes('server') || era === 'handshake') expected.push(opening); // the probe: see above
      expect(methods).toEqual(expect.arrayContaining(expected));
      expect(values.some((entry) => 'mcp.resource.uri' in entry.attributes)).toBe(false);
    },
  );
});

describe('the instrumentation port, given what a transport knows', () => {
  beforeEach(() => exporter.reset());
  const request = {
    connection: 'c1',
    role: 'client',
    upstream: undefined,
    protocolVersion: '2025-11-25',
    method: 'tools/call',
    id: 7,
    params: { name: 'echo' },
    time: 1_000,
    parent: undefined,
    redact: undefined,
    sessionId: 'abc123',
    network: { transport: 'tcp', protocolName: 'http', peerAddress: '127.0.0.1', peerPort: 3000 },
  } as const;

  it('puts the session id on the span, and the network and server address on span and metric', () => {
    const meter = recordingMeter();
    openTelemetry({ tracer, meter }).startOutbound(request)!.end({ kind: 'result', result: {} }, 1_250);
    const [span] = exporter.getFinishedSpans();
    const network = {
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      'server.address': '127.0.0.1',
      'server.port': 3000,
    };
    expect(span!.attributes).toMatchObject({ 'mcp.session.id': 'abc123', ...network });
    const [recorded] = meter.histograms.get('mcp.client.operation.duration')!.values;
    expect(recorded).toEqual({ value: 0.25, attributes: expect.objectContaining(network) });
    expect(recorded!.attributes['mcp.session.id']).toBeUndefined();
  });

  it("names the peer a server's span sees client.address", () => {
    openTelemetry({ tracer })
      .startInbound({ ...request, role: 'server' })!
      .end({ kind: 'result', result: {} }, 1_001);
    const [span] = exporter.getFinishedSpans();
    expect(span!.attributes).toMatchObject({ 'client.address': '127.0.0.1', 'client.port': 3000 });
    expect(span!.attributes['server.address']).toBeUndefined();
  });

  it("reads a stateless request's revision from its envelope, only when it is date-named", () => {
    const instrumentation = openTelemetry({ tracer });
    const claiming = (claim: unknown) => ({
      ...request,
      protocolVersion: undefined,
      params: { name: 'echo', _meta: { 'io.modelcontextprotocol/protocolVersion': claim } },
    });
    for (const claim of ['2026-07-28', 'x'.repeat(100_000), 20260728, { toString: '2026-07-28' }]) {
      instrumentation.startInbound(claiming(claim))!.end({ kind: 'result', result: {} }, 1_001);
    }
    expect(exporter.getFinishedSpans().map((span) => span.attributes['mcp.protocol.version'])).toEqual([
      '2026-07-28',
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("gives the request's trace events its span's trace and span ids", () => {
    const span = openTelemetry({ tracer }).startOutbound(request)!;
    span.end({ kind: 'result', result: {} }, 1_001);
    const { traceId, spanId } = exporter.getFinishedSpans()[0]!.spanContext();
    expect([span.traceId, span.spanId]).toEqual([traceId, spanId]);
  });

  it('classifies a timeout as error.type timeout', () => {
    const timeout = Object.assign(new Error('no answer'), { name: 'RequestTimeoutError', code: 'REQUEST_TIMEOUT' });
    openTelemetry({ tracer }).startOutbound(request)!.end({ kind: 'error', error: timeout }, 2_000);
    expect(exporter.getFinishedSpans()[0]!.attributes['error.type']).toBe('timeout');
  });

  it('records a session duration per side, with the error type when it quit with one, once', () => {
    const meter = recordingMeter();
    const instrumentation = openTelemetry({ tracer, meter });
    const session = { ...request, time: 0 };
    const clientSession = instrumentation.startSession!(session)!;
    clientSession.end(undefined, 90_000);
    clientSession.end(undefined, 99_000);
    const broken = Object.assign(new Error('gone'), { name: 'TransportError' });
    instrumentation.startSession!({ ...session, role: 'server' })!.end(broken, 500);
    expect(meter.histograms.get('mcp.client.session.duration')!.values).toEqual([
      {
        value: 90,
        attributes: {
          'mcp.protocol.version': '2025-11-25',
          'network.transport': 'tcp',
          'network.protocol.name': 'http',
          'server.address': '127.0.0.1',
          'server.port': 3000,
        },
      },
    ]);
    expect(meter.histograms.get('mcp.server.session.duration')!.values).toEqual([
      {
        value: 0.5,
        // The conventions list no client address on the server's session metric (a port per connection).
        attributes: {
          'mcp.protocol.version': '2025-11-25',
          'network.transport': 'tcp',
          'network.protocol.name': 'http',
          'error.type': 'TransportError',
        },
      },
    ]);
  });

  it('creates no instrument, not even on the global meter provider, and offers no session hook without a meter', () => {
    const global = recordingMeter();
    metrics.setGlobalMeterProvider({ getMeter: () => global });
    try {
      const instrumentation = openTelemetry({ tracer });
      expect(instrumentation.startSession).toBeUndefined();
      instrumentation.startOutbound(request)!.end({ kind: 'result', result: {} }, 1_001);
      expect(exporter.getFinishedSpans()).toHaveLength(1);
      expect(global.histograms.size).toBe(0);
    } finally {
      metrics.disable();
    }
  });

  it('takes a MeterProvider instead of a meter', () => {
    const meter = recordingMeter();
    openTelemetry({ tracer, meterProvider: { getMeter: () => meter } })
      .startOutbound(request)!
      .end({ kind: 'result', result: {} }, 1_001);
    expect(meter.histograms.get('mcp.client.operation.duration')!.values).toHaveLength(1);
  });
});

describe('a runtime without an instrumentation', () => {
  it('starts no span, even with a global tracer provider registered', async () => {
    const global = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(global)] }));
    try {
      const { client } = await openPair(new Server(serverWith([tool('echo')])), new Runtime());
      await client.callTool('echo', {});
      await client.close();
      expect(global.getFinishedSpans()).toEqual([]);
      // The same session with the default instrumentation (the global tracer) does make spans.
      const traced = new Runtime({ instrumentation: openTelemetry() });
      const { client: tracedClient } = await openPair(new Server(serverWith([tool('echo')])), traced);
      await tracedClient.callTool('echo', {});
      await tracedClient.close();
      expect(global.getFinishedSpans().map((span) => span.name)).toContain('tools/call echo');
    } finally {
      trace.disable();
    }
  });
});
