/**
 * OpenTelemetry: a span per request in both directions (checked with the SDK's InMemorySpanExporter),
 * events for progress and cancellation, and W3C trace context in `_meta` so one trace crosses a hub.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type Context,
  type ContextManager,
} from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../lib/client/client';
import { Runtime } from '../lib/core/runtime';
import type { RequestContext } from '../lib/core/request-context';
import type { JsonObject } from '../lib/jsonrpc/types';
import { Server } from '../lib/server/server';
import { openTelemetry } from '../lib/trace/otel';
import { formatBaggage, formatTraceparent, parseBaggage, parseTraceparent } from '../lib/trace/traceparent';
import { serverWith, tool } from './helpers/fixtures';
import { fakeClock, GOLDEN_EPOCH, openPair, traceServer } from './fixtures/traces/session';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('trace-otel-test');

afterEach(() => exporter.reset());

const tracedRuntime = (clock = fakeClock()) => new Runtime({ clock, instrumentation: openTelemetry({ tracer }) });
const ms = ([seconds, nanos]: [number, number]) => seconds * 1000 + nanos / 1e6;
const spans = () => exporter.getFinishedSpans();
const only = (predicate: (span: ReadableSpan) => boolean) => {
  const found = spans().filter(predicate);
  expect(found).toHaveLength(1);
  return found[0]!;
};
const spanNamed = (name: string, kind: SpanKind) => only((span) => span.name === name && span.kind === kind);
const isChild = (child: ReadableSpan, parent: ReadableSpan) =>
  child.spanContext().traceId === parent.spanContext().traceId &&
  child.parentSpanContext?.spanId === parent.spanContext().spanId;

/** The `_meta` each tool call arrived with, by tool name. */
function metaRecorder() {
  const seen = new Map<string, JsonObject | undefined>();
  return { seen, record: (name: string, ctx: RequestContext) => seen.set(name, ctx._meta as JsonObject | undefined) };
}

describe('OpenTelemetry spans', () => {
  it('makes a client span and a server span for a call, the server one a child through _meta.traceparent', async () => {
    const clock = fakeClock();
    const runtime = tracedRuntime(clock);
    const { client, serverConnection } = await openPair(new Server(traceServer(clock)), runtime, runtime, {
      client: { clock },
      server: { clock },
    });
    const received: JsonObject[] = [];
    serverConnection.trace$.subscribe((event) => {
      if (event.kind === 'request' && event.method === 'tools/call') received.push(event.message as JsonObject);
    });
    clock.increment(1);
    await client.callTool('work', { n: 1 }, { onProgress: () => {} });

    const clientSpan = spanNamed('tools/call work', SpanKind.CLIENT);
    const serverSpan = spanNamed('tools/call work', SpanKind.SERVER);
    expect(isChild(serverSpan, clientSpan)).toBe(true);
    expect(serverSpan.parentSpanContext?.isRemote).toBe(true);
    const meta = (received[0]!.params as JsonObject)._meta as JsonObject;
    expect(parseTraceparent(meta.traceparent)).toEqual({
      traceId: clientSpan.spanContext().traceId,
      spanId: clientSpan.spanContext().spanId,
      flags: 1,
    });
    expect(meta.progressToken).toBeDefined();

    for (const span of [clientSpan, serverSpan]) {
      expect(span.attributes).toMatchObject({
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'work',
        'jsonrpc.request.id': '1',
        'mcp.protocol.version': '2025-11-25',
      });
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
      expect(ms(span.startTime)).toBe(GOLDEN_EPOCH + 1);
      expect(ms(span.endTime)).toBe(GOLDEN_EPOCH + 11);
      expect(span.events.map((event) => [event.name, ms(event.time), event.attributes])).toEqual([
        [
          'progress',
          GOLDEN_EPOCH + 5,
          { 'mcp.progress': 1, 'mcp.progress.total': 2, 'mcp.progress.message': 'halfway' },
        ],
      ]);
    }
    expect(clientSpan.attributes['mcp_switchboard.connection']).toBe(client.id);
    expect(serverSpan.attributes['mcp_switchboard.connection']).toBe(serverConnection.id);
    // The handshake has its spans too.
    expect(
      spans()
        .filter((span) => span.name === 'initialize')
        .map((span) => span.kind)
        .sort(),
    ).toEqual([SpanKind.SERVER, SpanKind.CLIENT]);
    await client.close();
  });

  it('marks JSON-RPC errors, tool errors, cancellations and a closed connection', async () => {
    const runtime = tracedRuntime();
    const { client } = await openPair(new Server(traceServer()), runtime);
    await client.callTool('missing', {}).catch(() => undefined);
    await client.callTool('broken', {});
    const controller = new AbortController();
    const cancelled = client.callTool('wait', {}, { signal: controller.signal }).catch(() => undefined);
    await client.ping();
    controller.abort('enough');
    await cancelled;
    await client.ping(); // the server has seen the cancel
    const cutOff = client.callTool('wait', {}).catch(() => undefined);
    await client.ping();
    await client.close();
    await cutOff;

    for (const kind of [SpanKind.CLIENT, SpanKind.SERVER]) {
      const missing = spanNamed('tools/call missing', kind);
      expect(missing.status.code).toBe(SpanStatusCode.ERROR);
      expect(missing.attributes['rpc.response.status_code']).toBe('-32602');
      const broken = spanNamed('tools/call broken', kind);
      expect(broken.status.code).toBe(SpanStatusCode.ERROR);
      expect(broken.attributes['error.type']).toBe('tool_error');
    }
    // Four spans: the cancelled call on both sides, then the call cut off by the close on both sides.
    const waits = spans().filter((span) => span.name === 'tools/call wait');
    expect(waits).toHaveLength(4);
    const cancelledSpans = waits.filter((span) => span.events.some((event) => event.name === 'cancelled'));
    expect(cancelledSpans.map((span) => span.kind).sort()).toEqual([SpanKind.SERVER, SpanKind.CLIENT]);
    for (const span of cancelledSpans) expect(span.status.code).toBe(SpanStatusCode.UNSET);
    expect(cancelledSpans.find((span) => span.kind === SpanKind.CLIENT)!.events[0]!.attributes).toEqual({
      'mcp.cancel.reason': 'enough',
    });
    const closedSpans = waits.filter((span) => !cancelledSpans.includes(span));
    expect(closedSpans.map((span) => [span.kind, span.status.code, span.attributes['error.type']]).sort()).toEqual([
      [SpanKind.SERVER, SpanStatusCode.ERROR, 'ConnectionClosedError'],
      [SpanKind.CLIENT, SpanStatusCode.ERROR, 'ConnectionClosedError'],
    ]);
  });

  it('continues the trace an inbound _meta.traceparent names, tracestate included', async () => {
    const plain = new Runtime();
    const { client } = await openPair(new Server(traceServer()), plain, tracedRuntime());
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const spanId = '00f067aa0ba902b7';
    await client.request('tools/call', {
      name: 'echo',
      arguments: { text: 'x' },
      _meta: { traceparent: `00-${traceId}-${spanId}-01`, tracestate: 'vendor=opaque' },
    });
    const server = spanNamed('tools/call echo', SpanKind.SERVER);
    expect(server.spanContext().traceId).toBe(traceId);
    expect(server.parentSpanContext).toMatchObject({ traceId, spanId, isRemote: true });
    expect(server.spanContext().traceState?.serialize()).toBe('vendor=opaque');

    await client.request('tools/call', { name: 'echo', arguments: {}, _meta: { traceparent: 'not-a-traceparent' } });
    const fresh = spans().filter((span) => span.name === 'tools/call echo' && span !== server);
    expect(fresh).toHaveLength(1);
    expect(fresh[0]!.parentSpanContext).toBeUndefined();
    await client.close();
  });

  it("parents a handler's own requests to the peer (ctx.request) on the request being handled", async () => {
    const runtime = tracedRuntime();
    const definition = serverWith([tool('ask', async (_args, ctx) => (await ctx.request('ping'), { content: [] }))]);
    const { client } = await openPair(new Server(definition), runtime);
    await client.callTool('ask', {});
    const inbound = spanNamed('tools/call ask', SpanKind.SERVER);
    const serverPing = only((span) => span.name === 'ping' && span.kind === SpanKind.CLIENT && isChild(span, inbound));
    const clientPing = only((span) => span.name === 'ping' && span.kind === SpanKind.SERVER);
    expect(isChild(clientPing, serverPing)).toBe(true);
    await client.close();
  });

  describe('across a hub', () => {
    /** An app client -> hub (server side, then a client to the upstream) -> upstream server, three runtimes. */
    async function hub(forward: (ctx: RequestContext, upstream: Client) => Promise<unknown>, appMeta: JsonObject = {}) {
      const upstreamMeta = metaRecorder();
      const upstreamServer = new Server(
        serverWith([tool('echo', (_args, ctx) => (upstreamMeta.record('echo', ctx), { content: [] }))]),
      );
      const hubRuntime = tracedRuntime();
      const { client: upstream } = await openPair(upstreamServer, hubRuntime, tracedRuntime(), {
        client: { upstream: 'echoes' },
      });
      const hubServer = new Server(
        serverWith([tool('forward', async (_args, ctx) => (await forward(ctx, upstream), { content: [] }))]),
      );
      const { client: app } = await openPair(hubServer, tracedRuntime(), hubRuntime);
      await app.request('tools/call', { name: 'forward', arguments: {}, _meta: appMeta });
      await app.close();
      await upstream.close();
      return { upstreamMeta };
    }

    function expectOneTrace(upstreamMeta: ReturnType<typeof metaRecorder>) {
      const appCall = spanNamed('tools/call forward', SpanKind.CLIENT);
      const hubInbound = spanNamed('tools/call forward', SpanKind.SERVER);
      const hubOutbound = spanNamed('tools/call echo', SpanKind.CLIENT);
      const upstreamInbound = spanNamed('tools/call echo', SpanKind.SERVER);
      expect(isChild(hubInbound, appCall)).toBe(true);
      expect(isChild(hubOutbound, hubInbound)).toBe(true);
      expect(isChild(upstreamInbound, hubOutbound)).toBe(true);
      expect(hubOutbound.attributes['mcp_switchboard.upstream']).toBe('echoes');
      const { traceId, spanId } = hubOutbound.spanContext();
      expect(upstreamMeta.seen.get('echo')?.traceparent).toBe(formatTraceparent({ traceId, spanId, flags: 1 }));
    }

    it('with the downstream request given as parentRequest', async () => {
      const { upstreamMeta } = await hub((ctx, upstream) =>
        upstream.request('tools/call', { name: 'echo', arguments: {} }, { parentRequest: ctx }),
      );
      expectOneTrace(upstreamMeta);
    });

    it('with a context manager: the handler runs in its span, so the active context is the parent', async () => {
      const manager = new AsyncLocalStorageContextManager();
      context.setGlobalContextManager(manager);
      try {
        const { upstreamMeta } = await hub(async (_ctx, upstream) => {
          await Promise.resolve(); // an await in between: the context must survive it
          return upstream.callTool('echo', {});
        });
        expectOneTrace(upstreamMeta);
      } finally {
        context.disable();
      }
    });

    it("carries the app's W3C baggage to the upstream, and puts it in the handler's context", async () => {
      context.setGlobalContextManager(new AsyncLocalStorageContextManager());
      try {
        const seenInHandler: string[] = [];
        const { upstreamMeta } = await hub(
          (_ctx, upstream) => {
            for (const [key, entry] of propagation.getActiveBaggage()?.getAllEntries() ?? []) {
              seenInHandler.push(`${key}=${entry.value}`);
            }
            return upstream.callTool('echo', {});
          },
          { baggage: 'tenant=acme, user.id = a%20b;private, bad key=x, broken=%E0%A4%A' },
        );
        expect(seenInHandler.sort()).toEqual(['tenant=acme', 'user.id=a b']);
        expect(parseBaggage(upstreamMeta.seen.get('echo')?.baggage)).toEqual([
          { key: 'tenant', value: 'acme' },
          { key: 'user.id', value: 'a b', metadata: 'private' },
        ]);
        expectOneTrace(upstreamMeta);
      } finally {
        context.disable();
      }
    });

    it('without either, the forwarded call starts a trace of its own', async () => {
      await hub((_ctx, upstream) => upstream.callTool('echo', {}));
      const hubInbound = spanNamed('tools/call forward', SpanKind.SERVER);
      const hubOutbound = spanNamed('tools/call echo', SpanKind.CLIENT);
      expect(hubOutbound.spanContext().traceId).not.toBe(hubInbound.spanContext().traceId);
    });
  });
});

describe('W3C baggage in _meta', () => {
  it('parses list-members, dropping malformed ones, and formats them back percent-encoded', () => {
    expect(parseBaggage(' a=1 ,b = x%2Cy ; p1;p2=v , =novalue, c, d=%zz,e=ok')).toEqual([
      { key: 'a', value: '1' },
      { key: 'b', value: 'x,y', metadata: 'p1;p2=v' },
      { key: 'e', value: 'ok' },
    ]);
    expect(parseBaggage(42)).toEqual([]);
    expect(parseBaggage('k=' + 'v'.repeat(9000))).toEqual([]);
    expect(
      formatBaggage([
        { key: 'b', value: 'x,y é', metadata: 'p1' },
        { key: 'bad key', value: '1' },
      ]),
    ).toBe('b=x%2Cy%20%C3%A9;p1');
    expect(formatBaggage([])).toBeUndefined();
  });

  it('keeps within the W3C limits: 180 members and 8192 bytes', () => {
    const many = Array.from({ length: 200 }, (_, index) => ({ key: `k${index}`, value: 'v' }));
    expect(parseBaggage(formatBaggage(many))).toHaveLength(180);
    const big = Array.from({ length: 10 }, (_, index) => ({ key: `k${index}`, value: 'x'.repeat(1000) }));
    const text = formatBaggage(big)!;
    expect(text.length).toBeLessThanOrEqual(8192);
    expect(parseBaggage(text)).toHaveLength(8);
  });
});

/** The async context manager the OpenTelemetry Node SDK registers, in a few lines. */
class AsyncLocalStorageContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    active: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(active, () => fn.call(thisArg, ...args));
  }
  bind<T>(_context: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}
