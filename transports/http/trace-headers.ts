/**
 * W3C trace context sent as HTTP headers (`traceparent`, `tracestate`, `baggage`), as an HTTP client
 * instrumented with OpenTelemetry propagates it, handed to the MCP layer, which reads it from `_meta`
 * (SEP-414). A JSON-RPC request that carries its own `_meta` entries keeps them: `_meta` wins.
 */
import type { ServerRequest } from './server-port';
import { classifyMessage, isParamsObject } from '../../lib/jsonrpc/classify';
import type { JsonObject, JsonRpcBatch, JsonRpcMessage, JsonRpcRequest } from '../../lib/jsonrpc/types';
import {
  BAGGAGE_META_KEY,
  parseTraceparent,
  TRACEPARENT_META_KEY,
  TRACESTATE_META_KEY,
} from '../../lib/trace/traceparent';
import { singleHeader } from './request-guard';

/**
 * The `_meta` entries the request's trace headers supply, or undefined when it has none worth taking.
 * SEP-414 named the `_meta` keys after the W3C headers, so one set of names serves both.
 */
function headerTraceEntries(request: ServerRequest): Readonly<Record<string, string>> | undefined {
  const entries: Record<string, string> = {};
  const traceparent = singleHeader(request, TRACEPARENT_META_KEY);
  if (parseTraceparent(traceparent)) {
    entries[TRACEPARENT_META_KEY] = traceparent!;
    const tracestate = request.headers[TRACESTATE_META_KEY];
    // Repeated tracestate headers are one list, joined as the W3C spec says.
    if (tracestate) entries[TRACESTATE_META_KEY] = Array.isArray(tracestate) ? tracestate.join(',') : tracestate;
  }
  const baggage = request.headers[BAGGAGE_META_KEY];
  if (baggage) entries[BAGGAGE_META_KEY] = Array.isArray(baggage) ? baggage.join(',') : baggage;
  return Object.keys(entries).length > 0 ? entries : undefined;
}

/** `body` with the POST's trace headers in the `_meta` of each request that lacks them (copies, never edits). */
export function withTraceHeaders(
  body: JsonRpcMessage | JsonRpcBatch,
  request: ServerRequest,
): JsonRpcMessage | JsonRpcBatch {
  const entries = headerTraceEntries(request);
  if (!entries) return body;
  if (Array.isArray(body)) return body.map((message) => adopt(message, entries));
  return adopt(body as JsonRpcMessage, entries);
}

function adopt(message: JsonRpcMessage, entries: Readonly<Record<string, string>>): JsonRpcMessage {
  if (classifyMessage(message) !== 'request') return message;
  const request = message as JsonRpcRequest;
  if (!isParamsObject(request.params)) return message; // refused as it is, further on
  const meta = (request.params?._meta ?? {}) as JsonObject;
  const added: Record<string, string> = {};
  // Trace context comes whole or not at all: a `_meta.traceparent` keeps its own tracestate.
  if (meta[TRACEPARENT_META_KEY] === undefined && entries[TRACEPARENT_META_KEY] !== undefined) {
    added[TRACEPARENT_META_KEY] = entries[TRACEPARENT_META_KEY];
    if (entries[TRACESTATE_META_KEY] !== undefined) added[TRACESTATE_META_KEY] = entries[TRACESTATE_META_KEY];
  }
  if (meta[BAGGAGE_META_KEY] === undefined && entries[BAGGAGE_META_KEY] !== undefined) {
    added[BAGGAGE_META_KEY] = entries[BAGGAGE_META_KEY];
  }
  if (Object.keys(added).length === 0) return message;
  return { ...request, params: { ...request.params, _meta: { ...meta, ...added } } };
}
