/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/) in MCP `_meta`: SEP-414 reserves the keys
 * `traceparent`, `tracestate` and `baggage` (unprefixed, an exception to the `_meta` prefix rule) so a
 * trace crosses transports that have no headers (stdio, in process) and hubs.
 */
import type { JsonObject } from '../jsonrpc/types';

export const TRACEPARENT_META_KEY = 'traceparent';
export const TRACESTATE_META_KEY = 'tracestate';
export const BAGGAGE_META_KEY = 'baggage';

export interface TraceParent {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string;
  /** The caller's span: 16 lowercase hex digits, not all zero. */
  readonly spanId: string;
  /** Trace flags (bit 0: sampled). */
  readonly flags: number;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);
/** The tracestate header's limit in the W3C recommendation. */
const MAX_TRACESTATE_LENGTH = 512;

/** Reads a `traceparent` value; undefined when it is not a valid one (the caller then starts a new trace). */
export function parseTraceparent(value: unknown): TraceParent | undefined {
  if (typeof value !== 'string') return undefined;
  const match = TRACEPARENT.exec(value.trim());
  if (!match) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string?,
  ];
  // Version ff is invalid; version 00 has exactly four fields; later versions may append fields.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE_ID || spanId === ZERO_SPAN_ID) return undefined;
  return { traceId, spanId, flags: Number.parseInt(flags, 16) };
}

export function formatTraceparent(parent: TraceParent): string {
  return `00-${parent.traceId}-${parent.spanId}-${(parent.flags & 0xff).toString(16).padStart(2, '0')}`;
}

/** The trace context a request's `_meta` carries, if any. */
export function readTraceContext(
  meta: JsonObject | undefined,
): { readonly parent: TraceParent; readonly tracestate?: string } | undefined {
  const parent = parseTraceparent(meta?.[TRACEPARENT_META_KEY]);
  if (!parent) return undefined;
  const state = meta?.[TRACESTATE_META_KEY];
  return typeof state === 'string' && state.length <= MAX_TRACESTATE_LENGTH
    ? { parent, tracestate: state }
    : { parent };
}
