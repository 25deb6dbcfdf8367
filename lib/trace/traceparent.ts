/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/) and W3C Baggage
 * (https://www.w3.org/TR/baggage/) in MCP `_meta`: SEP-414 reserves the keys
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

/** One baggage list-member: `key=value;properties`. */
export interface BaggageMember {
  readonly key: string;
  /** Decoded (the header form is percent-encoded). */
  readonly value: string;
  /** The properties after the first `;`, as written. */
  readonly metadata?: string;
}

/** The W3C Baggage limits a propagator must honour: at most 8192 bytes and 180 list-members. */
const MAX_BAGGAGE_LENGTH = 8192;
const MAX_BAGGAGE_MEMBERS = 180;
const BAGGAGE_KEY = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Reads a `baggage` value; malformed list-members are dropped, as the spec asks, and the rest kept. */
export function parseBaggage(value: unknown): BaggageMember[] {
  if (typeof value !== 'string' || value.length > MAX_BAGGAGE_LENGTH) return [];
  const members: BaggageMember[] = [];
  for (const item of value.split(',')) {
    if (members.length >= MAX_BAGGAGE_MEMBERS) break;
    const propertiesAt = item.indexOf(';');
    const pair = propertiesAt === -1 ? item : item.slice(0, propertiesAt);
    const equals = pair.indexOf('=');
    if (equals === -1) continue;
    const key = pair.slice(0, equals).trim();
    if (!BAGGAGE_KEY.test(key)) continue;
    let decoded: string;
    try {
      decoded = decodeURIComponent(pair.slice(equals + 1).trim());
    } catch {
      continue; // a bad percent-encoding
    }
    const metadata = propertiesAt === -1 ? '' : item.slice(propertiesAt + 1).trim();
    members.push(metadata ? { key, value: decoded, metadata } : { key, value: decoded });
  }
  return members;
}

/** The `baggage` value for `members`, within the spec's limits (members that would exceed them are left out). */
export function formatBaggage(members: readonly BaggageMember[]): string | undefined {
  let text = '';
  let count = 0;
  for (const { key, value, metadata } of members) {
    if (count >= MAX_BAGGAGE_MEMBERS || !BAGGAGE_KEY.test(key)) continue;
    const member = `${key}=${encodeURIComponent(value)}${metadata ? `;${metadata}` : ''}`;
    const next = text ? `${text},${member}` : member;
    if (next.length > MAX_BAGGAGE_LENGTH) continue;
    text = next;
    count++;
  }
  return text || undefined;
}
