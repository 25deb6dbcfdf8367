import { describe, expect, it } from 'vitest';
import { classifyMessage, describeInvalid, isParamsObject } from '../../lib/jsonrpc/classify';
import {
  DEFAULT_MAX_DEPTH,
  decodeFrame,
  encodeFrame,
  exceedsBytes,
  exceedsDepth,
  utf8Length,
  valueExceedsDepth,
} from '../../lib/jsonrpc/codec';
import { clipText, DEFAULT_EXCERPT_CHARS, excerpt } from '../../lib/jsonrpc/excerpt';
import {
  ConnectionClosedError,
  ErrorCode,
  McpError,
  RequestCancelledError,
  RequestTimeoutError,
  SwitchboardError,
  toWireError,
  TransportError,
} from '../../lib/jsonrpc/errors';
import { UnreadableFrame } from '../../lib/jsonrpc/types';

describe('classifyMessage', () => {
  const cases: [unknown, string][] = [
    [{ jsonrpc: '2.0', id: 1, method: 'ping' }, 'request'],
    [{ jsonrpc: '2.0', id: 'a', method: 'ping', params: {} }, 'request'],
    [{ jsonrpc: '2.0', method: 'notifications/initialized' }, 'notification'],
    [{ jsonrpc: '2.0', id: 1, result: {} }, 'result'],
    [{ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'x' } }, 'error'],
    [{ jsonrpc: '2.0', error: { code: -32700, message: 'x' } }, 'error'],
    [{ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'x' } }, 'error'],
    [[{ jsonrpc: '2.0', method: 'a' }], 'batch'],
    [[], 'batch'],
    [null, 'invalid'],
    [42, 'invalid'],
    ['{"jsonrpc":"2.0"}', 'invalid'],
    [{ jsonrpc: '1.0', id: 1, method: 'ping' }, 'invalid'],
    [{ id: 1, method: 'ping' }, 'invalid'],
    [{ jsonrpc: '2.0', id: null, method: 'ping' }, 'invalid'],
    [{ jsonrpc: '2.0', id: {}, method: 'ping' }, 'invalid'],
    [{ jsonrpc: '2.0', id: 1, method: 7 }, 'invalid'],
    [{ jsonrpc: '2.0', result: {} }, 'invalid'],
    [{ jsonrpc: '2.0', id: 1, error: { code: 'x', message: 'm' } }, 'invalid'],
    [{ jsonrpc: '2.0', id: 1 }, 'invalid'],
    [{ jsonrpc: '2.0', id: 1, result: {}, error: { code: 1, message: 'x' } }, 'invalid'],
    [{ jsonrpc: '1.0', id: 1, result: {} }, 'invalid'],
  ];
  for (const [value, kind] of cases) {
    it(`${JSON.stringify(value)} is ${kind}`, () => expect(classifyMessage(value)).toBe(kind));
  }
});

describe('describeInvalid', () => {
  it('keeps a readable id and explains the problem', () => {
    expect(describeInvalid({ jsonrpc: '1.0', id: 7, method: 'ping' })).toEqual({
      id: 7,
      code: ErrorCode.InvalidRequest,
      message: 'Invalid Request: "jsonrpc" must be "2.0", got "1.0"',
      response: false,
    });
  });
  it('has no id when none can be read', () => {
    expect(describeInvalid({ jsonrpc: '2.0', id: null, method: 'ping' })).toEqual({
      id: undefined,
      code: ErrorCode.InvalidRequest,
      message: 'Invalid Request: "id" must be a string or a number, got null',
      response: false,
    });
    expect(describeInvalid(5).id).toBeUndefined();
    expect(describeInvalid(5).message).toContain('expected a JSON object, got number');
  });
  it('tells a broken response (which gets no reply) from a broken request', () => {
    expect(describeInvalid({ jsonrpc: '1.0', id: 3, result: {} })).toEqual({
      id: 3,
      code: ErrorCode.InvalidRequest,
      message: 'Invalid response: "jsonrpc" must be "2.0", got "1.0"',
      response: true,
    });
  });

  it('says what is wrong with a broken response', () => {
    expect(describeInvalid({ jsonrpc: '2.0', id: 4, result: {}, error: { code: 1, message: 'm' } }).message).toBe(
      'Invalid response: a response carries either "result" or "error", not both',
    );
    expect(describeInvalid({ jsonrpc: '2.0', id: 5, error: { code: 'x' } }).message).toBe(
      'Invalid response: "error" must be an object with a numeric "code" and a string "message"',
    );
    expect(describeInvalid({ jsonrpc: '2.0', id: true, error: { code: 1, message: 'm' } })).toMatchObject({
      id: undefined,
      message: 'Invalid response: "id" must be a string, a number or null, got boolean',
      response: true,
    });
  });
  it('quotes a bounded excerpt of a huge or deep "jsonrpc" member, without recursion', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    const described = describeInvalid({ jsonrpc: deep, id: 1, method: 'ping' });
    expect(described.message.length).toBeLessThan(300);
    expect(described.message).toMatch(/^Invalid Request: "jsonrpc" must be "2\.0", got \{"a":\{"a":.*…$/);
    expect(describeInvalid({ jsonrpc: 'x'.repeat(1e6), id: 1, method: 'ping' }).message.length).toBeLessThan(300);
  });
});

describe('excerpt', () => {
  it('is JSON for small plain values', () => {
    for (const value of [{ a: 1, b: [1, 'two', null, true], c: undefined }, [undefined, 2], 'text', 5, null, {}, []]) {
      expect(excerpt(value)).toBe(JSON.stringify(value));
    }
    expect(excerpt(new McpError(-1, 'm'))).toBe('{"code":-1,"message":"m"}'); // toJSON, as JSON does
  });

  it('stops at maxChars whatever the depth, size or cycles, ending in an ellipsis', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 1_000_000; i++) deep = [deep];
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const wide = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i]));
    for (const value of [deep, cyclic, wide, 'x'.repeat(5_000_000), { ['k'.repeat(1e6)]: 1 }]) {
      const text = excerpt(value, 50);
      expect(text).toHaveLength(50);
      expect(text.endsWith('…')).toBe(true);
    }
    expect(excerpt(deep)).toHaveLength(DEFAULT_EXCERPT_CHARS);
    expect(excerpt(cyclic, 40)).toBe('{"name":"loop","self":{"name":"loop","s…');
  });

  it('clips text', () => {
    expect(clipText('abc', 5)).toBe('abc');
    expect(clipText('abcdefgh', 5)).toBe('abcd…');
  });
});

describe('nesting depth', () => {
  const nested = (depth: number, open = '{"a":', close = '}') => open.repeat(depth) + '1' + close.repeat(depth);

  it('defaults to 128 levels', () => expect(DEFAULT_MAX_DEPTH).toBe(128));

  it('counts objects and arrays exactly', () => {
    expect(exceedsDepth(nested(128), 128)).toBe(false);
    expect(exceedsDepth(nested(129), 128)).toBe(true);
    expect(exceedsDepth(nested(129, '[', ']'), 128)).toBe(true);
    expect(exceedsDepth(nested(3), 2)).toBe(true);
    expect(exceedsDepth(nested(2), 2)).toBe(false);
  });

  it('skips brackets inside strings', () => {
    const bracketsInStrings = JSON.stringify({ text: '{'.repeat(1000) + '[\\"['.repeat(100), list: [[1]] });
    expect(exceedsDepth(bracketsInStrings, 3)).toBe(false);
    expect(exceedsDepth(bracketsInStrings, 2)).toBe(true);
  });

  it('counts siblings as one level each', () => {
    // Siblings do not add up: many objects side by side are one level each.
    expect(exceedsDepth(JSON.stringify({ list: Array.from({ length: 1000 }, () => ({ a: [1] })) }), 4)).toBe(false);
  });

  it('is answered without a scan for texts too short or with too few brackets to be that deep', () => {
    expect(exceedsDepth('{'.repeat(128), 128)).toBe(false); // shorter than 2 × 129 characters
    const long = JSON.stringify({ text: 'x'.repeat(10_000), a: { b: { c: 1 } } });
    expect(exceedsDepth(long, 3)).toBe(false);
  });

  it('handles any depth without recursion', () => {
    expect(exceedsDepth(nested(1_000_000), 128)).toBe(true);
    let deep: unknown = 1;
    for (let i = 0; i < 1_000_000; i++) deep = { a: deep };
    expect(valueExceedsDepth(deep, 128)).toBe(true);
    expect(valueExceedsDepth(JSON.parse(nested(128)), 128)).toBe(false);
    expect(valueExceedsDepth(JSON.parse(nested(129)), 128)).toBe(true);
    expect(valueExceedsDepth('scalar', 0)).toBe(false);
  });

  it('decodeFrame refuses a message nested too deep with -32600, keeping its id and whether it is a response', () => {
    const request = decodeFrame(`{"jsonrpc":"2.0","id":7,"method":"ping","params":${nested(200)}}`);
    expect(request).toEqual(
      new UnreadableFrame(
        ErrorCode.InvalidRequest,
        'Invalid Request: the message nests deeper than 128 levels',
        7,
        false,
      ),
    );
    const response = decodeFrame(`{"jsonrpc":${nested(5000)},"id":"r","result":{}}`);
    expect(response).toMatchObject({ code: ErrorCode.InvalidRequest, id: 'r', response: true });
    expect(decodeFrame(nested(10), 1 << 20, 10)).toEqual({ a: expect.anything() });
    expect(decodeFrame(nested(11), 1 << 20, 10)).toBeInstanceOf(UnreadableFrame);
    // Malformed JSON stays a parse error, however deep it starts.
    expect(decodeFrame('['.repeat(5000))).toMatchObject({ code: ErrorCode.ParseError });
  });
});

describe('isParamsObject', () => {
  it('accepts objects and absence only', () => {
    expect(isParamsObject(undefined)).toBe(true);
    expect(isParamsObject({})).toBe(true);
    expect(isParamsObject([])).toBe(false);
    expect(isParamsObject(null)).toBe(false);
    expect(isParamsObject('x')).toBe(false);
  });
});

describe('frames', () => {
  it('decodes JSON', () => {
    expect(decodeFrame('{"a":1}')).toEqual({ a: 1 });
  });

  it('reports malformed JSON as a parse-error value', () => {
    const failure = decodeFrame('{"a":');
    expect(failure).toBeInstanceOf(UnreadableFrame);
    expect(failure).toMatchObject({ code: ErrorCode.ParseError });
  });

  it('refuses frames over the byte limit before parsing them', () => {
    const failure = decodeFrame(JSON.stringify({ text: 'x'.repeat(100) }), 50);
    expect(failure).toBeInstanceOf(UnreadableFrame);
    expect((failure as UnreadableFrame).message).toBe('Message too large: the limit is 50 bytes');
  });

  it('counts UTF-8 bytes exactly', () => {
    for (const text of ['abc', 'é', '€', '😀', 'a😀é€', '\ud800']) {
      expect(utf8Length(text)).toBe(Buffer.byteLength(text));
    }
    expect(exceedsBytes('€€', 5)).toBe(true);
    expect(exceedsBytes('€€', 6)).toBe(false);
  });

  it('encodes compactly on one line', () => {
    expect(encodeFrame({ text: 'a\nb' })).toBe('{"text":"a\\nb"}');
  });
});

describe('errors', () => {
  it('keeps wire errors and local outcomes apart', () => {
    const wire = new McpError(-32602, 'bad', { why: 1 });
    expect(wire.toJSON()).toEqual({ code: -32602, message: 'bad', data: { why: 1 } });
    for (const local of [
      new RequestTimeoutError('m', 'idle', 1, 1),
      new RequestCancelledError('m'),
      new ConnectionClosedError(),
      new TransportError('t'),
    ]) {
      expect(local).toBeInstanceOf(SwitchboardError);
      expect(local).not.toBeInstanceOf(McpError);
      expect(typeof local.code).toBe('string');
    }
  });

  it('turns anything thrown into a wire error', () => {
    expect(toWireError(new McpError(-32002, 'gone', { uri: 'x' }))).toEqual({
      code: -32002,
      message: 'gone',
      data: { uri: 'x' },
    });
    expect(toWireError(new Error('boom'))).toEqual({ code: -32603, message: 'boom' });
    expect(toWireError('text')).toEqual({ code: -32603, message: 'text' });
    expect(toWireError(new Error(''))).toEqual({ code: -32603, message: 'Internal error' });
  });
});
