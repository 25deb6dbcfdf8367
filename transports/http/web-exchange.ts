/**
 * The server port (server-port.ts) over the web platform: a fetch `Request` read as a `ServerRequest`, and a
 * `ServerReply` that becomes the `Response` the fetch handler resolves with, as soon as the transport has
 * said enough: a whole body (`end`) or the start of a stream (`flushHeaders`, `write`). A stream is a
 * `ReadableStream` of bytes; the runtime reading it slowly is backpressure (`write` returns false until the
 * queue drains), the client going away cancels it (`close`). No `node:` module: Bun, Deno, Workers and Hono
 * run it as Node does.
 */
import { EventEmitter } from 'eventemitter3';
import type { RequestHeaders, ServerReply, ServerRequest } from './server-port';

/** Bytes queued on a stream before `write` says the client is behind. */
const STREAM_HIGH_WATER_BYTES = 64 * 1024;

/** Headers the runtime owns: it frames the body and the connection itself. */
const RUNTIME_HEADERS = new Set(['connection', 'keep-alive', 'transfer-encoding']);

const encoder = new TextEncoder();

/**
 * Headers whose repetition must be seen (two credentials are refused), which fetch joins into one value with
 * `, `: split again. Neither a Bearer or DPoP token nor a DPoP proof can hold a comma.
 */
const REPEATABLE_CREDENTIALS = new Set(['authorization', 'dpop']);

/** A fetch `Request` as the transports read one. */
export class WebRequest implements ServerRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: RequestHeaders;
  readonly rawHeaders: string[] = [];
  readonly socket: { readonly remoteAddress?: string };
  private readonly events = new EventEmitter<{ data: [Uint8Array]; end: []; error: [] }>();
  private reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
  private reading = false;

  constructor(
    private readonly request: Request,
    remoteAddress: string | undefined,
  ) {
    this.method = request.method;
    const url = new URL(request.url);
    this.url = url.pathname + url.search;
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
      if (REPEATABLE_CREDENTIALS.has(name)) for (const one of value.split(',')) this.rawHeaders.push(name, one.trim());
      else this.rawHeaders.push(name, value);
    });
    // A Request made in code has no Host header (fetch adds it when sending): the URL names the host.
    if (headers.host === undefined) {
      headers.host = url.host;
      this.rawHeaders.push('host', url.host);
    }
    this.headers = headers;
    this.socket = { remoteAddress };
  }

  /** Listening for the body starts reading it (on the next microtask, once every listener is on). */
  on(event: 'data' | 'end' | 'error', listener: (chunk: Uint8Array) => void): this {
    this.events.on(event, listener as () => void);
    if (!this.reading) {
      this.reading = true;
      queueMicrotask(() => void this.readBody());
    }
    return this;
  }

  /** The answer is out before the body was read (refused for its size or time): reading it is useless. */
  stopReading(): void {
    this.reading = true;
    void this.reader?.cancel().catch(() => undefined);
  }

  private async readBody(): Promise<void> {
    const body = this.request.body;
    if (!body) return void this.events.emit('end');
    const reader = (this.reader = body.getReader());
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return void this.events.emit('end');
        this.events.emit('data', value);
      }
    } catch {
      this.events.emit('error');
    }
  }
}

/**
 * The answer being written, as the transports write one; `response` resolves with the fetch `Response` as
 * soon as its status and headers are settled and the body is whole or starts streaming.
 */
export class WebReply extends EventEmitter<{ close: []; drain: [] }> implements ServerReply {
  readonly response: Promise<Response>;
  headersSent = false;
  destroyed = false;
  closed = false;
  writableEnded = false;
  writableFinished = false;
  writableNeedDrain = false;
  private status = 200;
  private readonly headers = new Headers();
  private stream: ReadableStreamDefaultController<Uint8Array> | undefined;
  private resolve!: (response: Response) => void;

  constructor() {
    super();
    this.response = new Promise((resolve) => (this.resolve = resolve));
  }

  setHeader(name: string, value: string | number | readonly string[]): this {
    if (this.headersSent || RUNTIME_HEADERS.has(name.toLowerCase())) return this;
    if (typeof value === 'object') {
      this.headers.delete(name);
      for (const one of value) this.headers.append(name, one);
    } else this.headers.set(name, String(value));
    return this;
  }

  writeHead(status: number, headers?: Record<string, string | number> | string[]): this {
    this.status = status;
    if (Array.isArray(headers)) {
      for (let index = 0; index < headers.length; index += 2) this.setHeader(headers[index]!, headers[index + 1]!);
    } else if (headers) for (const name of Object.keys(headers)) this.setHeader(name, headers[name]!);
    return this;
  }

  flushHeaders(): void {
    this.startStream();
  }

  write(chunk: string): boolean {
    if (this.writableEnded || this.destroyed) return false;
    const stream = this.startStream();
    stream.enqueue(encoder.encode(chunk));
    this.writableNeedDrain = (stream.desiredSize ?? 0) <= 0;
    return !this.writableNeedDrain;
  }

  end(chunk?: string): this {
    if (this.writableEnded || this.destroyed) return this;
    this.writableEnded = true;
    if (this.stream) {
      if (chunk) this.stream.enqueue(encoder.encode(chunk));
      this.stream.close();
    } else this.answer(chunk ?? null);
    this.writableFinished = true;
    this.closeSoon();
    return this;
  }

  destroy(): this {
    if (this.destroyed) return this;
    this.destroyed = true;
    if (this.stream && !this.writableEnded) this.stream.error(new Error('The answer was dropped'));
    // A client that is still there sees the exchange fail, as a dropped connection does on Node.
    else if (!this.headersSent) this.resolve(Response.error());
    this.headersSent = true;
    this.closeSoon();
    return this;
  }

  /** The client went away: the stream is cancelled (or the request aborted). */
  gone(): void {
    if (this.closed) return;
    this.destroyed = true;
    this.closeSoon();
  }

  private answer(body: string | null): void {
    this.headersSent = true;
    this.resolve(new Response(body, { status: this.status, headers: this.headers }));
  }

  private startStream(): ReadableStreamDefaultController<Uint8Array> {
    if (this.stream) return this.stream;
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>(
      {
        start: (given) => void (controller = given),
        pull: () => this.drained(),
        cancel: () => this.gone(),
      },
      { highWaterMark: STREAM_HIGH_WATER_BYTES, size: (chunk) => chunk.byteLength },
    );
    this.stream = controller;
    this.headersSent = true;
    this.resolve(new Response(body, { status: this.status, headers: this.headers }));
    return controller;
  }

  private drained(): void {
    if (!this.writableNeedDrain) return;
    this.writableNeedDrain = false;
    this.emit('drain');
  }

  /** `close` after the current turn, as Node emits it once the answer is out. */
  private closeSoon(): void {
    if (this.closed) return;
    this.closed = true;
    queueMicrotask(() => this.emit('close'));
  }
}

/**
 * The remote address a runtime passes beside the request, where it does: Deno's `info.remoteAddr`, Bun's
 * `server.requestIP(request)`, @hono/node-server's `env.incoming.socket`. Undefined elsewhere (Workers).
 */
export function remoteAddressOf(request: Request, context: unknown): string | undefined {
  if (typeof context !== 'object' || context === null) return undefined;
  const given = context as {
    remoteAddr?: { hostname?: unknown };
    requestIP?: (request: Request) => { address?: unknown } | null | undefined;
    incoming?: { socket?: { remoteAddress?: unknown } };
  };
  const address =
    given.remoteAddr?.hostname ??
    (typeof given.requestIP === 'function' ? given.requestIP(request)?.address : undefined) ??
    given.incoming?.socket?.remoteAddress;
  return typeof address === 'string' ? address : undefined;
}
