/**
 * What a server must answer to each line, from JSON-RPC 2.0 and MCP alone (not from our code): nothing for a
 * notification, a response or a blank line; an id-less error for what has no readable id; and for a request,
 * exactly one response with its id — a result, or an error with the right code. Then the checker that
 * compares a session's answers with these expectations: one response per readable id, right codes, bounded
 * messages, valid requests answered with their own result.
 */
import { expect } from 'vitest';
import { VALID_ID_PREFIX, validCallText, type ModernCall, type Traffic } from './arbitraries';

export type RequestId = string | number;

/** An error code, or `result` for a success. */
export type Outcome = number | 'result';

export type Expectation =
  /** Nothing comes back. `invalidEnvelope`: a broken response, never answered on a wire (HTTP refuses its body). */
  | { readonly kind: 'silent'; readonly invalidEnvelope?: true }
  | { readonly kind: 'idless'; readonly code: number; readonly invalidEnvelope?: true }
  | {
      readonly kind: 'answer';
      readonly id: RequestId;
      readonly outcomes: readonly Outcome[];
      readonly echo?: string;
      /** Refused for its envelope, before any handler: HTTP refuses such a body with 400. */
      readonly invalidEnvelope?: true;
    };

export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;

/** The longest error message a refusal may carry: it may quote the input, but only a bounded excerpt. */
export const MAX_ERROR_MESSAGE_CHARS = 1024;

/**
 * How a transport frames text: stdio skips blank lines, strips a CR and counts raw bytes; a message transport
 * frames whole texts and counts their UTF-8; an HTTP body is a whole text whose raw bytes count.
 */
export type Framing = 'lines' | 'messages' | 'body';

const SILENT: Expectation = { kind: 'silent' };
/** A broken response: JSON-RPC forbids answering a response, so it fails the request it names (if any), unanswered. */
const BROKEN_RESPONSE: Expectation = { kind: 'silent', invalidEnvelope: true };

/**
 * The nesting a message may reach (the envelope is level 1): the runtime's documented default
 * (`DEFAULT_MAX_DEPTH`, 128). Deeper messages are refused with -32600 before anything reads them.
 */
export const MAX_DEPTH = 128;

/**
 * How deeply a JSON text nests objects and arrays, brackets inside strings skipped. Measured on the text as
 * sent, not on the parsed value: a member repeated later (`{"id":[[[…]]],"id":1}`) is still read, deep.
 */
export function depthOf(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (char === '{' || char === '[') deepest = Math.max(deepest, ++depth);
    else if (char === '}' || char === ']') depth--;
  }
  return deepest;
}

/** A message without a method that carries a result or an error: a response, whatever else is wrong with it. */
function looksLikeResponse(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const message = value as Record<string, unknown>;
  return message.method === undefined && (message.result !== undefined || message.error !== undefined);
}

/** The fuzz servers serve exactly one tool, `echo`, and declare no other capability. */
const SERVED = new Set(['ping', 'initialize', 'tools/list', 'tools/call']);

export function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

/** A key for an id that tells `1` from `"1"`. */
export function idKey(id: RequestId): string {
  return `${typeof id}:${JSON.stringify(id)}`;
}

/** The refusal of an invalid envelope: with its id when the id can be read. */
function refusal(id: RequestId | undefined): Expectation {
  return id === undefined
    ? { kind: 'idless', code: INVALID_REQUEST, invalidEnvelope: true }
    : { kind: 'answer', id, outcomes: [INVALID_REQUEST], invalidEnvelope: true };
}

/** A JSON-RPC batch a 2025-03-26 session serves: one array answers every element that calls for an answer. */
export interface BatchExpectation {
  readonly kind: 'batch';
  readonly elements: readonly Expectation[];
}

/**
 * What a ready server (one `echo` tool) answers to one line, framed as `framing` says. Batches are refused
 * whole unless `batches` (a session at 2025-03-26), when each element is answered inside one array.
 */
export function expectationForLine(
  line: Buffer,
  framing: Framing,
  maxBytes: number,
  batches = false,
): Expectation | BatchExpectation {
  let bytes = line;
  if (framing === 'lines' && bytes.length > 0 && bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, -1);
  const text = bytes.toString('utf8');
  const size = framing === 'messages' ? Buffer.byteLength(text) : bytes.length;
  if (size > maxBytes) return { kind: 'idless', code: INVALID_REQUEST };
  if (framing === 'lines' && text.trim() === '' && text[0] !== '{' && text[0] !== '[') return SILENT;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'idless', code: PARSE_ERROR };
  }
  if (depthOf(text) > MAX_DEPTH) {
    if (looksLikeResponse(value)) return BROKEN_RESPONSE;
    return Array.isArray(value) ? refusal(undefined) : refusal(readableId(value));
  }
  if (batches && Array.isArray(value) && value.length > 0) {
    // A nested batch is not a message: refused inside the answer like any other invalid element.
    return {
      kind: 'batch',
      elements: value.map((element) => (Array.isArray(element) ? refusal(undefined) : expectationForValue(element))),
    };
  }
  return expectationForValue(value);
}

function readableId(value: unknown): RequestId | undefined {
  const id = (value as { id?: unknown } | null)?.id;
  return isRequestId(id) ? id : undefined;
}

/** What a ready server answers to one parsed message (batches are refused whole outside 2025-03-26). */
export function expectationForValue(value: unknown): Expectation {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return refusal(undefined);
  const message = value as Record<string, unknown>;
  const readable = readableId(message);
  if (looksLikeResponse(message)) {
    // A response to nothing (this server sends no requests) is ignored; a broken one is not answered either.
    const error = message.error as Record<string, unknown> | undefined;
    const wellFormed =
      message.jsonrpc === '2.0' &&
      (message.result !== undefined
        ? error === undefined && readable !== undefined
        : typeof error === 'object' &&
          error !== null &&
          typeof error.code === 'number' &&
          typeof error.message === 'string' &&
          (message.id === undefined || message.id === null || readable !== undefined));
    return wellFormed ? SILENT : BROKEN_RESPONSE;
  }
  if (message.jsonrpc !== '2.0') return refusal(readable);
  if (message.method !== undefined) {
    if (typeof message.method !== 'string') return refusal(readable);
    if (message.id === undefined) return SILENT; // a notification
    if (readable === undefined) return refusal(undefined);
    return { kind: 'answer', id: readable, outcomes: requestOutcomes(message.method, message.params) };
  }
  return refusal(readable);
}

function requestOutcomes(method: string, params: unknown): Outcome[] {
  if (!SERVED.has(method)) return [METHOD_NOT_FOUND];
  if (method === 'initialize') return [INVALID_REQUEST]; // already initialized
  const paramsIsObject =
    params === undefined || (typeof params === 'object' && params !== null && !Array.isArray(params));
  if (!paramsIsObject) return [INVALID_PARAMS];
  if (method === 'ping') return ['result'];
  // A cursor we did not issue, a tool we do not have, a name that is not a string: -32602. Bad arguments: a result.
  return ['result', INVALID_PARAMS];
}

/**
 * The lines to send for a session's traffic and what must come back: the expectations of every message (a
 * batch's elements flattened in), how many responses arrive (a batch's answer is one array), and how many
 * of those are batch answers.
 */
export function planTraffic(traffic: Traffic, framing: Framing, maxBytes: number, batches = false) {
  const lines: Buffer[] = [];
  const expectations: Expectation[] = [];
  let responseCount = 0;
  let batchAnswers = 0;
  let n = 0;
  for (const item of traffic) {
    if ('garbage' in item) {
      lines.push(item.garbage);
      const expectation = expectationForLine(item.garbage, framing, maxBytes, batches);
      if (expectation.kind === 'batch') {
        expectations.push(...expectation.elements);
        if (expectation.elements.some((element) => element.kind !== 'silent')) {
          responseCount++;
          batchAnswers++;
        }
      } else {
        expectations.push(expectation);
        if (expectation.kind !== 'silent') responseCount++;
      }
    } else {
      responseCount++;
      const id = `${VALID_ID_PREFIX}${n}`;
      lines.push(Buffer.from(validCallText(item.valid, n++)));
      expectations.push(
        item.valid.kind === 'ping'
          ? { kind: 'answer', id, outcomes: ['result'] }
          : {
              kind: 'answer',
              id,
              outcomes: ['result'],
              // The server parsed the arguments: what it echoes is their canonical JSON.
              echo: JSON.stringify(JSON.parse(item.valid.argumentsText)),
            },
      );
    }
  }
  return { lines, expectations, responseCount, batchAnswers };
}

/**
 * Checks the responses a session got against the expectations of what it sent: exactly one response per
 * request with a readable id, each with an allowed outcome (a duplicated id may also be refused with
 * -32600 while its twin is in flight), the id-less errors with the right codes, every error message bounded,
 * and each valid request answered with its own result.
 */
export function checkResponses(expectations: readonly Expectation[], responses: readonly any[]): void {
  for (const response of responses) {
    expect(response, 'every response is a JSON-RPC 2.0 response').toMatchObject({ jsonrpc: '2.0' });
    expect('result' in response !== 'error' in response, 'a response has a result or an error').toBe(true);
    if (response.error) {
      expect(typeof response.error.code).toBe('number');
      expect(typeof response.error.message).toBe('string');
      expect(
        response.error.message.length,
        `an error message is bounded (got ${String(response.error.message).slice(0, 200)}…)`,
      ).toBeLessThanOrEqual(MAX_ERROR_MESSAGE_CHARS);
    }
  }
  const idless = responses.filter((response) => !('id' in response)).map((response) => response.error?.code);
  const expectedIdless = expectations.flatMap((expectation) =>
    expectation.kind === 'idless' ? [expectation.code] : [],
  );
  expect([...idless].sort(), 'the id-less errors and their codes').toEqual([...expectedIdless].sort());

  const byId = new Map<string, Expectation[]>();
  for (const expectation of expectations) {
    if (expectation.kind !== 'answer') continue;
    const key = idKey(expectation.id);
    byId.set(key, [...(byId.get(key) ?? []), expectation]);
  }
  const answered = new Map<string, any[]>();
  for (const response of responses) {
    if (!('id' in response)) continue;
    expect(isRequestId(response.id), 'a response id is a string or a finite number').toBe(true);
    const key = idKey(response.id);
    answered.set(key, [...(answered.get(key) ?? []), response]);
  }
  for (const key of answered.keys()) expect(byId.has(key), `a response with id ${key} answers a request`).toBe(true);
  for (const [key, expected] of byId) {
    const got = answered.get(key) ?? [];
    expect(got.length, `responses for id ${key.slice(0, 80)}`).toBe(expected.length);
    const duplicated = expected.length > 1;
    // Match each response to an expectation that allows its outcome (the order of a duplicated id's answers is free).
    const open = [...expected];
    for (const response of got) {
      const outcome: Outcome = response.error ? response.error.code : 'result';
      const index = open.findIndex(
        (expectation) =>
          expectation.kind === 'answer' &&
          (expectation.outcomes.includes(outcome) || (duplicated && outcome === INVALID_REQUEST)),
      );
      expect(index, `outcome ${outcome} for id ${key.slice(0, 80)} (allowed: ${JSON.stringify(open)})`).not.toBe(-1);
      const [matched] = open.splice(index, 1);
      if (matched?.kind === 'answer' && matched.echo !== undefined && !duplicated) {
        expect(response.result?.isError, 'the valid call succeeded').not.toBe(true);
        expect(response.result?.content?.[0]?.text, 'a valid call gets its own result').toBe(matched.echo);
      }
    }
  }
}

/** What a sessionless POST of a 2026-07-28 request must get: the HTTP status, the outcome, and whether the id is echoed. */
export interface ModernHttpExpectation {
  readonly status: number;
  readonly outcome: Outcome;
  readonly echoesId: boolean;
  /** A valid call's echoed arguments (canonical JSON). */
  readonly echo?: string;
}

/** Revisions of the handshake era: a POST whose header names one is served on that era's path. */
export const HANDSHAKE_ERA_VERSIONS: ReadonlySet<unknown> = new Set([
  '2024-11-05',
  '2025-03-26',
  '2025-06-18',
  '2025-11-25',
]);
/** Methods 2026-07-28 removed; every other request the fuzz server does not serve is unknown (it serves tools only). */
const MODERN_REMOVED = new Set(['ping', 'initialize', 'logging/setLevel']);
const MODERN_SERVED = new Set(['tools/list', 'tools/call']);

/**
 * The revision's rejection ladder (spec: first failing rung wins) applied to a call sent with the headers a
 * client mirrors from it (`MCP-Protocol-Version` 2026-07-28 when the claim is no string, or names a
 * handshake-era revision): over the body limit (413), too deep for the transport (400 -32600, no id: the
 * body is never read), a claim that is not a non-empty string (400 -32602), a header that is not the claim
 * (400 -32020), a revision not served (400 -32022), a missing or malformed `clientCapabilities` (400
 * -32602), a removed or unserved method (404 -32601); then the call itself: a refused input round is -32602
 * in a 200, anything else its result.
 */
export function modernHttpExpectation(call: ModernCall, text: string, maxBytes: number): ModernHttpExpectation {
  if (Buffer.byteLength(text) > maxBytes) return { status: 413, outcome: INVALID_REQUEST, echoesId: false };
  if (depthOf(text) > MAX_DEPTH) return { status: 400, outcome: INVALID_REQUEST, echoesId: false };
  if (call.claim === 'malformed') return { status: 400, outcome: INVALID_PARAMS, echoesId: true };
  if (HANDSHAKE_ERA_VERSIONS.has(JSON.parse(call.claimText)))
    return { status: 400, outcome: HEADER_MISMATCH, echoesId: true };
  if (call.claim === 'unsupported') return { status: 400, outcome: UNSUPPORTED_PROTOCOL_VERSION, echoesId: true };
  if (!call.capabilitiesWellFormed) return { status: 400, outcome: INVALID_PARAMS, echoesId: true };
  if (MODERN_REMOVED.has(call.method) || !MODERN_SERVED.has(call.method))
    return { status: 404, outcome: METHOD_NOT_FOUND, echoesId: true };
  if (call.method === 'tools/call') {
    if (call.roundRefused) return { status: 200, outcome: INVALID_PARAMS, echoesId: true };
    return { status: 200, outcome: 'result', echoesId: true, echo: JSON.stringify(JSON.parse(call.argumentsText)) };
  }
  return { status: 200, outcome: 'result', echoesId: true };
}

export const UNSUPPORTED_PROTOCOL_VERSION = -32022;
export const HEADER_MISMATCH = -32020;
