/**
 * One classifier in front of everything: decides per inbound message whether it belongs to the handshake
 * era (served exactly as before), the stateless 2026-07-28 era (modern), or must be refused with the
 * error the rejection ladder prescribes. Pure and runtime-neutral: the HTTP endpoint calls it per POST (with
 * the HTTP method and headers), stdio per line (body only, so no header rule applies).
 *
 * Body-primary, like every official SDK: a message is modern when `params._meta` carries the
 * `io.modelcontextprotocol/protocolVersion` claim. Without a claim it is handshake-era, unless an HTTP
 * `MCP-Protocol-Version` header names a modern revision (then a request lacks its envelope: -32602). The
 * ladder, first failing rung wins:
 *   1. not a POST, or no claim and no modern header               handshake (no allocation: shared verdicts)
 *   2. a batch: handshake when no element claims and no modern header; else 400 / -32600 (2026-07-28 has none)
 *   3. not a JSON-RPC request or notification, behind a claim or a modern header   400 / -32600
 *   4. no claim and a modern header on a request                   400 / -32602 (`_meta` or the claim missing)
 *   5. claim not a non-empty string                                400 / -32602
 *   6. HTTP: `MCP-Protocol-Version` missing (request) or ≠ claim   400 / -32020
 *   7. claimed revision not served                                 400 / -32022 `{ supported, requested }`
 *   8. request envelope: `clientCapabilities` missing or malformed, optional keys malformed   400 / -32602
 *   9. HTTP: `Mcp-Method` / `Mcp-Name` missing, malformed or ≠ body (MIRRORED_HEADERS)   400 / -32020
 *  10. method removed in 2026-07-28, or (requests) not known to the server   404 / -32601
 * Every rejection carries the message's id when it is readable. Header mismatch is checked before version
 * support (the conformance suite sends header 2026-07-28 with claim v999.0.0 and wants -32020), and version
 * support before the rest of the envelope (an unknown revision's envelope rules are unknown).
 *
 * Left to later stages: `Mcp-Param-*` headers (need the tool's `x-mcp-header` declarations) and -32021 (needs
 * to know what a call requires); both use `decodeHeaderValue` and the 2026-07-28 codes of `ErrorCode`.
 */
import { classifyMessage, describeInvalid, isRequestId } from '../jsonrpc/classify';
import { ErrorCode } from '../jsonrpc/errors';
import { clipText, excerpt } from '../jsonrpc/excerpt';
import type {
  JsonRpcErrorObject,
  JsonRpcErrorResponse,
  JsonRpcNotification,
  JsonRpcRequest,
  RequestId,
} from '../jsonrpc/types';
import { claimOf, isEnvelopeIssue, metaOf, readRequestEnvelope, type RequestEnvelope } from './envelope';
import { decodeHeaderValue, readHeader, type HeaderSource } from './header-value';
import { NAME_SOURCES } from './http-headers';
import { STATELESS_METHODS } from './methods';
import { FIRST_MODERN_PROTOCOL_VERSION, META, MODERN_PROTOCOL_VERSIONS, namesModernRevision } from './modern';

export interface InboundMessage {
  /** The HTTP method; absent on stdio. Anything but POST is a handshake-era session operation (GET stream, DELETE). */
  readonly httpMethod?: string;
  /** The HTTP headers; absent on stdio, where no header rule applies. */
  readonly headers?: HeaderSource;
  /** The parsed JSON body. */
  readonly body: unknown;
}

/** What the server serves on the modern path. Build it once per server, not per message. */
export interface EraPolicy {
  /** Modern revisions served, newest first (the `supported` of a -32022). */
  readonly supportedVersions: readonly string[];
  /**
   * Whether the server handles a modern request method. Default: the stateless era's client requests. A server
   * passes its own so that methods it does not handle (no prompts, say) are 404 here and extension methods it
   * does handle pass. Removed methods are refused before this is asked.
   */
  readonly isKnownMethod: (method: string) => boolean;
}

export const DEFAULT_ERA_POLICY: EraPolicy = Object.freeze({
  supportedVersions: MODERN_PROTOCOL_VERSIONS,
  isKnownMethod: (method: string) => STATELESS_METHODS.clientRequests[method] !== undefined,
});

/**
 * Why a message went to the handshake-era path. On stdio only `initialize` and `no-claim` (a request) say which
 * era the peer speaks; notifications, responses, batches and invalid messages follow the connection's era.
 */
export type HandshakeReason =
  'http-method' | 'initialize' | 'no-claim' | 'notification' | 'response' | 'batch' | 'invalid';

/** A message of the handshake era (served by the session path), and why it counts as one. */
export interface HandshakeVerdict {
  readonly era: 'handshake';
  readonly reason: HandshakeReason;
}

export interface ModernRequestVerdict {
  readonly era: 'modern';
  readonly kind: 'request';
  readonly request: JsonRpcRequest;
  /** The claimed revision, one of the policy's supported versions. */
  readonly version: string;
  readonly meta: RequestEnvelope;
}

/** A notification is modern by a claim, or (HTTP) by a modern `MCP-Protocol-Version` header: notifications need no envelope. */
export interface ModernNotificationVerdict {
  readonly era: 'modern';
  readonly kind: 'notification';
  readonly notification: JsonRpcNotification;
  readonly version: string;
}

export interface RejectVerdict {
  readonly era: 'reject';
  /** The HTTP status to answer with: 400, or 404 for a method the modern era does not have. */
  readonly status: 400 | 404;
  readonly error: JsonRpcErrorObject;
  /** The refused message's id, when readable. */
  readonly id: RequestId | undefined;
  /**
   * False for a refused notification or response: JSON-RPC forbids answering those, so stdio sends nothing,
   * and HTTP answers with the status and an id-less error body.
   */
  readonly reply: boolean;
}

export type EraVerdict = HandshakeVerdict | ModernRequestVerdict | ModernNotificationVerdict | RejectVerdict;

/** The JSON-RPC error response a rejection answers with (no `id` member when it was unreadable). */
export function errorResponseOf(verdict: RejectVerdict): JsonRpcErrorResponse {
  return verdict.id === undefined
    ? { jsonrpc: '2.0', error: verdict.error }
    : { jsonrpc: '2.0', id: verdict.id, error: verdict.error };
}

const handshake = (reason: HandshakeReason): HandshakeVerdict => Object.freeze({ era: 'handshake', reason });

/** The handshake-era verdicts, shared: the handshake path is most traffic and allocates nothing here. */
const HANDSHAKE: Readonly<Record<HandshakeReason, HandshakeVerdict>> = Object.freeze({
  'http-method': handshake('http-method'),
  initialize: handshake('initialize'),
  'no-claim': handshake('no-claim'),
  notification: handshake('notification'),
  response: handshake('response'),
  batch: handshake('batch'),
  invalid: handshake('invalid'),
});

const VERSION_HEADER = 'mcp-protocol-version';

/** A header that mirrors a value of the body on a modern request (the spec's standard request headers). */
interface MirrorRule {
  /** Lower case, as header sources are read. */
  readonly header: string;
  /** As the spec writes it, for messages. */
  readonly display: string;
  /** May carry the `=?base64?…?=` form. */
  readonly encoded: boolean;
  /** The body value the header must equal; undefined when this message has none (the header is then not checked). */
  readonly bodyValue: (message: Record<string, unknown>) => string | undefined;
}

function nameOf(message: Record<string, unknown>): string | undefined {
  const source = NAME_SOURCES.get(message.method as string);
  if (source === undefined) return undefined;
  const value = (message.params as Record<string, unknown> | undefined)?.[source];
  // A non-string name is a params error, answered in-band later; here there is nothing to mirror.
  return typeof value === 'string' ? value : undefined;
}

/** Checked in this order; required on requests, compared when present on notifications. */
const MIRRORED_HEADERS: readonly MirrorRule[] = [
  { header: 'mcp-method', display: 'Mcp-Method', encoded: false, bodyValue: (message) => message.method as string },
  { header: 'mcp-name', display: 'Mcp-Name', encoded: true, bodyValue: nameOf },
];

/**
 * Classifies one inbound message. Never throws; `policy` should be built once per server. A handshake-era
 * message costs a few property reads (the claim path and the version header) and returns a shared verdict.
 */
export function classifyInbound(input: InboundMessage, policy: EraPolicy = DEFAULT_ERA_POLICY): EraVerdict {
  if (input.httpMethod !== undefined && input.httpMethod !== 'POST') return HANDSHAKE['http-method'];
  const body = input.body;
  if (typeof body !== 'object' || body === null) return classifyNonObject(input);
  if (Array.isArray(body)) return classifyBatch(input, body);
  const message = body as Record<string, unknown>;
  const claim = claimOf(message);
  if (claim !== undefined) return classifyClaimed(input, message, claim, policy);
  const header = readHeader(input.headers, VERSION_HEADER);
  if (header === undefined || !namesModernRevision(header)) return handshakeReasonOf(message);
  return classifyUnclaimed(input, message, header, policy);
}

function handshakeReasonOf(message: Record<string, unknown>): HandshakeVerdict {
  const method = message.method;
  if (typeof method !== 'string')
    return method === undefined && ('result' in message || 'error' in message) ? HANDSHAKE.response : HANDSHAKE.invalid;
  if (message.id === undefined) return HANDSHAKE.notification;
  return method === 'initialize' ? HANDSHAKE.initialize : HANDSHAKE['no-claim'];
}

const hasModernHeader = (input: InboundMessage): boolean => {
  const header = readHeader(input.headers, VERSION_HEADER);
  return header !== undefined && namesModernRevision(header);
};

function classifyNonObject(input: InboundMessage): EraVerdict {
  if (!hasModernHeader(input)) return HANDSHAKE.invalid;
  const { code, message } = describeInvalid(input.body);
  return reject(400, { code, message }, undefined);
}

const claimsModernEra = (element: unknown): boolean =>
  typeof element === 'object' && element !== null && claimOf(element as Record<string, unknown>) !== undefined;

function classifyBatch(input: InboundMessage, batch: readonly unknown[]): EraVerdict {
  if (!hasModernHeader(input) && !batch.some(claimsModernEra)) return HANDSHAKE.batch;
  return reject(
    400,
    {
      code: ErrorCode.InvalidRequest,
      message: `Invalid Request: protocol revision ${FIRST_MODERN_PROTOCOL_VERSION} has no JSON-RPC batches`,
    },
    undefined,
  );
}

/** No claim, and an HTTP header naming a modern revision. */
function classifyUnclaimed(
  input: InboundMessage,
  message: Record<string, unknown>,
  header: string,
  policy: EraPolicy,
): EraVerdict {
  const kind = classifyMessage(message);
  if (kind === 'notification') return modernRungs(input, message, kind, header, policy);
  if (kind === 'request') {
    const key = metaOf(message) === undefined ? '_meta' : META.protocolVersion;
    return envelopeRejection(message, key, 'missing', `the MCP-Protocol-Version header names ${excerpt(header)}`);
  }
  if (kind === 'result' || kind === 'error') {
    const error = {
      code: ErrorCode.InvalidRequest,
      message: `Invalid Request: protocol revision ${FIRST_MODERN_PROTOCOL_VERSION} has no client responses`,
    };
    return reject(400, error, undefined, false);
  }
  return invalidShape(message);
}

function classifyClaimed(
  input: InboundMessage,
  message: Record<string, unknown>,
  claim: unknown,
  policy: EraPolicy,
): EraVerdict {
  const kind = classifyMessage(message);
  if (kind !== 'request' && kind !== 'notification') return invalidShape(message);
  if (typeof claim !== 'string' || claim === '') return envelopeRejection(message, META.protocolVersion, 'invalid');
  if (input.headers !== undefined) {
    const header = readHeader(input.headers, VERSION_HEADER);
    if (header === undefined ? kind === 'request' : header !== claim)
      return headerRejection(message, 'MCP-Protocol-Version', header, claim);
  }
  return modernRungs(input, message, kind, claim, policy);
}

/** Rungs 7 to 10, shared by claimed messages and header-only modern notifications. */
function modernRungs(
  input: InboundMessage,
  message: Record<string, unknown>,
  kind: 'request' | 'notification',
  version: string,
  policy: EraPolicy,
): EraVerdict {
  if (!policy.supportedVersions.includes(version)) {
    const error = {
      code: ErrorCode.UnsupportedProtocolVersion,
      message: `Unsupported protocol version ${excerpt(version)}: this server serves ${policy.supportedVersions.join(', ')}`,
      // A claim is the peer's text: a version is short, and a 20 KB one is not echoed whole.
      data: { supported: [...policy.supportedVersions], requested: clipText(version) },
    };
    return reject(400, error, readableId(message), kind === 'request');
  }
  let meta: RequestEnvelope | undefined;
  if (kind === 'request') {
    const envelope = readRequestEnvelope(metaOf(message) ?? {});
    if (isEnvelopeIssue(envelope)) return envelopeRejection(message, envelope.key, envelope.problem);
    meta = envelope;
  }
  if (input.headers !== undefined) {
    const mismatch = mirroredHeaderRejection(input.headers, message, kind === 'request');
    if (mismatch) return mismatch;
  }
  const method = message.method as string;
  const removal = STATELESS_METHODS.removed[method];
  if (removal !== undefined || (kind === 'request' && !policy.isKnownMethod(method))) {
    const why = removal === undefined ? '' : ` (removed in ${removal.revision}: ${removal.replacement})`;
    const error = { code: ErrorCode.MethodNotFound, message: `Method not found: ${excerpt(method)}${why}` };
    return reject(404, error, readableId(message), kind === 'request');
  }
  return kind === 'request'
    ? { era: 'modern', kind, request: message as unknown as JsonRpcRequest, version, meta: meta! }
    : { era: 'modern', kind, notification: message as unknown as JsonRpcNotification, version };
}

function mirroredHeaderRejection(
  headers: HeaderSource,
  message: Record<string, unknown>,
  required: boolean,
): RejectVerdict | undefined {
  for (const rule of MIRRORED_HEADERS) {
    const expected = rule.bodyValue(message);
    if (expected === undefined) continue;
    const header = readHeader(headers, rule.header);
    if (header === undefined) {
      if (required) return headerRejection(message, rule.display, undefined, expected);
      continue;
    }
    const value = rule.encoded ? decodeHeaderValue(header) : header;
    if (value === undefined) return headerRejection(message, rule.display, header, expected, 'malformed');
    if (value !== expected) return headerRejection(message, rule.display, header, expected);
  }
  return undefined;
}

const readableId = (message: Record<string, unknown>): RequestId | undefined =>
  isRequestId(message.id) ? message.id : undefined;

/** A reply is owed only to a request: a message with a method and an id. */
const isRequestLike = (message: Record<string, unknown>): boolean =>
  typeof message.method === 'string' && message.id !== undefined;

function reject(status: 400 | 404, error: JsonRpcErrorObject, id: RequestId | undefined, reply = true): RejectVerdict {
  return { era: 'reject', status, error, id, reply };
}

function invalidShape(message: Record<string, unknown>): RejectVerdict {
  const invalid = describeInvalid(message);
  return reject(400, { code: invalid.code, message: invalid.message }, invalid.id, !invalid.response);
}

function envelopeRejection(
  message: Record<string, unknown>,
  key: string,
  problem: 'missing' | 'invalid',
  context?: string,
): RejectVerdict {
  const what = problem === 'missing' ? `lacks ${key}` : `has a malformed ${key}`;
  const error = {
    code: ErrorCode.InvalidParams,
    message: `Invalid params: the request's _meta envelope ${what}${context ? ` (${context})` : ''}`,
    data: { key, problem },
  };
  return reject(400, error, readableId(message), isRequestLike(message));
}

function headerRejection(
  message: Record<string, unknown>,
  header: string,
  value: string | undefined,
  expected: string,
  problem: 'missing' | 'mismatch' | 'malformed' = value === undefined ? 'missing' : 'mismatch',
): RejectVerdict {
  const text =
    problem === 'missing'
      ? `the ${header} header is required (the body says ${excerpt(expected)})`
      : problem === 'malformed'
        ? `the ${header} header's encoded value is malformed`
        : `the ${header} header ${excerpt(value)} does not match the body's ${excerpt(expected)}`;
  const error = { code: ErrorCode.HeaderMismatch, message: `Header mismatch: ${text}`, data: { header, problem } };
  return reject(400, error, readableId(message), isRequestLike(message));
}
