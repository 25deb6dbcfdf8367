/**
 * The way back of a modern (2026-07-28) request over Streamable HTTP: the POST's own response. A JSON body
 * when the answer comes first; an SSE stream (`X-Accel-Buffering: no`, no event ids: nothing is resumed)
 * once a notification precedes it. The requester closing the response cancels the request.
 */
import type { ServerResponse } from 'node:http';
import type { ExchangeReply } from '../../lib/core/exchange';
import { ConnectionClosedError, ErrorCode } from '../../lib/jsonrpc/errors';
import type { JsonRpcErrorResponse, JsonRpcNotification, JsonRpcResponse } from '../../lib/jsonrpc/types';
import { encodeSseEvent } from './sse';
import { encodeOutbound, KeepAlive, writeChunk } from './sse-stream';
import { endWithJson } from './request-guard';

const STREAM_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

/**
 * The HTTP status of an error answered as JSON. The envelope rungs the classifier refuses never get here;
 * what a handler or the exchange refuses keeps 200, except the two the revision sends as HTTP errors: a
 * capability the request did not declare (400) and a method not served (404).
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
    private readonly response: ServerResponse,
    private readonly keepAliveMs: number,
  ) {
    response.once('close', () => this.closed());
  }

  notify(message: JsonRpcNotification): Promise<void> {
    if (this.answered || this.abortReason) return Promise.resolve();
    const response = this.response;
    if (!this.streaming) {
      this.streaming = true;
      response.writeHead(200, STREAM_HEADERS);
      this.keepAlive = new KeepAlive(response, this.keepAliveMs);
    }
    this.keepAlive!.touch();
    return writeChunk(response, encodeSseEvent({ event: 'message', data: encodeOutbound(message) }));
  }

  answer(message: JsonRpcResponse): Promise<void> {
    if (this.answered) return Promise.resolve();
    this.answered = true;
    const response = this.response;
    if (this.abortReason || response.destroyed) return Promise.resolve();
    const body = encodeOutbound(message);
    if (this.streaming) {
      this.keepAlive!.stop();
      response.end(encodeSseEvent({ event: 'message', data: body }));
    } else endWithJson(response, statusOf(message), body);
    return Promise.resolve();
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
export function answerRefusal(response: ServerResponse, status: number, message: JsonRpcErrorResponse): void {
  endWithJson(response, status, encodeOutbound(message));
}
