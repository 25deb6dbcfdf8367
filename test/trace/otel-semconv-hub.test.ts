/**
 * A hub's fan-out in OpenTelemetry, in both eras of the downstream client: each downstream call is one
 * SERVER span on the hub with one CLIENT span under it for the upstream it went to (named after the
 * conventions, tagged with the upstream) whose context the upstream is sent, all in the trace of the app's
 * call, even with the two calls in flight at once. Upstreams are in process but not `direct`,
 * so each call makes the second hop over a connection as a stdio or HTTP upstream would.
 */
import { SpanKind } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { Hub } from '../../lib/compose/hub';
import { Runtime } from '../../lib/core/runtime';
import { Server } from '../../lib/server/server';
import { openTelemetry } from '../../lib/trace/otel';
import { formatTraceparent } from '../../lib/trace/traceparent';
import { createMemoryPair } from '../../transports/memory';
import { text } from '../helpers/content';
import { serverWith, tool } from '../helpers/fixtures';
import { recordingMeter } from './otel-recording-meter';

const exporter = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('hub');

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

  beforeAll(async () => {
    exporter.reset();
    carried.clear();
    meter = recordingMeter();
    hub = new Hub({
      name: 'traced-hub',
      runtime: new Runtime({ instrumentation: openTelemetry({ tracer, meter }) }),
      upstreams: [upstream('north', 'alpha'), upstream('south', 'beta')],
    });
    await hub.start();
    const [appSide, hubSide] = createMemoryPair();
    hub.connect(hubSide);
    app = new Client(
      { name: 'app', version: '1.0.0' },
      {
        runtime: new Runtime({ instrumentation: openTelemetry({ tracer }) }),
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

  it("records the hub's calls to its upstreams in mcp.client.operation.duration, one per tool", () => {
    const tools = meter.histograms
      .get('mcp.client.operation.duration')!
      .values.filter((entry) => entry.attributes['mcp.method.name'] === 'tools/call')
      .map((entry) => entry.attributes['gen_ai.tool.name'])
      .sort();
    expect(tools).toEqual(['alpha', 'beta']);
  });
});
