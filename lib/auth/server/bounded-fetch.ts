/**
 * The resource server's outbound requests (the key set, introspection): to `https:` URLs (plain `http:` on a
 * loopback host or when allowed), bounded in size by the fetches handed to jose's `createRemoteJWKSet` and
 * oauth4webapi's `introspectionRequest` as their `customFetch`. Their time is bounded by the signal each
 * library passes (set from our timeout options).
 */
import { boundedResponse } from '../bounded-response';
import { isSecureOrLoopback } from '../loopback';
import { checkedNumber } from './option-check';
import { TokenCheckUnavailableError } from './token-verifier';

/** How long a fetch of the key set may take, its body included (default). */
export const DEFAULT_JWKS_TIMEOUT_MS = 5_000;

/** The largest key set read (default): a few keys take a few kilobytes. */
export const DEFAULT_MAX_JWKS_BYTES = 512 * 1024;

/** How the key set at `jwksUrl` is fetched (here, not beside the verifier: jose's types stay out of the options' declarations). */
export interface JwksFetchOptions {
  /** Per fetch, its body included (default `DEFAULT_JWKS_TIMEOUT_MS`): slower is a 503. */
  readonly timeoutMs?: number;
  /** The largest key set read (default `DEFAULT_MAX_JWKS_BYTES`): larger is a 503. */
  readonly maxBytes?: number;
  /** Allow a plain `http:` URL on any host (default: only on loopback hosts). */
  readonly allowInsecureRequests?: boolean;
}

/** What both libraries call: the URL and the request they built. */
export type OutboundFetch = (url: string, init: RequestInit) => Promise<Response>;

/**
 * `url`, when the resource server may send requests there: `https:`, or `http:` on a loopback host (any host
 * with `allowInsecureRequests`). Anything else is a `TypeError` naming `what` it is, when the verifier is made.
 */
export function outboundUrl(url: string | URL, allowInsecureRequests: boolean | undefined, what: string): URL {
  const parsed = new URL(url);
  const allowed = allowInsecureRequests
    ? parsed.protocol === 'https:' || parsed.protocol === 'http:'
    : isSecureOrLoopback(parsed);
  if (!allowed) {
    throw new TypeError(
      `${what} ${parsed.href} must be https (plain http only on a loopback host, or with allowInsecureRequests)`,
    );
  }
  return parsed;
}

/**
 * `fetch` reading the whole answer, at most `maxBytes` of it (more is a `TokenCheckUnavailableError` naming
 * `what`), before handing it on: a failure to read keeps its own class and message (the libraries would
 * report a body cut short as JSON they could not parse). The signal in `init` bounds the reading too.
 */
export function boundedFetch(maxBytes: number, what: string): OutboundFetch {
  checkedNumber(`the largest ${what} read (bytes)`, maxBytes, 1);
  return async (url, init) => {
    const response = await fetch(url, init);
    const body = await boundedResponse(response, maxBytes, () => tooLarge(what, url, maxBytes)).arrayBuffer();
    const copy = new Response(body.byteLength === 0 ? null : body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
    // oauth4webapi reads the URL a response came from in some checks; a Response made here has none.
    Object.defineProperty(copy, 'url', { value: response.url });
    return copy;
  };
}

/** The fetch of a JSON Web Key Set: a 200 answer of at most `maxBytes`; any other status is a `TokenCheckUnavailableError`. */
export function keySetFetch(maxBytes: number): OutboundFetch {
  const bounded = boundedFetch(maxBytes, 'key set');
  return async (url, init) => {
    const response = await bounded(url, init);
    if (response.status !== 200) {
      throw new TokenCheckUnavailableError(`the key set at ${url} answered ${response.status}, not 200`);
    }
    return response;
  };
}

function tooLarge(what: string, url: string, maxBytes: number): TokenCheckUnavailableError {
  return new TokenCheckUnavailableError(`the ${what} at ${url} is larger than ${maxBytes} bytes: refusing to read it`);
}
