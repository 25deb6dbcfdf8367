/**
 * CORS for the MCP endpoint: which page origins a browser may call it from, the answer to a preflight, and
 * the headers a real answer carries so a page can read it (`Mcp-Session-Id` above all). Pure functions of the
 * request's method and headers and the options, with no `node:` import: a web-standard handler uses them as
 * they are. The Origin/Host guard (`request-guard.ts`) is separate and has the last word: the caller runs it
 * first, and a request it refuses gets its 403 and no CORS headers.
 */
import { excerpt } from '../../lib/jsonrpc/excerpt';
import { MCP_PARAM_HEADER_PREFIX } from '../../lib/protocol/http-headers';

/** The `cors` option of `createMcpHttpHandler`. */
export interface CorsOptions {
  /**
   * The page origins (`scheme://host[:port]`, as browsers send them) allowed to call the endpoint: a list, a
   * predicate given each request's `Origin` (only well-formed single origins reach it), or `'*'` for any origin,
   * which is refused unless the endpoint has `auth`: without a token to require, `'*'` would let every page the
   * user visits call the server's tools. An allowed origin also passes the Origin check (the Host check still
   * applies).
   */
  readonly origins: readonly string[] | ((origin: string) => boolean) | '*';
  /** Request headers a page may send besides the MCP ones (`CORS_REQUEST_HEADERS`, and any `Mcp-Param-*`). */
  readonly allowHeaders?: readonly string[];
  /** Response headers a page may read besides `CORS_EXPOSED_HEADERS`. */
  readonly exposeHeaders?: readonly string[];
  /** How long a browser may cache a preflight's answer, in seconds (default 7200, Chromium's cap). */
  readonly maxAgeSeconds?: number;
}

/** The methods of the MCP endpoint a page may use. */
export const CORS_METHODS: readonly string[] = ['GET', 'POST', 'DELETE'];

/**
 * The request headers an MCP client sends (both eras; the 2026-07-28 revision's mirrored `Mcp-Method`,
 * `Mcp-Name` and every `Mcp-Param-*`), credentials and trace context included.
 */
export const CORS_REQUEST_HEADERS: readonly string[] = [
  'accept',
  'content-type',
  'authorization',
  'dpop',
  'mcp-session-id',
  'mcp-protocol-version',
  'last-event-id',
  'mcp-method',
  'mcp-name',
  'traceparent',
  'tracestate',
  'baggage',
];

/** The response headers a page may read: the session, the version, and what an authorization refusal says. */
export const CORS_EXPOSED_HEADERS: readonly string[] = [
  'Mcp-Session-Id',
  'MCP-Protocol-Version',
  'WWW-Authenticate',
  'DPoP-Nonce',
];

export const DEFAULT_CORS_MAX_AGE_SECONDS = 7200;

/** The most header names a preflight may ask for: bounds the work and the answer. */
export const MAX_PREFLIGHT_HEADERS = 64;

/** Every answer of a CORS-enabled endpoint depends on the request's Origin (caches must know). */
export const VARY_ORIGIN: readonly string[] = ['vary', 'Origin'];

const PREFLIGHT_VARY = ['vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers'];
const PARAM_PREFIX = MCP_PARAM_HEADER_PREFIX.toLowerCase();
/** RFC 9110 `token`: what a header name is made of. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** How much of a hostile header value a refusal quotes. */
const QUOTED_CHARS = 80;

/** A request header by lower-case name (Node's `request.headers`, or a `Headers` object's `get`). */
export type HeaderLookup = (name: string) => string | null | undefined;

/** `CorsOptions` checked and compiled once: what `decideCors` reads on each request. */
export interface CorsPolicy {
  /** Whether a page of `origin` may call the endpoint (and so pass the Origin check). */
  allows(origin: string): boolean;
  readonly allowedHeaders: ReadonlySet<string>;
  readonly exposedHeaders: string;
  readonly maxAge: string;
}

/** What to do with a request, CORS-wise; `headers` are names and values, to add to whatever answers it. */
export type CorsVerdict =
  /** Serve the request; its answer carries `headers`. */
  | { readonly kind: 'serve'; readonly headers: readonly string[] }
  /** A preflight, answered: 204 with `headers`. */
  | { readonly kind: 'preflight'; readonly status: 204; readonly headers: readonly string[] }
  /** A preflight refused: 403 saying why, with `headers` (no CORS grant among them). */
  | { readonly kind: 'refuse'; readonly status: 403; readonly message: string; readonly headers: readonly string[] };

/**
 * Checks `options` and compiles them; `authenticated`: whether the endpoint requires a token (`auth`), without
 * which `'*'` is refused. Throws a `RangeError` naming the bad entry.
 */
export function corsPolicy(options: CorsOptions, authenticated: boolean): CorsPolicy {
  const allowedHeaders = new Set([...CORS_REQUEST_HEADERS, ...headerNames(options.allowHeaders, 'allowHeaders')]);
  const exposed = [...CORS_EXPOSED_HEADERS, ...headerNames(options.exposeHeaders, 'exposeHeaders')];
  const maxAge = options.maxAgeSeconds ?? DEFAULT_CORS_MAX_AGE_SECONDS;
  if (!Number.isSafeInteger(maxAge) || maxAge < 0) {
    throw new RangeError(`cors.maxAgeSeconds must be a whole number of seconds, 0 or more: got ${excerpt(maxAge)}`);
  }
  return {
    allows: originTest(options.origins, authenticated),
    allowedHeaders,
    exposedHeaders: exposed.join(', '),
    maxAge: String(maxAge),
  };
}

function originTest(origins: CorsOptions['origins'], authenticated: boolean): (origin: string) => boolean {
  if (origins === '*') {
    if (!authenticated) {
      throw new RangeError(
        "cors.origins '*' is only allowed on an endpoint with auth: without a token to require, any page the user " +
          'visits could call its tools. List the origins, or pass a predicate',
      );
    }
    return isSerializedOrigin;
  }
  if (typeof origins === 'function') return (origin) => isSerializedOrigin(origin) && origins(origin) === true;
  if (!Array.isArray(origins)) {
    throw new RangeError(`cors.origins must be a list of origins, a predicate or '*': got ${excerpt(origins)}`);
  }
  const listed = new Set(origins.map(listedOrigin));
  return (origin) => listed.has(origin);
}

/** A list entry as browsers serialize it (`https://App.example:443/` -> `https://app.example`), or a RangeError. */
function listedOrigin(entry: unknown): string {
  const url = typeof entry === 'string' && entry !== 'null' ? parsedUrl(entry) : undefined;
  const bare = url && url.host !== '' && (url.pathname === '/' || url.pathname === '') && !url.search && !url.hash;
  if (!url || !bare || url.username || url.password || entry !== (entry as string).trim()) {
    throw new RangeError(`cors.origins: ${excerpt(entry)} is not an origin (scheme://host[:port], with no path)`);
  }
  return serializedOrigin(url);
}

function parsedUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** `scheme://host[:port]`: `URL.origin` for http(s), which also drops a default port; the same for other schemes. */
function serializedOrigin(url: URL): string {
  return url.origin !== 'null' ? url.origin : `${url.protocol}//${url.host}`;
}

/** Whether `value` is one origin as a browser sends it (not a list of them, not a URL with a path, not `null`). */
export function isSerializedOrigin(value: string): boolean {
  const url = parsedUrl(value);
  return url !== undefined && url.host !== '' && serializedOrigin(url) === value;
}

function headerNames(names: readonly string[] | undefined, option: string): string[] {
  if (names === undefined) return [];
  if (!Array.isArray(names)) throw new RangeError(`cors.${option} must be a list of header names`);
  return names.map((name: unknown) => {
    if (typeof name !== 'string' || !TOKEN.test(name)) {
      throw new RangeError(`cors.${option}: ${excerpt(name)} is not a header name`);
    }
    return option === 'allowHeaders' ? name.toLowerCase() : name;
  });
}

/**
 * What CORS does with a request of `method` whose headers `header` reads. A request without `Origin` is
 * not a cross-origin one: served, with `Vary: Origin`. A preflight (`OPTIONS` with
 * `Access-Control-Request-Method`) from an allowed origin asking for an MCP method and headers is answered 204;
 * one asking for anything else is refused, saying what. Any other request is served, carrying the grant
 * (`Access-Control-Allow-Origin` echoing the origin, the exposed headers) when its origin is allowed.
 */
export function decideCors(policy: CorsPolicy, method: string, header: HeaderLookup): CorsVerdict {
  const origin = header('origin') ?? undefined;
  const requestedMethod = method === 'OPTIONS' ? (header('access-control-request-method') ?? undefined) : undefined;
  const allowed = origin !== undefined && policy.allows(origin);
  if (requestedMethod === undefined) {
    if (!allowed) return { kind: 'serve', headers: VARY_ORIGIN };
    const grant = ['access-control-allow-origin', origin, 'access-control-expose-headers', policy.exposedHeaders];
    return { kind: 'serve', headers: [...grant, ...VARY_ORIGIN] };
  }
  if (!allowed) return refusal(`origin ${quote(origin ?? '(none)')} is not allowed (cors.origins)`);
  if (!CORS_METHODS.includes(requestedMethod)) {
    return refusal(`method ${quote(requestedMethod)} is not allowed (allowed: ${CORS_METHODS.join(', ')})`);
  }
  const requested = requestedHeaders(policy, header('access-control-request-headers') ?? '');
  if (typeof requested === 'string') return refusal(requested);
  const headers = [
    'access-control-allow-origin',
    origin,
    'access-control-allow-methods',
    CORS_METHODS.join(', '),
    'access-control-allow-headers',
    [...new Set([...policy.allowedHeaders, ...requested])].join(', '),
    'access-control-max-age',
    policy.maxAge,
    ...PREFLIGHT_VARY,
  ];
  // Chromium's Private Network Access: a public page calling a server on a private address asks first.
  if (header('access-control-request-private-network') === 'true') {
    headers.push('access-control-allow-private-network', 'true');
  }
  return { kind: 'preflight', status: 204, headers };
}

/** The header names a preflight asks for, lower-cased, or why one of them is refused. */
function requestedHeaders(policy: CorsPolicy, list: string): string[] | string {
  const names = list
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '');
  if (names.length > MAX_PREFLIGHT_HEADERS) {
    return `${names.length} request headers asked for, more than ${MAX_PREFLIGHT_HEADERS}`;
  }
  const refused = names.find((name) => !isAllowedHeader(policy, name));
  if (refused !== undefined) return `request header ${quote(refused)} is not allowed (cors.allowHeaders)`;
  return names;
}

function isAllowedHeader(policy: CorsPolicy, name: string): boolean {
  if (policy.allowedHeaders.has(name)) return true;
  return name.length > PARAM_PREFIX.length && name.startsWith(PARAM_PREFIX) && TOKEN.test(name);
}

function refusal(reason: string): CorsVerdict {
  return {
    kind: 'refuse',
    status: 403,
    message: `Forbidden: CORS preflight refused: ${reason}`,
    headers: PREFLIGHT_VARY,
  };
}

function quote(value: string): string {
  return JSON.stringify(value.length > QUOTED_CHARS ? `${value.slice(0, QUOTED_CHARS)}…` : value);
}
