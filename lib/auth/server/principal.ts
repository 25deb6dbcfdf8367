/**
 * What a resource server knows of a caller once its access token checked out: the `Principal` (defined in
 * lib/core, where handlers' contexts read it) and how one is made from a token's claims or an introspection
 * answer, the same way for both.
 */
import type { Principal } from '../../core/request-context';
import { SwitchboardError, type LocalErrorCode } from '../../jsonrpc/errors';

export type { Principal };

/**
 * A token was refused: expired, for another audience or issuer, badly signed, inactive. The message says
 * why for logs and the `error_description`; it never quotes the token.
 */
export class InvalidTokenError extends SwitchboardError {
  override readonly name = 'InvalidTokenError';
  readonly code: LocalErrorCode = 'INVALID_TOKEN';
}

/** The claims a principal is read from: a JWT access token's payload or an RFC 7662 answer. */
export interface TokenClaims {
  readonly iss?: unknown;
  readonly sub?: unknown;
  readonly client_id?: unknown;
  readonly azp?: unknown;
  readonly scope?: unknown;
  readonly scp?: unknown;
  readonly exp?: unknown;
  readonly [claim: string]: unknown;
}

/** The scopes a token grants: `scope` (space separated, RFC 9068 and 7662), or an `scp` array some servers use. */
export function scopesOf(claims: TokenClaims): readonly string[] {
  if (typeof claims.scope === 'string') return claims.scope.split(' ').filter((scope) => scope !== '');
  if (Array.isArray(claims.scp)) return claims.scp.filter((scope): scope is string => typeof scope === 'string');
  return [];
}

/**
 * One caller, whatever token it shows: the issuer with the subject, or with the client id for a token a
 * client got for itself (client credentials, no subject). Unambiguous: the issuer's spaces and `%` are
 * escaped, so the first space always ends it (`https://as.example sub:alice`).
 */
export function principalIdOf(issuer: string | undefined, subject: string | undefined, clientId: string | undefined) {
  const who = subject !== undefined ? `sub:${subject}` : clientId !== undefined ? `client:${clientId}` : undefined;
  if (who === undefined) throw new TypeError('principalIdOf needs a subject or a client id');
  return `${(issuer ?? '').replace(/[% ]/g, (char) => (char === '%' ? '%25' : '%20'))} ${who}`;
}

/**
 * The principal of a token with these claims; `token` only when the server exposes it to handlers. Refuses
 * (`InvalidTokenError`) a token whose `iss`, `sub`, `client_id` or `azp` is there but not a non-empty string
 * (a number would be dropped, and users 1001 and 1002 would become one), and a token naming neither a subject
 * nor a client: nothing tells its callers apart.
 */
export function principalFromClaims(claims: TokenClaims, token: string | undefined): Principal {
  const issuer = stringClaim(claims, 'iss');
  const subject = stringClaim(claims, 'sub');
  const clientIdClaim = stringClaim(claims, 'client_id');
  const authorizedParty = stringClaim(claims, 'azp');
  const clientId = clientIdClaim ?? authorizedParty;
  if (subject === undefined && clientId === undefined) {
    throw new InvalidTokenError(
      'the token names no subject or client: it cannot be told apart from others; check such tokens with your own `verifier`',
    );
  }
  const expiresAt = typeof claims.exp === 'number' ? claims.exp * 1000 : undefined;
  return Object.freeze({
    id: principalIdOf(issuer, subject, clientId),
    ...(subject !== undefined && { subject }),
    ...(clientId !== undefined && { clientId }),
    ...(issuer !== undefined && { issuer }),
    scopes: Object.freeze(scopesOf(claims)),
    ...(expiresAt !== undefined && { expiresAt }),
    claims: Object.freeze({ ...claims }),
    ...(token !== undefined && { token }),
  });
}

/** The claim `name` when it is a non-empty string; undefined when absent; refused when anything else. */
function stringClaim(claims: TokenClaims, name: 'iss' | 'sub' | 'client_id' | 'azp'): string | undefined {
  const value = claims[name];
  if (value === undefined) return undefined;
  if (typeof value === 'string' && value !== '') return value;
  throw new InvalidTokenError(`the token's ${name} claim is not a non-empty string`);
}
