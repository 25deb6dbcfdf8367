/**
 * What a dual-era server must answer on a duplex connection (stdio, in memory) to one 2026-07-28 request,
 * from the revision's rules alone, read off the text sent (parsed, own members only, as JSON defines them)
 * and not from our code. A request with the envelope climbs the rejection ladder (nesting past the limit
 * -32600; a claim that is not a non-empty string -32602; a revision not served -32022 `{supported,
 * requested}`; `clientCapabilities` missing or malformed, or another envelope key malformed -32602; a removed
 * or unserved method -32601); a served one gets its method's outcome (`resultType` on every result, cache
 * hints on discover, lists and reads, -32021 `{requiredCapabilities}` for an ask the client did not declare,
 * -32602 for bad params or an unknown resource, an `input_required` round, a listen stream that stays open).
 */
import { expect } from 'vitest';
import { CAPABILITIES_KEY, CLAIM_KEY, MODERN_VERSION } from './arbitraries';
import { CLIENT_INFO_KEY, LOG_LEVEL_KEY, STATIC_URI } from './modern-arbitraries';
import { depthOf, MAX_DEPTH } from './oracle';

export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const MISSING_CAPABILITY = -32021;
export const UNSUPPORTED_VERSION = -32022;

/** What one request must get back. */
export type Answer =
  | { readonly kind: 'result'; readonly check?: (result: any) => void }
  | { readonly kind: 'error'; readonly code: number; readonly check?: (error: any) => void }
  | { readonly kind: 'input_required' }
  /** A long-lived request (a listen stream, a `wait`): answered only if the server closes it, which it does not here. */
  | { readonly kind: 'open'; readonly stream: 'listen' | 'wait' };

const LOGGING_LEVELS = new Set(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']);
const CAPABILITY_FAMILIES = ['experimental', 'extensions', 'roots', 'sampling', 'elicitation', 'tasks'];
/** Methods 2026-07-28 removed (spec: the handshake, ping, logging/setLevel, resource subscriptions, tasks). */
const REMOVED = new Set([
  'initialize',
  'ping',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
  'tasks/result',
  'tasks/list',
]);
/** What the fuzz server declares: tools and resources (with list changes and subscriptions), nothing else. */
const SERVED = new Set([
  'server/discover',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'subscriptions/listen',
]);
const TOOLS = new Set(['echo', 'wait', 'ask']);

export const isPlain = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
/** A member as JSON defines it: own, never inherited (`{"__proto__":…}` is an own member named `__proto__`). */
export const own = (value: unknown, key: string): unknown =>
  isPlain(value) && Object.prototype.hasOwnProperty.call(value, key) ? value[key] : undefined;

export const error = (code: number, check?: (error: any) => void): Answer => ({ kind: 'error', code, check });
export const result = (check?: (result: any) => void): Answer => ({ kind: 'result', check });

/** The verdict of the ladder on a claimed request: an error, or served (and whether it latches the era). */
export type LadderVerdict = { readonly refused: Answer } | { readonly served: true };

/** How -32022 echoes a requested version, the peer's text: whole up to 200 characters, else its first 199 and an ellipsis. */
export function echoedVersion(requested: string): string {
  return requested.length > 200 ? `${requested.slice(0, 199)}\u2026` : requested;
}

export function ladder(message: Record<string, unknown>, text: string): LadderVerdict {
  if (depthOf(text) > MAX_DEPTH) return { refused: error(INVALID_REQUEST) };
  const meta = own(own(message, 'params'), '_meta');
  const claim = own(meta, CLAIM_KEY);
  if (typeof claim !== 'string' || claim === '') return { refused: error(INVALID_PARAMS) };
  if (claim !== MODERN_VERSION) {
    return {
      refused: error(UNSUPPORTED_VERSION, (e) => {
        expect(e.data?.supported, '-32022 names the revisions served').toContain(MODERN_VERSION);
        expect(e.data?.requested, '-32022 names the revision requested').toBe(echoedVersion(claim));
      }),
    };
  }
  const capabilities = own(meta, CAPABILITIES_KEY);
  if (!isPlain(capabilities)) return { refused: error(INVALID_PARAMS) };
  for (const family of CAPABILITY_FAMILIES) {
    const declared = own(capabilities, family);
    if (declared !== undefined && !isPlain(declared)) return { refused: error(INVALID_PARAMS) };
  }
  const info = own(meta, CLIENT_INFO_KEY);
  if (info !== undefined && !(typeof own(info, 'name') === 'string' && typeof own(info, 'version') === 'string'))
    return { refused: error(INVALID_PARAMS) };
  const level = own(meta, LOG_LEVEL_KEY);
  if (level !== undefined && !(typeof level === 'string' && LOGGING_LEVELS.has(level)))
    return { refused: error(INVALID_PARAMS) };
  const token = own(meta, 'progressToken');
  if (token !== undefined && !(typeof token === 'string' || Number.isInteger(token)))
    return { refused: error(INVALID_PARAMS) };
  const method = message.method as string;
  if (REMOVED.has(method) || !SERVED.has(method)) return { refused: error(METHOD_NOT_FOUND) };
  return { served: true };
}

export interface Served {
  readonly answer: Answer;
  readonly deferred: boolean;
  readonly listens?: { tools: boolean; resources: boolean; static: boolean };
}

/** The outcome of a request the ladder let through, by its method. */
export function servedOutcome(message: Record<string, unknown>): Served {
  const params = own(message, 'params');
  const method = message.method as string;
  const now = (answer: Answer): Served => ({ answer, deferred: false });
  switch (method) {
    case 'server/discover':
      return now(
        result((r) => {
          expect(r.supportedVersions).toContain(MODERN_VERSION);
          expect(r._meta?.['io.modelcontextprotocol/serverInfo']?.name).toBe('fuzz-modern');
          expectCacheHint(r);
        }),
      );
    case 'tools/list':
      if (own(params, 'cursor') !== undefined) return now(error(INVALID_PARAMS));
      return now(
        result((r) => {
          expect(r.tools.map((tool: { name: string }) => tool.name).sort()).toEqual(['ask', 'echo', 'wait']);
          expectCacheHint(r);
        }),
      );
    case 'resources/list':
      return now(result((r) => expect(r.resources.map((resource: any) => resource.uri)).toEqual([STATIC_URI])));
    case 'resources/templates/list':
      return now(result());
    case 'resources/read':
      return now(readOutcome(own(params, 'uri')));
    case 'subscriptions/listen':
      return listenOutcome(own(params, 'notifications'));
    case 'tools/call':
      return callOutcome(params);
    default:
      throw new Error(`The oracle has no rule for ${method}`);
  }
}

function expectCacheHint(r: any): void {
  expect(Number.isSafeInteger(r.ttlMs) && r.ttlMs >= 0, 'ttlMs').toBe(true);
  expect(['public', 'private'], 'cacheScope').toContain(r.cacheScope);
}

function readOutcome(uri: unknown): Answer {
  if (typeof uri !== 'string') return error(INVALID_PARAMS);
  if (uri === STATIC_URI)
    return result((r) => {
      expect(r.contents).toEqual([expect.objectContaining({ uri: STATIC_URI, text: 'static' })]);
      expectCacheHint(r);
    });
  // 2026-07-28: an unknown resource is -32602 naming the URI (a bounded excerpt of a long one).
  return error(INVALID_PARAMS, (e) => {
    if (uri.length <= 1024) expect(e.data?.uri, 'data.uri').toBe(uri);
    else expect(typeof e.data?.uri === 'string' && e.data.uri.length <= 1100, 'a bounded data.uri').toBe(true);
  });
}

function listenOutcome(filter: unknown): Served {
  const refuse: Served = { answer: error(INVALID_PARAMS), deferred: false };
  if (!isPlain(filter)) return refuse;
  for (const kind of ['toolsListChanged', 'promptsListChanged', 'resourcesListChanged'])
    if (own(filter, kind) !== undefined && typeof own(filter, kind) !== 'boolean') return refuse;
  const uris = own(filter, 'resourceSubscriptions');
  if (uris !== undefined && !(Array.isArray(uris) && uris.every((uri) => typeof uri === 'string'))) return refuse;
  return {
    answer: { kind: 'open', stream: 'listen' },
    deferred: false,
    listens: {
      tools: own(filter, 'toolsListChanged') === true,
      resources: own(filter, 'resourcesListChanged') === true,
      static: Array.isArray(uris) && uris.includes(STATIC_URI),
    },
  };
}

/** An elicitation answer as the ElicitResult schema has it: an action, and content of primitive values. */
function isElicitResult(value: unknown): value is { action: string; content?: Record<string, unknown> } {
  if (!isPlain(value) || !['accept', 'decline', 'cancel'].includes(own(value, 'action') as string)) return false;
  const content = own(value, 'content');
  return (
    content === undefined ||
    (isPlain(content) && Object.values(content).every((v) => ['string', 'number', 'boolean'].includes(typeof v)))
  );
}

function callOutcome(params: unknown): Served {
  const now = (answer: Answer): Served => ({ answer, deferred: false });
  const inputResponses = own(params, 'inputResponses');
  if (inputResponses !== undefined && !isPlain(inputResponses)) return now(error(INVALID_PARAMS));
  const requestState = own(params, 'requestState');
  if (requestState !== undefined) {
    // Not one the server sealed (the retries, which carry one, are planned apart): refused before the handler.
    return { answer: error(INVALID_PARAMS), deferred: typeof requestState === 'string' };
  }
  const name = own(params, 'name');
  const args = own(params, 'arguments') ?? {};
  if (typeof name !== 'string' || !isPlain(args) || !TOOLS.has(name)) return now(error(INVALID_PARAMS));
  if (name === 'echo') return now(result((r) => expect(r.content[0].text, 'echo').toBe(JSON.stringify(args))));
  if (name === 'wait') return now({ kind: 'open', stream: 'wait' });
  // `ask` is an async handler: whatever it answers comes a few promise hops after it is read.
  const later = (answer: Answer): Served => ({ answer, deferred: true });
  const capabilities = own(own(own(params, '_meta'), CAPABILITIES_KEY) as unknown, 'elicitation');
  if (!isPlain(capabilities))
    return later(
      error(MISSING_CAPABILITY, (e) =>
        expect(e.data?.requiredCapabilities, '-32021 names what is required').toHaveProperty('elicitation'),
      ),
    );
  const answer = own(inputResponses, 'name');
  if (answer === undefined) return later({ kind: 'input_required' });
  if (!isElicitResult(answer)) return later(error(INVALID_PARAMS));
  return later(result((r) => expect(r.content[0].text).toBe(askText(answer))));
}

function askText(answer: { action: string; content?: Record<string, unknown> }): string {
  return answer.action === 'accept' ? `Hi, ${String(own(answer.content, 'name'))}` : answer.action;
}
