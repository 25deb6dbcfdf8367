/**
 * How the OAuth client reaches authorization servers and metadata: `fetch` (the runtime's, or one the user
 * gives), JSON only, bounded in time. oauth4webapi refuses plain `http:`; we allow it for loopback hosts only
 * (a server on the developer's machine, the tests), never elsewhere.
 */
import * as oauth from 'oauth4webapi';

export type Fetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

export interface AuthHttpOptions {
  /** Default: the global `fetch`. */
  readonly fetch?: Fetch;
  /** Per OAuth request (default 30 s). */
  readonly timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;

export class AuthHttp {
  private readonly fetchImpl: Fetch;
  private readonly timeoutMs: number;

  constructor(options: AuthHttpOptions = {}) {
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
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
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url))) {
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

/** `localhost`, `*.localhost`, 127.0.0.0/8 or `[::1]`. */
export function isLoopback(url: string | URL): boolean {
  let host: string;
  try {
    host = (typeof url === 'string' ? new URL(url) : url).hostname.toLowerCase();
  } catch {
    return false;
  }
  return host === 'localhost' || host.endsWith('.localhost') || /^127(\.\d{1,3}){3}$/.test(host) || host === '[::1]';
}

/** Authorization could not be obtained: the reason says which step failed and why. */
export class AuthorizationError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AuthorizationError';
  }
}

/** Authorization needs a user, and the client has no way to ask one (no interaction): someone must log in. */
export class LoginRequiredError extends AuthorizationError {
  constructor(message: string) {
    super(message);
    this.name = 'LoginRequiredError';
  }
}
