/**
 * The HTTP requests of the MCP HTTP client transports, over `node:http` / `node:https` with a keep-alive
 * `Agent` (fetch costs far more per request here). One function sends a request and reports two moments:
 * the body handed to the socket (`written`, the point where `send()` may resolve) and the response head
 * (`response`). Failures are `TransportError`s, never exceptions. What does not change from one request to
 * the next (the options for a URL, the header list of a transport) is worked out once.
 */
import http, { type Agent, type ClientRequest, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { DEFAULT_MAX_MESSAGE_BYTES } from '../../lib/jsonrpc/codec';
import { TransportError } from '../../lib/jsonrpc/errors';
import { clipText } from '../../lib/jsonrpc/excerpt';
import type { JsonRpcErrorObject } from '../../lib/jsonrpc/types';
import type { HttpAuthorization } from '../../lib/auth/http-authorization';
import type { TracedNetwork } from '../../lib/trace/instrumentation';
import { httpClientNetwork } from './network';

export interface HttpClientOptions {
  /** Extra headers on every request (e.g. `Authorization`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Default: one keep-alive agent per transport (http or https by URL), destroyed on close. */
  readonly agent?: Agent;
  /** Inbound frame limit in bytes (default 4 MiB): a larger message arrives as a `UnreadableFrame`. */
  readonly maxMessageBytes?: number;
  /**
   * Authorizes the requests (an `OAuthClient`, or your own): its `Authorization` header goes on every request,
   * and a 401, or a 403 with a challenge, is handed to it; the request is sent again when it says so.
   */
  readonly authorization?: HttpAuthorization;
}

export interface HttpExchange {
  /** Resolves once the request (and its body) is handed to the socket; rejects if that never happens. */
  readonly written: Promise<void>;
  /** Resolves with the response head; rejects with a `TransportError` on a network failure or abort. */
  readonly response: Promise<IncomingMessage>;
}

/** Where requests go, worked out once per URL: the options `http.request` takes and the `Host` header. */
export interface HttpTarget {
  readonly url: URL;
  readonly options: Readonly<http.RequestOptions>;
  readonly host: string;
}

/** Header names and values, one after the other (`node:http` takes them as they are, without merging). */
export type HeaderList = readonly string[];

export interface HttpRequestSpec {
  readonly method: 'GET' | 'POST' | 'DELETE';
  readonly target: HttpTarget;
  /** From `headerList`: everything but `Content-Length`, which is added here. */
  readonly headers: HeaderList;
  readonly body?: string;
  /** Aborting destroys the request and its response. */
  readonly signal?: AbortSignal;
}

/**
 * What a client transport keeps about the server it talks to: the URL (checked), the agent (the transport's
 * own unless one was given), where requests go, and the inbound frame limit.
 */
export class HttpPeer {
  readonly url: URL;
  readonly agent: Agent;
  readonly target: HttpTarget;
  readonly maxMessageBytes: number;
  /** The server's address and port, for the tracing (`Transport.network`). */
  readonly network: TracedNetwork;
  private readonly ownsAgent: boolean;

  constructor(url: string | URL, options: HttpClientOptions) {
    this.url = endpointUrl(url);
    this.agent = options.agent ?? createKeepAliveAgent(this.url);
    this.ownsAgent = options.agent === undefined;
    this.target = httpTarget(this.url, this.agent);
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.network = httpClientNetwork(this.url);
  }

  /** The transport is closed: destroys the agent if the transport made it. */
  release(): void {
    if (this.ownsAgent) this.agent.destroy();
  }
}

/** One keep-alive agent of the kind the URL needs. */
function createKeepAliveAgent(url: URL): Agent {
  return url.protocol === 'https:' ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
}

/** The URL of an MCP HTTP endpoint, checked: only `http:` and `https:`. */
function endpointUrl(url: string | URL): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (error) {
    throw new TypeError(`Not a valid URL: ${String(url)}`, { cause: error });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new TypeError(`An MCP HTTP endpoint must be http: or https:, got ${parsed.protocol}`);
  }
  return parsed;
}

export function httpTarget(url: URL, agent: Agent): HttpTarget {
  const { protocol, hostname, port, path, auth } = urlToHttpOptions(url);
  return { url, options: { protocol, hostname, port, path, auth, agent }, host: url.host };
}

/**
 * The headers of a request to `target`: `Host` (unless an extra header sets it), the extra headers, then the
 * transport's own, which win whatever the case of the extra header's name; own headers without a value are
 * left out. `Content-Length` is always computed from the body.
 */
export function headerList(
  target: HttpTarget,
  extra: Readonly<Record<string, string>> | undefined,
  own: Readonly<Record<string, string | undefined>>,
): string[] {
  const list: string[] = [];
  let host: string | undefined = target.host;
  for (const name in extra) {
    const lower = name.toLowerCase();
    if (lower === 'host') host = undefined;
    if (lower !== 'content-length' && !(lower in own)) list.push(name, extra[name]!);
  }
  for (const name in own) {
    const value = own[name];
    if (value !== undefined) list.push(name, value);
  }
  return host === undefined ? list : ['host', host, ...list];
}

/**
 * The requests in flight under each signal. One listener per signal destroys them all when it aborts, rather
 * than one listener per request (which Node would add for `http.request({ signal })`).
 */
const inFlight = new WeakMap<AbortSignal, Set<ClientRequest>>();

function abortWith(signal: AbortSignal, request: ClientRequest): void {
  let requests = inFlight.get(signal);
  if (!requests) {
    const tracked = (requests = new Set());
    inFlight.set(signal, tracked);
    signal.addEventListener(
      'abort',
      () => {
        const error = Object.assign(new Error('The operation was aborted', { cause: signal.reason }), {
          name: 'AbortError',
        });
        for (const pending of tracked) pending.destroy(error);
        tracked.clear();
      },
      { once: true },
    );
  }
  requests.add(request);
  request.once('close', () => requests.delete(request));
}

/**
 * Sends one request. A keep-alive socket the server closed while idle fails the first write with
 * ECONNRESET; such a request never reached the server, so it is sent once more on a fresh socket.
 */
export function sendHttpRequest(spec: HttpRequestSpec): HttpExchange {
  return new OutgoingRequest(spec);
}

class OutgoingRequest implements HttpExchange {
  readonly written: Promise<void>;
  readonly response: Promise<IncomingMessage>;
  private readonly headers: HeaderList;
  private markWritten!: () => void;
  private failWrite!: (error: TransportError) => void;
  private answer!: (response: IncomingMessage) => void;
  private fail!: (error: TransportError) => void;

  constructor(private readonly spec: HttpRequestSpec) {
    this.written = new Promise((resolve, reject) => {
      this.markWritten = resolve;
      this.failWrite = reject;
    });
    this.written.catch(() => undefined); // observed through `response` too
    this.response = new Promise((resolve, reject) => {
      this.answer = resolve;
      this.fail = reject;
    });
    const { body } = spec;
    this.headers =
      body === undefined ? spec.headers : [...spec.headers, 'content-length', String(Buffer.byteLength(body))];
    this.attempt(false);
  }

  private attempt(retried: boolean): void {
    const { spec } = this;
    if (spec.signal?.aborted)
      return this.failWith(new TransportError(`${this.describe()} aborted: the transport closed`));
    const { protocol, hostname, port, path, auth, agent } = spec.target.options;
    const transport = protocol === 'https:' ? https : http;
    let request: ClientRequest;
    try {
      request = transport.request({
        protocol,
        hostname,
        port,
        path,
        auth,
        agent,
        method: spec.method,
        headers: this.headers,
      });
    } catch (error) {
      return this.failWith(
        new TransportError(`${this.describe()} failed: ${(error as Error).message}`, { cause: error }),
      );
    }
    if (spec.signal) abortWith(spec.signal, request);
    let answered = false;
    request.once('finish', this.markWritten);
    request.once('response', (message: IncomingMessage) => {
      answered = true;
      this.markWritten(); // a server may answer before reading the whole body
      this.answer(message);
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (answered) return; // the response reports its own failures
      if (!retried && request.reusedSocket && error.code === 'ECONNRESET') return this.attempt(true);
      const aborted = error.name === 'AbortError';
      const what = this.describe();
      const why = aborted ? `${what} aborted: the transport closed` : `${what} failed: ${error.message}`;
      this.failWith(new TransportError(why, { cause: error }));
    });
    request.end(spec.body);
  }

  private failWith(failure: TransportError): void {
    this.failWrite(failure);
    this.fail(failure);
  }

  private describe(): string {
    return `${this.spec.method} ${this.spec.target.url.href}`;
  }
}

/**
 * The response body as text; `'too-large'` past `maxBytes` (the response is then destroyed), `'broken'` when
 * the connection ended before the body did.
 */
export function readResponseText(
  response: IncomingMessage,
  maxBytes: number,
): Promise<string | 'too-large' | 'broken'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        response.destroy();
        return resolve('too-large');
      }
      chunks.push(chunk);
    });
    response.once('end', () =>
      resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8')),
    );
    response.once('close', () => resolve('broken')); // a no-op after 'end'
    response.on('error', () => undefined);
  });
}

/** Reads and drops a body we have no use for, so the socket goes back to the agent. */
export function discardResponse(response: IncomingMessage): void {
  response.on('error', () => undefined);
  response.resume();
}

/** The media type of a response, lower-cased, without parameters. */
export function contentTypeOf(response: IncomingMessage): string {
  // The raw list, not `headers`: that object is built on first use, and most responses need nothing else from it.
  const raw = response.rawHeaders;
  let header = '';
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!;
    if (name.length === 12 && name.toLowerCase() === 'content-type') {
      header = raw[index + 1]!;
      break;
    }
  }
  const end = header.indexOf(';');
  return (end === -1 ? header : header.slice(0, end)).trim().toLowerCase();
}

/**
 * An HTTP error status without a JSON-RPC answer in its body: `httpStatus` says which (the client's era
 * probe reads it: 401/403 and 5xx are errors, other 4xx mean a handshake-era server).
 */
export class HttpStatusError extends TransportError {
  constructor(
    message: string,
    readonly httpStatus: number,
  ) {
    super(message);
  }
}

/**
 * Why an HTTP error status came back, read from its body: when the body is a JSON-RPC error (a numeric
 * code and a message), that error as the server sent it, and its message; otherwise the first 200
 * characters of the text.
 */
export async function describeHttpFailure(
  response: IncomingMessage,
  what: string,
): Promise<{ readonly message: string; readonly error?: JsonRpcErrorObject }> {
  const status = `HTTP ${response.statusCode}${response.statusMessage ? ` ${response.statusMessage}` : ''}`;
  const text = await readResponseText(response, 16 * 1024);
  if (text !== 'too-large' && text !== 'broken' && text.trim() !== '') {
    const error = jsonRpcErrorIn(text);
    if (error) return { message: `${what}: ${status}: ${clipText(error.message, 500)}`, error };
    const excerpt = text.trim().slice(0, 200);
    return { message: `${what}: ${status}: ${excerpt}` };
  }
  return { message: `${what}: ${status}` };
}

/** The error of a JSON-RPC error response, when `text` is one. */
function jsonRpcErrorIn(text: string): JsonRpcErrorObject | undefined {
  let body: { error?: { code?: unknown; message?: unknown; data?: unknown } };
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  const error = body?.error;
  if (typeof error?.code !== 'number' || typeof error.message !== 'string') return undefined;
  return error.data === undefined
    ? { code: error.code, message: error.message }
    : { code: error.code, message: error.message, data: error.data };
}

/** `list` with its `authorization` header set to `value` (replaced if the list has one, else added). */
export function withAuthorization(list: HeaderList, value: string | undefined): HeaderList {
  return value === undefined ? list : withHeader(list, 'authorization', value);
}

/** `list` with header `name` (lower case) set to `value`: replaced if the list has it, else added. */
export function withHeader(list: HeaderList, name: string, value: string): HeaderList {
  const updated = list.slice();
  for (let index = 0; index < updated.length; index += 2) {
    if (updated[index]!.toLowerCase() === name) {
      updated[index + 1] = value;
      return updated;
    }
  }
  updated.push(name, value);
  return updated;
}
