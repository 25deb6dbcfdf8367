/**
 * The requests a peer sent us that are being handled: one `RequestContext` each, from creation to the
 * last write of its response. They run their handler, answer (or stay silent once cancelled), honour
 * `notifications/cancelled`, and are all cancelled when the connection closes.
 */
import type { ConnectionState } from '../../machines/connection';
import { isRequestId } from '../jsonrpc/classify';
import { ConnectionClosedError, ErrorCode, RequestCancelledError, toWireError } from '../jsonrpc/errors';
import { clipText, excerpt } from '../jsonrpc/excerpt';
import type {
  JsonObject,
  JsonRpcErrorResponse,
  JsonRpcRequest,
  JsonRpcResponse,
  JsonRpcResultResponse,
  RequestId,
} from '../jsonrpc/types';
import type { CancelledParams } from '../protocol/types';
import type { RequestInstrumentation, RequestOutcome, RequestSpan } from '../trace/instrumentation';
import type { BatchReply } from './batch';
import type { ConnectionTrace } from './connection-trace';
import { RequestContext, type RequestHost } from './request-context';
import type { Transport } from './transport';

/** Serves one inbound request: its result, or a promise of it; what it throws becomes the error response. */
export type RequestHandler<H extends RequestHost = RequestHost> = (
  context: RequestContext<H>,
  params: JsonObject | undefined,
) => unknown;

/** Method -> handler. A null-prototype object, so no inherited key can pose as a method. */
export type HandlerTable<H extends RequestHost = RequestHost> = Readonly<Record<string, RequestHandler<H>>>;

export function handlerTable<H extends RequestHost>(handlers: Record<string, RequestHandler<H>>): HandlerTable<H> {
  return Object.freeze(Object.assign(Object.create(null) as Record<string, RequestHandler<H>>, handlers));
}

/** What the inbound requests use of their connection, besides what their contexts use. */
export interface InboundHost extends RequestHost {
  readonly id: string;
  readonly state: ConnectionState;
  /** Something threw while answering: the connection closes with an `internal-error` quit reason. */
  failInternally(error: unknown): void;
  /** A cancel for a request these records do not hold: true when the role cancelled one of its own. */
  cancelOwnRequest(requestId: RequestId, reason: string | undefined): boolean;
}

/** The connection's options read here (`ConnectionOptions` is one); defaults apply at use, so none is copied. */
export interface InboundLimits {
  /** Requests handled at once; beyond it the peer gets -32603 (`DEFAULT_MAX_CONCURRENT_HANDLERS`). */
  readonly maxConcurrentHandlers?: number;
  /** How long a reply waits after its request's last progress notification (`PROGRESS_REPLY_DELAY_MS`). */
  readonly progressReplyDelayMs?: number;
}

export const DEFAULT_MAX_CONCURRENT_HANDLERS = 10_000;

export class InboundRequests {
  private readonly handling = new Map<RequestId, RequestContext>();

  constructor(
    private readonly host: InboundHost,
    private readonly transport: Transport,
    private readonly trace: ConnectionTrace,
    private readonly instrumentation: RequestInstrumentation | undefined,
    private readonly limits: InboundLimits,
  ) {}

  /** Requests whose handlers have not finished. */
  get size(): number {
    return this.handling.size;
  }

  /** The span of request `id` in flight, when it has one (the parent of requests made for it). */
  spanOf(id: RequestId): RequestSpan | undefined {
    return this.handling.get(id)?.traceSpan;
  }

  /** Runs `handler` for a request the gate let through, unless its id is in use or the limit is reached. */
  serve(message: JsonRpcRequest, handler: RequestHandler<any>, batch: BatchReply | undefined): void {
    const id = message.id;
    if (this.handling.has(id)) {
      const why = `Request id ${excerpt(id)} is already in use by a request in flight`;
      return this.refuse(message, ErrorCode.InvalidRequest, why, batch);
    }
    const max = this.limits.maxConcurrentHandlers ?? DEFAULT_MAX_CONCURRENT_HANDLERS;
    if (this.handling.size >= max) {
      const why = `Too many requests in flight (limit ${max})`;
      return this.refuse(message, ErrorCode.InternalError, why, batch);
    }
    const trace = this.trace;
    const span = trace.startInboundSpan(this.instrumentation, message);
    const startedAt = trace.on ? this.host.clock.now() : 0;
    const params = message.params;
    const context = new RequestContext(this.host, id, message.method, params, startedAt, batch, span);
    this.handling.set(id, context);
    batch?.expect();
    let result: unknown;
    try {
      result = span?.run ? span.run(() => handler(context, params)) : handler(context, params);
    } catch (error) {
      this.answerError(context, error);
      return;
    }
    if (isThenable(result)) {
      result.then(
        (value) => this.settle(context, value, false),
        (error) => this.settle(context, error, true),
      );
    } else {
      this.answer(context, result);
    }
  }

  /** Answers a request with an error instead of serving it (its span, if any, starts and ends here). */
  refuse(message: JsonRpcRequest, code: number, why: string, batch: BatchReply | undefined): void {
    const span = this.trace.startInboundSpan(this.instrumentation, message);
    if (span) this.trace.endSpan(span, { kind: 'error', error: { code, message: why } });
    this.sendError(message.id, code, why, batch);
  }

  /** `notifications/cancelled`: the request stops being answered and its context is cancelled. */
  cancel(params: CancelledParams | undefined): void {
    const requestId = params?.requestId;
    const context = isRequestId(requestId) ? this.handling.get(requestId) : undefined;
    const reason = typeof params?.reason === 'string' ? params.reason : undefined;
    if (!context && isRequestId(requestId) && this.host.cancelOwnRequest(requestId, reason)) return;
    if (!context || context.method === 'initialize') {
      this.trace.message(
        'ignored',
        'in',
        params,
        'notifications/cancelled',
        requestId,
        'No cancellable request has this id',
      );
      return;
    }
    this.handling.delete(context.id);
    context.cancel(new RequestCancelledError(context.method, reason));
  }

  /** The connection is closing: every request in flight is cancelled and gets no answer. */
  cancelAll(quitMessage: string): void {
    if (this.handling.size === 0) return;
    const reason = new ConnectionClosedError(`Connection closed: ${quitMessage}`);
    for (const context of this.handling.values()) context.cancel(reason);
    this.handling.clear();
  }

  /** An error response to a request we do not serve (or to a message that is no request at all). */
  sendError(id: RequestId | undefined, code: number, message: string, batch: BatchReply | undefined): void {
    const response: JsonRpcErrorResponse =
      id === undefined
        ? { jsonrpc: '2.0', error: { code, message } }
        : { jsonrpc: '2.0', id, error: { code, message } };
    this.trace.message('error', 'out', response, undefined, id);
    if (batch) batch.reject(response);
    else this.transmit(response, id);
  }

  /** An async handler finished: its answer, outside the router's guard, so guarded here. */
  private settle(context: RequestContext, outcome: unknown, failed: boolean): void {
    try {
      if (failed) this.answerError(context, outcome);
      else this.answer(context, outcome);
    } catch (error) {
      this.host.failInternally(error);
    }
  }

  private answer(context: RequestContext, value: unknown): void {
    if (!this.finish(context)) return;
    const result = (value === undefined || value === null ? {} : value) as JsonObject;
    const response: JsonRpcResultResponse = { jsonrpc: '2.0', id: context.id, result };
    this.replyAfterProgress(context, response, 'result');
  }

  private answerError(context: RequestContext, error: unknown): void {
    if (!this.finish(context)) return;
    if (!(error instanceof Error && 'code' in error && typeof error.code === 'number')) {
      this.host.logger.debug(`Handler for ${context.method} failed`, error);
    }
    const response: JsonRpcErrorResponse = { jsonrpc: '2.0', id: context.id, error: toWireError(error) };
    this.replyAfterProgress(context, response, 'error');
  }

  /** Ends a handler's record; false when its answer must not be sent (cancelled, or the connection closed). */
  private finish(context: RequestContext): boolean {
    if (this.handling.get(context.id) === context) this.handling.delete(context.id);
    if (!context.finish()) {
      context.batch?.skip();
      this.trace.message(
        'ignored',
        'out',
        undefined,
        context.method,
        context.id,
        'The request was cancelled: no response is sent',
      );
      return false;
    }
    return this.host.state !== 'closed';
  }

  /**
   * Replies at once, except to a request that sent progress: then the reply waits until the last progress
   * notification was handed to the transport, and `progressReplyDelayMs` more, so it leaves in a later
   * write that the peer reads apart. SDK v1 clients drop a progress notification that arrives in the same
   * chunk as its result (they dispatch notifications a microtask late, responses at once). Requests without
   * progress pay nothing.
   */
  private replyAfterProgress(context: RequestContext, response: JsonRpcResponse, kind: 'result' | 'error'): void {
    const progressSent = context.progressSent;
    if (progressSent === undefined) {
      this.reply(context, response, kind);
      return;
    }
    const delay = () => afterDelay(this.limits.progressReplyDelayMs ?? PROGRESS_REPLY_DELAY_MS);
    progressSent
      .then(delay, delay)
      .then(() => this.reply(context, response, kind))
      .then(undefined, (error: unknown) => this.host.failInternally(error));
  }

  private reply(context: RequestContext, response: JsonRpcResponse, kind: 'result' | 'error'): void {
    const span = context.traceSpan;
    if (span) {
      const outcome: RequestOutcome =
        kind === 'result'
          ? { kind, result: (response as JsonRpcResultResponse).result }
          : { kind, error: (response as JsonRpcErrorResponse).error };
      this.trace.endSpan(span, outcome);
    }
    if (this.trace.on) {
      const latency = context.startedAt ? this.host.clock.now() - context.startedAt : undefined;
      this.trace.message(kind, 'out', response, context.method, context.id, undefined, latency);
    }
    if (context.batch) context.batch.answer(response);
    else this.transmit(response, context.id);
  }

  private transmit(response: JsonRpcResponse, relatedRequestId: RequestId | undefined): void {
    if (this.host.state === 'closed') return;
    let sent: Promise<void>;
    try {
      sent = this.transport.send(response, relatedRequestId === undefined ? undefined : { relatedRequestId });
    } catch (error) {
      sent = Promise.reject(error); // a transport must not throw; one that does fails this response only
    }
    sent.then(undefined, (error) => this.onSendFailure(response, relatedRequestId, error));
  }

  /**
   * A response could not be sent. While the connection is open that is this response's fault (a result
   * JSON cannot encode: a cycle, nesting too deep): the request gets an error in its place, so the peer
   * is not left waiting. A failed error response, or any failure once closing, is only logged.
   */
  private onSendFailure(response: JsonRpcResponse, relatedRequestId: RequestId | undefined, error: unknown): void {
    const id = response.id;
    const state = this.host.state;
    if (!('result' in response) || id === undefined || state === 'closing' || state === 'closed') {
      this.host.logger.debug('Could not send a response', error);
      return;
    }
    const cause = (error as Error)?.cause ?? error;
    const why = clipText((cause as Error)?.message ?? String(cause));
    this.host.logger.warn(`Connection ${this.host.id}: the result of request ${excerpt(id)} could not be sent: ${why}`);
    const replacement: JsonRpcErrorResponse = {
      jsonrpc: '2.0',
      id,
      error: { code: ErrorCode.InternalError, message: `Internal error: the result could not be sent: ${why}` },
    };
    this.trace.message('error', 'out', replacement, undefined, id, 'The result could not be sent');
    this.transmit(replacement, relatedRequestId);
  }
}

/**
 * How long a response waits after its request's last progress notification was handed to the transport.
 * A later write is not enough across a pipe: a reader that wakes late reads both writes as one chunk, and
 * SDK v1 clients drop progress that shares a chunk with its result. 10 ms covers a reader's wake-up on a
 * loaded machine (measured: a macrotask was not enough for the SDK's stdio client); only requests that
 * reported progress pay it, and they are the long-running ones.
 */
export const PROGRESS_REPLY_DELAY_MS = 10;

/**
 * The platform's own timer, captured at load: this is a yield to the I/O of other processes, not a
 * timeout, so fake timers a test installs later must not hold responses back.
 */
const platformSetTimeout = globalThis.setTimeout;

function afterDelay(ms: number): Promise<void> {
  return new Promise((resolve) => platformSetTimeout(resolve, ms));
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | undefined)?.then === 'function';
}
