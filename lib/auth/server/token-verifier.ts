/**
 * The port every way of checking an access token implements: a JWT checked against the authorization
 * server's keys (jwt-verifier.ts), an RFC 7662 introspection (introspection-verifier.ts), or your own.
 */
import type { Principal } from './principal';
import { SwitchboardError, type LocalErrorCode } from '../../jsonrpc/errors';

/** What a verifier may want to know of the request that carried the token. */
export interface TokenRequestInfo {
  /** The HTTP method. */
  readonly method?: string;
  /** The request's path (without the query). */
  readonly path?: string;
}

/**
 * Resolves with the caller a token stands for, or rejects: with `InvalidTokenError` for a token that is
 * not good here (answered 401 `invalid_token`), with anything else when the check could not be made (the
 * keys or the introspection endpoint unreachable: answered 503, the client's token is not blamed).
 */
export type TokenVerifier = (token: string, request: TokenRequestInfo) => Promise<Principal>;

/**
 * The check could not be made (the key set or the introspection endpoint slow, unreachable, broken, or too
 * many checks already waiting): answered 503, the token is not blamed. Its message never quotes the token.
 */
export class TokenCheckUnavailableError extends SwitchboardError {
  override readonly name = 'TokenCheckUnavailableError';
  readonly code: LocalErrorCode = 'TOKEN_CHECK_UNAVAILABLE';
}
