/**
 * Sealing `requestState`, the opaque string a modern (2026-07-28) server hands out with an `input_required`
 * result and the client echoes, byte for byte, on its retry. The client is not trusted with it: a sealed
 * state is signed (HMAC-SHA256, not encrypted: the state is readable by whoever holds the token), expires,
 * and is bound to the request it belongs to, so it cannot be replayed against another tool, other arguments
 * or another principal.
 *
 * A token is five dot-separated fields, all base64url or decimal:
 *
 *   rs2 . keyId . expiresAt . state . mac
 *
 * - `rs2`: the format version.
 * - `keyId`: the ring key that sealed it (see key-ring.ts), in clear so any replica sharing the ring picks it.
 * - `expiresAt`: epoch milliseconds; the token is refused from that instant on.
 * - `state`: the state's JSON, UTF-8, base64url.
 * - `mac`: HMAC of everything before it and, after a newline, the binding (method, target, canonical
 *   arguments, principal) as canonical JSON. The binding is not in the token: the retried request
 *   recomputes it, so a state used for another request fails the one MAC check, and nothing in the token
 *   lets a guessable principal be confirmed offline. One HMAC to seal and one to open (rs1 signed the
 *   binding apart, which told a foreign state from a tampered one, at twice the cost of a round).
 *
 * `open` never throws: every refusal is a reason, and the caller answers the retry with a JSON-RPC error
 * before any handler runs. Secrets never appear in a token, a reason or an error message.
 */
import { canonicalJson } from './canonical-json';
import { decodeBase64Url, encodeBase64Url } from './base64url';
import { KEY_ID, type KeyRing } from './key-ring';
import { DEFAULT_MAX_DEPTH } from '../../jsonrpc/codec';

/** Longest token `open` reads (and `seal` produces), in characters (a token is ASCII, so bytes too). */
export const DEFAULT_MAX_REQUEST_STATE_LENGTH = 64 * 1024;

/** How long a sealed state is accepted when `seal` is not told: 10 minutes, time for a person to answer. */
export const DEFAULT_REQUEST_STATE_TTL_MS = 10 * 60 * 1000;

/** What a state belongs to: the retried request must name the same, or the state is refused. */
export interface RequestStateBinding {
  /** The request's method: `tools/call`, `prompts/get`, `resources/read`. */
  readonly method: string;
  /** The tool or prompt name, or the resource URI. */
  readonly target: string;
  /** The request's arguments, compared in canonical JSON (member order does not matter); absent counts as `{}`. */
  readonly arguments?: unknown;
  /** Who is asking (an OAuth subject, an API key's owner), when the transport authenticates. */
  readonly principal?: string;
}

export interface SealInput {
  /** Any JSON value; the handler gets it back on the retry. */
  readonly state: unknown;
  readonly binding: RequestStateBinding;
  /** `DEFAULT_REQUEST_STATE_TTL_MS` when not given. */
  readonly ttlMs?: number;
  /** Epoch milliseconds to count the TTL from; `Date.now()` when not given. */
  readonly now?: number;
}

export interface RequestStateLimits {
  /** `DEFAULT_MAX_REQUEST_STATE_LENGTH`: longer tokens are refused unread, and `seal` will not make one. */
  readonly maxTokenLength?: number;
  /** How deeply the binding's arguments may nest (lib/jsonrpc's `DEFAULT_MAX_DEPTH`). */
  readonly maxDepth?: number;
}

/**
 * Why `open` refused. `bad-signature`: the token was altered, or sealed for another request (method, target,
 * arguments, principal): the MAC covers both. `binding`: the request has no binding a state can be bound to
 * (arguments nested too deeply).
 */
export type OpenFailure = 'malformed' | 'unknown-key' | 'bad-signature' | 'expired' | 'binding';

export type OpenResult =
  { readonly ok: true; readonly state: unknown } | { readonly ok: false; readonly reason: OpenFailure };

const VERSION = 'rs2';
const TAG_BYTES = 32;
/** Characters of a 32-byte tag in unpadded base64url. */
const TAG_CHARS = 43;
const EXPIRY = /^\d{1,16}$/;
const FIELDS = 5;

const encoder = new TextEncoder();
const strictDecoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Seals `state` for the request `binding` describes, with the ring's current key. Rejects (a programming
 * error, not hostile input) when the state is not JSON, the arguments nest deeper than `maxDepth`, the TTL is
 * not a positive number, or the token would exceed `maxTokenLength` (a state `open` would refuse).
 */
export async function seal(ring: KeyRing, input: SealInput, limits: RequestStateLimits = {}): Promise<string> {
  const { state, binding, ttlMs = DEFAULT_REQUEST_STATE_TTL_MS, now = Date.now() } = input;
  if (!(ttlMs > 0) || !Number.isFinite(ttlMs))
    throw new RangeError('A requestState TTL must be a positive number of ms');
  const expiresAt = Math.floor(now + ttlMs);
  if (!Number.isSafeInteger(expiresAt) || expiresAt < 0)
    throw new RangeError('A requestState expiry must be a valid time');
  const stateJson = JSON.stringify(state) as string | undefined;
  if (stateJson === undefined) throw new TypeError('A requestState must be a JSON value');
  const boundText = bindingText(binding, limits.maxDepth ?? DEFAULT_MAX_DEPTH);
  if (boundText === undefined)
    throw new RangeError('A requestState binding must be JSON no deeper than the depth limit');

  const keyId = ring.currentKeyId;
  const statePart = encodeBase64Url(encoder.encode(stateJson));
  const length = VERSION.length + keyId.length + String(expiresAt).length + statePart.length + TAG_CHARS + FIELDS - 1;
  const maxLength = limits.maxTokenLength ?? DEFAULT_MAX_REQUEST_STATE_LENGTH;
  if (length > maxLength) {
    throw new RangeError(`The sealed requestState would be ${length} characters; the limit is ${maxLength}`);
  }

  const key = ring.cryptoKey(keyId)!;
  const signed = `${VERSION}.${keyId}.${expiresAt}.${statePart}`;
  return `${signed}.${encodeBase64Url(await key.sign(`${signed}\n${boundText}`))}`;
}

/**
 * The state sealed in `token`, if the token is well formed, sealed by a key of `ring`, untouched, not expired
 * at `now`, and bound to the same request as `binding`; otherwise the first reason it fails, in that order.
 * Tokens over `maxTokenLength` are refused before any parsing. Never throws; the signature checks are
 * constant-time compares (lib/server/request-state/hmac.ts).
 */
export async function open(
  ring: KeyRing,
  token: unknown,
  binding: RequestStateBinding,
  now: number = Date.now(),
  limits: RequestStateLimits = {},
): Promise<OpenResult> {
  if (typeof token !== 'string' || token.length > (limits.maxTokenLength ?? DEFAULT_MAX_REQUEST_STATE_LENGTH)) {
    return refused('malformed');
  }
  const fields = parseToken(token);
  if (fields === undefined) return refused('malformed');
  const key = ring.cryptoKey(fields.keyId);
  if (key === undefined) return refused('unknown-key');

  const boundText = bindingText(binding, limits.maxDepth ?? DEFAULT_MAX_DEPTH);
  if (boundText === undefined) return refused('binding');
  let untouchedAndBound: boolean;
  try {
    untouchedAndBound = await key.verify(fields.mac, `${fields.signed}\n${boundText}`);
  } catch {
    return refused('bad-signature');
  }
  if (!untouchedAndBound) return refused('bad-signature');
  if (!(now < fields.expiresAt)) return refused('expired');
  const state = decodeState(fields.statePart);
  return state === undefined ? refused('malformed') : { ok: true, state: state.value };
}

interface TokenFields {
  readonly keyId: string;
  readonly expiresAt: number;
  readonly statePart: string;
  readonly mac: Uint8Array<ArrayBuffer>;
  /** The text the mac signs: everything before the last dot. */
  readonly signed: string;
}

/** The fields of a token, checked for shape only; undefined when any is missing or out of form. */
function parseToken(token: string): TokenFields | undefined {
  // The limit stops a string of dots from being split into thousands of pieces.
  const parts = token.split('.', FIELDS + 1);
  if (parts.length !== FIELDS) return undefined;
  const [version, keyId, expiry, statePart, macPart] = parts as [string, string, string, string, string];
  if (version !== VERSION || !KEY_ID.test(keyId) || !EXPIRY.test(expiry)) return undefined;
  const mac = decodeBase64Url(macPart);
  if (mac?.length !== TAG_BYTES) return undefined;
  return {
    keyId,
    expiresAt: Number(expiry),
    statePart,
    mac,
    signed: token.slice(0, token.length - macPart.length - 1),
  };
}

/** The binding as the text the MAC covers, or undefined when it is not a binding JSON can carry. */
function bindingText(binding: RequestStateBinding, maxDepth: number): string | undefined {
  if (typeof binding !== 'object' || binding === null) return undefined;
  const { method, target, arguments: args = {}, principal = null } = binding;
  // The binding object adds one level above the arguments.
  return canonicalJson({ method, target, arguments: args, principal }, maxDepth + 1);
}

/** The state a verified token carries, boxed so that a JSON `null` state is told apart from a failure. */
function decodeState(statePart: string): { value: unknown } | undefined {
  const bytes = decodeBase64Url(statePart);
  if (bytes === undefined) return undefined;
  try {
    return { value: JSON.parse(strictDecoder.decode(bytes)) };
  } catch {
    return undefined;
  }
}

function refused(reason: OpenFailure): OpenResult {
  return { ok: false, reason };
}
