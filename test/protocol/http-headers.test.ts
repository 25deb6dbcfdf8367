/**
 * The 2026-07-28 Streamable HTTP headers that mirror body values (`basic/transports/streamable-http`,
 * "Request Metadata"): `Mcp-Method`/`Mcp-Name` on requests, `Mcp-Param-{Name}` for tool parameters annotated
 * `x-mcp-header`, the `=?base64?…?=` value encoding, and the server's -32020 verdicts. Cases named after
 * conformance checks come from the suite's `http-standard-headers`, `http-custom-headers`,
 * `http-invalid-tool-headers` and `http-header-validation` scenarios.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../lib/jsonrpc/errors';
import { decodeHeaderValue, encodeHeaderValue } from '../../lib/protocol/header-value';
import {
  MAX_SCHEMA_NODES,
  checkParamHeaders,
  checkStandardHeaders,
  mcpHeaderParams,
  paramHeaders,
  standardHeaders,
  type HeaderSource,
} from '../../lib/protocol/http-headers';

/** The spec's example tool (`execute_sql`): one designated parameter, one plain one. */
const executeSql = {
  name: 'execute_sql',
  inputSchema: {
    type: 'object',
    properties: {
      region: { type: 'string', 'x-mcp-header': 'Region' },
      query: { type: 'string' },
    },
    required: ['region', 'query'],
  },
};

/** A tool with one designated property per primitive type. */
const typed = {
  inputSchema: {
    type: 'object',
    properties: {
      region: { type: 'string', 'x-mcp-header': 'Region' },
      priority: { type: 'integer', 'x-mcp-header': 'Priority' },
      ratio: { type: 'number', 'x-mcp-header': 'Ratio' },
      verbose: { type: 'boolean', 'x-mcp-header': 'Verbose' },
      query: { type: 'string' },
    },
  },
};

/** A tool whose only property carries `annotation` on `property`. */
function toolWith(property: Record<string, unknown>): { inputSchema: Record<string, unknown> } {
  return { inputSchema: { type: 'object', properties: { value: property } } };
}

/** Header-safe output: no control characters, no non-ASCII, no whitespace at either end. */
const HEADER_SAFE = /^(?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?$/;

const problemOf = (tool: { inputSchema?: unknown }): string | undefined => {
  const plan = mcpHeaderParams(tool);
  return plan.ok ? undefined : plan.problem;
};

describe('encodeHeaderValue', () => {
  it.each([
    ['an ASCII word', 'us-west1'],
    ['interior spaces', 'us west 1'],
    ['the empty string', ''],
    ['every tchar delimiter', "!#$%&'*+-.^_`|~"],
    ['a prefix without the suffix', '=?base64?abc'],
    ['a suffix without the prefix', 'abc?='],
  ])('sends %s as it is', (_case, value) => {
    expect(encodeHeaderValue(value)).toBe(value);
  });

  it.each([
    ['non-ASCII', 'Hello, 世界', '=?base64?SGVsbG8sIOS4lueVjA==?='],
    ['leading and trailing spaces', ' padded ', '=?base64?IHBhZGRlZCA=?='],
    ['a newline', 'line1\nline2', '=?base64?bGluZTEKbGluZTI=?='],
    ['the sentinel pattern', '=?base64?literal?=', '=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?='],
  ])('encodes a value with %s as in the spec table', (_case, value, encoded) => {
    expect(encodeHeaderValue(value)).toBe(encoded);
  });

  it.each([
    ['a leading space', ' us-west1'],
    ['a trailing space', 'us-west1 '],
    ['a tab', '\tindented'],
    ['an interior tab', 'a\tb'],
    ['CR LF', 'line1\r\nline2'],
    ['NUL', 'a\u0000b'],
    ['DEL', 'a\u007fb'],
    ['a Latin-1 letter', 'Région'],
    ['an astral character', 'rocket 🚀'],
    ['a prefix and suffix that overlap', '=?base64?='],
  ])('uses the Base64 form for a value with %s', (_case, value) => {
    expect(encodeHeaderValue(value)).toMatch(/^=\?base64\?[A-Za-z0-9+/]*={0,2}\?=$/);
  });

  it('never produces a value that is unsafe in a header (no CR, LF, control or non-ASCII characters)', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (value) => HEADER_SAFE.test(encodeHeaderValue(value))));
  });

  it('encodes a value of several megabytes without throwing', () => {
    const huge = 'é'.repeat(3_000_000);
    expect(decodeHeaderValue(encodeHeaderValue(huge))).toBe(huge);
  });
});

describe('decodeHeaderValue', () => {
  it('decodes the Base64 form (sep-2243-server-decode-base64)', () => {
    expect(decodeHeaderValue('=?base64?SGVsbG8=?=')).toBe('Hello');
  });

  it.each([
    ['the prefix only', '=?base64?SGVsbG8='],
    ['the suffix only', 'SGVsbG8=?='],
    ['an upper-case marker (markers are case-sensitive)', '=?BASE64?SGVsbG8=?='],
  ])('reads a value with %s as a literal', (_case, text) => {
    expect(decodeHeaderValue(text)).toBe(text);
  });

  it('decodes an empty Base64 payload to the empty string', () => {
    expect(decodeHeaderValue('=?base64??=')).toBe('');
  });

  it.each([
    ['surrounding spaces', '  name  '],
    ['surrounding tabs', '\tname\t'],
  ])('drops optional whitespace: %s', (_case, text) => {
    expect(decodeHeaderValue(text)).toBe('name');
  });

  it.each([
    ['missing padding (sep-2243-server-reject-invalid-param-chars)', '=?base64?SGVsbG8?='],
    ['a character outside the alphabet', '=?base64?SGV*bG8=?='],
    ['the URL-safe alphabet', '=?base64?-_8=?='],
    ['padding in the middle', '=?base64?SG==bG8=?='],
    ['three padding characters', '=?base64?S===?='],
    ['non-zero bits under one padding character', '=?base64?SGVsbG9=?='],
    ['non-zero bits under two padding characters', '=?base64?SB==?='],
    ['bytes that are not UTF-8', '=?base64?/w==?='],
    ['a non-ASCII character in the payload', '=?base64?SGVsbG8é?='],
    ['a control character in a plain value', 'a\u0001b'],
    ['a non-ASCII character in a plain value', 'Région'],
    ['DEL in a plain value', 'a\u007fb'],
  ])('refuses %s', (_case, text) => {
    expect(decodeHeaderValue(text)).toBeUndefined();
  });

  it('round-trips any string through encodeHeaderValue, non-ASCII and control characters included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (value) => decodeHeaderValue(encodeHeaderValue(value)) === value),
    );
  });

  it('round-trips strings that look like the sentinel', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii' }), (inner) => {
        const value = `=?base64?${inner}?=`;
        return decodeHeaderValue(encodeHeaderValue(value)) === value;
      }),
    );
  });

  it('round-trips the literal =?base64?x?= as a value rather than decoding it', () => {
    expect(decodeHeaderValue(encodeHeaderValue('=?base64?x?='))).toBe('=?base64?x?=');
  });

  it('round-trips a leading byte-order mark', () => {
    expect(decodeHeaderValue(encodeHeaderValue('\ufeffBOM'))).toBe('\ufeffBOM');
  });

  it('never throws on arbitrary header text', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary' }),
          fc.string({ unit: 'binary' }).map((s) => `=?base64?${s}?=`),
        ),
        (text) => {
          decodeHeaderValue(text);
        },
      ),
    );
  });

  it('refuses a malformed payload of several megabytes without throwing', () => {
    expect(decodeHeaderValue(`=?base64?${'A'.repeat(5_000_001)}?=`)).toBeUndefined();
  });
});

describe('standardHeaders', () => {
  it.each([
    ['tools/list', { method: 'tools/list', params: {} }, { 'Mcp-Method': 'tools/list' }],
    ['resources/list', { method: 'resources/list' }, { 'Mcp-Method': 'resources/list' }],
    ['prompts/list', { method: 'prompts/list' }, { 'Mcp-Method': 'prompts/list' }],
    [
      'tools/call',
      { method: 'tools/call', params: { name: 'get_weather' } },
      { 'Mcp-Method': 'tools/call', 'Mcp-Name': 'get_weather' },
    ],
    [
      'prompts/get',
      { method: 'prompts/get', params: { name: 'greet' } },
      { 'Mcp-Method': 'prompts/get', 'Mcp-Name': 'greet' },
    ],
    [
      'resources/read',
      { method: 'resources/read', params: { uri: 'file:///projects/myapp/config.json' } },
      { 'Mcp-Method': 'resources/read', 'Mcp-Name': 'file:///projects/myapp/config.json' },
    ],
  ])('%s carries the headers the spec table requires', (_method, message, expected) => {
    expect(standardHeaders(message)).toEqual(expected);
  });

  it('encodes a name that is not header-safe', () => {
    expect(standardHeaders({ method: 'tools/call', params: { name: 'Hello, 世界' } })['Mcp-Name']).toBe(
      '=?base64?SGVsbG8sIOS4lueVjA==?=',
    );
  });

  it.each([
    ['no params', { method: 'tools/call' }],
    ['a name that is not a string', { method: 'tools/call', params: { name: 42 } }],
    ['params that are an array', { method: 'tools/call', params: ['get_weather'] }],
    ['a method named like an Object.prototype member', { method: 'constructor', params: { name: 'x' } }],
  ])('sends no Mcp-Name for %s', (_case, message) => {
    expect(standardHeaders(message)).not.toHaveProperty('Mcp-Name');
  });
});

describe('checkStandardHeaders', () => {
  const call = { method: 'tools/call', params: { name: 'get_weather', arguments: {} } };
  const list = { method: 'tools/list', params: {} };

  it.each<[string, { method: string; params?: unknown }, HeaderSource]>([
    ['matching headers', call, { 'mcp-method': 'tools/call', 'mcp-name': 'get_weather' }],
    ['header names in any case (sep-2243-header-name-case-insensitive)', list, { 'MCP-METHOD': 'tools/list' }],
    ['a Fetch Headers object', call, new Headers({ 'Mcp-Method': 'tools/call', 'Mcp-Name': 'get_weather' })],
    [
      'whitespace around a value (sep-2243-server-accepts-whitespace-header-value)',
      call,
      { 'mcp-method': 'tools/call', 'mcp-name': '  get_weather  ' },
    ],
    ['an encoded Mcp-Name', call, { 'mcp-method': 'tools/call', 'mcp-name': '=?base64?Z2V0X3dlYXRoZXI=?=' }],
    ['no Mcp-Name on a method without a target', list, { 'mcp-method': 'tools/list' }],
  ])('accepts %s', (_case, message, headers) => {
    expect(checkStandardHeaders(message, headers)).toEqual({ ok: true });
  });

  it.each<[string, { method: string; params?: unknown }, HeaderSource]>([
    ['an Mcp-Method for another method', list, { 'mcp-method': 'prompts/list' }],
    ['a missing Mcp-Method', list, {}],
    ['an Mcp-Method in another case (values are case-sensitive)', list, { 'mcp-method': 'TOOLS/LIST' }],
    [
      'an Mcp-Method in Base64 form (only Mcp-Name and Mcp-Param-* use it)',
      list,
      { 'mcp-method': '=?base64?dG9vbHMvbGlzdA==?=' },
    ],
    ['an Mcp-Name for another tool', call, { 'mcp-method': 'tools/call', 'mcp-name': 'wrong_tool_name' }],
    ['a missing Mcp-Name on tools/call', call, { 'mcp-method': 'tools/call' }],
    ['a malformed Base64 Mcp-Name', call, { 'mcp-method': 'tools/call', 'mcp-name': '=?base64?Z2V0X3dlYXRoZXI?=' }],
  ])('refuses %s with -32020', (_case, message, headers) => {
    expect(checkStandardHeaders(message, headers)).toMatchObject({ ok: false, code: ErrorCode.HeaderMismatch });
  });

  it('names the header and both values in the message', () => {
    const verdict = checkStandardHeaders(call, { 'mcp-method': 'tools/call', 'mcp-name': 'foo' });
    expect(verdict).toMatchObject({ message: expect.stringMatching(/Mcp-Name.*"foo".*"get_weather"/) });
  });

  it('names the missing header in the message', () => {
    expect(checkStandardHeaders(list, {})).toMatchObject({ message: expect.stringContaining('missing Mcp-Method') });
  });

  it('quotes at most a bounded excerpt of a huge header value', () => {
    const verdict = checkStandardHeaders(call, { 'mcp-method': 'tools/call', 'mcp-name': 'x'.repeat(1_000_000) });
    expect(verdict.ok ? '' : verdict.message.length).toBeLessThan(400);
  });
});

describe('mcpHeaderParams', () => {
  it('finds the designated parameter of the spec example', () => {
    expect(mcpHeaderParams(executeSql)).toEqual({
      ok: true,
      params: [{ path: ['region'], header: 'Mcp-Param-Region', key: 'mcp-param-region' }],
    });
  });

  it('follows a chain of properties keys into nested objects', () => {
    const tool = {
      inputSchema: {
        type: 'object',
        properties: { target: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } } },
      },
    };
    expect(mcpHeaderParams(tool)).toMatchObject({ ok: true, params: [{ path: ['target', 'zone'] }] });
  });

  it('finds nothing in a schema without annotations', () => {
    expect(mcpHeaderParams({ inputSchema: { type: 'object', properties: { a: { type: 'string' } } } })).toEqual({
      ok: true,
      params: [],
    });
  });

  it('finds nothing in a tool without an input schema', () => {
    expect(mcpHeaderParams({})).toEqual({ ok: true, params: [] });
  });

  it.each([
    ['string', { type: 'string' }],
    ['integer', { type: 'integer' }],
    ['boolean', { type: 'boolean' }],
    ['number (the conformance suite annotates number properties)', { type: 'number' }],
    ['a nullable string', { type: ['string', 'null'] }],
  ])('accepts a parameter of type %s', (_case, property) => {
    expect(mcpHeaderParams(toolWith({ ...property, 'x-mcp-header': 'Value' })).ok).toBe(true);
  });

  it('does not read a property named x-mcp-header as an annotation', () => {
    const tool = { inputSchema: { type: 'object', properties: { 'x-mcp-header': { type: 'object' } } } };
    expect(mcpHeaderParams(tool)).toEqual({ ok: true, params: [] });
  });

  it.each(['const', 'default', 'enum', 'examples', 'x-vendor'])(
    'does not read data under %s as an annotation',
    (keyword) => {
      const data = { 'x-mcp-header': 'Not An Annotation' };
      const tool = toolWith({
        type: 'object',
        [keyword]: keyword === 'enum' || keyword === 'examples' ? [data] : data,
      });
      expect(mcpHeaderParams(tool)).toEqual({ ok: true, params: [] });
    },
  );

  it.each<[string, { inputSchema: unknown }]>([
    ['an empty name (sep-2243-x-mcp-header-not-empty)', toolWith({ type: 'string', 'x-mcp-header': '' })],
    ['a space in the name', toolWith({ type: 'string', 'x-mcp-header': 'My Region' })],
    ['a colon in the name', toolWith({ type: 'string', 'x-mcp-header': 'Region:Primary' })],
    ['a non-ASCII name', toolWith({ type: 'string', 'x-mcp-header': 'Région' })],
    ['a tab in the name', toolWith({ type: 'string', 'x-mcp-header': 'Region\t1' })],
    ['CR LF in the name', toolWith({ type: 'string', 'x-mcp-header': 'Region\r\nX-Injected: 1' })],
    ['a name that is not a string', toolWith({ type: 'string', 'x-mcp-header': 42 })],
    ['an object parameter', toolWith({ type: 'object', 'x-mcp-header': 'Data' })],
    ['an array parameter', toolWith({ type: 'array', items: { type: 'string' }, 'x-mcp-header': 'Items' })],
    ['a null parameter', toolWith({ type: 'null', 'x-mcp-header': 'Nil' })],
    ['a parameter without a type', toolWith({ 'x-mcp-header': 'Value' })],
    ['a type list with a non-primitive', toolWith({ type: ['string', 'object'], 'x-mcp-header': 'Value' })],
    [
      'a duplicate name in the same case',
      {
        inputSchema: {
          type: 'object',
          properties: {
            a: { type: 'string', 'x-mcp-header': 'Region' },
            b: { type: 'string', 'x-mcp-header': 'Region' },
          },
        },
      },
    ],
    [
      'a duplicate name in another case',
      {
        inputSchema: {
          type: 'object',
          properties: {
            a: { type: 'string', 'x-mcp-header': 'MyField' },
            b: { type: 'string', 'x-mcp-header': 'myfield' },
          },
        },
      },
    ],
    ['an annotation on the root', { inputSchema: { type: 'object', 'x-mcp-header': 'Root' } }],
  ])('rejects %s', (_case, tool) => {
    expect(mcpHeaderParams(tool).ok).toBe(false);
  });

  const annotated = { type: 'string', 'x-mcp-header': 'Hidden' };
  it.each<[string, Record<string, unknown>]>([
    ['items', { items: annotated }],
    ['prefixItems', { prefixItems: [annotated] }],
    ['contains', { contains: annotated }],
    ['anyOf', { anyOf: [{ type: 'object', properties: { v: annotated } }] }],
    ['oneOf', { oneOf: [annotated] }],
    ['allOf', { allOf: [{ properties: { v: annotated } }] }],
    ['not', { not: annotated }],
    ['if', { if: annotated }],
    ['then', { then: { properties: { v: annotated } } }],
    ['else', { else: annotated }],
    ['$defs', { $defs: { hidden: annotated } }],
    ['definitions', { definitions: { hidden: annotated } }],
    ['additionalProperties', { additionalProperties: annotated }],
    ['patternProperties', { patternProperties: { '^v': annotated } }],
    ['dependentSchemas', { dependentSchemas: { a: { properties: { v: annotated } } } }],
  ])('rejects an annotation reached through %s (not statically reachable)', (_keyword, extra) => {
    expect(mcpHeaderParams({ inputSchema: { type: 'object', properties: {}, ...extra } }).ok).toBe(false);
  });

  it('says which annotation is wrong and why', () => {
    expect(problemOf(toolWith({ type: 'object', 'x-mcp-header': 'Data' }))).toMatch(/"Data".*"value".*object/);
  });

  it('walks a schema nested 100 000 levels deep without throwing', () => {
    let leaf: Record<string, unknown> = { type: 'string', 'x-mcp-header': 'Deep' };
    for (let i = 0; i < 100_000; i++) leaf = { type: 'object', properties: { n: leaf } };
    expect(mcpHeaderParams({ inputSchema: leaf })).toMatchObject({ ok: true, params: [{ header: 'Mcp-Param-Deep' }] });
  });

  it('rejects a cyclic schema instead of walking forever', () => {
    const schema: Record<string, unknown> = { type: 'object' };
    schema.properties = { self: schema };
    expect(problemOf({ inputSchema: schema })).toContain(String(MAX_SCHEMA_NODES));
  });
});

describe('paramHeaders', () => {
  const conformanceTool = {
    inputSchema: {
      type: 'object',
      properties: Object.fromEntries(
        [
          'Region',
          'Priority',
          'Verbose',
          'Debug',
          'EmptyVal',
          'Method',
          'FloatVal',
          'NonAscii',
          'Whitespace',
          'InternalSpace',
          'ControlChar',
          'CrLf',
          'Tab',
        ].map((name) => [name.toLowerCase(), { type: 'string', 'x-mcp-header': name }]),
      ),
    },
  };
  const conformanceArgs = {
    region: 'us-west1',
    priority: 42,
    verbose: false,
    debug: true,
    emptyval: '',
    method: 'test-method',
    floatval: 3.14159,
    nonascii: 'Hello, 世界',
    whitespace: ' padded ',
    internalspace: 'us west 1',
    controlchar: 'line1\nline2',
    crlf: 'line1\r\nline2',
    tab: '\tindented',
    query: 'SELECT * FROM users',
  };
  const sent = paramHeaders(conformanceTool, conformanceArgs);

  it.each([
    ['Mcp-Param-Region', 'us-west1'],
    ['Mcp-Param-Priority', '42'],
    ['Mcp-Param-Verbose', 'false'],
    ['Mcp-Param-Debug', 'true'],
    ['Mcp-Param-EmptyVal', ''],
    ['Mcp-Param-Method', 'test-method'],
    ['Mcp-Param-FloatVal', '3.14159'],
    ['Mcp-Param-NonAscii', '=?base64?SGVsbG8sIOS4lueVjA==?='],
    ['Mcp-Param-Whitespace', '=?base64?IHBhZGRlZCA=?='],
    ['Mcp-Param-InternalSpace', 'us west 1'],
    ['Mcp-Param-ControlChar', '=?base64?bGluZTEKbGluZTI=?='],
    ['Mcp-Param-CrLf', '=?base64?bGluZTENCmxpbmUy?='],
    ['Mcp-Param-Tab', '=?base64?CWluZGVudGVk?='],
  ])('sends %s: %s', (header, value) => {
    expect(sent[header]).toBe(value);
  });

  it('does not mirror a parameter without an annotation', () => {
    expect(Object.keys(sent)).not.toContain('Mcp-Param-Query');
  });

  it.each([
    ['null (sep-2243-client-omit-null)', { region: 'us-east1', verbose: null }],
    ['absent', { region: 'us-east1' }],
    ['an object', { region: 'us-east1', verbose: { nested: true } }],
    ['inherited, not own', Object.assign(Object.create({ verbose: true }), { region: 'us-east1' })],
  ])('omits the header of a value that is %s', (_case, args) => {
    expect(paramHeaders(typed, args)).toEqual({ 'Mcp-Param-Region': 'us-east1' });
  });

  it('reads a nested parameter at its exact property path', () => {
    const tool = {
      inputSchema: {
        type: 'object',
        properties: { target: { type: 'object', properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } } } },
      },
    };
    expect(paramHeaders(tool, { target: { zone: 'eu-1' }, zone: 'decoy' })).toEqual({ 'Mcp-Param-Zone': 'eu-1' });
  });

  it('sends nothing for a tool whose annotations are invalid', () => {
    expect(paramHeaders(toolWith({ type: 'object', 'x-mcp-header': 'Data' }), { value: 'x' })).toEqual({});
  });

  it('sends nothing when the arguments are not an object', () => {
    expect(paramHeaders(executeSql, 'us-west1')).toEqual({});
  });
});

describe('checkParamHeaders', () => {
  const ok = { ok: true };

  it.each<[string, Record<string, unknown>, HeaderSource]>([
    ['a plain value equal to the body', { region: 'us-west1' }, { 'mcp-param-region': 'us-west1' }],
    [
      'a Base64 value equal to the body (sep-2243-server-decode-base64)',
      { region: 'Hello' },
      { 'mcp-param-region': '=?base64?SGVsbG8=?=' },
    ],
    [
      'a value lacking the suffix, equal to the body as a literal (sep-2243-server-validate-param-match)',
      { region: '=?base64?SGVsbG8=' },
      { 'mcp-param-region': '=?base64?SGVsbG8=' },
    ],
    ['an integer compared numerically', { priority: 42 }, { 'mcp-param-priority': '42.0' }],
    ['a fraction compared numerically', { ratio: 0.5 }, { 'mcp-param-ratio': '5e-1' }],
    ['a boolean', { verbose: false }, { 'mcp-param-verbose': 'false' }],
    ['a header name in another case', { region: 'us-west1' }, { 'MCP-PARAM-REGION': 'us-west1' }],
    ['a Fetch Headers object', { region: 'us-west1' }, new Headers({ 'Mcp-Param-Region': 'us-west1' })],
    ['no header for a null value', { region: null }, {}],
    ['no header for an absent value', {}, {}],
    ['an undesignated Mcp-Param header', { query: 'x' }, { 'mcp-param-query': 'y' }],
  ])('accepts %s', (_case, args, headers) => {
    expect(checkParamHeaders(typed, args, headers)).toEqual(ok);
  });

  it.each<[string, Record<string, unknown>, HeaderSource]>([
    [
      'a missing header while the body has the value (sep-2243-server-reject-param-mismatch)',
      { region: 'us-west1' },
      {},
    ],
    ['a different value', { region: 'us-west1' }, { 'mcp-param-region': 'us-east1' }],
    ['a value in another case (values are case-sensitive)', { region: 'us-west1' }, { 'mcp-param-region': 'US-WEST1' }],
    [
      'missing Base64 padding (sep-2243-server-reject-invalid-param-chars)',
      { region: 'Hello' },
      { 'mcp-param-region': '=?base64?SGVsbG8?=' },
    ],
    ['a character outside the Base64 alphabet', { region: 'Hello' }, { 'mcp-param-region': '=?base64?SGV$bG8=?=' }],
    ['a control character in a plain value', { region: 'a\u0001b' }, { 'mcp-param-region': 'a\u0001b' }],
    ['a header for a null value', { region: null }, { 'mcp-param-region': 'us-west1' }],
    ['a header for an absent value', {}, { 'mcp-param-region': 'us-west1' }],
    ['a different number', { priority: 42 }, { 'mcp-param-priority': '43' }],
    ['text that is not a number', { priority: 42 }, { 'mcp-param-priority': 'forty-two' }],
    ['an empty header for zero', { priority: 0 }, { 'mcp-param-priority': '' }],
    ['a capitalised boolean', { verbose: true }, { 'mcp-param-verbose': 'True' }],
  ])('refuses %s with -32020', (_case, args, headers) => {
    expect(checkParamHeaders(typed, args, headers)).toMatchObject({ ok: false, code: ErrorCode.HeaderMismatch });
  });

  it('names the missing header in the message', () => {
    expect(checkParamHeaders(executeSql, { region: 'us-west1' }, {})).toMatchObject({
      message: expect.stringContaining('missing Mcp-Param-Region'),
    });
  });

  it('names the header and both values when they differ', () => {
    const verdict = checkParamHeaders(executeSql, { region: 'us-west1' }, { 'mcp-param-region': 'us-east1' });
    expect(verdict).toMatchObject({ message: expect.stringMatching(/Mcp-Param-Region.*"us-east1".*"us-west1"/) });
  });

  it('enforces nothing for a tool whose annotations are invalid', () => {
    expect(checkParamHeaders(toolWith({ type: 'object', 'x-mcp-header': 'Data' }), { value: {} }, {})).toEqual(ok);
  });

  it('accepts whatever paramHeaders sends, for any string, integer or boolean arguments', () => {
    const args = fc.record(
      {
        region: fc.option(fc.string({ unit: 'binary' })),
        priority: fc.option(fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER })),
        ratio: fc.option(fc.double({ noNaN: true, noDefaultInfinity: true })),
        verbose: fc.option(fc.boolean()),
      },
      { requiredKeys: [] },
    );
    fc.assert(fc.property(args, (a) => checkParamHeaders(typed, a, paramHeaders(typed, a)).ok));
  });

  it('refuses a huge mismatching value without throwing and with a bounded message', () => {
    const verdict = checkParamHeaders(
      executeSql,
      { region: 'é'.repeat(1_000_000) },
      { 'mcp-param-region': `=?base64?${'QUFB'.repeat(500_000)}?=` },
    );
    expect(verdict.ok ? '' : verdict.message.length).toBeLessThan(400);
  });
});
