/**
 * What the fuzz suites generate: raw lines (bytes, since a peer may send invalid UTF-8) built as JSON text
 * by hand, so that they can hold what no JavaScript value serializes to — duplicate keys, `1e400`, `__proto__`
 * members, truncated documents, nesting thousands deep — next to the valid requests whose answers must stay
 * correct. Every line is free of `\n`: over stdio one generated line is one line on the wire.
 */
import fc from 'fast-check';

/** The ids of the interleaved valid requests start with this; generated garbage never uses it. */
export const VALID_ID_PREFIX = 'valid-';

/** Deepest nesting generated at random (the issue's 5,000 is an explicit example of each suite). */
export const MAX_RANDOM_DEPTH = 3_000;

const noNewline = (text: string) => text.replace(/\n/g, ' ');

/** A line's bytes, printed in a counterexample as a short excerpt (a 60 KB line would drown the report). */
export function rawLine(bytes: Buffer): Buffer {
  return Object.defineProperty(bytes, fc.toStringMethod, {
    value: () => {
      const text = bytes.toString('utf8');
      const shown = text.length > 160 ? `${text.slice(0, 80)}…(${bytes.length} bytes)…${text.slice(-60)}` : text;
      return `line(${JSON.stringify(shown)})`;
    },
  });
}
const notReserved = (id: string) => !id.startsWith(VALID_ID_PREFIX);

/** A string as JSON text; sometimes huge (up to 300 KB, past the suites' 256 KiB frame limit). */
export const jsonString: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }).map((text) => JSON.stringify(text)) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }).map((text) => JSON.stringify(text)) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 1_000, max: 300_000 }), fc.constantFrom('x', 'é', '😀', '\\"'))
      .map(([length, unit]) => `"${unit.repeat(Math.ceil(length / unit.length))}"`),
  },
);

/** `depth` nested arrays or objects around `inner`: a document that recursion overflows on. */
export function nested(depth: number, kind: 'array' | 'object', inner = '1'): string {
  return kind === 'array'
    ? '['.repeat(depth) + inner + ']'.repeat(depth)
    : '{"a":'.repeat(depth) + inner + '}'.repeat(depth);
}

export const deepValue: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 1, max: MAX_RANDOM_DEPTH }), fc.constantFrom('array' as const, 'object' as const))
  .map(([depth, kind]) => nested(depth, kind));

/** Numbers JSON allows but JavaScript bends: overflow to Infinity, negative zero, precision loss. */
const oddNumber = fc.constantFrom(
  '1e400',
  '-1e400',
  '-0',
  '0.0',
  '1E2',
  '9007199254740993',
  '1e-400',
  '123456789012345678901234567890',
);

/** Any JSON value as text, odd cases included. */
export const jsonValueText: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)) },
  { weight: 1, arbitrary: oddNumber },
  { weight: 1, arbitrary: jsonString },
  { weight: 1, arbitrary: deepValue },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '{"__proto__":{"polluted":1}}',
      '{"constructor":{"prototype":{"x":1}}}',
      '{"a":1,"a":2}',
    ),
  },
);

/** An id a response can be matched by (string or finite number), never one of the valid requests' ids. */
export const readableId: fc.Arbitrary<string> = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((value) => JSON.stringify(value)),
  fc.constantFrom('0', '-0', '1.5', '1e21', '9007199254740993'),
  fc
    .string({ unit: 'grapheme', maxLength: 20 })
    .filter(notReserved)
    .map((id) => JSON.stringify(id)),
  fc.constantFrom('"__proto__"', '"constructor"', '""', '"toString"'),
  fc.integer({ min: 2_000, max: 200_000 }).map((length) => `"${'i'.repeat(length)}"`),
);

/** An id JSON-RPC does not allow: null, a boolean, an object, an array, a number that overflows. */
export const unreadableId: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('null', 'true', 'false', '{}', '[]', '[1]', '{"id":1}', '1e400', '-1e400'),
  deepValue,
);

/** Method names: the server's own, ones it must refuse, inherited property names, and anything. */
export const methodName: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom('ping', 'tools/list', 'tools/call', 'initialize'),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'resources/list',
      'resources/read',
      'prompts/get',
      'completion/complete',
      'sampling/createMessage',
      'roots/list',
      'elicitation/create',
      'notifications/initialized',
      'notifications/cancelled',
      '__proto__',
      'constructor',
      'toString',
      'hasOwnProperty',
      'valueOf',
      '',
    ),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.integer({ min: 2_000, max: 100_000 }).map((length) => 'm'.repeat(length)) },
);

/** A JSON object's text from its members, in the order given (duplicates kept: the last one wins). */
export function objectText(members: readonly (readonly [string, string])[]): string {
  return `{${members.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(',')}}`;
}

const jsonrpcMember = fc.oneof(
  { weight: 12, arbitrary: fc.constant('"2.0"') },
  { weight: 1, arbitrary: fc.constantFrom('"1.0"', '2', '2.0', 'null', '"2.0 "', '{}', '["2.0"]') },
  { weight: 1, arbitrary: jsonValueText },
);

const idMember = fc.oneof({ weight: 6, arbitrary: readableId }, { weight: 1, arbitrary: unreadableId });

const methodMember = fc.oneof(
  { weight: 10, arbitrary: methodName.map((name) => JSON.stringify(name)) },
  { weight: 1, arbitrary: jsonValueText },
);

const paramsMember = fc.oneof(
  { weight: 4, arbitrary: fc.constant('{}') },
  {
    weight: 4,
    arbitrary: fc
      .tuple(fc.oneof(fc.constant('echo'), fc.string({ maxLength: 10 })), jsonValueText)
      .map(([name, args]) =>
        objectText([
          ['name', JSON.stringify(name)],
          ['arguments', args],
        ]),
      ),
  },
  { weight: 3, arbitrary: jsonValueText },
);

const extraMember = fc.tuple(
  fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', '_meta', 'extra'), fc.string({ maxLength: 8 })),
  jsonValueText,
);

type Member = readonly [string, string];

/** A request, notification or response envelope, each member possibly wrong, plus extra and duplicate members. */
export const envelopeText: fc.Arbitrary<string> = fc
  .record({
    kind: fc.constantFrom('request', 'notification', 'result', 'error', 'empty'),
    jsonrpc: fc.option(jsonrpcMember, { freq: 12 }),
    id: idMember,
    method: methodMember,
    params: fc.option(paramsMember, { freq: 3 }),
    result: jsonValueText,
    error: fc.oneof(
      fc.tuple(fc.integer(), fc.string({ maxLength: 20 })).map(([code, message]) =>
        objectText([
          ['code', String(code)],
          ['message', JSON.stringify(message)],
        ]),
      ),
      jsonValueText,
    ),
    extras: fc.array(extraMember, { maxLength: 2 }),
    duplicate: fc.option(fc.tuple(fc.constantFrom('id', 'jsonrpc', 'method'), jsonValueText), { freq: 8 }),
    shuffle: fc.boolean(),
  })
  .map(({ kind, jsonrpc, id, method, params, result, error, extras, duplicate, shuffle }) => {
    const members: Member[] = [];
    if (jsonrpc !== null) members.push(['jsonrpc', jsonrpc]);
    if (kind === 'request' || kind === 'result' || kind === 'error' || kind === 'empty') members.push(['id', id]);
    if (kind === 'request' || kind === 'notification') {
      members.push(['method', method]);
      if (params !== null) members.push(['params', params]);
    }
    if (kind === 'result') members.push(['result', result]);
    if (kind === 'error') members.push(['error', error]);
    members.push(...extras);
    if (duplicate) members.push(duplicate);
    if (shuffle) members.reverse();
    return objectText(members);
  });

/** The issue's line: a request whose "jsonrpc" member nests objects `depth` deep (~60 KB at 5,000). */
export function deepJsonrpcLine(depth: number, id = '1'): string {
  return `{"jsonrpc":${nested(depth, 'object')},"id":${id},"method":"ping"}`;
}

/** One raw line a hostile or broken client may send, as bytes. */
export const hostileLine: fc.Arbitrary<Buffer> = fc
  .oneof(
    { weight: 10, arbitrary: envelopeText.map((text) => Buffer.from(text)) },
    { weight: 2, arbitrary: jsonValueText.map((text) => Buffer.from(text)) },
    {
      weight: 2,
      arbitrary: fc.tuple(envelopeText, fc.nat()).map(([text, cut]) => Buffer.from(text.slice(0, cut % text.length))),
    },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }).map((text) => Buffer.from(noNewline(text))) },
    {
      weight: 1,
      arbitrary: fc
        .uint8Array({ maxLength: 60 })
        .map((bytes) => Buffer.from(bytes.map((byte) => (byte === 0x0a ? 0x20 : byte)))),
    },
    {
      weight: 1,
      // Invalid UTF-8 inside an otherwise valid request's string.
      arbitrary: fc
        .tuple(readableId, fc.uint8Array({ minLength: 1, maxLength: 8 }))
        .map(([id, bytes]) =>
          Buffer.concat([
            Buffer.from(`{"jsonrpc":"2.0","id":${id},"method":"ping","params":{"s":"`),
            Buffer.from(bytes.map((byte) => (byte < 0x80 ? 0xff : byte))),
            Buffer.from('"}}'),
          ]),
        ),
    },
    {
      weight: 1,
      arbitrary: fc
        .array(fc.oneof(envelopeText, jsonValueText), { maxLength: 5 })
        .map((elements) => Buffer.from(`[${elements.join(',')}]`)),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.integer({ min: 1, max: MAX_RANDOM_DEPTH }),
          readableId,
          fc.constantFrom('jsonrpc', 'params', 'id', 'method'),
        )
        .map(([depth, id, where]) => {
          const deep = nested(depth, depth % 2 ? 'array' : 'object');
          const members: Member[] = [
            ['jsonrpc', '"2.0"'],
            ['id', id],
            ['method', '"ping"'],
          ];
          const index = members.findIndex(([key]) => key === where);
          if (index === -1) members.push([where, deep]);
          else members[index] = [where, deep];
          return Buffer.from(objectText(members));
        }),
    },
    { weight: 1, arbitrary: fc.constantFrom('', '   ', '\t', '\r').map((text) => Buffer.from(text)) },
  )
  .map(rawLine);

/** A valid request interleaved with the garbage, whose answer must be exactly its own. */
export type ValidCall = { readonly kind: 'ping' } | { readonly kind: 'echo'; readonly argumentsText: string };

export const validCall: fc.Arbitrary<ValidCall> = fc.oneof(
  fc.constant({ kind: 'ping' as const }),
  fc
    .dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })
    .map((args) => ({ kind: 'echo' as const, argumentsText: JSON.stringify(args) })),
  fc.constantFrom(
    { kind: 'echo' as const, argumentsText: '{"__proto__":{"polluted":true},"constructor":{"prototype":1}}' },
    { kind: 'echo' as const, argumentsText: '{"n":1e308,"z":-0,"d":1,"d":2}' },
  ),
);

/** The text of valid call `call` with id `valid-<n>`. */
export function validCallText(call: ValidCall, n: number): string {
  const id = JSON.stringify(`${VALID_ID_PREFIX}${n}`);
  if (call.kind === 'ping') return `{"jsonrpc":"2.0","id":${id},"method":"ping"}`;
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":${call.argumentsText}}}`;
}

/** A session's traffic: garbage lines with valid calls among them, in generated order. */
export type Traffic = readonly ({ readonly garbage: Buffer } | { readonly valid: ValidCall })[];

export const traffic = (maxLength: number): fc.Arbitrary<Traffic> =>
  fc.array(
    fc.oneof(
      { weight: 3, arbitrary: hostileLine.map((garbage) => ({ garbage })) },
      { weight: 1, arbitrary: validCall.map((valid) => ({ valid })) },
    ),
    { minLength: 1, maxLength, size: 'max' },
  );

// ---- the stateless revision (2026-07-28) ---------------------------------------------------------------

export const MODERN_VERSION = '2026-07-28';
export const CLAIM_KEY = 'io.modelcontextprotocol/protocolVersion';
export const CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

/**
 * A 2026-07-28 request built from parts, each possibly hostile: the claim, the capabilities, extra `_meta`
 * members (prototype keys, nesting near and past the depth limit), the method, and a call's `requestState`,
 * `inputResponses` and arguments. The oracle reads the parts, not our code, to say what must come back.
 */
export interface ModernCall {
  /** JSON text of the claim; `claim` says what kind it is. */
  readonly claimText: string;
  readonly claim: 'served' | 'malformed' | 'unsupported';
  /** JSON text of `clientCapabilities`, or undefined when missing; `capabilitiesWellFormed` as the schema says. */
  readonly capabilitiesText: string | undefined;
  readonly capabilitiesWellFormed: boolean;
  /** Raw `_meta` members added to the envelope (`"key":value`). */
  readonly extraMeta: readonly (readonly [string, string])[];
  readonly method: string;
  /** Raw params members of a tools/call besides name and arguments. */
  readonly callExtras: readonly (readonly [string, string])[];
  /** Whether `callExtras` carry an input round the server cannot take (a bad or forged state, bad responses). */
  readonly roundRefused: boolean;
  readonly argumentsText: string;
}

const servedClaim = fc.constant({ claimText: JSON.stringify(MODERN_VERSION), claim: 'served' as const });
const modernClaim = fc.oneof(
  { weight: 6, arbitrary: servedClaim },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('5', 'null', 'true', '""', '{}', '["2026-07-28"]', nested(5, 'object', '"2026-07-28"'))
      .map((claimText) => ({ claimText, claim: 'malformed' as const })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('"2099-01-01"', '"2025-11-25"', '"__proto__"', '"2026-07-28-draft"')
      .map((claimText) => ({ claimText, claim: 'unsupported' as const })),
  },
);

const modernCapabilities = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('{}', '{"elicitation":{},"roots":{}}', '{"sampling":{"x":[1,2]}}') },
  { weight: 1, arbitrary: fc.constantFrom('{"__proto__":{"elicitation":1}}', '{"constructor":{"prototype":{}}}') },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 110 }).map((depth) => `{"experimental":${nested(depth, 'object')}}`),
  },
);
/** `clientCapabilities` values the envelope check must refuse (shared with the duplex fuzz). */
export const malformedCapabilities = fc.constantFrom(
  '"all"',
  '[]',
  'null',
  '{"roots":true}',
  '{"elicitation":[]}',
  '{"tasks":"yes"}',
  '{"experimental":null}',
);

const extraMetaMember = fc.oneof(
  fc.constantFrom<readonly [string, string]>(
    ['__proto__', '{"polluted":1}'],
    ['constructor', '{"prototype":{"polluted":1}}'],
    ['io.modelcontextprotocol/logLevel', '"info"'],
    ['io.modelcontextprotocol/progressToken', '"p"'],
  ),
  fc.tuple(
    fc.constant('x-deep'),
    fc.integer({ min: 1, max: 300 }).map((depth) => nested(depth, 'array')),
  ),
  fc.tuple(fc.constant('x-value'), jsonValueText),
);

const roundExtras = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ callExtras: [] as (readonly [string, string])[], roundRefused: false }) },
  {
    weight: 1,
    arbitrary: fc
      .oneof(
        fc.constantFrom('"forged"', '""', '42', '{}', 'null', '["x"]'),
        fc.integer({ min: 1_000, max: 100_000 }).map((length) => `"${'A'.repeat(length)}"`),
      )
      .map((state) => ({ callExtras: [['requestState', state] as const], roundRefused: true })),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('[]', '"yes"', '7')
      .map((responses) => ({ callExtras: [['inputResponses', responses] as const], roundRefused: true })),
  },
  {
    // Answers nobody asked for are ignored, prototype keys included.
    weight: 1,
    arbitrary: fc
      .constantFrom('{"__proto__":{"action":"accept"}}', '{"constructor":{}}', '{"x":{"action":"decline"}}')
      .map((responses) => ({ callExtras: [['inputResponses', responses] as const], roundRefused: false })),
  },
);

export const modernCall: fc.Arbitrary<ModernCall> = fc
  .record({
    claim: modernClaim,
    capabilities: fc.oneof(
      { weight: 8, arbitrary: modernCapabilities.map((text) => ({ text, wellFormed: true })) },
      { weight: 1, arbitrary: malformedCapabilities.map((text) => ({ text, wellFormed: false })) },
      { weight: 1, arbitrary: fc.constant({ text: undefined, wellFormed: false }) },
    ),
    extraMeta: fc.array(extraMetaMember, { maxLength: 2 }),
    method: fc.oneof(
      { weight: 6, arbitrary: fc.constant('tools/call') },
      { weight: 2, arbitrary: fc.constant('tools/list') },
      {
        weight: 1,
        arbitrary: fc.constantFrom('ping', 'initialize', 'logging/setLevel', 'resources/list', 'nope/x', '__proto__'),
      },
    ),
    round: roundExtras,
    args: fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
  })
  .map(({ claim, capabilities, extraMeta, method, round, args }) => ({
    ...claim,
    capabilitiesText: capabilities.text,
    capabilitiesWellFormed: capabilities.wellFormed,
    extraMeta,
    method,
    ...round,
    argumentsText: JSON.stringify(args),
  }));

/** The text of modern call `call` with id `id` (JSON text). */
export function modernCallText(call: ModernCall, id: string): string {
  const meta: Member[] = [[CLAIM_KEY, call.claimText]];
  if (call.capabilitiesText !== undefined) meta.push([CAPABILITIES_KEY, call.capabilitiesText]);
  meta.push(...call.extraMeta);
  const params: Member[] =
    call.method === 'tools/call' ? [['name', '"echo"'], ['arguments', call.argumentsText], ...call.callExtras] : [];
  params.push(['_meta', objectText(meta)]);
  return objectText([
    ['jsonrpc', '"2.0"'],
    ['id', id],
    ['method', JSON.stringify(call.method)],
    ['params', objectText(params)],
  ]);
}
