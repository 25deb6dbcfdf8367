/**
 * How the OAuth client reaches authorization servers and metadata: `fetch` (the runtime's, or one the user
 * gives), JSON only, bounded in time. oauth4webapi refuses plain `http:`; we allow it for loopback hosts only
 * (a server on the developer's machine, the tests), never elsewhere.
 */
import * as oauth from 'oauth4webapi';
import { boundedResponse } from '../bounded-response';
import { isLoopback, isSecureOrLoopback } from '../loopback';
import { SwitchboardError, type LocalErrorCode } from '../../jsonrpc/errors';

export { isLoopback };

export type Fetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

export interface AuthHttpOptions {
  /** Default: the global `fetch`. */
  readonly fetch?: Fetch;
  /** Per OAuth request (default 30 s). */
  readonly timeoutMs?: number;
  /** The largest answer read from an authorization server or a metadata URL (default 1 MiB). */
  readonly maxResponseBytes?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** Metadata documents and token responses are a few kilobytes; a server sending megabytes is refused. */
export const DEFAULT_MAX_OAUTH_RESPONSE_BYTES = 1024 * 1024;

export class AuthHttp {
  private readonly fetchImpl: Fetch;
  private readonly timeoutMs: number;

  constructor(options: AuthHttpOptions = {}) {
    const inner: Fetch = options.fetch ?? ((input, init) => fetch(input, init));
    const limit = options.maxResponseBytes ?? DEFAULT_MAX_OAUTH_RESPONSE_BYTES;
    this.fetchImpl = async (input, init) =>
      boundedResponse(
        await inner(input, init),
        limit,
        () =>
          new AuthorizationError(`The answer from ${String(input)} is larger than ${limit} bytes: refusing to read it`),
      );
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** The options oauth4webapi's requests take for `url`. */
  requestOptions(url: string | URL): {
    [oauth.allowInsecureRequests]: boolean;
    [oauth.customFetch]: Fetch;
    signal: AbortSignal;
  } {
    return {
      [oauth.allowInsecureRequests]: isLoopback(url),
      [oauth.customFetch]: this.fetchImpl,
      signal: AbortSignal.timeout(this.timeoutMs),
    };
  }

  /** A GET of a JSON document; the response whatever its status (the caller decides what a 404 means). */
  getJson(url: URL): Promise<Response> {
    if (!isSecureOrLoopback(url)) {
      return Promise.reject(
        new AuthorizationError(`Refusing to fetch ${url.href}: OAuth metadata must be served over https`),
      );
    }
    return this.fetchImpl(url, {
      headers: { accept: 'application/json' },
      redirect: 'manual',
      signal: AbortSignal.timeout(this.timeoutMs),
    });
  }

  /** Any request the flows make themselves (a headless authorization, an identity provider's exchange). */
  fetch(input: string | URL, init?: RequestInit): Promise<Response> {
    return this.fetchImpl(input, { signal: AbortSignal.timeout(this.timeoutMs), ...init });
  }
}

/**
 * `value`, an endpoint a peer named (metadata, a challenge), as a URL the client may send a request or the user
 * to: `https:`, or `http:` on this machine, without credentials in it. Anything else (a `file:` or
 * `javascript:` authorization endpoint handed to a browser, plain `http:` across the network) is refused with
 * an error naming `field` and `source` and why, never the value itself (it may be huge, or hold a password).
 */
export function requireEndpointUrl(value: unknown, field: string, source: string): URL {
  const refuse = (why: string) => new AuthorizationError(`"${field}" in ${source} ${why}: refusing to authorize`);
  if (typeof value !== 'string') throw refuse('is not a string');
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refuse('is not a URL');
  }
  if (url.protocol === 'http:' && !isLoopback(url)) {
    throw refuse('is plain http: to a host other than this machine (only https:, or http: on this machine)');
  }
  if (!isSecureOrLoopback(url)) {
    const scheme = url.protocol.length > 20 ? `${url.protocol.slice(0, 20)}…` : url.protocol;
    throw refuse(`has the scheme "${scheme}" (only https:, or http: on this machine)`);
  }
  if (url.username !== '' || url.password !== '') throw refuse('has credentials (user:password@) in it');
  return url;
}

/** Authorization could not be obtained: the reason says which step failed and why. */
export class AuthorizationError extends SwitchboardError {
  readonly code: LocalErrorCode = 'AUTHORIZATION_FAILED';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AuthorizationError';
  }
}

/** Authorization needs a user, and the client has no way to ask one (no interaction): someone must log in. */
export class LoginRequiredError extends AuthorizationError {
  override readonly code: LocalErrorCode = 'LOGIN_REQUIRED';

  constructor(message: string) {
    super(message);
    this.name = 'LoginRequiredError';
  }
}
