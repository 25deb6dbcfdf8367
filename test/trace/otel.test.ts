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
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { Runtime } from '../../lib/core/runtime';
import type { RequestContext } from '../../lib/core/request-context';
import type { JsonObject } from '../../lib/jsonrpc/types';
import { Server } from '../../lib/server/server';
import { openTelemetry } from '../../lib/trace/otel';
import { formatBaggage, formatTraceparent, parseBaggage, parseTraceparent } from '../../lib/trace/traceparent';
import { serverWith, tool } from '../helpers/fixtures';
import { fakeClock, GOLDEN_EPOCH, openPair, traceServer } from '../fixtures/traces/session';
import { recordingTracer } from './otel-recording-tracer';

const { exporter, tracer } = recordingTracer('trace-otel-test');

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
  describe('for a call', () => {
    let session: Awaited<ReturnType<typeof tracedCall>>;
    /** One traced call on the fake clock (it reports progress halfway), and what the server received. */
    async function tracedCall() {
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
      const meta = (received[0]!.params as JsonObject)._meta as JsonObject;
      return { client, serverConnection, clientSpan, serverSpan, meta };
    }
    beforeEach(async () => {
      session = await tracedCall();
    });
    afterEach(() => session.client.close());

    it('makes the server span a remote child of the client span', () => {
      const { clientSpan, serverSpan } = session;
      expect(isChild(serverSpan, clientSpan)).toBe(true);
      expect(serverSpan.parentSpanContext?.isRemote).toBe(true);
    });

    it('sends the client span as _meta.traceparent, beside the progress token', () => {
      const { clientSpan, meta } = session;
      expect(parseTraceparent(meta.traceparent)).toEqual({
        traceId: clientSpan.spanContext().traceId,
        spanId: clientSpan.spanContext().spanId,
        flags: 1,
      });
      expect(meta.progressToken).toBeDefined();
    });

    it.each([
      ['client', 'clientSpan'],
      ['server', 'serverSpan'],
    ] as const)('gives the %s span the call attributes and an unset status', (_side, which) => {
      const span = session[which];
      expect(span.attributes).toMatchObject({
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'work',
        'jsonrpc.request.id': '1',
        'mcp.protocol.version': '2025-11-25',
      });
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
    });

    it.each([
      ['client', 'clientSpan'],
      ['server', 'serverSpan'],
    ] as const)('times the %s span and its progress event on the runtime clock', (_side, which) => {
      const span = session[which];
      expect(ms(span.startTime)).toBe(GOLDEN_EPOCH + 1);
      expect(ms(span.endTime)).toBe(GOLDEN_EPOCH + 11);
      expect(span.events.map((event) => [event.name, ms(event.time), event.attributes])).toEqual([
        [
          'progress',
          GOLDEN_EPOCH + 5,
          { 'mcp.progress': 1, 'mcp.progress.total': 2, 'mcp.progress.message': 'halfway' },
        ],
      ]);
    });

    it('tags each span with the id of its connection', () => {
      const { client, serverConnection, clientSpan, serverSpan } = session;
      expect(clientSpan.attributes['mcp_switchboard.connection']).toBe(client.id);
      expect(serverSpan.attributes['mcp_switchboard.connection']).toBe(serverConnection.id);
    });

    it('makes a client and a server span for the handshake too', () => {
      expect(
        spans()
          .filter((span) => span.name === 'initialize')
          .map((span) => span.kind)
          .sort(),
      ).toEqual([SpanKind.SERVER, SpanKind.CLIENT]);
    });
  });

  describe('for calls that do not succeed', () => {
    /**
     * Calls that fail as a JSON-RPC error (missing) and as a tool error (broken), a wait call cancelled with
     * reason "enough", and a wait call cut off by the close.
     */
    beforeEach(async () => {
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
    });

    const SIDES = [
      ['client', SpanKind.CLIENT],
      ['server', SpanKind.SERVER],
    ] as const;

    /** The wait calls' spans: the cancelled call on both sides, then the call cut off by the close on both sides. */
    function waitSpans() {
      const waits = spans().filter((span) => span.name === 'tools/call wait');
      expect(waits).toHaveLength(4);
      const cancelledSpans = waits.filter((span) => span.events.some((event) => event.name === 'cancelled'));
      return { cancelledSpans, closedSpans: waits.filter((span) => !cancelledSpans.includes(span)) };
    }

    it.each(SIDES)('marks a JSON-RPC error as an error with its code on the %s side', (_side, kind) => {
      const missing = spanNamed('tools/call missing', kind);
      expect(missing.status.code).toBe(SpanStatusCode.ERROR);
      expect(missing.attributes['rpc.response.status_code']).toBe('-32602');
    });

    it.each(SIDES)('marks a tool error as an error of type tool_error on the %s side', (_side, kind) => {
      const broken = spanNamed('tools/call broken', kind);
      expect(broken.status.code).toBe(SpanStatusCode.ERROR);
      expect(broken.attributes['error.type']).toBe('tool_error');
    });

    it('marks a cancellation with a cancelled event on both sides, not as an error', () => {
      const { cancelledSpans } = waitSpans();
      expect(cancelledSpans.map((span) => span.kind).sort()).toEqual([SpanKind.SERVER, SpanKind.CLIENT]);
      for (const span of cancelledSpans) expect(span.status.code).toBe(SpanStatusCode.UNSET);
    });

    it("records the cancel reason on the client span's cancelled event", () => {
      const { cancelledSpans } = waitSpans();
      expect(cancelledSpans.find((span) => span.kind === SpanKind.CLIENT)!.events[0]!.attributes).toEqual({
        'mcp.cancel.reason': 'enough',
      });
    });

    it('marks a call cut off by the close as a ConnectionClosedError on both sides', () => {
      const { closedSpans } = waitSpans();
      expect(closedSpans.map((span) => [span.kind, span.status.code, span.attributes['error.type']]).sort()).toEqual([
        [SpanKind.SERVER, SpanStatusCode.ERROR, 'ConnectionClosedError'],
        [SpanKind.CLIENT, SpanStatusCode.ERROR, 'ConnectionClosedError'],
      ]);
    });
  });

  describe('an inbound _meta.traceparent', () => {
    /** A client on an untraced runtime calling echo on a traced server with `meta`. */
    async function callEchoWith(meta: JsonObject) {
      const { client } = await openPair(new Server(traceServer()), new Runtime(), tracedRuntime());
      await client.request('tools/call', { name: 'echo', arguments: { text: 'x' }, _meta: meta });
      await client.close();
    }

    it('is continued, tracestate included', async () => {
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const spanId = '00f067aa0ba902b7';
      await callEchoWith({ traceparent: `00-${traceId}-${spanId}-01`, tracestate: 'vendor=opaque' });
      const server = spanNamed('tools/call echo', SpanKind.SERVER);
      expect(server.spanContext().traceId).toBe(traceId);
      expect(server.parentSpanContext).toMatchObject({ traceId, spanId, isRemote: true });
      expect(server.spanContext().traceState?.serialize()).toBe('vendor=opaque');
    });

    it('that is malformed is ignored: the server span starts a trace of its own', async () => {
      await callEchoWith({ traceparent: 'not-a-traceparent' });
      const fresh = spans().filter((span) => span.name === 'tools/call echo' && span.kind === SpanKind.SERVER);
      expect(fresh).toHaveLength(1);
      expect(fresh[0]!.parentSpanContext).toBeUndefined();
    });
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

    describe("with the app's W3C baggage and a context manager", () => {
      beforeEach(() => void context.setGlobalContextManager(new AsyncLocalStorageContextManager()));
      afterEach(() => context.disable());

      /** A forwarded call whose app request carries baggage; the handler notes the baggage it sees. */
      async function forwardWithBaggage() {
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
        return { seenInHandler, upstreamMeta };
      }

      it("puts the well-formed members in the handler's active context", async () => {
        const { seenInHandler } = await forwardWithBaggage();
        expect(seenInHandler.sort()).toEqual(['tenant=acme', 'user.id=a b']);
      });

      it('carries the well-formed members to the upstream in _meta.baggage', async () => {
        const { upstreamMeta } = await forwardWithBaggage();
        expect(parseBaggage(upstreamMeta.seen.get('echo')?.baggage)).toEqual([
          { key: 'tenant', value: 'acme' },
          { key: 'user.id', value: 'a b', metadata: 'private' },
        ]);
      });

      it('keeps the forwarded call in one trace', async () => {
        const { upstreamMeta } = await forwardWithBaggage();
        expectOneTrace(upstreamMeta);
      });
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
  it('parses list-members, dropping malformed ones', () => {
    expect(parseBaggage(' a=1 ,b = x%2Cy ; p1;p2=v , =novalue, c, d=%zz,e=ok')).toEqual([
      { key: 'a', value: '1' },
      { key: 'b', value: 'x,y', metadata: 'p1;p2=v' },
      { key: 'e', value: 'ok' },
    ]);
  });

  it.each([
    ['a value that is not a string', 42],
    ['a header over 8192 bytes', 'k=' + 'v'.repeat(9000)],
  ])('parses no members from %s', (_what, header) => {
    expect(parseBaggage(header)).toEqual([]);
  });

  it('formats members back percent-encoded, leaving out a bad key', () => {
    expect(
      formatBaggage([
        { key: 'b', value: 'x,y é', metadata: 'p1' },
        { key: 'bad key', value: '1' },
      ]),
    ).toBe('b=x%2Cy%20%C3%A9;p1');
  });

  it('formats no members as no header', () => {
    expect(formatBaggage([])).toBeUndefined();
  });

  it('keeps within the W3C limit of 180 members', () => {
    const many = Array.from({ length: 200 }, (_, index) => ({ key: `k${index}`, value: 'v' }));
    expect(parseBaggage(formatBaggage(many))).toHaveLength(180);
  });

  it('keeps within the W3C limit of 8192 bytes, dropping whole members', () => {
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
