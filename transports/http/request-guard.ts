/**
 * What both HTTP server transports check and answer before a request reaches a session: the DNS-rebinding
 * defence (Origin and Host), header parsing, and refusals with an id-less JSON-RPC error body. Header values
 * repeat from one request to the next, so what is parsed from them is remembered (for a bounded number of
 * distinct values) instead of being parsed again on every request.
 */
import { byteLength, type ServerReply, type ServerRequest } from './server-port';
import { encodeFrame } from '../../lib/jsonrpc/codec';
import { ErrorCode } from '../../lib/jsonrpc/errors';
import type { JsonRpcErrorResponse, RequestId } from '../../lib/jsonrpc/types';

/**
 * The DNS-rebinding defence: which `Host` and `Origin` headers are accepted. It is always on: localhost
 * names are accepted, and so is the address the request reached, written as an address (`127.0.0.2`, the
 * bind address or the interface of a wildcard bind): a rebinding page is named by its own host name, never
 * by the address it was rebound to. Any other name must be listed.
 */
export interface OriginPolicy {
  /**
   * Origins (`scheme://host[:port]`) accepted besides localhost ones and the address the request reached: a
   * list, or a predicate given the request's `Origin` header.
   */
  readonly allowedOrigins?: readonly string[] | ((origin: string) => boolean);
  /** Host header values (`host[:port]`) accepted besides localhost ones and the address the request reached. */
  readonly allowedHosts?: readonly string[];
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

/** The lower-cased hostname of a URL (IPv6 without brackets), or '' when it is not one. */
function hostnameOf(url: string): string {
  try {
    const hostname = new URL(url).hostname.toLowerCase();
    return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
  } catch {
    return '';
  }
}

const originHostname = remembered(hostnameOf);
const hostHostname = remembered((host) => hostnameOf(`http://${host}`));
const isLocalName = (hostname: string) => LOCAL_HOSTNAMES.has(hostname) || hostname === '::1';

/** Whether `hostname` is the address the request's socket was accepted on (the bind address, or the interface of a wildcard bind). */
function isBindAddress(request: ServerRequest, hostname: string): boolean {
  const local = request.socket.localAddress;
  if (!local || hostname === '') return false;
  return hostname === (local.startsWith('::ffff:') ? local.slice(7) : local).toLowerCase();
}

function acceptedHostname(request: ServerRequest, hostname: string): boolean {
  return isLocalName(hostname) || isBindAddress(request, hostname);
}

/**
 * The DNS-rebinding defence: why the request must be refused with 403 (saying what to configure), or
 * undefined when it may pass.
 */
export function refuseOrigin(request: ServerRequest, policy: OriginPolicy): string | undefined {
  const host = singleHeader(request, 'host');
  if (host === undefined || !(policy.allowedHosts?.includes(host) || acceptedHostname(request, hostHostname(host)))) {
    return `Host ${host ?? '(none)'} is not allowed: list it in allowedHosts (switchboard serve --allowed-host ${host ?? '<host:port>'})`;
  }
  const origin = singleHeader(request, 'origin');
  if (
    origin !== undefined &&
    !(isListedOrigin(policy.allowedOrigins, origin) || acceptedHostname(request, originHostname(origin)))
  ) {
    return `Origin ${origin} is not allowed: list it in allowedOrigins (switchboard serve --allowed-origin ${origin})`;
  }
  return undefined;
}

/** Whether `allowedOrigins` (a list or a predicate) names `origin`. */
export function isListedOrigin(allowed: OriginPolicy['allowedOrigins'], origin: string): boolean {
  return typeof allowed === 'function' ? allowed(origin) : allowed !== undefined && allowed.includes(origin);
}

const NO_MEDIA_TYPES: readonly string[] = [];

const parseMediaTypes = remembered((header): readonly string[] =>
  header.split(',').map((part) => part.split(';')[0]!.trim().toLowerCase()),
);

/** The media types an `Accept` (or `Content-Type`) header lists, lower-cased, without parameters. */
export function mediaTypes(header: string | undefined): readonly string[] {
  return header ? parseMediaTypes(header) : NO_MEDIA_TYPES;
}

export function singleHeader(request: ServerRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The path of a request URL (`/a/b?x=1` -> `/a/b`). */
export function requestPath(request: ServerRequest): string {
  const url = request.url ?? '/';
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** Answers with an HTTP error status and an id-less JSON-RPC error body (or drops a response already started). */
export function refuseRequest(
  response: ServerReply,
  status: number,
  message: string,
  code: number = ErrorCode.InvalidRequest,
): void {
  refuse(response, status, message, code, undefined);
}

const CLOSE = ['connection', 'close'];

/**
 * `refuseRequest`, then the connection closes (`Connection: close`: Node ends the socket once the answer is
 * out): for a request whose body was refused or left unread, so its rest is never parsed as a request.
 */
export function refuseAndClose(
  response: ServerReply,
  status: number,
  message: string,
  code: number = ErrorCode.InvalidRequest,
  /** The refused request's id, when it could be read: the error answers it. */
  id?: RequestId,
): void {
  refuse(response, status, message, code, CLOSE, id);
}

/**
 * `refuseAndClose` with more response headers (names and values: a `WWW-Authenticate` challenge), answering
 * request `id` when it could be read. `close`: false when the request's body was read whole.
 */
export function refuseWithHeaders(
  response: ServerReply,
  status: number,
  message: string,
  headers: readonly string[],
  close: boolean,
  id?: RequestId,
): void {
  refuse(response, status, message, ErrorCode.InvalidRequest, close ? [...headers, ...CLOSE] : headers, id);
}

function refuse(
  response: ServerReply,
  status: number,
  message: string,
  code: number,
  headers: readonly string[] | undefined,
  id?: RequestId,
): void {
  if (response.headersSent) return void response.destroy();
  const body =
    id === undefined ? { jsonrpc: '2.0', error: { code, message } } : { jsonrpc: '2.0', id, error: { code, message } };
  endWithJson(response, status, encodeFrame(body as JsonRpcErrorResponse), headers);
}

/** Ends `response` with a JSON body of known length (no chunked framing), after `headers` (names and values). */
export function endWithJson(
  response: ServerReply,
  status: number,
  body: string,
  headers: readonly string[] = [],
): void {
  const length = String(byteLength(body));
  response.writeHead(status, ['content-type', 'application/json', 'content-length', length, ...headers]);
  response.end(body);
}
