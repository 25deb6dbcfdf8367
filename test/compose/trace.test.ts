/**
 * The hub's trace: `hub.trace$` shows the downstream and the upstream side of every forwarded request (the
 * upstream named on its side), every upstream state change with its cause, and nothing else of the runtime;
 * it builds nothing while nobody subscribes and completes when the hub closes. With OpenTelemetry, one trace
 * crosses the hub: downstream request -> the hub's span for it -> the forwarded request -> the upstream's
 * span, and the other way for a sampling request the upstream makes during the call.
 */
import { SpanKind } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { filter, lastValueFrom, toArray } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Client, type ClientOptions } from '../../lib/client/client';
import { Hub } from '../../lib/compose/hub';
import type { UpstreamOptions } from '../../lib/compose/upstream';
import { silentLogger } from '../../lib/core/logger';
import type { RequestContext } from '../../lib/core/request-context';
import { Runtime } from '../../lib/core/runtime';
import type { JsonObject } from '../../lib/jsonrpc/types';
import { defineServer } from '../../lib/server/definition';
import { openTelemetry } from '../../lib/trace/otel';
import { formatTraceparent } from '../../lib/trace/traceparent';
import type { TraceEvent } from '../../lib/trace/types';
import { createMemoryPair } from '../../transports/memory';
import { cleanups } from '../helpers/cleanups';
import { text } from '../helpers/content';
import { tool } from '../helpers/fixtures';
import { validateEmitted } from '../helpers/pair';
import { nextEvent } from '../helpers/wait';

/** Counts the trace events built (every event is built by one of these three). */
const built = vi.hoisted(() => ({ events: 0 }));

vi.mock('../../lib/trace/event', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../lib/trace/event')>();
  const counted =
    <A extends unknown[], R>(build: (...args: A) => R) =>
    (...args: A) => {
      built.events++;
      return build(...args);
    };
  return {
    ...actual,
    messageTraceEvent: counted(actual.messageTraceEvent),
    connectionLifecycleEvent: counted(actual.connectionLifecycleEvent),
    actorLifecycleEvent: counted(actual.actorLifecycleEvent),
  };
});

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('compose-trace-test');

afterEach(() => exporter.reset());

/** The `_meta` each call of the upstream's `echo` arrived with. */
const echoMeta: (JsonObject | undefined)[] = [];

const notes = defineServer({
  name: 'notes',
  version: '1.0.0',
  tools: [
    tool('echo', (args, ctx: RequestContext) => {
      echoMeta.push(ctx._meta as JsonObject | undefined);
      return text(JSON.stringify(args));
    }),
    tool('ask', async (_args, ctx: RequestContext) => {
      const answer = await ctx.createMessage({
        messages: [{ role: 'user', content: { type: 'text', text: 'hi?' } }],
        maxTokens: 8,
      });
      return text(answer.model);
    }),
  ],
});

/** The in-process upstream over its memory connection: every call is a second request, as for a remote one. */
const overConnection = (name = 'notes'): UpstreamOptions => ({
  name,
  source: { kind: 'in-process', server: notes, direct: false },
});

function newHub(runtime: Runtime, upstreams: UpstreamOptions[], validate = true): Hub {
  const hub = new Hub({
    runtime,
    upstreams,
    logger: silentLogger,
    ...(validate && { onUpstreamClient: (_name: string, client: Client) => validateEmitted(client) }),
  });
  cleanups.push(() => hub.close());
  return hub;
}

/** Our client connected to the hub in memory, on `runtime`; what both sides emit is schema-checked if `validate`. */
async function connect(hub: Hub, runtime: Runtime, options: ClientOptions = {}, validate = true) {
  const [clientSide, hubSide] = createMemoryPair();
  const connection = hub.connect(hubSide);
  const client = new Client({ name: 'downstream', version: '1.0.0' }, { runtime, ...options });
  if (validate) {
    validateEmitted(connection);
    validateEmitted(client);
  }
  cleanups.push(() => client.close());
  await client.connect(clientSide);
  return { client, connection };
}

/** Resolves once upstream `name` of `hub` is in `state`. */
const reaches = (hub: Hub, name: string, state: string) =>
  nextEvent(hub.upstream(name)!.status$, (status) => status.state === state, `${name} ${state}`);

const hop = ({ connection, role, upstream, kind, direction }: TraceEvent) => ({
  connection,
  role,
  upstream,
  kind,
  direction,
});
const change = (event: TraceEvent) =>
  `${event.from} → ${event.to}${event.reason === undefined ? '' : ` (${event.reason})`}`;

describe('hub.trace$', () => {
  /** A hub over `notes`, a client that called echo once, and what the hub's and the runtime's trace$ showed. */
  async function oneForwardedCall() {
    const runtime = new Runtime();
    const hub = newHub(runtime, [overConnection()]);
    const events: TraceEvent[] = [];
    const everything: TraceEvent[] = [];
    hub.trace$.subscribe((event) => events.push(event));
    runtime.trace$.subscribe((event) => everything.push(event));
    await hub.start();
    const { client, connection } = await connect(hub, runtime);
    const upstreamClient = hub.upstream('notes')!.client!;
    expect(await client.callTool('echo', { n: 1 })).toEqual(text('{"n":1}'));
    return { client, connection, upstreamClient, events, everything };
  }

  it('shows the downstream request, the forwarded request with its upstream named, and both responses', async () => {
    const { connection, upstreamClient, events } = await oneForwardedCall();
    const calls = events.filter((event) => event.method === 'tools/call');
    expect(calls.map(hop)).toEqual([
      { connection: connection.id, role: 'server', upstream: undefined, kind: 'request', direction: 'in' },
      { connection: upstreamClient.id, role: 'client', upstream: 'notes', kind: 'request', direction: 'out' },
      { connection: upstreamClient.id, role: 'client', upstream: 'notes', kind: 'result', direction: 'in' },
      { connection: connection.id, role: 'server', upstream: undefined, kind: 'result', direction: 'out' },
    ]);
    expect(calls[1]!.message).toMatchObject({ params: { name: 'echo', arguments: { n: 1 } } });
    expect(typeof calls[2]!.latencyMs).toBe('number');
    expect(calls[3]!.message).toMatchObject({ result: text('{"n":1}') });
  });

  it('names the upstream on every event of its side, its handshake and lifecycle included', async () => {
    const { upstreamClient, events } = await oneForwardedCall();
    const upstreamSide = events.filter((event) => event.connection === upstreamClient.id);
    expect(upstreamSide.every((event) => event.upstream === 'notes')).toBe(true);
    expect(upstreamSide.filter((event) => event.kind === 'lifecycle').map(change)).toEqual([
      'uninitialized → initializing',
      'initializing → ready',
    ]);
    expect(upstreamSide.some((event) => event.method === 'tools/list' && event.kind === 'result')).toBe(true);
  });

  it("shows the upstream's actor starting", async () => {
    const { events } = await oneForwardedCall();
    expect(events.filter((event) => event.actor === 'upstream').map(change)).toEqual([
      'idle → connecting',
      'connecting → ready',
    ]);
  });

  it("shows only the hub's own connections, which the runtime shows among others", async () => {
    const { client, connection, upstreamClient, events, everything } = await oneForwardedCall();
    // Not the downstream client's, nor the in-process upstream's server side, which the runtime shows (named
    // after its upstream too).
    expect(new Set(events.map((event) => event.connection))).toEqual(
      new Set([connection.id, upstreamClient.id, 'upstream:notes']),
    );
    expect(everything.some((event) => event.connection === client.id)).toBe(true);
    expect(
      everything.some(
        (event) => event.role === 'server' && event.upstream === 'notes' && event.method === 'tools/call',
      ),
    ).toBe(true);
  });

  /** A hub whose `flaky` upstream fails twice and whose `notes` upstream is stopped and started again. */
  async function stateChanges() {
    const runtime = new Runtime();
    let attempts = 0;
    const hub = newHub(runtime, [
      overConnection(),
      {
        name: 'flaky',
        source: {
          kind: 'transport',
          open: () => {
            throw new Error(`refused #${++attempts}`);
          },
        },
        supervision: { maxRestarts: 1, initialDelayMs: 1 },
      },
    ]);
    const changes: TraceEvent[] = [];
    const fromRuntime: TraceEvent[] = [];
    hub.trace$.pipe(filter((event) => event.actor === 'upstream')).subscribe((event) => changes.push(event));
    runtime.trace$.pipe(filter((event) => event.actor === 'upstream')).subscribe((event) => fromRuntime.push(event));
    await hub.start();
    await reaches(hub, 'flaky', 'failed');
    await hub.upstream('notes')!.stop();
    hub.upstream('notes')!.start();
    await reaches(hub, 'notes', 'ready');
    const of = (events: TraceEvent[], name: string) =>
      events.filter((event) => event.connection === `upstream:${name}`).map(change);
    return { hub: (name: string) => of(changes, name), runtime: (name: string) => of(fromRuntime, name), fromRuntime };
  }

  it('shows each upstream state change with its cause', async () => {
    const { hub } = await stateChanges();
    expect(hub('flaky')).toEqual([
      'idle → connecting',
      expect.stringMatching(/^connecting → reconnecting \(refused #1; next attempt in 1 ms, at \d{4}-.*Z\)$/),
      'reconnecting → connecting',
      'connecting → failed (refused #2)',
    ]);
    expect(hub('notes')).toEqual([
      'idle → connecting',
      'connecting → ready',
      'ready → stopped (requested)',
      'stopped → connecting',
      'connecting → ready',
    ]);
  });

  it('has the runtime name the upstream actors upstream:<name>', async () => {
    const { fromRuntime } = await stateChanges();
    expect(new Set(fromRuntime.map((event) => event.connection))).toEqual(
      new Set(['upstream:notes', 'upstream:flaky']),
    );
  });

  it("has the runtime see the same changes with the same causes, without the hub's next-attempt time", async () => {
    const { hub, runtime } = await stateChanges();
    // The runtime reads the causes from the events that made the changes.
    expect(runtime('notes')).toEqual(hub('notes'));
    // The hub's own events add when the next attempt comes; the runtime's name the error only.
    expect(runtime('flaky')).toEqual(hub('flaky').map((line) => line.replace(/; next attempt.*\)$/, ')')));
  });

  it('completes once the hub has closed, after the last connection and upstream changes', async () => {
    const runtime = new Runtime();
    const hub = newHub(runtime, [overConnection()]);
    const all = lastValueFrom(hub.trace$.pipe(toArray()));
    await hub.start();
    const { connection } = await connect(hub, runtime);
    const upstreamClient = hub.upstream('notes')!.client!;
    await hub.close();
    const events = await all;
    const last = (id: string) => events.filter((event) => event.connection === id && event.kind === 'lifecycle').at(-1);
    expect(change(last(connection.id)!)).toMatch(/ → closed/);
    expect(change(last(upstreamClient.id)!)).toMatch(/ → closed/);
    expect(change(last('upstream:notes')!)).toBe('ready → disposed');
  });

  it('completes at once for a subscriber that comes after the close', async () => {
    const runtime = new Runtime();
    const hub = newHub(runtime, [overConnection()]);
    await hub.start();
    await connect(hub, runtime);
    await hub.close();
    expect(await lastValueFrom(hub.trace$.pipe(toArray()))).toEqual([]);
  });

  it('builds no event and attaches no inspection while nobody subscribes', async () => {
    const redact = vi.fn((message: unknown) => message);
    const runtime = new Runtime({ redact });
    const inspect = vi.spyOn(runtime.root.system, 'inspect');
    built.events = 0;
    const hub = newHub(runtime, [overConnection()], false);
    void hub.trace$; // reading it subscribes nothing
    await hub.start();
    const { client } = await connect(hub, runtime, {}, false);
    await client.callTool('echo', {});
    await hub.upstream('notes')!.stop();
    await client.close();
    await hub.close();
    expect(built.events).toBe(0);
    expect(redact).not.toHaveBeenCalled();
    expect(inspect).not.toHaveBeenCalled();
  });
});

describe('OpenTelemetry across the hub', () => {
  const spans = (name: string) => exporter.getFinishedSpans().filter((span) => span.name === name);
  const upstreamOf = (span: ReadableSpan) => span.attributes['mcp_switchboard.upstream'];
  /** The one span of `name` and `kind`, on the upstream's side (`mcp_switchboard.upstream` set) or not. */
  const span = (name: string, kind: SpanKind, upstreamSide: boolean) => {
    const found = spans(name).filter(
      (candidate) => candidate.kind === kind && (upstreamOf(candidate) === 'notes') === upstreamSide,
    );
    expect(found).toHaveLength(1);
    return found[0]!;
  };
  const isChild = (child: ReadableSpan, parent: ReadableSpan) =>
    child.spanContext().traceId === parent.spanContext().traceId &&
    child.parentSpanContext?.spanId === parent.spanContext().spanId;

  async function tracedHub(options: ClientOptions = {}) {
    const runtime = new Runtime({ instrumentation: openTelemetry({ tracer }) });
    const hub = newHub(runtime, [overConnection()]);
    await hub.start();
    const { client } = await connect(hub, runtime, options);
    return client;
  }

  it('makes a tools/call one trace: downstream -> the hub -> the forwarded request -> the upstream', async () => {
    const client = await tracedHub();
    echoMeta.length = 0;
    await client.callTool('echo', { n: 2 });

    const name = 'tools/call echo';
    const downstreamCall = span(name, SpanKind.CLIENT, false);
    const hubHandling = span(name, SpanKind.SERVER, false);
    const forwarded = span(name, SpanKind.CLIENT, true);
    const upstreamHandling = span(name, SpanKind.SERVER, true);
    expect(isChild(hubHandling, downstreamCall)).toBe(true);
    expect(isChild(forwarded, hubHandling)).toBe(true);
    expect(isChild(upstreamHandling, forwarded)).toBe(true);
    expect(upstreamHandling.parentSpanContext?.isRemote).toBe(true);
    // The upstream was handed the forwarded request's span in _meta.
    const { traceId, spanId } = forwarded.spanContext();
    expect(echoMeta.at(-1)?.traceparent).toBe(formatTraceparent({ traceId, spanId, flags: 1 }));
    expect(forwarded.attributes['mcp_switchboard.connection']).toMatch(/^c\d+$/);
  });

  it('continues the trace with a sampling request the upstream makes during the call, back to the caller', async () => {
    const client = await tracedHub({
      sampling: async () => ({ role: 'assistant', content: { type: 'text', text: 'yes' }, model: 'model-x' }),
    });
    expect(await client.callTool('ask', {})).toEqual(text('model-x'));

    const call = 'tools/call ask';
    const upstreamHandling = span(call, SpanKind.SERVER, true);
    const sampling = 'sampling/createMessage';
    const upstreamAsks = span(sampling, SpanKind.CLIENT, true);
    const hubReceives = span(sampling, SpanKind.SERVER, true);
    const hubAsks = span(sampling, SpanKind.CLIENT, false);
    const downstreamAnswers = span(sampling, SpanKind.SERVER, false);
    expect(isChild(upstreamAsks, upstreamHandling)).toBe(true);
    expect(isChild(hubReceives, upstreamAsks)).toBe(true);
    expect(isChild(hubAsks, hubReceives)).toBe(true);
    expect(isChild(downstreamAnswers, hubAsks)).toBe(true);
    const traceIds = new Set(
      exporter
        .getFinishedSpans()
        .filter((s) => s.name === call || s.name === sampling)
        .map((s) => s.spanContext().traceId),
    );
    expect(traceIds.size).toBe(1);
  });
});
