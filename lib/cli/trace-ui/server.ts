/**
 * The trace UI's HTTP listener (`serve … --trace-ui <port>`): the viewer page at `/`, the runtime's trace as
 * Server-Sent Events at `/events` (the recent past first, from a ring of the last `ringEvents`, then live, in
 * batches every `batchMs`), and `/status` (what is held, per page). Memory stays bounded whatever the pages
 * do: the ring and each page's queue have a bound in events and in characters, a page that does not read gets
 * nothing written until its socket drains and loses its oldest queued events (counted, and told) meanwhile.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNdjsonLine } from '../../trace/sinks/ndjson';
import type { TraceSink } from '../../trace/sinks/sink';
import type { TraceEvent } from '../../trace/types';
import { LIVE_PAGE_POLICY } from '../../trace/viewer/page';
import { listenHttp, type HttpListener } from '../http-listener';
import { BoundedLog } from './bounded-log';
import { refusal, type Guard } from './guard';

export interface TraceUiLimits {
  /** Events kept for a page that connects later (default 10,000). */
  readonly ringEvents: number;
  /** Events queued for one page that has not read them yet (default 10,000). */
  readonly pageEvents: number;
  /** Characters (of serialized events) kept in the ring (default 32 Mi). */
  readonly chars: number;
  /** Characters queued for one page (default 8 Mi). */
  readonly pageChars: number;
  /** An event longer than this when serialized has its message replaced by a note (default 256 Ki). */
  readonly eventChars: number;
  /** How often queued events go out, as one message per page (default 50 ms). */
  readonly batchMs: number;
  /** Pages reading at the same time (default 16); more are refused (503). */
  readonly pages: number;
}

export const DEFAULT_TRACE_UI_LIMITS: TraceUiLimits = {
  ringEvents: 10_000,
  pageEvents: 10_000,
  chars: 32 * 1024 * 1024,
  pageChars: 8 * 1024 * 1024,
  eventChars: 256 * 1024,
  batchMs: 50,
  pages: 16,
};

/** The most events, and characters, one Server-Sent Events message carries. */
const MESSAGE_EVENTS = 5000;
const MESSAGE_CHARS = 1024 * 1024;

const COMMON_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** What `/status` says: the ring and each reading page's queue. */
export interface TraceUiStatus {
  readonly ring: { readonly events: number; readonly chars: number };
  readonly pages: readonly {
    readonly queued: number;
    readonly queuedChars: number;
    readonly dropped: number;
    readonly unsentBytes: number;
  }[];
}

/** One page reading `/events`. */
class PageStream {
  readonly queue: BoundedLog;
  private replayLeft: number;
  private waiting = false;
  private started = false;

  constructor(
    readonly response: ServerResponse,
    past: readonly string[],
    limits: TraceUiLimits,
  ) {
    this.queue = new BoundedLog(limits.pageEvents, limits.pageChars);
    for (const line of past) this.queue.push(line);
    this.replayLeft = this.queue.length;
  }

  /** Writes what is queued as one message, unless the socket has not drained since the last one. */
  flush(): void {
    if (this.waiting || (this.started && this.queue.length === 0)) return;
    const replay = this.replayLeft > 0 || !this.started;
    const lines = this.queue.take(replay ? Math.min(this.replayLeft, MESSAGE_EVENTS) : MESSAGE_EVENTS, MESSAGE_CHARS);
    this.replayLeft = Math.max(0, Math.min(this.replayLeft - lines.length, this.queue.length));
    this.started = true;
    const data = `{"replay":${replay},"dropped":${this.queue.evicted},"events":[${lines.join(',')}]}`;
    if (!this.response.write(`event: batch\ndata: ${data}\n\n`)) {
      this.waiting = true;
      this.response.once('drain', () => (this.waiting = false));
    }
  }
}

/** The listener and the trace it serves: a `TraceSink` (the command's trace feeds it, see lib/cli/trace.ts). */
export class TraceUiServer implements TraceSink {
  private readonly ring: BoundedLog;
  private readonly pages = new Set<PageStream>();
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  private constructor(
    private readonly listener: HttpListener,
    private readonly page: string,
    private readonly guard: Guard,
    private readonly limits: TraceUiLimits,
  ) {
    this.ring = new BoundedLog(limits.ringEvents, limits.chars);
    this.timer = setInterval(() => {
      for (const page of this.pages) page.flush();
    }, limits.batchMs);
    this.timer.unref();
  }

  /**
   * Listens on `host`:`port` (0: a free port; the HTTP server's connection caps and timeouts as `serve --http`
   * has them), serving `page` (the live viewer page); `token`, when given, is required of every request.
   * Rejects with a `CliFailure` when it cannot listen.
   */
  static async listen(
    options: { port: number; host: string; page: string; token?: string },
    limits: Partial<TraceUiLimits> = {},
  ): Promise<TraceUiServer> {
    let ui: TraceUiServer | undefined;
    const listener = await listenHttp((request, response) => ui!.answer(request, response), options.port, options.host);
    const guard = {
      port: Number(new URL(listener.origin).port),
      ...(options.token !== undefined && { token: options.token }),
    };
    ui = new TraceUiServer(listener, options.page, guard, { ...DEFAULT_TRACE_UI_LIMITS, ...limits });
    return ui;
  }

  /** The port listened on. */
  get port(): number {
    return this.guard.port;
  }

  next(event: TraceEvent): void {
    if (this.closed) return;
    const line = this.serialize(event);
    this.ring.push(line);
    for (const page of this.pages) page.queue.push(line);
  }

  error(): void {}

  complete(): void {}

  status(): TraceUiStatus {
    return {
      ring: { events: this.ring.length, chars: this.ring.chars },
      pages: [...this.pages].map((page) => ({
        queued: page.queue.length,
        queuedChars: page.queue.chars,
        dropped: page.queue.evicted,
        unsentBytes: page.response.writableLength,
      })),
    };
  }

  /** Tells every page the server stops, ends their streams and the listener; resolves once it is closed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    for (const page of this.pages) {
      page.flush();
      page.response.end('event: end\ndata: {}\n\n');
    }
    this.pages.clear();
    await this.listener.close();
  }

  /** The event as one line of JSON, as `--trace-file` writes it; a long one without its message. */
  private serialize(event: TraceEvent): string {
    const line = toNdjsonLine(event);
    if (line.length <= this.limits.eventChars) return line;
    return toNdjsonLine({ ...event, message: `[a message of ${line.length} characters, too long for the live view]` });
  }

  private answer(request: IncomingMessage, response: ServerResponse): void {
    const url = new URL(request.url ?? '/', 'http://trace-ui.invalid');
    const refused = refusal(request, url, this.guard);
    if (refused) return plain(response, refused.status, refused.text);
    if (request.method !== 'GET') {
      response.setHeader('allow', 'GET');
      return plain(response, 405, 'Only GET\n');
    }
    switch (url.pathname) {
      case '/':
        response.writeHead(200, {
          ...COMMON_HEADERS,
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy': `${LIVE_PAGE_POLICY}; frame-ancestors 'none'`,
        });
        return void response.end(this.page);
      case '/events':
        return this.stream(response);
      case '/status':
        response.writeHead(200, { ...COMMON_HEADERS, 'content-type': 'application/json' });
        return void response.end(JSON.stringify(this.status()));
      default:
        return plain(response, 404, 'Not found: the trace UI is at /\n');
    }
  }

  private stream(response: ServerResponse): void {
    if (this.closed) return plain(response, 503, 'The server is stopping\n');
    if (this.pages.size >= this.limits.pages) {
      return plain(response, 503, `${this.limits.pages} pages are reading the trace already\n`);
    }
    response.writeHead(200, { ...COMMON_HEADERS, 'content-type': 'text/event-stream' });
    const page = new PageStream(response, this.ring.snapshot(), this.limits);
    this.pages.add(page);
    response.once('close', () => this.pages.delete(page));
    page.flush();
  }
}

function plain(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { ...COMMON_HEADERS, 'content-type': 'text/plain; charset=utf-8' });
  response.end(text);
}
