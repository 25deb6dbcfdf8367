/**
 * Access tokens that are JWTs (RFC 9068), checked locally against the authorization server's keys: the
 * signature (with an allowed algorithm only: never `none`, never a symmetric one unless listed), `iss`,
 * `aud` (this resource), `exp` (required, RFC 9068) and `nbf` with a clock tolerance, and the `typ` header.
 * The key set is fetched from `jwksUrl` by jose, bounded in time and size, cached, and fetched again only
 * for a key id it does not know (after a cooldown).
 */
import { createRemoteJWKSet, customFetch, errors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { ASYMMETRIC_ALGORITHMS } from './algorithms';
import {
  DEFAULT_JWKS_TIMEOUT_MS,
  DEFAULT_MAX_JWKS_BYTES,
  keySetFetch,
  outboundUrl,
  type JwksFetchOptions,
} from './bounded-fetch';
import { InvalidTokenError, principalFromClaims } from './principal';
import type { TokenVerifier } from './token-verifier';

/** What a token may be signed with by default: the asymmetric algorithms (a JWKS serves public keys). */
export const DEFAULT_JWT_ALGORITHMS: readonly string[] = ASYMMETRIC_ALGORITHMS;

/** Seconds of clock difference forgiven on `exp` and `nbf` (default). */
export const DEFAULT_CLOCK_TOLERANCE_S = 30;

/** `typ` headers of an access token: RFC 9068's, and the generic ones (or none) that most servers send. */
const ACCEPTED_TYPES = new Set(['at+jwt', 'application/at+jwt', 'jwt', 'application/jwt']);

export interface JwtVerifierOptions {
  /** The authorization server's JWKS (`jwks_uri` of its metadata): `https:`, or `http:` on a loopback host. */
  readonly jwksUrl?: string | URL;
  /** How it is fetched: timeout, size limit. */
  readonly jwksFetch?: JwksFetchOptions;
  /** Or the keys themselves (jose's `createLocalJWKSet`, or any key function). */
  readonly keys?: JWTVerifyGetKey;
  /** The issuers accepted (`iss`). */
  readonly issuer: string | readonly string[];
  /** The audiences accepted (`aud` must name one): this resource's canonical URL. */
  readonly audience: string | readonly string[];
  /** Signing algorithms accepted (default `DEFAULT_JWT_ALGORITHMS`). */
  readonly algorithms?: readonly string[];
  /** Default `DEFAULT_CLOCK_TOLERANCE_S`. */
  readonly clockToleranceSeconds?: number;
  /** Put the raw token on the principal (`principal.token`), for a handler that must pass it on. Default false. */
  readonly exposeToken?: boolean;
  /** The current time, for tests (default the system clock). */
  readonly now?: () => number;
}

export function createJwtVerifier(options: JwtVerifierOptions): TokenVerifier {
  const keys =
    options.keys ?? (options.jwksUrl !== undefined ? remoteKeySet(options.jwksUrl, options.jwksFetch) : undefined);
  if (!keys) throw new TypeError('createJwtVerifier needs jwksUrl or keys');
  const verifyOptions = {
    requiredClaims: ['exp'],
    issuer: listOf(options.issuer),
    audience: listOf(options.audience),
    algorithms: [...(options.algorithms ?? DEFAULT_JWT_ALGORITHMS)],
    clockTolerance: options.clockToleranceSeconds ?? DEFAULT_CLOCK_TOLERANCE_S,
  };
  const now = options.now;
  return async (token) => {
    let verified;
    try {
      verified = await jwtVerify(token, keys, now ? { ...verifyOptions, currentDate: new Date(now()) } : verifyOptions);
    } catch (error) {
      throw refusalOf(error);
    }
    const type = verified.protectedHeader.typ;
    if (type !== undefined && !ACCEPTED_TYPES.has(type.toLowerCase())) {
      throw new InvalidTokenError(`the token's typ header is not one of an access token`);
    }
    return principalFromClaims(verified.payload, options.exposeToken ? token : undefined);
  };
}

/** jose's remote key set, fetched within the timeout and size limit, from a URL that may be fetched at all. */
function remoteKeySet(jwksUrl: string | URL, options: JwksFetchOptions = {}): JWTVerifyGetKey {
  const url = outboundUrl(jwksUrl, options.allowInsecureRequests, 'createJwtVerifier: the JWKS URL');
  return createRemoteJWKSet(url, {
    timeoutDuration: options.timeoutMs ?? DEFAULT_JWKS_TIMEOUT_MS,
    [customFetch]: keySetFetch(options.maxBytes ?? DEFAULT_MAX_JWKS_BYTES),
  });
}

function listOf(value: string | readonly string[]): string[] {
  return typeof value === 'string' ? [value] : [...value];
}

/**
 * What a failed check means: the token's fault (`InvalidTokenError`, its message from jose's code and
 * claim, never the token), or the keys could not be had (rethrown as it is: answered 503). Decided by class:
 * jose's plain `JOSEError` is only thrown while fetching the key set (not 200, not JSON), `JWKSInvalid` and
 * `JWKSTimeout` are the key set's too, and anything not jose's (the network, `TokenCheckUnavailableError`)
 * is not the token's. Every other jose error is about the token (its form, signature, algorithm, key id).
 */
function refusalOf(error: unknown): unknown {
  if (error instanceof errors.JWTExpired) return new InvalidTokenError('the token has expired');
  if (error instanceof errors.JWTClaimValidationFailed) {
    return new InvalidTokenError(
      error.reason === 'missing'
        ? `the token has no ${error.claim} claim (an access token must have one)`
        : `the token's ${error.claim} claim is not accepted (${error.reason})`,
    );
  }
  if (!(error instanceof errors.JOSEError) || isKeySetFault(error)) return error;
  return new InvalidTokenError(`the token is not valid (${error.code})`);
}

function isKeySetFault(error: errors.JOSEError): boolean {
  return (
    error.constructor === errors.JOSEError || error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid
  );
}
