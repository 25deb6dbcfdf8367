/**
 * What a resource server knows of a caller once its access token checked out: the `Principal` (defined in
 * lib/core, where handlers' contexts read it) and how one is made from a token's claims or an introspection
 * answer, the same way for both.
 */
import type { Principal } from '../../core/request-context';

export type { Principal };

/**
 * A token was refused: expired, for another audience or issuer, badly signed, inactive. The message says
 * why for logs and the `error_description`; it never quotes the token.
 */
export class InvalidTokenError extends Error {
  override readonly name = 'InvalidTokenError';
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
 * client got for itself (client credentials, no subject). Tokens with neither share one id per issuer.
 */
export function principalIdOf(issuer: string | undefined, subject: string | undefined, clientId: string | undefined) {
  const who = subject !== undefined ? `sub:${subject}` : clientId !== undefined ? `client:${clientId}` : 'anonymous';
  return `${issuer ?? ''} ${who}`;
}

/** The principal of a token with these claims; `token` only when the server exposes it to handlers. */
export function principalFromClaims(claims: TokenClaims, token: string | undefined): Principal {
  const issuer = stringOr(claims.iss);
  const subject = stringOr(claims.sub);
  const clientId = stringOr(claims.client_id) ?? stringOr(claims.azp);
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

function stringOr(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
