/**
 * The era classifier (lib/protocol/era.ts): every rung of the rejection ladder, what stays in the handshake era, what is
 * served modern, and the error responses a rejection becomes, checked against the 2026-07-28 schema.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  classifyInbound,
  DEFAULT_ERA_POLICY,
  errorResponseOf,
  type EraPolicy,
  type EraVerdict,
  type InboundMessage,
  type HandshakeReason,
  type RejectVerdict,
} from '../../lib/protocol/era';
import { HANDSHAKE_METHODS } from '../../lib/protocol/methods';
import { META } from '../../lib/protocol/modern';
import { readRequestEnvelope } from '../../lib/protocol/envelope';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../../lib/protocol/versions';
import { createAjv } from '../helpers/ajv';

const VERSION = '2026-07-28';
const CAPS = { sampling: {}, elicitation: {}, roots: { listChanged: true } };
const INFO = { name: 'probe', version: '1.0.0' };

type Meta = Record<string, unknown>;
const envelope = (extra: Meta = {}): Meta => ({
  [META.protocolVersion]: VERSION,
  [META.clientInfo]: INFO,
  [META.clientCapabilities]: CAPS,
  ...extra,
});
const without = (meta: Meta, key: string): Meta => Object.fromEntries(Object.entries(meta).filter(([k]) => k !== key));

/** A request; `meta` null leaves `_meta` out. */
const request = (id: unknown, method: string, params: Meta = {}, meta: Meta | null = envelope()) => ({
  jsonrpc: '2.0',
  id,
  method,
  params: meta === null ? params : { ...params, _meta: meta },
});
const notification = (method: string, params: Meta = {}) => ({ jsonrpc: '2.0', method, params });

/** The standard headers a modern client sends for `method` (plus `extra`; an undefined value drops a header). */
function headersFor(method: string, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const all: Record<string, string | undefined> = { 'mcp-protocol-version': VERSION, 'mcp-method': method, ...extra };
  return Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined)) as Record<string, string>;
}
const post = (body: unknown, headers?: Record<string, string>): InboundMessage => ({
  httpMethod: 'POST',
  headers: headers ?? {},
  body,
});
const stdio = (body: unknown): InboundMessage => ({ body });

const base64 = (text: string) => `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;

// ---------------------------------------------------------------------------------------------------------
// The official 2026-07-28 schema (test/schemas holds a copy of each revision's).
function schema2026(): any {
  return JSON.parse(readFileSync(fileURLToPath(new URL('../schemas/schema-2026-07-28.json', import.meta.url)), 'utf8'));
}

const ajv = createAjv('2025-11-25');
ajv.addSchema(schema2026(), VERSION);
const definition = (name: string) => {
  const validate = ajv.getSchema(`${VERSION}#/$defs/${name}`);
  if (!validate) throw new Error(`no ${name} in the 2026-07-28 schema`);
  return validate;
};

/** Per error code: the schema definition it must match, and whether it describes the response or its error. */
const DEFINITION_OF_CODE: Record<number, [name: string, of: 'response' | 'error']> = {
  [-32600]: ['InvalidRequestError', 'error'],
  [-32601]: ['MethodNotFoundError', 'error'],
  [-32602]: ['InvalidParamsError', 'error'],
  [-32020]: ['HeaderMismatchError', 'response'],
  [-32022]: ['UnsupportedProtocolVersionError', 'response'],
};

/** Schema problems of the error response `verdict` answers with (empty when valid). */
function schemaProblems(verdict: RejectVerdict): unknown[] {
  const response = errorResponseOf(verdict);
  const problems: unknown[] = [];
  const envelopeCheck = definition('JSONRPCErrorResponse');
  if (!envelopeCheck(response)) problems.push(...(envelopeCheck.errors ?? []));
  const specific = DEFINITION_OF_CODE[verdict.error.code];
  if (!specific) return [...problems, `no schema definition for code ${verdict.error.code}`];
  const check = definition(specific[0]);
  if (!check(specific[1] === 'response' ? response : response.error)) problems.push(...(check.errors ?? []));
  return problems;
}

// ---------------------------------------------------------------------------------------------------------

type Rejection = [
  name: string,
  input: InboundMessage,
  status: 400 | 404,
  code: number,
  id: string | number | undefined,
  data?: unknown,
];

const CAPABILITIES_MISSING = without(envelope(), META.clientCapabilities);

const REJECTIONS: Rejection[] = [
  // rung 2: batches
  [
    'a batch with an element carrying the claim',
    post([request(1, 'tools/list'), request(2, 'tools/list', {}, null)]),
    400,
    -32600,
    undefined,
  ],
  [
    'a handshake-era batch under a modern header',
    post([request(1, 'ping', {}, null)], headersFor('ping')),
    400,
    -32600,
    undefined,
  ],
  // rung 3: not a request or notification
  ['a non-object body under a modern header', post('hello', headersFor('tools/list')), 400, -32600, undefined],
  ['a claimed message with the wrong jsonrpc', post({ ...request(7, 'tools/list'), jsonrpc: '1.0' }), 400, -32600, 7],
  [
    'a response posted under a modern header',
    post({ jsonrpc: '2.0', id: 3, result: {} }, headersFor('x')),
    400,
    -32600,
    undefined,
  ],
  // rung 4: no claim, modern header
  [
    'server/discover without _meta',
    post(request(101, 'server/discover', {}, null), headersFor('server/discover')),
    400,
    -32602,
    101,
    { key: '_meta', problem: 'missing' },
  ],
  [
    'server/discover whose _meta lacks the protocol version',
    post(request(102, 'server/discover', {}, without(envelope(), META.protocolVersion)), headersFor('server/discover')),
    400,
    -32602,
    102,
    { key: META.protocolVersion, problem: 'missing' },
  ],
  [
    'tools/call without the claim',
    post(request('call-1', 'tools/call', { name: 'echo' }, null), headersFor('tools/call', { 'mcp-name': 'echo' })),
    400,
    -32602,
    'call-1',
    { key: '_meta', problem: 'missing' },
  ],
  // rung 5: a claim that is no version name
  [
    'a numeric claim',
    post(request(103, 'tools/list', {}, envelope({ [META.protocolVersion]: 5 })), headersFor('tools/list')),
    400,
    -32602,
    103,
    { key: META.protocolVersion, problem: 'invalid' },
  ],
  ['an empty claim', stdio(request(103, 'tools/list', {}, envelope({ [META.protocolVersion]: '' }))), 400, -32602, 103],
  // rung 6: the version header against the claim
  [
    'a header of 2026-07-28 and a claim of v999.0.0',
    post(
      request(302, 'server/discover', {}, envelope({ [META.protocolVersion]: 'v999.0.0' })),
      headersFor('server/discover'),
    ),
    400,
    -32020,
    302,
    { header: 'MCP-Protocol-Version', problem: 'mismatch' },
  ],
  [
    'an HTTP request without MCP-Protocol-Version',
    post(request(303, 'tools/list'), headersFor('tools/list', { 'mcp-protocol-version': undefined })),
    400,
    -32020,
    303,
    { header: 'MCP-Protocol-Version', problem: 'missing' },
  ],
  // rung 7: a revision we do not serve
  [
    'header and claim both v999.0.0',
    post(
      request(301, 'server/discover', {}, envelope({ [META.protocolVersion]: 'v999.0.0' })),
      headersFor('server/discover', { 'mcp-protocol-version': 'v999.0.0' }),
    ),
    400,
    -32022,
    301,
    { supported: ['2026-07-28'], requested: 'v999.0.0' },
  ],
  [
    'a claim of v999.0.0 on stdio',
    stdio(request('s1', 'tools/list', {}, envelope({ [META.protocolVersion]: 'v999.0.0' }))),
    400,
    -32022,
    's1',
    { supported: ['2026-07-28'], requested: 'v999.0.0' },
  ],
  [
    'a claim naming a handshake-era revision',
    stdio(request(304, 'tools/list', {}, envelope({ [META.protocolVersion]: '2025-11-25' }))),
    400,
    -32022,
    304,
    { supported: ['2026-07-28'], requested: '2025-11-25' },
  ],
  // rung 8: the rest of the envelope
  [
    'an envelope without clientCapabilities',
    post(request(104, 'server/discover', {}, CAPABILITIES_MISSING), headersFor('server/discover')),
    400,
    -32602,
    104,
    { key: META.clientCapabilities, problem: 'missing' },
  ],
  [
    'clientCapabilities that is an array',
    stdio(request(105, 'tools/list', {}, envelope({ [META.clientCapabilities]: [] }))),
    400,
    -32602,
    105,
    { key: META.clientCapabilities, problem: 'invalid' },
  ],
  [
    'a capability family that is not an object',
    stdio(request(106, 'tools/list', {}, envelope({ [META.clientCapabilities]: { sampling: true } }))),
    400,
    -32602,
    106,
    { key: META.clientCapabilities, problem: 'invalid' },
  ],
  [
    'a clientInfo without a version',
    stdio(request(107, 'tools/list', {}, envelope({ [META.clientInfo]: { name: 'x' } }))),
    400,
    -32602,
    107,
    { key: META.clientInfo, problem: 'invalid' },
  ],
  [
    'an unknown log level',
    stdio(request(108, 'tools/list', {}, envelope({ [META.logLevel]: 'verbose' }))),
    400,
    -32602,
    108,
    { key: META.logLevel, problem: 'invalid' },
  ],
  [
    'a progress token that is an object',
    stdio(request(109, 'tools/list', {}, envelope({ progressToken: {} }))),
    400,
    -32602,
    109,
    { key: 'progressToken', problem: 'invalid' },
  ],
  // rung 9: mirrored headers
  [
    'an Mcp-Method naming another method',
    post(request(110, 'tools/list'), headersFor('prompts/list')),
    400,
    -32020,
    110,
    { header: 'Mcp-Method', problem: 'mismatch' },
  ],
  [
    'a request without Mcp-Method',
    post(request(111, 'tools/list'), headersFor('tools/list', { 'mcp-method': undefined })),
    400,
    -32020,
    111,
    { header: 'Mcp-Method', problem: 'missing' },
  ],
  [
    'an Mcp-Name naming another tool',
    post(request(112, 'tools/call', { name: 'echo' }), headersFor('tools/call', { 'mcp-name': 'add' })),
    400,
    -32020,
    112,
    { header: 'Mcp-Name', problem: 'mismatch' },
  ],
  [
    'prompts/get without Mcp-Name',
    post(request(113, 'prompts/get', { name: 'greet' }), headersFor('prompts/get')),
    400,
    -32020,
    113,
    { header: 'Mcp-Name', problem: 'missing' },
  ],
  [
    'an Mcp-Name naming another resource',
    post(
      request(114, 'resources/read', { uri: 'file:///a' }),
      headersFor('resources/read', { 'mcp-name': 'file:///b' }),
    ),
    400,
    -32020,
    114,
    { header: 'Mcp-Name', problem: 'mismatch' },
  ],
  [
    'an Mcp-Name whose base64 is malformed',
    post(request(115, 'tools/call', { name: 'echo' }), headersFor('tools/call', { 'mcp-name': '=?base64?e*o?=' })),
    400,
    -32020,
    115,
    { header: 'Mcp-Name', problem: 'malformed' },
  ],
  [
    'an Mcp-Name whose base64 is not UTF-8',
    post(request(116, 'tools/call', { name: 'echo' }), headersFor('tools/call', { 'mcp-name': '=?base64?/w==?=' })),
    400,
    -32020,
    116,
    { header: 'Mcp-Name', problem: 'malformed' },
  ],
  // rung 10: removed and unknown methods
  ...(
    ['initialize', 'ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe', 'tasks/result'] as const
  ).map((method): Rejection => [
    `${method} with a modern envelope`,
    post(request(500, method), headersFor(method)),
    404,
    -32601,
    500,
  ]),
  ['unknown/method', post(request(601, 'unknown/method'), headersFor('unknown/method')), 404, -32601, 601],
  ['a server-to-client method sent to the server', stdio(request(602, 'sampling/createMessage')), 404, -32601, 602],
  [
    'a removed notification carrying the claim',
    post(notification('notifications/initialized', { _meta: envelope() }), headersFor('notifications/initialized')),
    404,
    -32601,
    undefined,
  ],
  [
    'a notification under a header naming a revision we do not serve',
    post(
      notification('notifications/cancelled'),
      headersFor('notifications/cancelled', { 'mcp-protocol-version': '2027-01-01' }),
    ),
    400,
    -32022,
    undefined,
    { supported: ['2026-07-28'], requested: '2027-01-01' },
  ],
];

describe('classifyInbound: the rejection ladder', () => {
  it.each(REJECTIONS)('refuses %s with the status the ladder names', (_name, input, status) => {
    expect(classifyInbound(input)).toMatchObject({ era: 'reject', status });
  });

  it.each(REJECTIONS)('refuses %s with the JSON-RPC code the ladder names', (_name, input, _status, code) => {
    expect((classifyInbound(input) as RejectVerdict).error?.code).toBe(code);
  });

  it.each(REJECTIONS)('echoes the id of %s', (_name, input, _status, _code, id) => {
    expect(classifyInbound(input)).toMatchObject({ era: 'reject', id });
  });

  it.each(REJECTIONS.filter((row) => row[5] !== undefined))('gives %s the error data its code defines', (...row) => {
    expect((classifyInbound(row[1]) as RejectVerdict).error.data).toEqual(row[5]);
  });

  it('echoes a claimed version of 20,000 characters as a bounded excerpt in data.requested', () => {
    const claim = 'v'.repeat(20_000);
    const verdict = classifyInbound(
      stdio(request('s9', 'tools/list', {}, envelope({ [META.protocolVersion]: claim }))),
    );
    const requested = (verdict as RejectVerdict).error.data as { requested: string };
    expect(requested.requested.length).toBeLessThanOrEqual(200);
    expect(claim.startsWith(requested.requested.slice(0, -1))).toBe(true);
  });

  it.each(REJECTIONS)('answers %s with an error response the 2026-07-28 schema accepts', (_name, input) => {
    expect(schemaProblems(classifyInbound(input) as RejectVerdict)).toEqual([]);
  });

  it('owes no reply to a refused notification', () => {
    const verdict = classifyInbound(post(notification('notifications/initialized', { _meta: envelope() })));
    expect(verdict).toMatchObject({ era: 'reject', reply: false });
  });

  it('owes a reply to a refused request', () => {
    expect(classifyInbound(stdio(request(1, 'ping')))).toMatchObject({ era: 'reject', reply: true });
  });

  it('leaves an error response without an id member when the id was unreadable', () => {
    const verdict = classifyInbound(post([request(1, 'tools/list')])) as RejectVerdict;
    expect(Object.keys(errorResponseOf(verdict))).toEqual(['jsonrpc', 'error']);
  });

  it('answers a method the server does not handle with 404, asking the policy', () => {
    const policy: EraPolicy = { ...DEFAULT_ERA_POLICY, isKnownMethod: (method) => method !== 'prompts/list' };
    expect(classifyInbound(post(request(203, 'prompts/list'), headersFor('prompts/list')), policy)).toMatchObject({
      era: 'reject',
      status: 404,
      id: 203,
    });
  });

  it('refuses a removed method even when the policy calls it known', () => {
    const policy: EraPolicy = { ...DEFAULT_ERA_POLICY, isKnownMethod: () => true };
    expect(classifyInbound(stdio(request(9, 'ping')), policy)).toMatchObject({ era: 'reject', status: 404 });
  });
});

// ---------------------------------------------------------------------------------------------------------

const HANDSHAKE: [name: string, input: InboundMessage, reason: HandshakeReason][] = [
  [
    'a GET, even under a modern header',
    { httpMethod: 'GET', headers: headersFor('x'), body: undefined },
    'http-method',
  ],
  ['a DELETE', { httpMethod: 'DELETE', headers: {}, body: undefined }, 'http-method'],
  ['initialize over HTTP', post(request(1, 'initialize', { protocolVersion: '2025-11-25' }, null)), 'initialize'],
  ['initialize on stdio', stdio(request(1, 'initialize', {}, null)), 'initialize'],
  [
    'a request under a handshake-era header',
    post(request(2, 'tools/list', {}, null), { 'mcp-protocol-version': '2025-11-25' }),
    'no-claim',
  ],
  ['a request on stdio without the claim', stdio(request(2, 'tools/list', {}, null)), 'no-claim'],
  [
    'a request whose _meta holds other reserved keys',
    stdio(request(2, 'tools/call', { name: 'x' }, without(envelope({ progressToken: 't' }), META.protocolVersion))),
    'no-claim',
  ],
  [
    'a request with a header that names no revision (refused later, as today)',
    post(request(2, 'tools/list', {}, null), { 'mcp-protocol-version': 'garbage' }),
    'no-claim',
  ],
  [
    'a request under a header older than any revision',
    post(request(2, 'tools/list', {}, null), { 'mcp-protocol-version': '1999-01-01' }),
    'no-claim',
  ],
  [
    'a handshake-era request whose Mcp-Method disagrees (never checked on handshake-era traffic)',
    post(request(2, 'tools/list', {}, null), { 'mcp-method': 'prompts/list' }),
    'no-claim',
  ],
  ['a notification without the claim', post(notification('notifications/initialized')), 'notification'],
  ['a posted result', post({ jsonrpc: '2.0', id: 1, result: {} }), 'response'],
  ['a posted error', post({ jsonrpc: '2.0', id: 1, error: { code: -1, message: 'no' } }), 'response'],
  [
    'a batch of handshake-era messages',
    post([request(1, 'ping', {}, null), notification('notifications/initialized')]),
    'batch',
  ],
  ['a body that is not an object', stdio(42), 'invalid'],
  ['an object without a method, result or error', stdio({ jsonrpc: '2.0', id: 1 }), 'invalid'],
];

describe('classifyInbound: handshake-era traffic', () => {
  it.each(HANDSHAKE)('routes %s to the handshake-era path', (_name, input, reason) => {
    expect(classifyInbound(input)).toEqual({ era: 'handshake', reason });
  });

  it('hands every handshake-era message of one reason the same verdict object (nothing allocated)', () => {
    const first = classifyInbound(stdio(request(1, 'tools/list', {}, null)));
    expect(classifyInbound(post(request('b', 'prompts/get', { name: 'p' }, null)))).toBe(first);
  });
});

// ---------------------------------------------------------------------------------------------------------

type Accepted = [name: string, input: InboundMessage, expected: Partial<Record<string, unknown>>];

const ACCEPTED: Accepted[] = [
  [
    'server/discover with the standard headers',
    post(request(201, 'server/discover'), headersFor('server/discover')),
    { kind: 'request', version: VERSION, meta: { clientCapabilities: CAPS, clientInfo: INFO } },
  ],
  [
    'a request without clientInfo (a SHOULD)',
    post(request(105, 'server/discover', {}, without(envelope(), META.clientInfo)), headersFor('server/discover')),
    { kind: 'request', meta: { clientCapabilities: CAPS } },
  ],
  [
    'a request with a log level and a progress token',
    stdio(request(3, 'tools/call', { name: 'echo' }, envelope({ [META.logLevel]: 'debug', progressToken: 7 }))),
    { kind: 'request', meta: { clientCapabilities: CAPS, clientInfo: INFO, logLevel: 'debug', progressToken: 7 } },
  ],
  [
    'tools/call whose Mcp-Name matches',
    post(request(4, 'tools/call', { name: 'echo' }), headersFor('tools/call', { 'mcp-name': 'echo' })),
    { kind: 'request', request: request(4, 'tools/call', { name: 'echo' }) },
  ],
  [
    'tools/call whose Mcp-Name is base64 of a non-ASCII name',
    post(request(5, 'tools/call', { name: 'grüße ' }), headersFor('tools/call', { 'mcp-name': base64('grüße ') })),
    { kind: 'request' },
  ],
  [
    'resources/read whose Mcp-Name is the uri',
    post(request(6, 'resources/read', { uri: 'file:///a' }), headersFor('resources/read', { 'mcp-name': 'file:///a' })),
    { kind: 'request' },
  ],
  [
    'headers read through a function, with optional whitespace around values',
    {
      httpMethod: 'POST',
      headers: (name: string) => ({ 'mcp-protocol-version': ` ${VERSION}\t`, 'mcp-method': 'tools/list ' })[name],
      body: request(8, 'tools/list'),
    },
    { kind: 'request' },
  ],
  ['a request on stdio (no header rules)', stdio(request(9, 'tools/list')), { kind: 'request', version: VERSION }],
  [
    'a claimed notification',
    post(
      notification('notifications/cancelled', { requestId: 1, _meta: envelope() }),
      headersFor('notifications/cancelled'),
    ),
    { kind: 'notification', version: VERSION },
  ],
  [
    'a notification modern by its header alone',
    post(notification('notifications/cancelled', { requestId: 1 }), headersFor('notifications/cancelled')),
    { kind: 'notification', version: VERSION },
  ],
];

describe('classifyInbound: modern traffic', () => {
  it.each(ACCEPTED)('serves %s on the modern path', (_name, input, expected) => {
    expect(classifyInbound(input)).toMatchObject({ era: 'modern', ...expected });
  });

  it('serves an extension method the policy knows', () => {
    const policy: EraPolicy = { ...DEFAULT_ERA_POLICY, isKnownMethod: (method) => method === 'tasks/get' };
    expect(classifyInbound(stdio(request(1, 'tasks/get', { taskId: 't' })), policy)).toMatchObject({ era: 'modern' });
  });
});

// ---------------------------------------------------------------------------------------------------------
// Properties.

const CLAIM_KEY: string = META.protocolVersion;

/** Parsed JSON, as a transport hands it over (no undefined members, no -0). */
const asParsed = <T>(value: T): T => JSON.parse(JSON.stringify(value));

const requestId = fc.oneof(fc.string({ maxLength: 12 }), fc.integer());
const metaKey = fc
  .oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom(
      'progressToken',
      META.clientInfo,
      META.clientCapabilities,
      META.logLevel,
      'io.modelcontextprotocol/related-task',
    ),
  )
  .filter((key) => key !== CLAIM_KEY);
const handshakeParams = fc.record(
  {
    _meta: fc.dictionary(metaKey, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
    name: fc.string({ maxLength: 8 }),
    arguments: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
    protocolVersion: fc.constantFrom(...SUPPORTED_PROTOCOL_VERSIONS),
  },
  { requiredKeys: [] },
);
const handshakeMethod = fc.oneof(
  fc.constantFrom(...Object.keys(HANDSHAKE_METHODS.specs)),
  fc.string({ maxLength: 16 }),
);

/** Any 2025-11-25 message without the claim: request, notification, result or error. */
const handshakeMessage = fc.oneof(
  fc.record(
    { jsonrpc: fc.constant('2.0'), id: requestId, method: handshakeMethod, params: handshakeParams },
    { requiredKeys: ['jsonrpc', 'id', 'method'] },
  ),
  fc.record(
    { jsonrpc: fc.constant('2.0'), method: handshakeMethod, params: handshakeParams },
    { requiredKeys: ['jsonrpc', 'method'] },
  ),
  fc.record({
    jsonrpc: fc.constant('2.0'),
    id: requestId,
    result: fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 2 })),
  }),
  fc.record(
    {
      jsonrpc: fc.constant('2.0'),
      id: requestId,
      error: fc.record(
        { code: fc.integer(), message: fc.string(), data: fc.jsonValue({ maxDepth: 2 }) },
        { requiredKeys: ['code', 'message'] },
      ),
    },
    { requiredKeys: ['jsonrpc', 'error'] },
  ),
);

/** How a handshake-era message arrives: on stdio, or POSTed with handshake-era headers (or none). */
const handshakeHeaders = fc.record(
  {
    'mcp-protocol-version': fc.constantFrom(...SUPPORTED_PROTOCOL_VERSIONS),
    'mcp-method': fc.string({ maxLength: 12 }),
    'mcp-name': fc.string({ maxLength: 12 }),
    'mcp-session-id': fc.uuid(),
  },
  { requiredKeys: [] },
);
const handshakeInput = fc.oneof(
  handshakeMessage.map((body): InboundMessage => ({ body: asParsed(body) })),
  fc.tuple(handshakeMessage, handshakeHeaders).map(([body, headers]): InboundMessage => ({
    httpMethod: 'POST',
    headers,
    body: asParsed(body),
  })),
  fc
    .tuple(fc.array(handshakeMessage, { minLength: 1, maxLength: 3 }), handshakeHeaders)
    .map(([body, headers]): InboundMessage => ({
      httpMethod: 'POST',
      headers,
      body: asParsed(body),
    })),
);

/** A message carrying the claim, with the rest of it (envelope, headers, method, params) anything at all. */
const claimedInput = fc
  .record({
    id: fc.oneof(requestId, fc.constant(undefined), fc.constant(null)),
    method: fc.oneof(
      fc.constantFrom(...Object.keys(HANDSHAKE_METHODS.specs), 'server/discover', 'subscriptions/listen'),
      fc.string(),
    ),
    claim: fc.oneof(fc.constantFrom(VERSION, 'v999.0.0', '2025-11-25', ''), fc.jsonValue({ maxDepth: 1 })),
    meta: fc.dictionary(
      fc.constantFrom(META.clientCapabilities, META.clientInfo, META.logLevel, 'progressToken'),
      fc.jsonValue({ maxDepth: 2 }),
    ),
    params: fc.dictionary(fc.constantFrom('name', 'uri', 'arguments'), fc.jsonValue({ maxDepth: 1 })),
    headers: fc.option(
      fc.dictionary(
        fc.constantFrom('mcp-protocol-version', 'mcp-method', 'mcp-name'),
        fc.oneof(fc.constant(VERSION), fc.string({ maxLength: 12 })),
      ),
      { nil: undefined },
    ),
  })
  .map(({ id, method, claim, meta, params, headers }): InboundMessage => ({
    httpMethod: headers === undefined ? undefined : 'POST',
    headers,
    body: asParsed({ jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...meta, [CLAIM_KEY]: claim } } }),
  }));

describe('classifyInbound: properties', () => {
  it('routes every handshake-era message without the claim to the handshake-era path', () => {
    fc.assert(
      fc.property(handshakeInput, (input) => {
        expect(classifyInbound(input).era).toBe('handshake');
      }),
      { numRuns: 500 },
    );
  });

  it('answers every refused claimed message with a schema-valid error echoing its readable id', () => {
    fc.assert(
      fc.property(claimedInput, (input) => {
        const verdict: EraVerdict = classifyInbound(input);
        if (verdict.era !== 'reject') return;
        const id = (input.body as { id?: unknown }).id;
        expect(verdict.id).toBe(typeof id === 'string' || typeof id === 'number' ? id : undefined);
        expect(schemaProblems(verdict)).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });

  it('never routes a claimed message to the handshake-era path', () => {
    fc.assert(
      fc.property(claimedInput, (input) => {
        expect(classifyInbound(input).era).not.toBe('handshake');
      }),
      { numRuns: 300 },
    );
  });
});

describe('readRequestEnvelope remembers the last frozen _meta', () => {
  const capabilities = { sampling: {} };
  const envelopeOf = (meta: Record<string, unknown>) => readRequestEnvelope(meta);

  it('reads a frozen _meta sent again as the same envelope', () => {
    const meta = Object.freeze({ [META.protocolVersion]: '2026-07-28', [META.clientCapabilities]: capabilities });
    const first = envelopeOf(meta);
    expect(envelopeOf(meta)).toBe(first);
  });

  it('reads an unfrozen _meta afresh each time, so a change made in between is seen', () => {
    const meta: Record<string, unknown> = {
      [META.protocolVersion]: '2026-07-28',
      [META.clientCapabilities]: capabilities,
    };
    expect(envelopeOf(meta)).toMatchObject({ logLevel: undefined });
    meta[META.logLevel] = 'shout';
    expect(envelopeOf(meta)).toEqual({ key: META.logLevel, problem: 'invalid' });
  });
});
