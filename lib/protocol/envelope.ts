/**
 * The per-request `_meta` envelope of MCP 2026-07-28: the claim that makes a message modern, and the checks
 * on the rest of the envelope (schema `RequestMetaObject`).
 */
import { isPlainObject } from '../jsonrpc/classify';
import { META } from './modern';
import { LOGGING_LEVELS, type ClientCapabilities, type Implementation, type LoggingLevel } from './types';

/** What a modern request's envelope tells the server, checked. */
export interface RequestEnvelope {
  readonly clientCapabilities: ClientCapabilities;
  /** Self-reported and optional (a SHOULD): for display and logs, never for decisions. */
  readonly clientInfo?: Implementation;
  /** Absent: the request wants no `notifications/message` at all. */
  readonly logLevel?: LoggingLevel;
  readonly progressToken?: string | number;
}

/** The first problem found with an envelope: which key, and whether it is missing or malformed. */
export interface EnvelopeIssue {
  readonly key: string;
  readonly problem: 'missing' | 'invalid';
}

/**
 * The envelope claim of a message: `params._meta["io.modelcontextprotocol/protocolVersion"]`, whatever its
 * type, or undefined when any step of that path is absent. Three property reads: every message pays them.
 */
export function claimOf(message: Record<string, unknown>): unknown {
  const params = message.params;
  if (typeof params !== 'object' || params === null) return undefined;
  const meta = (params as Record<string, unknown>)._meta;
  if (typeof meta !== 'object' || meta === null) return undefined;
  return (meta as Record<string, unknown>)[META.protocolVersion];
}

/** The `_meta` record of a message's params, when there is one. */
export function metaOf(message: Record<string, unknown>): Record<string, unknown> | undefined {
  const params = message.params;
  if (!isPlainObject(params)) return undefined;
  return isPlainObject(params._meta) ? params._meta : undefined;
}

/**
 * The capabilities object last found well formed. A peer in the same process may send one object with every
 * request (a client's envelope built once): it is checked once. Parsed requests (HTTP, stdio) bring a new
 * object each time, for which this costs one comparison; one slot, not a set, so that a miss adds nothing.
 */
let lastWellFormedCapabilities: ClientCapabilities | undefined;

/** The client capability families whose declarations must be objects when present. */
const CAPABILITY_FAMILIES = ['experimental', 'extensions', 'roots', 'sampling', 'elicitation', 'tasks'] as const;

function capabilitiesAreWellFormed(capabilities: Record<string, unknown>): boolean {
  for (const family of CAPABILITY_FAMILIES) {
    const declared = capabilities[family];
    if (declared !== undefined && !isPlainObject(declared)) return false;
  }
  return true;
}

const isImplementation = (value: unknown): value is Implementation =>
  isPlainObject(value) && typeof value.name === 'string' && typeof value.version === 'string';

const isLoggingLevel = (value: unknown): value is LoggingLevel =>
  typeof value === 'string' && (LOGGING_LEVELS as readonly string[]).includes(value);

const isProgressToken = (value: unknown): value is string | number =>
  typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value));

/**
 * The checked envelope of a request whose claim is already known to be good, or the first issue. Only
 * `clientCapabilities` is required besides the claim; the optional keys are checked when present. The
 * capability declarations are checked shallowly (each family an object): what a call needs is the server's
 * business later, against these same objects.
 */
export function readRequestEnvelope(meta: Record<string, unknown>): RequestEnvelope | EnvelopeIssue {
  if (meta === lastFrozenMeta) return lastEnvelope!;
  const envelope = checkRequestEnvelope(meta);
  // A frozen `_meta` cannot change under us: an in-process client that shares one (ours does) is read once.
  if (!isEnvelopeIssue(envelope) && Object.isFrozen(meta)) {
    lastFrozenMeta = meta;
    lastEnvelope = envelope;
  }
  return envelope;
}

/** The frozen `_meta` object last read, and what it read as (one slot, like the capabilities above). */
let lastFrozenMeta: Record<string, unknown> | undefined;
let lastEnvelope: RequestEnvelope | undefined;

function checkRequestEnvelope(meta: Record<string, unknown>): RequestEnvelope | EnvelopeIssue {
  const clientCapabilities = meta[META.clientCapabilities];
  if (clientCapabilities === undefined) return { key: META.clientCapabilities, problem: 'missing' };
  if (clientCapabilities !== lastWellFormedCapabilities) {
    if (!isPlainObject(clientCapabilities) || !capabilitiesAreWellFormed(clientCapabilities))
      return { key: META.clientCapabilities, problem: 'invalid' };
    lastWellFormedCapabilities = clientCapabilities as ClientCapabilities;
  }
  const clientInfo = meta[META.clientInfo];
  if (clientInfo !== undefined && !isImplementation(clientInfo)) return { key: META.clientInfo, problem: 'invalid' };
  const logLevel = meta[META.logLevel];
  if (logLevel !== undefined && !isLoggingLevel(logLevel)) return { key: META.logLevel, problem: 'invalid' };
  const progressToken = meta[META.progressToken];
  if (progressToken !== undefined && !isProgressToken(progressToken))
    return { key: META.progressToken, problem: 'invalid' };
  // Absent optional keys stay as undefined members: one object of one shape, no spreads.
  return { clientCapabilities: clientCapabilities as ClientCapabilities, clientInfo, logLevel, progressToken };
}

export const isEnvelopeIssue = (value: RequestEnvelope | EnvelopeIssue): value is EnvelopeIssue => 'problem' in value;
