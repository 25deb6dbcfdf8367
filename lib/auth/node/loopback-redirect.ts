/**
 * The redirect receiver for OAuth on the command line (RFC 8252 §7.3): an HTTP server on 127.0.0.1 that waits
 * for the browser to come back to `http://127.0.0.1:<port><path>?code=…` (or `?error=…`), answers it with a
 * small page, and hands the whole callback URL to the caller, who checks `state` and `iss` and decides.
 *
 * The server always ends: after the callback (a short linger answers a reload with "already done"), on the
 * timeout, on abort, or on `close()`; a result nobody awaits never becomes an unhandled rejection.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoopbackRedirectOptions {
  /** The port to listen on; 0 (the default) lets the system choose a free one. */
  readonly port?: number;
  /** The callback's path (default `/callback`). */
  readonly path?: string;
  /** How long to wait for the browser (default 5 minutes). */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

export interface LoopbackRedirect {
  /** `http://127.0.0.1:<port><path>`: the redirect URI to register and send in the authorization request. */
  readonly redirectUri: string;
  /** The full callback URL once the browser arrives with `code` or `error` in its query. */
  readonly result: Promise<URL>;
  /** Stops listening (idempotent); a result still pending rejects. */
  close(): Promise<void>;
}

const HOST = '127.0.0.1';
const DEFAULT_TIMEOUT_MS = 5 * 60_000;
/** How long the server keeps answering "already done" after the callback before it closes itself. */
const LINGER_MS = 2000;

/** Listens on 127.0.0.1 and resolves once the server is up (rejects if it cannot listen or `signal` is aborted). */
export async function startLoopbackRedirect(options: LoopbackRedirectOptions = {}): Promise<LoopbackRedirect> {
  const { port = 0, path = '/callback', timeoutMs = DEFAULT_TIMEOUT_MS, signal } = options;
  if (!path.startsWith('/')) throw new TypeError(`The loopback redirect path must start with '/': ${path}`);
  if (signal?.aborted) throw abortedError('before it started', signal);

  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: HOST, port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const origin = `http://${HOST}:${(server.address() as AddressInfo).port}`;
  const redirectUri = `${origin}${path}`;

  let settled = false;
  let resolveResult!: (url: URL) => void;
  let rejectResult!: (error: Error) => void;
  const result = new Promise<URL>((resolve, reject) => {
    resolveResult = resolve;
    rejectResult = reject;
  });
  result.catch(() => undefined); // the caller may never await it: a timeout must not crash the process

  let timer: ReturnType<typeof setTimeout> | undefined;
  let linger: ReturnType<typeof setTimeout> | undefined;
  let closing: Promise<void> | undefined;
  /** Closes the server; a result still pending rejects with `error` once the port is closed. */
  const stop = (error: Error): Promise<void> => {
    const pending = !settled;
    settled = true;
    closing ??= new Promise<void>((resolve) => {
      clearTimeout(timer);
      clearTimeout(linger);
      signal?.removeEventListener('abort', onAbort);
      server.close(() => resolve());
      server.closeAllConnections(); // a browser's keep-alive socket would hold the server open
    });
    if (pending) void closing.then(() => rejectResult(error));
    return closing;
  };
  const onAbort = (): void => void stop(abortedError(`at ${redirectUri}`, signal!));
  signal?.addEventListener('abort', onAbort, { once: true });
  timer = setTimeout(
    () => void stop(new Error(`No OAuth redirect arrived at ${redirectUri} within ${timeoutMs} ms`)),
    timeoutMs,
  );
  const close = (): Promise<void> =>
    stop(new Error(`The loopback redirect at ${redirectUri} was closed before the browser came back`));

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const callback = callbackUrl(request, origin, path);
    if (!callback) return respond(response, 404, page('Not found', 'Nothing here.'));
    if (settled) return respond(response, 200, page('Already done', 'You can close this tab.'));
    const error = callback.searchParams.get('error');
    if (error === null && !callback.searchParams.has('code'))
      return respond(response, 400, page('Not an authorization response', 'The request carried no code or error.'));
    settled = true;
    // Resolve once the page is out: a caller that closes at once must not cut it off.
    response.once('close', () => resolveResult(callback));
    respond(response, 200, error === null ? successPage() : errorPage(error, callback));
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    linger = setTimeout(() => void close(), LINGER_MS);
    linger.unref();
    server.unref(); // done waiting: the lingering server must not keep the process alive
  });

  return { redirectUri, result, close };
}

/** The callback URL of a GET to our path on our origin, or undefined for anything else. */
function callbackUrl(request: IncomingMessage, origin: string, path: string): URL | undefined {
  if (request.method !== 'GET') return undefined;
  // A page on another origin that rebinds its name to 127.0.0.1 sends its own Host: turn it away.
  if (request.headers.host !== origin.slice('http://'.length)) return undefined;
  let url: URL;
  try {
    url = new URL(request.url ?? '/', origin);
  } catch {
    return undefined;
  }
  if (url.origin !== origin || url.pathname !== path) return undefined;
  return url;
}

function abortedError(when: string, signal: AbortSignal): Error {
  return new Error(`Waiting for the OAuth redirect was aborted ${when}`, { cause: signal.reason });
}

function respond(response: ServerResponse, status: number, html: string): void {
  response.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'cache-control': 'no-store',
    // The URL holds the authorization code: no page this one links to may see it.
    'referrer-policy': 'no-referrer',
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'",
    'x-content-type-options': 'nosniff',
  });
  response.end(html);
}

function successPage(): string {
  return page(
    'Signed in',
    'mcp-switchboard received the authorization. You can close this tab and return to the terminal.',
  );
}

function errorPage(error: string, callback: URL): string {
  const description = callback.searchParams.get('error_description');
  const detail = description === null ? '' : `: ${description}`;
  return page('Authorization failed', `The authorization server answered ${error}${detail}.`);
}

/** A self-contained page: no script, no external resource; `heading` and `message` are escaped here. */
function page(heading: string, message: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(heading)} · mcp-switchboard</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}</style>
</head><body><h1>${escapeHtml(heading)}</h1><p>${escapeHtml(message)}</p></body></html>
`;
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character]!);
}
