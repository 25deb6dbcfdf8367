/**
 * OpenTelemetry spans for MCP requests: `mcp-switchboard/trace/otel`, the only module that imports
 * `@opentelemetry/api` (an optional peer dependency), so the root entry never needs it.
 *
 * A span per request in either direction (CLIENT for what we send, SERVER for what we handle), named and
 * attributed after the OpenTelemetry MCP conventions (`mcp.method.name`, `jsonrpc.request.id`,
 * `gen_ai.tool.name`, ...), with events for progress and cancellation. W3C trace context travels in
 * `_meta` (SEP-414): an inbound request's `traceparent` is its span's parent; an outbound request carries
 * its own span's `traceparent`, and that span's parent is the inbound request it is made for (given by
 * `relatedRequestId` or `parentRequest`), else the active context. W3C baggage travels the same way: an
 * inbound `_meta.baggage` is in the handler's context (`propagation.getActiveBaggage()`), and an outbound
 * request carries its parent context's baggage. Handlers run inside their span's context, so with a
 * context manager registered anything they start nests under it.
 */
import {
  baggageEntryMetadataFromString,
  context as otelContext,
  createTraceState,
  propagation,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Meter,
  type MeterProvider,
  type Span,
  type SpanContext,
  type Tracer,
} from '@opentelemetry/api';
import { excerpt } from '../jsonrpc/excerpt';
import type { JsonObject } from '../jsonrpc/types';
import type { Progress } from '../protocol/types';
import type {
  RequestInstrumentation,
  RequestOutcome,
  RequestSpan,
  SessionTiming,
  TracedRequest,
  TracedSession,
} from './instrumentation';
import { McpMetrics } from './otel-metrics';
import {
  classifyOutcome,
  connectionAttributes,
  outcomeMetricAttributes,
  requestAttributes,
  type Classified,
} from './otel-semconv';
import type { RedactionContext } from './redact';

// The types its public signatures name, so this subpath stands alone.
export type * from './instrumentation-types';
export { MCP_DURATION_BUCKETS } from './otel-metrics';
export { MCP_SEMCONV_SOURCE } from './otel-semconv';
export type { JsonObject, RequestId } from '../jsonrpc/types';
export type { TraceKind } from './types';
export type { Progress } from '../protocol/types';
export type { RedactionContext, Redactor } from './redact';
import {
  BAGGAGE_META_KEY,
  formatBaggage,
  formatTraceparent,
  parseBaggage,
  readTraceContext,
  TRACEPARENT_META_KEY,
  TRACESTATE_META_KEY,
} from './traceparent';

export interface OpenTelemetryOptions {
  /** Default: `trace.getTracer('mcp-switchboard')` from the global tracer provider. */
  readonly tracer?: Tracer;
  /**
   * Record request params and results as span attributes (`mcp_switchboard.request.params`,
   * `mcp_switchboard.response.result`), after the runtime's redactor, as JSON cut to `maxPayloadLength`.
   * Off by default: payloads can hold anything a model or user typed.
   */
  readonly recordPayloads?: boolean;
  /** Default 1024 characters. */
  readonly maxPayloadLength?: number;
  /**
   * Where to record the MCP duration metrics (`mcp.client.operation.duration`, `mcp.server.operation.duration`,
   * `mcp.client.session.duration`, `mcp.server.session.duration`). None recorded when neither this nor
   * `meterProvider` is given.
   */
  readonly meter?: Meter;
  /** Its `getMeter('mcp-switchboard')`, when `meter` is not given. */
  readonly meterProvider?: MeterProvider;
}

const DEFAULT_MAX_PAYLOAD = 1024;

/** The instrumentation to give a `Runtime` (`new Runtime({ instrumentation: openTelemetry() })`). */
export function openTelemetry(options: OpenTelemetryOptions = {}): RequestInstrumentation {
  const tracer = options.tracer ?? trace.getTracer('mcp-switchboard');
  const meter = options.meter ?? options.meterProvider?.getMeter('mcp-switchboard');
  const metrics = meter ? new McpMetrics(meter) : undefined;
  const start = (request: TracedRequest, kind: SpanKind, parent: Context): OtelRequestSpan => {
    const { name, common, spanOnly } = requestAttributes(request);
    const attributes: Attributes = { ...common, ...spanOnly };
    const span = tracer.startSpan(name, { kind, startTime: request.time, attributes }, parent);
    const recorder = options.recordPayloads
      ? new PayloadRecorder(request, kind === SpanKind.CLIENT ? 'out' : 'in', options.maxPayloadLength)
      : undefined;
    recorder?.recordParams(span);
    const measure = metrics
      ? (outcome: Classified, time: number) =>
          metrics.operation(kind === SpanKind.CLIENT, request.time, time, {
            ...common,
            ...outcomeMetricAttributes(outcome),
          })
      : undefined;
    return new OtelRequestSpan(span, trace.setSpan(parent, span), recorder, measure);
  };
  return {
    startOutbound(request) {
      const parent = request.parent instanceof OtelRequestSpan ? request.parent.context : otelContext.active();
      const span = start(request, SpanKind.CLIENT, parent);
      span.meta = traceMetaOf(span.span.spanContext(), parent);
      return span;
    },
    startInbound(request) {
      const meta = request.params?._meta as JsonObject | undefined;
      const carried = readTraceContext(meta);
      const parent = carried
        ? trace.setSpanContext(ROOT_CONTEXT, {
            traceId: carried.parent.traceId,
            spanId: carried.parent.spanId,
            traceFlags: carried.parent.flags,
            isRemote: true,
            ...(carried.tracestate !== undefined && { traceState: createTraceState(carried.tracestate) }),
          })
        : otelContext.active();
      return start(request, SpanKind.SERVER, withCarriedBaggage(parent, meta?.[BAGGAGE_META_KEY]));
    },
    ...(metrics && { startSession: (session: TracedSession) => sessionTiming(metrics, session) }),
  };
}

/** Records the session's duration once it ends, with its error's type when it quit with one. */
function sessionTiming(metrics: McpMetrics, session: TracedSession): SessionTiming {
  const common = connectionAttributes(session);
  let ended = false;
  return {
    end(failure, time) {
      if (ended) return;
      ended = true;
      const attributes = failure ? { ...common, 'error.type': failure.name || '_OTHER' } : common;
      metrics.session(session.role, session.time, time, attributes);
    },
  };
}

class OtelRequestSpan implements RequestSpan {
  meta: Readonly<Record<string, string>> | undefined;
  private ended = false;

  constructor(
    readonly span: Span,
    /** The context with this span active: handlers run in it, child requests start from it. */
    readonly context: Context,
    private readonly recorder: PayloadRecorder | undefined,
    /** Records the operation's duration metric, when a meter was given. */
    private readonly measure: ((outcome: Classified, time: number) => void) | undefined,
  ) {}

  get traceId(): string {
    return this.span.spanContext().traceId;
  }

  get spanId(): string {
    return this.span.spanContext().spanId;
  }

  run<T>(fn: () => T): T {
    return otelContext.with(this.context, fn);
  }

  progress(progress: Progress, time: number): void {
    if (this.ended) return;
    const attributes: Attributes = { 'mcp.progress': progress.progress };
    if (progress.total !== undefined) attributes['mcp.progress.total'] = progress.total;
    if (progress.message !== undefined) attributes['mcp.progress.message'] = progress.message;
    this.span.addEvent('progress', attributes, time);
  }

  end(outcome: RequestOutcome, time: number): void {
    if (this.ended) return;
    this.ended = true;
    const { span } = this;
    if (outcome.kind === 'result') this.recorder?.recordResult(span, outcome.result);
    const classified = classifyOutcome(outcome);
    if (classified.kind === 'cancelled') {
      // Not an error on the span: the caller chose it (the duration metric says `cancelled`).
      span.addEvent(
        'cancelled',
        classified.reason !== undefined ? { 'mcp.cancel.reason': classified.reason } : {},
        time,
      );
      span.setAttribute('mcp_switchboard.cancelled', true);
    } else if (classified.kind === 'failed') {
      span.setAttribute('error.type', classified.errorType);
      if (classified.statusCode !== undefined) span.setAttribute('rpc.response.status_code', classified.statusCode);
      span.setStatus({ code: SpanStatusCode.ERROR, message: classified.message });
    }
    span.end(time);
    this.measure?.(classified, time);
  }
}

/** What an outbound request's `_meta` carries: its span's trace context and its parent context's baggage. */
function traceMetaOf(spanContext: SpanContext, parent: Context): Record<string, string> | undefined {
  const meta: Record<string, string> = {};
  if (isSpanContextValid(spanContext)) {
    const { traceId, spanId, traceFlags, traceState } = spanContext;
    meta[TRACEPARENT_META_KEY] = formatTraceparent({ traceId, spanId, flags: traceFlags });
    const state = traceState?.serialize();
    if (state) meta[TRACESTATE_META_KEY] = state;
  }
  const baggage = propagation.getBaggage(parent);
  if (baggage) {
    const members = baggage
      .getAllEntries()
      .map(([key, entry]) => ({ key, value: entry.value, metadata: entry.metadata?.toString() }));
    const text = formatBaggage(members);
    if (text) meta[BAGGAGE_META_KEY] = text;
  }
  return Object.keys(meta).length > 0 ? meta : undefined;
}

/** `parent` with the baggage an inbound `_meta.baggage` carries added (replacing same-named entries). */
function withCarriedBaggage(parent: Context, carried: unknown): Context {
  const members = parseBaggage(carried);
  if (members.length === 0) return parent;
  let baggage = propagation.getBaggage(parent) ?? propagation.createBaggage();
  for (const { key, value, metadata } of members) {
    baggage = baggage.setEntry(
      key,
      metadata ? { value, metadata: baggageEntryMetadataFromString(metadata) } : { value },
    );
  }
  return propagation.setBaggage(parent, baggage);
}

/** Records a request's params and result as attributes, through the runtime's redactor. */
class PayloadRecorder {
  constructor(
    private readonly request: TracedRequest,
    private readonly direction: 'in' | 'out',
    private readonly maxLength = DEFAULT_MAX_PAYLOAD,
  ) {}

  recordParams(span: Span): void {
    const { method, id, params } = this.request;
    if (params === undefined) return;
    const shown = this.redacted({ jsonrpc: '2.0', id, method, params }, 'request') as { params?: unknown };
    this.set(span, 'mcp_switchboard.request.params', shown?.params);
  }

  recordResult(span: Span, result: unknown): void {
    const shown = this.redacted({ jsonrpc: '2.0', id: this.request.id, result }, 'result') as { result?: unknown };
    this.set(span, 'mcp_switchboard.response.result', shown?.result);
  }

  private redacted(message: object, kind: RedactionContext['kind']): unknown {
    const { redact, method } = this.request;
    // Our responses go out when our requests came in, and the other way round.
    const requestDirection = this.direction;
    const direction = kind === 'request' ? requestDirection : requestDirection === 'in' ? 'out' : 'in';
    if (!redact) return message;
    try {
      return redact(message, { kind, method, direction });
    } catch {
      return undefined; // a redactor that fails shows nothing
    }
  }

  private set(span: Span, key: string, value: unknown): void {
    if (value === undefined) return;
    // Bounded and non-recursive whatever a peer sent: only the first `maxLength` characters are rendered.
    span.setAttribute(key, excerpt(value, this.maxLength));
  }
}
