/**
 * A trace's requests as OTLP/JSON (the OpenTelemetry protocol's JSON encoding of traces, as an OTLP/HTTP
 * collector takes it at /v1/traces): one span per request, from the request to what ended it, named and
 * attributed after the OpenTelemetry MCP conventions (lib/trace/otel-semconv.ts). Written in pieces
 * (`begin`, one per exchange, `end`), so a large trace is never held whole.
 */
import type { JsonObject } from '../../jsonrpc/types';
import { classifyOutcome, outcomeMetricAttributes, requestAttributes } from '../otel-semconv';
import type { Exchange } from './exchanges';

/** OTLP span kinds and status codes (opentelemetry-proto trace.proto). */
const SPAN_KIND_SERVER = 2;
const SPAN_KIND_CLIENT = 3;
const STATUS_ERROR = 2;

export interface OtlpWriterOptions {
  readonly serviceName?: string;
  readonly scopeVersion?: string;
}

/** The document's pieces: `begin()`, then `span()` per exchange (comma handled), then `end()`. */
export function otlpWriter(options: OtlpWriterOptions = {}) {
  let first = true;
  const resource = { attributes: [attribute('service.name', options.serviceName ?? 'mcp-switchboard')] };
  const scope = {
    name: 'mcp-switchboard trace export',
    ...(options.scopeVersion && { version: options.scopeVersion }),
  };
  return {
    begin: () =>
      `{"resourceSpans":[{"resource":${JSON.stringify(resource)},"scopeSpans":[{"scope":${JSON.stringify(scope)},"spans":[\n`,
    span(exchange: Exchange): string {
      const text = JSON.stringify(otlpSpan(exchange));
      const piece = first ? text : `,\n${text}`;
      first = false;
      return piece;
    },
    end: () => '\n]}]}]}\n',
  };
}

type AnyValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean };

function attribute(key: string, value: unknown): { key: string; value: AnyValue } {
  if (typeof value === 'boolean') return { key, value: { boolValue: value } };
  if (typeof value === 'number') {
    return { key, value: Number.isInteger(value) ? { intValue: String(value) } : { doubleValue: value } };
  }
  return { key, value: { stringValue: String(value) } };
}

/** Nanoseconds since the epoch as the decimal string OTLP/JSON wants (microsecond precision). */
function unixNano(ms: number): string {
  return (BigInt(Math.round(ms * 1000)) * 1000n).toString();
}

export function otlpSpan(exchange: Exchange) {
  const { request, answer, outcome } = exchange;
  const role = request.role ?? (request.direction === 'out' ? 'client' : 'server');
  const params = (request.message as { params?: JsonObject } | undefined)?.params;
  const { name, common, spanOnly } = requestAttributes({
    connection: request.connection,
    role,
    upstream: request.upstream,
    protocolVersion: undefined,
    method: request.method ?? '(no method)',
    id: request.id!,
    params: typeof params === 'object' && params !== null ? params : undefined,
    time: request.time,
    parent: undefined,
    redact: undefined,
  });
  const attributes: Record<string, unknown> = { ...common, ...spanOnly };
  let status: { code: number; message?: string } | undefined;
  if (answer) {
    const classified = classifyOutcome(
      outcome === 'error'
        ? { kind: 'error', error: (answer.message as { error?: unknown } | undefined)?.error }
        : { kind: 'result', result: (answer.message as { result?: unknown } | undefined)?.result },
    );
    Object.assign(attributes, outcomeMetricAttributes(classified));
    if (classified.kind === 'failed') status = { code: STATUS_ERROR, message: classified.message };
  } else {
    const errorType = {
      cancelled: 'cancelled',
      'timed-out': 'timeout',
      closed: 'connection_closed',
      unanswered: 'unanswered',
    };
    attributes['error.type'] = errorType[outcome as keyof typeof errorType];
    if (outcome !== 'cancelled') status = { code: STATUS_ERROR, message: `No answer: ${outcome}` };
  }
  if (request.name !== undefined) attributes['mcp_switchboard.name'] = request.name;
  attributes['mcp_switchboard.outcome'] = outcome;
  return {
    traceId: exchange.traceId,
    spanId: exchange.spanId,
    ...(exchange.parentSpanId && { parentSpanId: exchange.parentSpanId }),
    name,
    kind: request.direction === 'out' ? SPAN_KIND_CLIENT : SPAN_KIND_SERVER,
    startTimeUnixNano: unixNano(request.time),
    endTimeUnixNano: unixNano(Math.max(exchange.end, request.time)),
    attributes: Object.entries(attributes)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => attribute(key, value)),
    ...(status && { status }),
  };
}
