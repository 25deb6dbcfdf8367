/**
 * Scaffolding shared by the HTTP transport tests: a `node:http` server on 127.0.0.1 closed after the test
 * (recording the requests it saw), and a reader of the SSE events of a fetch response. The cleanup list and
 * the deadlines are re-exported from `cleanups.ts` and `wait.ts`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SseParser, type SseEvent } from '../../transports/http/sse';
import { cleanups } from './cleanups';
import { getRequestListener } from '@hono/node-server';
import { fetchHandlerOf } from '../../transports/http/fetch-handler';
import type { HttpListener } from '../../transports/http/http-listener';
import type { ServerReply, ServerRequest } from '../../transports/http/server-port';
import { within } from './wait';

export { cleanups } from './cleanups';
export { eventually, within } from './wait';

export interface LocalHttpServer {
  readonly server: http.Server;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** TCP connections accepted so far. */
  readonly connections: number;
  /** Every request the server received, in order (before the listener saw it). */
  readonly seen: SeenRequest[];
}

export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
}

/**
 * Serves `listener` on 127.0.0.1 (a free port), recording each request; the server and its connections are
 * closed after the test.
 */
export async function listenHttp(listener: http.RequestListener): Promise<LocalHttpServer> {
  const seen: SeenRequest[] = [];
  const served = servedAs(listener);
  const server = http.createServer((request, response) => {
    seen.push({ method: request.method!, url: request.url!, headers: request.headers });
    served(request, response);
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () => new Promise((resolve) => server.close(resolve)),
    () => server.closeAllConnections(),
  );
  return {
    server,
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    get connections() {
      return connections;
    },
  };
}

let servedThroughFetch = false;

/**
 * From now on in this test file, `listenHttp` serves the transports' listeners as fetch handlers
 * (`fetchHandlerOf`, the web port) behind @hono/node-server's adapter, Node's fetch server of choice: the
 * suites of the `node:http` path, imported after this call, then test the web path with the same assertions.
 */
export function serveThroughFetch(): void {
  servedThroughFetch = true;
}

/** Whether the tests run over the web port (`serveThroughFetch`). */
export function isServedThroughFetch(): boolean {
  return servedThroughFetch;
}

/** A transport listener made after the server listens (it needs the server's URL): the served one delegates to it. */
export function lateListener(listener: () => HttpListener | undefined): HttpListener {
  return Object.defineProperties((request: ServerRequest, response: ServerReply) => listener()!(request, response), {
    sessionCount: { get: () => listener()?.sessionCount ?? 0 },
    close: { value: () => listener()?.close() ?? Promise.resolve() },
  }) as HttpListener;
}

/** A `node:http` server (not listening yet) for `listener`, served over the web port under `serveThroughFetch`. */
export function httpServerFor(listener: http.RequestListener): http.Server {
  return http.createServer(servedAs(listener));
}

function servedAs(listener: http.RequestListener): http.RequestListener {
  return servedThroughFetch && isOurListener(listener) ? overFetch(listener) : listener;
}

function isOurListener(listener: http.RequestListener): listener is http.RequestListener & HttpListener {
  return 'sessionCount' in listener;
}

function overFetch(listener: HttpListener): http.RequestListener {
  const handler = fetchHandlerOf(listener);
  return getRequestListener((request, env) => handler(request, env));
}

/** The status of a GET sent with `node:http`, which (unlike fetch) may set any header, `Host` included. */
export function statusOfGet(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers }, (response) => {
      response.resume();
      resolve(response.statusCode!);
    });
    request.on('error', reject);
  });
}

/** An `initialize` POST (2025-06-18) to `url`, with `headers` besides the content types; its body left unread. */
export async function postInitialize(url: string, headers: Record<string, string> = {}): Promise<Response> {
  const response = await postInitializeUnread(url, headers);
  await response.body?.cancel();
  return response;
}

/** `postInitialize`, its answer's body left for the caller to read. */
export function postInitializeUnread(url: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
}

/** Reads the SSE events of a fetch response as they arrive: `next()` is undefined once the stream ended. */
export function sseReader(response: Response) {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const parser = new SseParser();
  const queued: SseEvent[] = [];
  let ended = false;
  async function next(): Promise<SseEvent | undefined> {
    while (queued.length === 0 && !ended) {
      const chunk = await within(reader.read(), 'an SSE event');
      if (chunk.done) ended = true;
      else queued.push(...parser.push(decoder.decode(chunk.value, { stream: true })));
    }
    return queued.shift();
  }
  return { next, cancel: () => reader.cancel().catch(() => undefined) };
}

/** The first JSON-RPC message of an answer, JSON or SSE. */
export async function firstMessage(response: Response): Promise<any> {
  if (response.headers.get('content-type')?.startsWith('application/json')) return response.json();
  const events = sseReader(response);
  for (let event = await events.next(); event; event = await events.next()) {
    if (event.data) {
      await events.cancel();
      return JSON.parse(event.data);
    }
  }
  throw new Error('the stream ended without a message');
}

/** A whole answer to a request sent with `node:http`, which may set any header (`Host` included). */
export interface RawAnswer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** Sends a request with `node:http` (no keep-alive) and reads the whole answer. */
export function sendRaw(url: string, method: string, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method, headers, agent: false });
    request.on('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
    });
    request.on('error', reject);
    request.end();
  });
}
