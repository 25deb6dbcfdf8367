/**
 * Scaffolding shared by the HTTP transport tests: a cleanup list run after every test, a `node:http` server
 * on 127.0.0.1 closed after the test, deadlines for what a test waits for, and a reader of the SSE events of
 * a fetch response.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';
import { SseParser, type SseEvent } from '../../transports/http/sse';

/** Run after each test, last registered first, whatever happened in it (their failures are ignored). */
export const cleanups: (() => Promise<unknown> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
});

/** Settles as `promise` does within `ms`, or fails the test naming `what` it waited for. */
export function within<T>(promise: Promise<T>, what = 'a result', ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Resolves once `check` holds (polled every 10 ms), or fails the test after `ms`. */
export function eventually(check: () => boolean, what: string, ms = 5000): Promise<void> {
  return within(
    (async () => {
      while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
    })(),
    what,
    ms,
  );
}

export interface LocalHttpServer {
  readonly server: http.Server;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** TCP connections accepted so far. */
  readonly connections: number;
}

/** Serves `listener` on 127.0.0.1 (a free port); the server and its connections are closed after the test. */
export async function listenHttp(listener: http.RequestListener): Promise<LocalHttpServer> {
  const server = http.createServer(listener);
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
    get connections() {
      return connections;
    },
  };
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
