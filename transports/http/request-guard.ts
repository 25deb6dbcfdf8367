/**
 * What both HTTP server transports check and answer before a request reaches a session: the DNS-rebinding
 * defence (Origin and Host), header parsing, and refusals with an id-less JSON-RPC error body. Header values
 * repeat from one request to the next, so what is parsed from them is remembered (for a bounded number of
 * distinct values) instead of being parsed again on every request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { encodeFrame } from '../../lib/jsonrpc/codec';
import { ErrorCode } from '../../lib/jsonrpc/errors';

export interface OriginPolicy {
  /** Origins (`scheme://host[:port]`) accepted besides localhost ones. */
  readonly allowedOrigins?: readonly string[];
  /** Host header values (`host[:port]`) accepted besides localhost ones. */
  readonly allowedHosts?: readonly string[];
  /** The server listens on a loopback address: other origins and hosts are refused (default true). */
  readonly localhostOnly?: boolean;
}

/** Distinct header values remembered per parser; past that the memory starts afresh. */
const REMEMBERED_VALUES = 256;

/** `parse`, remembering its results for the last distinct values (a header's values repeat). */
function remembered<T>(parse: (value: string) => T): (value: string) => T {
  const known = new Map<string, T>();
  return (value) => {
    let result = known.get(value);
    if (result === undefined) {
      if (known.size >= REMEMBERED_VALUES) known.clear();
      result = parse(value);
      known.set(value, result);
    }
    return result;
  };
}

const LOCAL_HOSTNAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

function isLocalUrl(url: string): boolean {
  try {
    return LOCAL_HOSTNAMES.has(new URL(url).hostname.toLowerCase());
  } catch {
    return false;
  }
}

const isLocalOrigin = remembered(isLocalUrl);
const isLocalHost = remembered((host) => isLocalUrl(`http://${host}`));

/**
 * The DNS-rebinding defence: why the request must be refused with 403, or undefined when it may pass.
 * An explicit allow list is authoritative; otherwise a localhost-only server accepts only localhost.
 */
export function refuseOrigin(request: IncomingMessage, policy: OriginPolicy): string | undefined {
  const localhostOnly = policy.localhostOnly ?? true;
  const origin = request.headers.origin;
  if (origin !== undefined) {
    const allowed = policy.allowedOrigins?.includes(origin) ?? false;
    if (
      !allowed &&
      (policy.allowedOrigins !== undefined || localhostOnly) &&
      !(localhostOnly && isLocalOrigin(origin))
    ) {
      return `Origin ${origin} is not allowed`;
    }
  }
  const host = request.headers.host ?? '';
  const hostAllowed = policy.allowedHosts?.includes(host) ?? false;
  if (!hostAllowed && (policy.allowedHosts !== undefined || localhostOnly) && !(localhostOnly && isLocalHost(host))) {
    return `Host ${host || '(none)'} is not allowed`;
  }
  return undefined;
}

const NO_MEDIA_TYPES: readonly string[] = [];

const parseMediaTypes = remembered((header): readonly string[] =>
  header.split(',').map((part) => part.split(';')[0]!.trim().toLowerCase()),
);

/** The media types an `Accept` (or `Content-Type`) header lists, lower-cased, without parameters. */
export function mediaTypes(header: string | undefined): readonly string[] {
  return header ? parseMediaTypes(header) : NO_MEDIA_TYPES;
}

export function singleHeader(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The path of a request URL (`/a/b?x=1` -> `/a/b`). */
export function requestPath(request: IncomingMessage): string {
  const url = request.url ?? '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** Answers with an HTTP error status and an id-less JSON-RPC error body (or drops a response already started). */
export function refuseRequest(
  response: ServerResponse,
  status: number,
  message: string,
  code: number = ErrorCode.InvalidRequest,
): void {
  if (response.headersSent) return void response.destroy();
  endWithJson(response, status, encodeFrame({ jsonrpc: '2.0', error: { code, message } }));
}

/** Ends `response` with a JSON body of known length (no chunked framing), after `headers` (names and values). */
export function endWithJson(
  response: ServerResponse,
  status: number,
  body: string,
  headers: readonly string[] = [],
): void {
  const length = String(Buffer.byteLength(body));
  response.writeHead(status, ['content-type', 'application/json', 'content-length', length, ...headers]);
  response.end(body);
}
