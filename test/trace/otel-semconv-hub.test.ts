/**
 * A hub's fan-out in OpenTelemetry, in both eras of the downstream client: each downstream call is one
 * SERVER span on the hub with one CLIENT span under it for the upstream it went to (named after the
 * conventions, tagged with the upstream) whose context the upstream is sent, all in the trace of the app's
 * call, even with the two calls in flight at once. Upstreams are in process but not `direct`,
 * so each call makes the second hop over a connection as a stdio or HTTP upstream would.
 */
import { SpanKind } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { Hub } from '../../lib/compose/hub';
import { Runtime } from '../../lib/core/runtime';
import { Server } from '../../lib/server/server';
import { openTelemetry } from '../../lib/trace/otel';
import { formatTraceparent } from '../../lib/trace/traceparent';
import type { TraceEvent } from '../../lib/trace/types';
import { createMemoryPair } from '../../transports/memory';
import { text } from '../helpers/content';
import { serverWith, tool } from '../helpers/fixtures';
import { recordingMeter } from './otel-recording-meter';
import { recordingTracer } from './otel-recording-tracer';

const { exporter, tracer } = recordingTracer('hub');

/** The `traceparent` each upstream tool was called with, by tool name. */
const carried = new Map<string, unknown>();

const upstream = (name: string, toolName: string) => ({
  name,
  source: {
    kind: 'in-process' as const,
    server: new Server(
      serverWith([
        tool(
          toolName,
          (_args, ctx) => (carried.set(toolName, ctx._meta?.traceparent), text(`${toolName} from ${name}`)),
        ),
      ]),
    ),
    direct: false,
  },
});

describe.each(['handshake', 'modern'] as const)('a hub over two upstreams, called in the %s era', (era) => {
  let hub: Hub;
  let app: Client;
  let meter: ReturnType<typeof recordingMeter>;
  let spans: ReadableSpan[];
  /** The trace events of the hub's runtime and of the app's. */
  const events: TraceEvent[] = [];

  beforeAll(async () => {
    exporter.reset();
    carried.clear();
    meter = recordingMeter();
    events.length = 0;
    const hubRuntime = new Runtime({ instrumentation: openTelemetry({ tracer, meter }) });
    const appRuntime = new Runtime({ instrumentation: openTelemetry({ tracer }) });
    for (const runtime of [hubRuntime, appRuntime]) runtime.trace$.subscribe((event) => events.push(event));
    hub = new Hub({
      name: 'traced-hub',
      runtime: hubRuntime,
      upstreams: [upstream('north', 'alpha'), upstream('south', 'beta')],
    });
    await hub.start();
    const [appSide, hubSide] = createMemoryPair();
    hub.connect(hubSide);
    app = new Client(
      { name: 'app', version: '1.0.0' },
      {
        runtime: appRuntime,
        era,
        eraCache: false,
        listChanges: 'off',
      },
    );
    await app.connect(appSide);
    const answers = await Promise.all([app.callTool('alpha', {}), app.callTool('beta', {})]);
    expect(answers.map((answer) => answer.content)).toEqual([
      [{ type: 'text', text: 'alpha from north' }],
      [{ type: 'text', text: 'beta from south' }],
    ]);
    spans = exporter.getFinishedSpans();
  });

  afterAll(async () => {
    await app?.close();
    await hub?.close();
  });

  const childrenOf = (parent: ReadableSpan) =>
    spans.filter(
      (span) =>
        span.parentSpanContext?.spanId === parent.spanContext().spanId &&
        span.spanContext().traceId === parent.spanContext().traceId,
    );

  it.each([
    ['alpha', 'north'],
    ['beta', 'south'],
  ])(
    'tools/call %s: app CLIENT > hub SERVER > one hub CLIENT to %s, sent on as the parent',
    (toolName, upstreamName) => {
      const name = `tools/call ${toolName}`;
      const appCalls = spans.filter(
        (span) =>
          span.name === name && span.kind === SpanKind.CLIENT && !('mcp_switchboard.upstream' in span.attributes),
      );
      expect(appCalls).toHaveLength(1);
      const [hubServer, ...moreServers] = childrenOf(appCalls[0]!);
      expect(moreServers).toEqual([]);
      expect([hubServer!.name, hubServer!.kind]).toEqual([name, SpanKind.SERVER]);
      const forwarded = childrenOf(hubServer!);
      expect(forwarded.map((span) => [span.name, span.kind, span.attributes['mcp_switchboard.upstream']])).toEqual([
        [name, SpanKind.CLIENT, upstreamName],
      ]);
      expect(forwarded[0]!.attributes).toMatchObject({ 'gen_ai.tool.name': toolName, 'mcp.method.name': 'tools/call' });
      // The upstream (a server of its own runtime, untraced here) is sent the hub CLIENT span as its parent.
      const { traceId, spanId } = forwarded[0]!.spanContext();
      expect(carried.get(toolName)).toBe(formatTraceparent({ traceId, spanId, flags: 1 }));
    },
  );

  it("puts each span's trace and span ids on its request's trace events: sent, answered, forwarded", () => {
    const idsOf = (span: ReadableSpan) => ({ traceId: span.spanContext().traceId, spanId: span.spanContext().spanId });
    const ids = (event: TraceEvent | undefined) => event && { traceId: event.traceId, spanId: event.spanId };
    for (const toolName of ['alpha', 'beta']) {
      const named = spans.filter((span) => span.name === `tools/call ${toolName}`);
      const appCall = named.find(
        (span) => span.kind === SpanKind.CLIENT && !span.attributes['mcp_switchboard.upstream'],
      );
      const hubServer = named.find((span) => span.kind === SpanKind.SERVER && span.parentSpanContext);
      const forwardedSpan = named.find((span) => span.attributes['mcp_switchboard.upstream']);
      const calls = (role: 'client' | 'server', direction: 'in' | 'out', upstream: boolean) =>
        events.filter(
          (event) =>
            event.kind === 'request' &&
            event.method === 'tools/call' &&
            event.role === role &&
            event.direction === direction &&
            (event.upstream !== undefined) === upstream &&
            JSON.stringify(event.message).includes(`"${toolName}"`),
        );
      const [sent] = calls('client', 'out', false);
      const [forwarded] = calls('client', 'out', true);
      expect(ids(sent)).toEqual(idsOf(appCall!));
      expect(ids(forwarded)).toEqual(idsOf(forwardedSpan!));
      expect(forwarded!.cause).toMatchObject({ kind: 'forwarded' });
      // The answers: the hub's to the app (its SERVER span), the upstream's to the hub (its CLIENT span).
      const answerTo = (request: TraceEvent, role: 'client' | 'server', direction: 'in' | 'out') =>
        events.find(
          (event) =>
            event.kind === 'result' &&
            event.role === role &&
            event.direction === direction &&
            event.connection === request.connection &&
            event.id === request.id &&
            (event.upstream !== undefined) === (request.upstream !== undefined),
        );
      const received = events.find(
        (event) =>
          event.kind === 'request' &&
          event.role === 'server' &&
          event.upstream === undefined &&
          JSON.stringify(event.message).includes(`"${toolName}"`),
      )!;
      expect(ids(answerTo(received, 'server', 'out'))).toEqual(idsOf(hubServer!));
      expect(ids(answerTo(forwarded!, 'client', 'in'))).toEqual(idsOf(forwardedSpan!));
      expect(sent!.traceId).toBe(forwarded!.traceId);
    }
  });

  it("records the hub's calls to its upstreams in mcp.client.operation.duration, one per tool", () => {
    const tools = meter.histograms
      .get('mcp.client.operation.duration')!
      .values.filter((entry) => entry.attributes['mcp.method.name'] === 'tools/call')
      .map((entry) => entry.attributes['gen_ai.tool.name'])
      .sort();
    expect(tools).toEqual(['alpha', 'beta']);
  });
});
