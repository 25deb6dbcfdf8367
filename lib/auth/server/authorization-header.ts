/**
 * The request headers a resource server reads credentials from, parsed by their grammar and nothing more:
 * `Authorization: Bearer <token>` or `Authorization: DPoP <token>` (RFC 7235 §2.1 `credentials` with a
 * token68, RFC 6750 §2.1 `b64token`, RFC 9449 §7.1), and the `DPoP` proof header (RFC 9449 §4.1: a JWS in
 * compact serialization). Neither throws, whatever the input.
 */

/** The schemes an access token is accepted under, in lower case. */
export type TokenScheme = 'bearer' | 'dpop';

export interface Credentials {
  readonly scheme: TokenScheme;
  readonly token: string;
}

/**
 * The scheme (any case), one space or more, a token68, optional trailing spaces. Linear: no two adjacent
 * repeated parts can match the same character.
 */
const CREDENTIALS = /^(?:(bearer)|dpop) +([A-Za-z0-9\-._~+/]+=*) *$/i;

/** The scheme and token of an `Authorization` header value, or undefined when it is neither Bearer nor DPoP. */
export function parseAuthorization(value: string): Credentials | undefined {
  const match = CREDENTIALS.exec(value);
  if (match === null) return undefined;
  return { scheme: match[1] === undefined ? 'dpop' : 'bearer', token: match[2]! };
}

/** Longer proofs are refused unread (a proof holds one public key; an RSA-4096 one is about 1 KiB). */
export const MAX_DPOP_PROOF_LENGTH = 8 * 1024;

const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** Whether a `DPoP` header value is a compact JWS: three non-empty base64url segments (an unsigned one is not). */
export function isCompactJws(value: string): boolean {
  return value.length <= MAX_DPOP_PROOF_LENGTH && COMPACT_JWS.test(value);
}
