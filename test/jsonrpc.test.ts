import { describe, expect, it } from 'vitest';
import { classifyMessage, describeInvalid, isParamsObject } from '../lib/jsonrpc/classify';
import { decodeFrame, encodeFrame, exceedsBytes, utf8Length } from '../lib/jsonrpc/codec';
import {
  ConnectionClosedError,
  ErrorCode,
  McpError,
  RequestCancelledError,
  RequestTimeoutError,
  SwitchboardError,
  toWireError,
  TransportError,
} from '../lib/jsonrpc/errors';
import { FrameError } from '../lib/jsonrpc/types';

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
  it('decodes JSON and reports malformed JSON as a parse-error value', () => {
    expect(decodeFrame('{"a":1}')).toEqual({ a: 1 });
    const failure = decodeFrame('{"a":');
    expect(failure).toBeInstanceOf(FrameError);
    expect(failure).toMatchObject({ code: ErrorCode.ParseError });
  });

  it('refuses frames over the byte limit before parsing them', () => {
    const failure = decodeFrame(JSON.stringify({ text: 'x'.repeat(100) }), 50);
    expect(failure).toBeInstanceOf(FrameError);
    expect((failure as FrameError).message).toBe('Message too large: the limit is 50 bytes');
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
