/**
 * What a broken or hostile server answers our `Client` with, and what the client must make of it. Each call
 * gets noise first (garbage, server requests and notifications, responses to ids the client never used),
 * then its reply, maybe twice. The reply decides the call's fate: a valid result resolves, a valid error
 * rejects with that `McpError`, a broken envelope or a result that breaks the method's schema rejects at once
 * with a typed local error, and no matching response at all times out.
 */
import fc from 'fast-check';
import { hostileLine, jsonValueText, rawLine } from './arbitraries';
import { depthOf, MAX_DEPTH } from './oracle';
import { encodeLine, type ScriptedReply } from './scripted-peer';

export type ClientMethod = 'ping' | 'tools/list' | 'tools/call';

export type Fate =
  | { readonly kind: 'resolves' }
  | { readonly kind: 'mcp-error'; readonly code: number }
  /** A typed local error at once (not a timeout): the reply is broken. */
  | { readonly kind: 'refused' }
  /** Resolves or is refused at once: an arbitrary object, valid or not for the method. */
  | { readonly kind: 'resolves-or-refused' }
  /**
   * Fails, at once or by its timeout: a message with the call's id but neither a method nor a result nor an
   * error may be read as a broken response (failing the call) or as a broken request (answered, the call
   * waiting on); JSON-RPC cannot say which.
   */
  | { readonly kind: 'fails' }
  | { readonly kind: 'times-out' };

export interface ScriptedCall {
  readonly method: ClientMethod;
  readonly reply: ScriptedReply;
  readonly fate: Fate;
}

/** A line around the request's id: `before` + id + `after`. */
const withId = (before: string, after: string) => [Buffer.from(before), null, Buffer.from(after)] as const;

/** A ping answered `{}` right after one line of server noise: whatever the noise, the ping must resolve. */
export function pingAnsweredAfter(noise: string): ScriptedCall[] {
  const answer = encodeLine([...withId('{"jsonrpc":"2.0","id":', ',"result":{}}')]);
  return [{ method: 'ping', fate: { kind: 'resolves' }, reply: [encodeLine([Buffer.from(noise)]), answer] }];
}

const GOOD_RESULTS: Record<ClientMethod, readonly string[]> = {
  ping: ['{}', '{"_meta":{"k":1}}'],
  'tools/list': ['{"tools":[]}', '{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}'],
  'tools/call': ['{"content":[{"type":"text","text":"ok"}]}', '{"content":[],"isError":true}'],
};

/** Results that break the method's result schema (for ping, only a non-object can). */
const BAD_RESULTS: Record<ClientMethod, readonly string[]> = {
  ping: ['[]', '5', 'null', '"x"'],
  'tools/list': ['{"tools":"x"}', '{"tools":[{"name":5}]}', '{}', '{"tools":[{"name":"t"}]}', 'null', '[]'],
  'tools/call': ['{"content":{}}', '{}', '{"content":"x"}', '{"content":[{"type":"bogus"}]}', 'null', '7'],
};

/** Envelopes a response with this id must not have. */
const BROKEN_ENVELOPES: readonly (readonly [string, string])[] = [
  ['{"jsonrpc":"1.0","id":', ',"result":{}}'],
  ['{"id":', ',"result":{}}'],
  ['{"jsonrpc":2,"id":', ',"result":{}}'],
  ['{"jsonrpc":"2.0","id":', ',"result":{},"error":{"code":1,"message":"both"}}'],
  ['{"jsonrpc":"2.0","id":', ',"error":{"code":"x","message":"m"}}'],
  ['{"jsonrpc":"2.0","id":', ',"error":{"code":-32000}}'],
  ['{"jsonrpc":"2.0","id":', ',"error":"no"}'],
  ['{"jsonrpc":{"a":{"a":{"a":1}}},"id":', ',"result":{}}'],
];

/** Whether a line could answer one of the client's requests (numeric ids): noise must not. */
function couldAnswer(line: Buffer): boolean {
  let value: unknown;
  try {
    value = JSON.parse(line.toString('utf8'));
  } catch {
    return false;
  }
  const elements = Array.isArray(value) ? value : [value];
  return elements.some((element) => typeof (element as { id?: unknown } | null)?.id === 'number');
}

const serverMessages = fc.constantFrom(
  '{"jsonrpc":"2.0","id":"srv-ping","method":"ping"}',
  '{"jsonrpc":"2.0","id":"srv-sample","method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}}',
  '{"jsonrpc":"2.0","id":"srv-roots","method":"roots/list"}',
  '{"jsonrpc":"2.0","id":"srv-x","method":"no/such/method"}',
  '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"nope","progress":1}}',
  '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}',
  '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"__proto__":{"x":1}}}}',
  '{"jsonrpc":"2.0","id":"other","result":{}}',
  '{"jsonrpc":"2.0","error":{"code":-32603,"message":"id-less"}}',
);

const noise = fc.array(
  fc.oneof(
    hostileLine.filter((line) => !couldAnswer(line)),
    serverMessages.map((text) => rawLine(Buffer.from(text))),
  ),
  { maxLength: 3 },
);

const replyFor = (method: ClientMethod): fc.Arbitrary<{ main: (Buffer | null)[] | null; fate: Fate }> =>
  fc.oneof(
    {
      weight: 4,
      arbitrary: fc.constantFrom(...GOOD_RESULTS[method]).map((result) => ({
        main: [...withId('{"jsonrpc":"2.0","id":', `,"result":${result}}`)],
        fate: { kind: 'resolves' as const },
      })),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.integer(), fc.string({ maxLength: 30 }), fc.option(jsonValueText))
        .map(([code, message, data]) => ({
          main: [
            ...withId(
              '{"jsonrpc":"2.0","id":',
              `,"error":{"code":${code},"message":${JSON.stringify(message)}${data === null ? '' : `,"data":${data}`}}}`,
            ),
          ],
          fate: { kind: 'mcp-error' as const, code },
        })),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(...BROKEN_ENVELOPES).map(([before, after]) => ({
        main: [...withId(before, after)],
        fate: { kind: 'refused' as const },
      })),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(...BAD_RESULTS[method]).map((result) => ({
        main: [...withId('{"jsonrpc":"2.0","id":', `,"result":${result}}`)],
        fate: { kind: 'refused' as const },
      })),
    },
    {
      weight: 1,
      arbitrary: fc
        .jsonValue({ maxDepth: 3 })
        .filter((value) => typeof value === 'object' && value !== null && !Array.isArray(value))
        .map((result) => ({
          main: [...withId('{"jsonrpc":"2.0","id":', `,"result":${JSON.stringify(result)}}`)],
          fate: { kind: 'resolves-or-refused' as const },
        })),
    },
    { weight: 1, arbitrary: fc.constant({ main: null, fate: { kind: 'times-out' as const } }) },
    {
      weight: 1,
      arbitrary: fc.constantFrom('}', ',"extra":1}').map((after) => ({
        main: [...withId('{"jsonrpc":"2.0","id":', after)],
        fate: { kind: 'fails' as const },
      })),
    },
  );

/** A reply nested deeper than the documented limit is refused before anything reads it: a broken response. */
function fateOf(main: readonly (Buffer | null)[] | null, fate: Fate): Fate {
  if (main === null) return fate;
  const text = main.map((part) => (part === null ? '0' : part.toString('utf8'))).join('');
  return depthOf(text) > MAX_DEPTH ? { kind: 'refused' } : fate;
}

export const scriptedCall: fc.Arbitrary<ScriptedCall> = fc
  .constantFrom<ClientMethod>('ping', 'tools/list', 'tools/call')
  .chain((method) =>
    fc
      .record({ noise, reply: replyFor(method), duplicate: fc.boolean() })
      .map(({ noise: lines, reply, duplicate }) => ({
        method,
        fate: fateOf(reply.main, reply.fate),
        reply: [
          ...lines.map((line) => encodeLine([line])),
          ...(reply.main ? [encodeLine(reply.main)] : []),
          ...(reply.main && duplicate ? [encodeLine(reply.main)] : []),
        ],
      })),
  );
