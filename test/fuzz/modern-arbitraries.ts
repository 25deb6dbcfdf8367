/**
 * What the duplex 2026-07-28 fuzz generates: a session of a stdio-like connection whose era the first
 * non-probe request decides. A case is a prefix that must not latch the era (`server/discover` probes,
 * requests the classifier refuses, garbage), one well-formed modern request that latches it, then a body of
 * modern requests (well formed or mutated part by part), handshake-era requests, cancellations, notifications,
 * garbage lines, retries of `input_required` rounds and server-side list changes, in generated order.
 *
 * Requests are built as JSON text from parts so that they can hold what no JavaScript value serializes to
 * (`__proto__` members, nesting near and past the depth limit). The oracle (modern-oracle.ts) parses the
 * same text and applies the revision's rules to say what must come back.
 */
import fc from 'fast-check';
import { CAPABILITIES_KEY, CLAIM_KEY, malformedCapabilities, MODERN_VERSION, nested, objectText } from './arbitraries';

export type Member = readonly [key: string, valueText: string];

export const CLIENT_INFO_KEY = 'io.modelcontextprotocol/clientInfo';
export const LOG_LEVEL_KEY = 'io.modelcontextprotocol/logLevel';

/** The URI the duplex fuzz server serves (modern-definition.ts). */
export const STATIC_URI = 'fuzz://static';

/** A request's `_meta` envelope, each part as JSON text (undefined: the member is absent). */
export interface EnvelopeParts {
  readonly claim?: string;
  readonly capabilities?: string;
  readonly clientInfo?: string;
  readonly logLevel?: string;
  readonly progressToken?: string;
  readonly extra: readonly Member[];
}

/** A request of the stateless revision: its envelope, its method, and its params besides `_meta`. */
export interface ModernRequestSpec {
  readonly envelope: EnvelopeParts;
  readonly method: string;
  readonly params: readonly Member[];
}

/** How a retry of an `input_required` round answers it. */
export type RetryVariant = 'accept' | 'decline' | 'wrong-kind' | 'tampered-state' | 'other-arguments';

export type BodyItem =
  | { readonly kind: 'request'; readonly spec: ModernRequestSpec }
  /** A request without the envelope (the handshake era's shape), after the era latched. */
  | { readonly kind: 'handshake'; readonly method: string; readonly params?: string }
  /**
   * `notifications/cancelled` for the `target`-th earlier request whose answer a cancel cannot race (of those
   * still open when `open`), or for an id never used.
   */
  | { readonly kind: 'cancel'; readonly target: number | 'unknown'; readonly open: boolean }
  /** A line whose answer does not depend on the era: garbage, a response, a notification. */
  | { readonly kind: 'line'; readonly text: string }
  /** The server announces a change on its event bus: a list changed, or the static resource was updated. */
  | { readonly kind: 'publish'; readonly change: 'tools' | 'resources' | 'static' }
  /** An `echo` call reusing the id of the `target`-th earlier request. */
  | { readonly kind: 'duplicate'; readonly target: number }
  /** The retry of the `target`-th earlier `input_required` round. */
  | { readonly kind: 'retry'; readonly target: number; readonly variant: RetryVariant };

export type PrefixItem =
  | { readonly kind: 'probe'; readonly spec: ModernRequestSpec }
  | { readonly kind: 'refused'; readonly spec: ModernRequestSpec }
  | { readonly kind: 'line'; readonly text: string };

export interface DuplexCase {
  readonly prefix: readonly PrefixItem[];
  /** The first request the server serves that is not a probe: it latches the connection to 2026-07-28. */
  readonly latch: ModernRequestSpec;
  readonly body: readonly BodyItem[];
}

// ---- the envelope -----------------------------------------------------------------------------------------

const SERVED_CLAIM = JSON.stringify(MODERN_VERSION);

const wellFormedCapabilities = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '{"elicitation":{}}',
      '{"elicitation":{"form":{}},"sampling":{},"roots":{"listChanged":true}}',
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '{}',
      '{"roots":{}}',
      // Declared only under an own "__proto__" member: not declared.
      '{"__proto__":{"elicitation":{}}}',
      '{"constructor":{"prototype":{"elicitation":{}}},"elicitation":{}}',
    ),
  },
);

const clientInfo = fc.oneof(
  { weight: 4, arbitrary: fc.constant('{"name":"fuzz","version":"1.0.0"}') },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

/** An envelope every rung of the ladder accepts; `capabilities` chooses what the client declares. */
export const wellFormedEnvelope = (capabilities: fc.Arbitrary<string> = wellFormedCapabilities) =>
  fc.record({
    claim: fc.constant(SERVED_CLAIM),
    capabilities,
    clientInfo,
    logLevel: fc.oneof(
      { weight: 3, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.constantFrom('"debug"', '"info"', '"emergency"') },
    ),
    progressToken: fc.option(fc.constantFrom('"p-1"', '7', '0', '"__proto__"'), { nil: undefined, freq: 3 }),
    extra: fc.array(extraMetaMember, { maxLength: 2 }),
  }) as fc.Arbitrary<EnvelopeParts>;

const extraMetaMember: fc.Arbitrary<Member> = fc.oneof(
  fc.constantFrom<Member>(
    ['__proto__', '{"polluted":1}'],
    ['constructor', '{"prototype":{"polluted":1}}'],
    ['io.example/trace', '"x"'],
  ),
  // Nesting around the limit of 128 (the envelope itself is three levels deep).
  fc.integer({ min: 1, max: 135 }).map((depth): Member => ['x-deep', nested(depth, depth % 2 ? 'array' : 'object')]),
);

/** A claim the ladder refuses: not a non-empty string (-32602), or a revision not served (-32022). */
const refusedClaim = fc.oneof(
  fc.constantFrom('5', 'null', 'true', '""', '{}', '["2026-07-28"]', '{"__proto__":"2026-07-28"}'),
  fc.constantFrom('"2099-01-01"', '"2025-11-25"', '"__proto__"', '"2026-07-28 "', '"toString"'),
  fc.integer({ min: 1_000, max: 20_000 }).map((length) => JSON.stringify(`2026-07-28${'x'.repeat(length)}`)),
);

/** An envelope with one part broken (or missing), the rest well formed. */
export const brokenEnvelope: fc.Arbitrary<EnvelopeParts> = fc
  .tuple(
    wellFormedEnvelope(),
    fc.oneof(
      refusedClaim.map((claim) => ({ claim })),
      fc.oneof(malformedCapabilities, fc.constant(undefined)).map((capabilities) => ({ capabilities })),
      fc.constantFrom('{"name":1,"version":"1"}', '"fuzz"', '{"name":"fuzz"}').map((info) => ({ clientInfo: info })),
      fc.constantFrom('"loud"', '3', '"__proto__"').map((logLevel) => ({ logLevel })),
      fc.constantFrom('1.5', 'null', '{}', '[]', 'true').map((progressToken) => ({ progressToken })),
    ),
  )
  .map(([envelope, broken]) => ({ ...envelope, ...broken }));

// ---- the requests -----------------------------------------------------------------------------------------

const hugeString = fc
  .tuple(fc.integer({ min: 1_000, max: 30_000 }), fc.constantFrom('x', 'é', '😀', '\\"'))
  .map(([length, unit]) => `"${unit.repeat(Math.ceil(length / unit.length))}"`);

/** A tool's arguments: an object, sometimes with prototype keys, huge strings or nesting near the limit. */
const argumentsText = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })
      .map((args) => JSON.stringify(args)),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":1}}}',
      '{"n":1e308,"z":-0,"d":1,"d":2}',
      '{"toString":"x","hasOwnProperty":1}',
    ),
  },
  { weight: 1, arbitrary: hugeString.map((text) => objectText([['big', text]])) },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 1, max: 126 }).map((depth) => objectText([['deep', nested(depth, 'array')]])),
  },
);

const elicitAnswer = fc.constantFrom(
  '{"action":"accept","content":{"name":"Ada"}}',
  '{"action":"decline"}',
  '{"action":"cancel"}',
);
/** Answers of the wrong kind for an elicitation: a sampling result, a roots result, garbage. */
const wrongAnswer = fc.constantFrom(
  '{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}',
  '{"roots":[]}',
  '{"action":"maybe"}',
  '"yes"',
  '[]',
  'null',
);

/** A call of `ask` (it elicits a name, key `name`), with whatever input members a client may add. */
const askCall = fc
  .record({
    inputResponses: fc.option(
      fc.oneof(
        elicitAnswer.map((answer) => objectText([['name', answer]])),
        wrongAnswer.map((answer) => objectText([['name', answer]])),
        fc.constantFrom('{"__proto__":{"action":"accept"}}', '{"other":{"action":"decline"}}', '[]', '"yes"', '7'),
      ),
      { nil: undefined, freq: 2 },
    ),
    requestState: fc.oneof(
      { weight: 4, arbitrary: fc.constant(undefined) },
      { weight: 1, arbitrary: fc.oneof(fc.constantFrom('"forged"', '""', '42', '{}', 'null', '["x"]'), hugeString) },
    ),
  })
  .map(({ inputResponses, requestState }) => {
    const params: Member[] = [
      ['name', '"ask"'],
      ['arguments', '{}'],
    ];
    if (inputResponses !== undefined) params.push(['inputResponses', inputResponses]);
    if (requestState !== undefined) params.push(['requestState', requestState]);
    return params;
  });

const methodAndParams: fc.Arbitrary<{ method: string; params: readonly Member[] }> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ method: 'server/discover', params: [] }) },
  {
    weight: 2,
    arbitrary: fc
      .option(fc.constantFrom('"bogus"', '5', 'null'), { nil: undefined, freq: 4 })
      .map((cursor) => ({ method: 'tools/list', params: cursor === undefined ? [] : [['cursor', cursor] as Member] })),
  },
  { weight: 1, arbitrary: fc.constant({ method: 'resources/list', params: [] }) },
  {
    weight: 6,
    arbitrary: argumentsText.map((args) => ({
      method: 'tools/call',
      params: [
        ['name', '"echo"'],
        ['arguments', args],
      ] as Member[],
    })),
  },
  {
    weight: 2,
    arbitrary: fc.constant({
      method: 'tools/call',
      params: [
        ['name', '"wait"'],
        ['arguments', '{}'],
      ] as Member[],
    }),
  },
  { weight: 5, arbitrary: askCall.map((params) => ({ method: 'tools/call', params })) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom<readonly Member[]>(
        [['name', '"nope"']],
        [['name', '5']],
        [['arguments', '{}']],
        [
          ['name', '"echo"'],
          ['arguments', '[1]'],
        ],
        [
          ['name', '"echo"'],
          ['arguments', '"x"'],
        ],
        [['name', '"__proto__"']],
        [
          ['name', '"toString"'],
          ['arguments', '{}'],
        ],
        [
          ['name', '"echo"'],
          ['arguments', '{}'],
          ['__proto__', '{"requestState":"x"}'],
        ],
      )
      .map((params) => ({ method: 'tools/call', params })),
  },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.constant(JSON.stringify(STATIC_URI)),
        fc.constantFrom('"fuzz://missing"', '""', '"__proto__"', '5', 'null'),
        hugeString,
      )
      .map((uri) => ({ method: 'resources/read', params: [['uri', uri]] as Member[] })),
  },
  {
    weight: 3,
    arbitrary: fc
      .oneof(
        {
          weight: 4,
          arbitrary: fc.constantFrom(
            '{"toolsListChanged":true}',
            '{"resourcesListChanged":true,"toolsListChanged":false}',
            '{"toolsListChanged":true,"resourcesListChanged":true,"resourceSubscriptions":["fuzz://static","fuzz://static","fuzz://missing"]}',
            '{"promptsListChanged":true}',
            '{}',
            '{"__proto__":{"toolsListChanged":true}}',
          ),
        },
        {
          weight: 1,
          arbitrary: fc.constantFrom('[]', '"all"', '{"toolsListChanged":"yes"}', '{"resourceSubscriptions":[1]}'),
        },
      )
      .map((filter) => ({ method: 'subscriptions/listen', params: [['notifications', filter]] as Member[] })),
  },
  { weight: 1, arbitrary: fc.constant({ method: 'subscriptions/listen', params: [] }) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.constantFrom(
          'initialize',
          'ping',
          'logging/setLevel',
          'resources/subscribe',
          'resources/unsubscribe',
          'tasks/list',
          'prompts/list',
          'completion/complete',
          'sampling/createMessage',
          'nope/x',
          '__proto__',
          'constructor',
          'toString',
          '',
        ),
        fc.integer({ min: 2_000, max: 50_000 }).map((length) => 'm'.repeat(length)),
      )
      .map((method) => ({ method, params: [] })),
  },
);

/** A modern request that may be anything: well formed most of the time, one part broken otherwise. */
export const modernRequest: fc.Arbitrary<ModernRequestSpec> = fc
  .tuple(
    fc.oneof({ weight: 5, arbitrary: wellFormedEnvelope() }, { weight: 2, arbitrary: brokenEnvelope }),
    methodAndParams,
  )
  .map(([envelope, { method, params }]) => ({ envelope, method, params }));

/** The request that latches the era: served, not a probe, answered at once (an `echo` or `tools/list`). */
const latchRequest: fc.Arbitrary<ModernRequestSpec> = fc
  .tuple(
    wellFormedEnvelope().map((envelope) => ({
      ...envelope,
      extra: envelope.extra.filter(([key]) => key !== 'x-deep'),
    })),
    fc.boolean(),
    fc
      .dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })
      .map((args) => JSON.stringify(args)),
  )
  .map(([envelope, list, args]) =>
    list
      ? { envelope, method: 'tools/list', params: [] }
      : {
          envelope,
          method: 'tools/call',
          params: [
            ['name', '"echo"'],
            ['arguments', args],
          ],
        },
  );

/** A request the classifier refuses before it can latch anything: a broken claim or envelope, a removed or unknown method. */
const refusedRequest: fc.Arbitrary<ModernRequestSpec> = fc.oneof(
  fc
    .tuple(refusedClaim, wellFormedEnvelope())
    .map(([claim, envelope]) => ({ envelope: { ...envelope, claim }, method: 'tools/list', params: [] })),
  fc
    .tuple(fc.oneof(malformedCapabilities, fc.constant(undefined)), wellFormedEnvelope())
    .map(([capabilities, envelope]) => ({ envelope: { ...envelope, capabilities }, method: 'tools/list', params: [] })),
  fc
    .tuple(fc.constantFrom('initialize', 'ping', 'logging/setLevel', 'prompts/get', 'nope'), wellFormedEnvelope())
    .map(([method, envelope]) => ({ envelope, method, params: [] })),
);

const probe = wellFormedEnvelope().map((envelope) => ({ envelope, method: 'server/discover', params: [] }));

// ---- era-independent lines ----------------------------------------------------------------------------------

/** Lines answered the same in either era: unparsable text, non-requests, responses, notifications. */
export const eraIndependentLine: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('{', 'nope', '{"jsonrpc":"2.0","id":', '\u0000'),
  fc.constantFrom('null', '"just a string"', '42', '[]', '[1]', '{}', '{"jsonrpc":"2.0","id":"g-1"}'),
  // Claimed, but no valid JSON-RPC request: a batch (2026-07-28 has none), no "jsonrpc", an id JSON-RPC forbids.
  fc
    .constantFrom(
      '[{"jsonrpc":"2.0","id":"g-b","method":"tools/list","params":%s}]',
      '{"id":"g-v","method":"tools/list","params":%s}',
      '{"jsonrpc":"1.0","id":"g-w","method":"tools/list","params":%s}',
      '{"jsonrpc":"2.0","id":null,"method":"tools/list","params":%s}',
      '{"jsonrpc":"2.0","id":{"__proto__":1},"method":"tools/list","params":%s}',
      '{"jsonrpc":"2.0","id":"g-m","method":7,"params":%s}',
    )
    .map((template) =>
      template.replace('%s', `{"_meta":{"${CLAIM_KEY}":"${MODERN_VERSION}","${CAPABILITIES_KEY}":{}}}`),
    ),
  fc.constantFrom(
    '{"jsonrpc":"2.0","id":"g-r","result":{}}',
    '{"jsonrpc":"2.0","id":9,"error":{"code":1,"message":"x"}}',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}',
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p-1","progress":1}}',
    '{"jsonrpc":"2.0","method":"notifications/cancelled"}',
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"__proto__":1}}}',
    '{"jsonrpc":"2.0","method":"notifications/x","params":{"__proto__":{"polluted":1}}}',
    `{"jsonrpc":"2.0","method":"notifications/x","params":{"_meta":{"${CLAIM_KEY}":"${MODERN_VERSION}"}}}`,
    `{"jsonrpc":"2.0","method":"notifications/x","params":{"_meta":{"${CLAIM_KEY}":"2099-01-01"}}}`,
  ),
);

// ---- the case -----------------------------------------------------------------------------------------------

const handshakeRequest = fc.oneof(
  fc.constant({
    kind: 'handshake' as const,
    method: 'initialize',
    params: '{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}',
  }),
  fc.constant({ kind: 'handshake' as const, method: 'initialize', params: '{"protocolVersion":5}' }),
  fc.constantFrom('ping', 'tools/list', 'logging/setLevel', 'resources/subscribe', 'nope').map((method) => ({
    kind: 'handshake' as const,
    method,
  })),
  fc.constant({
    kind: 'handshake' as const,
    method: 'tools/call',
    params: '{"name":"echo","arguments":{},"_meta":{"x":1}}',
  }),
);

const bodyItem: fc.Arbitrary<BodyItem> = fc.oneof(
  { weight: 10, arbitrary: modernRequest.map((spec) => ({ kind: 'request' as const, spec })) },
  { weight: 2, arbitrary: handshakeRequest },
  {
    weight: 3,
    arbitrary: fc
      .record({
        target: fc.oneof(
          { weight: 4, arbitrary: fc.nat(40) },
          { weight: 1, arbitrary: fc.constant('unknown' as const) },
        ),
        open: fc.boolean(),
      })
      .map(({ target, open }) => ({ kind: 'cancel' as const, target, open })),
  },
  { weight: 2, arbitrary: eraIndependentLine.map((text) => ({ kind: 'line' as const, text })) },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom('tools' as const, 'resources' as const, 'static' as const)
      .map((change) => ({ kind: 'publish' as const, change })),
  },
  { weight: 1, arbitrary: fc.nat(40).map((target) => ({ kind: 'duplicate' as const, target })) },
  {
    weight: 2,
    arbitrary: fc
      .record({
        target: fc.nat(10),
        variant: fc.constantFrom<RetryVariant>('accept', 'decline', 'wrong-kind', 'tampered-state', 'other-arguments'),
      })
      .map(({ target, variant }) => ({ kind: 'retry' as const, target, variant })),
  },
);

const prefixItem: fc.Arbitrary<PrefixItem> = fc.oneof(
  { weight: 2, arbitrary: probe.map((spec) => ({ kind: 'probe' as const, spec })) },
  { weight: 2, arbitrary: refusedRequest.map((spec) => ({ kind: 'refused' as const, spec })) },
  { weight: 1, arbitrary: eraIndependentLine.map((text) => ({ kind: 'line' as const, text })) },
);

/** A case as a counterexample prints it: JSON, each string over 200 characters cut to an excerpt. */
function printable(testCase: DuplexCase): DuplexCase {
  const clip = (_key: string, value: unknown) =>
    typeof value === 'string' && value.length > 200
      ? `${value.slice(0, 80)}…(${value.length} chars)…${value.slice(-40)}`
      : value;
  return Object.defineProperty(testCase, fc.toStringMethod, { value: () => JSON.stringify(testCase, clip) });
}

/** A case: half of them open with a probe, as current clients do. */
export const duplexCase = (maxBody: number): fc.Arbitrary<DuplexCase> =>
  fc
    .record({
      prefix: fc.oneof(
        fc
          .tuple(probe, fc.array(prefixItem, { maxLength: 3 }))
          .map(([spec, rest]) => [{ kind: 'probe' as const, spec }, ...rest]),
        fc.array(prefixItem, { maxLength: 3 }),
      ),
      latch: latchRequest,
      body: fc.array(bodyItem, { minLength: 1, maxLength: maxBody, size: 'max' }),
    })
    .map(printable);

// ---- text ---------------------------------------------------------------------------------------------------

/** The `_meta` object of an envelope, as text. */
export function envelopeText(envelope: EnvelopeParts): string {
  const members: Member[] = [];
  if (envelope.claim !== undefined) members.push([CLAIM_KEY, envelope.claim]);
  if (envelope.capabilities !== undefined) members.push([CAPABILITIES_KEY, envelope.capabilities]);
  if (envelope.clientInfo !== undefined) members.push([CLIENT_INFO_KEY, envelope.clientInfo]);
  if (envelope.logLevel !== undefined) members.push([LOG_LEVEL_KEY, envelope.logLevel]);
  if (envelope.progressToken !== undefined) members.push(['progressToken', envelope.progressToken]);
  members.push(...envelope.extra);
  return objectText(members);
}

/** The text of a modern request with id `idText` (JSON text). */
export function modernRequestText(spec: ModernRequestSpec, idText: string): string {
  return objectText([
    ['jsonrpc', '"2.0"'],
    ['id', idText],
    ['method', JSON.stringify(spec.method)],
    ['params', objectText([...spec.params, ['_meta', envelopeText(spec.envelope)]])],
  ]);
}

/** The text of a request without the envelope. */
export function handshakeRequestText(method: string, params: string | undefined, idText: string): string {
  const members: Member[] = [
    ['jsonrpc', '"2.0"'],
    ['id', idText],
    ['method', JSON.stringify(method)],
  ];
  if (params !== undefined) members.push(['params', params]);
  return objectText(members);
}

/** A well-formed envelope declaring `capabilities` (text), for the requests the harness sends itself. */
export function plainEnvelope(capabilities = '{"elicitation":{}}'): EnvelopeParts {
  return { claim: SERVED_CLAIM, capabilities, clientInfo: '{"name":"fuzz","version":"1.0.0"}', extra: [] };
}
