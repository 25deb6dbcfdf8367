/** W3C trace context in `_meta` (SEP-414): reading and writing `traceparent` and `tracestate`. */
import { describe, expect, it } from 'vitest';
import { formatTraceparent, parseTraceparent, readTraceContext } from '../../lib/trace/traceparent';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';

describe('traceparent', () => {
  it('reads a valid value and writes it back the same', () => {
    const value = `00-${TRACE_ID}-${SPAN_ID}-01`;
    const parent = parseTraceparent(value);
    expect(parent).toEqual({ traceId: TRACE_ID, spanId: SPAN_ID, flags: 1 });
    expect(formatTraceparent(parent!)).toBe(value);
    expect(formatTraceparent({ traceId: TRACE_ID, spanId: SPAN_ID, flags: 0 })).toBe(`00-${TRACE_ID}-${SPAN_ID}-00`);
  });

  it('accepts later versions with more fields, reading the first four', () => {
    expect(parseTraceparent(`01-${TRACE_ID}-${SPAN_ID}-03-extra`)).toEqual({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      flags: 3,
    });
  });

  it.each([
    ['not a string', 42],
    ['empty', ''],
    ['version ff', `ff-${TRACE_ID}-${SPAN_ID}-01`],
    ['version 00 with a fifth field', `00-${TRACE_ID}-${SPAN_ID}-01-extra`],
    ['a zero trace id', `00-${'0'.repeat(32)}-${SPAN_ID}-01`],
    ['a zero span id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['upper case', `00-${TRACE_ID.toUpperCase()}-${SPAN_ID}-01`],
    ['a short trace id', `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01`],
    ['no flags', `00-${TRACE_ID}-${SPAN_ID}`],
  ])('rejects %s', (_name, value) => {
    expect(parseTraceparent(value)).toBeUndefined();
  });

  const traceparent = `00-${TRACE_ID}-${SPAN_ID}-01`;

  it('reads the trace context of a _meta, tracestate included', () => {
    expect(readTraceContext({ traceparent, tracestate: 'a=1,b=2' })).toEqual({
      parent: { traceId: TRACE_ID, spanId: SPAN_ID, flags: 1 },
      tracestate: 'a=1,b=2',
    });
  });

  it('leaves out a tracestate longer than 512 characters', () => {
    expect(readTraceContext({ traceparent, tracestate: 'x'.repeat(513) })).toEqual({
      parent: { traceId: TRACE_ID, spanId: SPAN_ID, flags: 1 },
    });
  });

  it('reads no trace context without a traceparent', () => {
    expect(readTraceContext({ tracestate: 'a=1' })).toBeUndefined();
    expect(readTraceContext(undefined)).toBeUndefined();
  });
});
