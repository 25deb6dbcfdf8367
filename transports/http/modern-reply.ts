/**
 * The way back of a modern (2026-07-28) request over Streamable HTTP: the POST's own response, by the
 * endpoint's `responseMode`, as in the handshake era: `auto`, a JSON body when the answer comes first and an
 * SSE stream (`X-Accel-Buffering: no`, no event ids: nothing is resumed) once a notification precedes it;
 * `sse`, always a stream; `json`, always a JSON body, so the notifications before it are not sent (a
 * stateless request has no other stream to carry them). The requester closing the response cancels the
 * request.
 */
import type { ServerReply, ServerRequest } from './server-port';
import type { TracedNetwork } from '../../lib/trace/instrumentation';
import { httpServerNetwork } from './network';
import type { ExchangeReply } from '../../lib/core/exchange';
import { ConnectionClosedError, ErrorCode } from '../../lib/jsonrpc/errors';
import type { JsonRpcErrorResponse, JsonRpcNotification, JsonRpcResponse, RequestId } from '../../lib/jsonrpc/types';
import { encodeSseEvent } from './sse';
import { encodeOutbound, KeepAlive, writeChunk } from './sse-stream';
import { endWithJson } from './request-guard';
import type { ResponseMode } from './http-session';

const STREAM_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

/**
 * The HTTP status of an error answered as JSON. The envelope rungs the classifier refuses never get here;
 * what a handler or the request refuses keeps 200, except the codes the revision sends as HTTP errors: a
 * capability the request did not declare, a header that contradicts the body, an unsupported revision
 * (400), and a method not served (404).
 */
function statusOf(response: JsonRpcResponse): number {
  if (!('error' in response)) return 200;
  switch (response.error.code) {
    case ErrorCode.MissingRequiredClientCapability:
    case ErrorCode.HeaderMismatch:
    case ErrorCode.UnsupportedProtocolVersion:
      return 400;
    case ErrorCode.MethodNotFound:
      return 404;
    default:
      return 200;
  }
}

export class HttpExchangeReply implements ExchangeReply {
  private streaming = false;
  private answered = false;
  private abortHooks: ((reason: Error) => void)[] | undefined;
  private abortReason: Error | undefined;
  private keepAlive: KeepAlive | undefined;

  /** `keepAliveMs`: SSE comments on a stream idle that long (a `subscriptions/listen` stream can idle for hours). */
  constructor(
    private readonly response: ServerReply,
    private readonly keepAliveMs: number,
    private readonly mode: ResponseMode = 'auto',
    /** The POST: its socket names the requester, for the request's span. */
    private readonly request?: ServerRequest,
  ) {
    response.once('close', () => this.closed());
  }

  get network(): TracedNetwork | undefined {
    return this.request && httpServerNetwork(this.request);
  }

  notify(message: JsonRpcNotification): Promise<void> {
    if (this.answered || this.abortReason || this.mode === 'json') return Promise.resolve();
    this.openStream();
    this.keepAlive!.touch();
    return writeChunk(this.response, encodeSseEvent({ event: 'message', data: encodeOutbound(message) }));
  }

  answer(message: JsonRpcResponse): Promise<void> {
    if (this.answered) return Promise.resolve();
    this.answered = true;
    const response = this.response;
    if (this.abortReason || response.destroyed) return Promise.resolve();
    const body = encodeOutbound(message);
    if (this.mode === 'sse') this.openStream();
    if (this.streaming) {
      this.keepAlive!.stop();
      response.end(encodeSseEvent({ event: 'message', data: body }));
    } else endWithJson(response, statusOf(message), body);
    return Promise.resolve();
  }

  private openStream(): void {
    if (this.streaming) return;
    this.streaming = true;
    this.response.writeHead(200, STREAM_HEADERS);
    this.keepAlive = new KeepAlive(this.response, this.keepAliveMs);
  }

  onAbort(hook: (reason: Error) => void): void {
    if (this.abortReason) return hook(this.abortReason);
    if (this.answered) return;
    (this.abortHooks ??= []).push(hook);
  }

  private closed(): void {
    if (this.answered && this.response.writableFinished) return;
    this.abortReason = new ConnectionClosedError('The requester closed the response stream');
    const hooks = this.abortHooks;
    this.abortHooks = undefined;
    if (hooks) for (const hook of hooks) hook(this.abortReason);
  }
}

/** Answers a modern request the classifier refused, with the status it chose. */
export function answerRefusal(response: ServerReply, status: number, message: JsonRpcErrorResponse): void {
  endWithJson(response, status, encodeOutbound(message));
}

/**
 * `subscriptions/listen` on an endpoint that answers JSON only (`responseMode: 'json'`): the stream is the
 * whole of that method, so it is refused (-32601, 404) rather than answered without its notifications.
 */
export function refuseListenAsJson(response: ServerReply, id: RequestId): void {
  const message = 'Method not found: subscriptions/listen needs a stream, and this endpoint answers JSON only';
  answerRefusal(response, 404, { jsonrpc: '2.0', id, error: { code: ErrorCode.MethodNotFound, message } });
}
