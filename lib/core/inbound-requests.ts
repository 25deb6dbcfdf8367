/**
 * The requests a peer sent on one connection that are being handled, whatever the era of each: one
 * `RequestContext` each, from creation to the last write of its answer. Their handlers run through the one
 * handler run (handler-run.ts), with this table as their way back (the connection's transport, or the
 * batch a request came in); they honour `notifications/cancelled`, and are all cancelled when the
 * connection closes.
 */
import type { ConnectionState } from '../../machines/connection';
import { isRequestId } from '../jsonrpc/classify';
import { ConnectionClosedError, ErrorCode, RequestCancelledError } from '../jsonrpc/errors';
import { excerpt } from '../jsonrpc/excerpt';
import type { JsonRpcErrorResponse, JsonRpcRequest, JsonRpcResponse, RequestId } from '../jsonrpc/types';
import type { CancelledParams } from '../protocol/types';
import type { RequestInstrumentation, RequestSpan } from '../trace/instrumentation';
import type { BatchReply } from './batch';
import type { Clock } from './clock';
import type { ConnectionTrace } from './connection-trace';
import { runHandler, type RequestHandler, type RunChannel } from './handler-run';
import type { Logger } from './logger';
import { RequestContext, type RequestHost } from './request-context';
import type { Transport } from './transport';

export { PROGRESS_REPLY_DELAY_MS, type RequestHandler } from './handler-run';

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
}

/** The connection's options read here (`ConnectionOptions` is one); defaults apply at use, so none is copied. */
export interface InboundLimits {
  /** Requests handled at once; beyond it the peer gets -32603 (`DEFAULT_MAX_CONCURRENT_HANDLERS`). */
  readonly maxConcurrentHandlers?: number;
  /** How long a reply waits after its request's last progress notification (`PROGRESS_REPLY_DELAY_MS`). */
  readonly progressReplyDelayMs?: number;
}

export const DEFAULT_MAX_CONCURRENT_HANDLERS = 10_000;

export class InboundRequests implements RunChannel {
  private readonly handling = new Map<RequestId, RequestContext<any>>();

  constructor(
    private readonly host: InboundHost,
    private readonly transport: Transport,
    readonly trace: ConnectionTrace,
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
    const context = this.admit(message, this.host, batch);
    if (context) runHandler(this, context, handler);
  }

  /**
   * Records a request served by `host` (the connection, or a stateless request's own host) and returns its
   * context, which the caller runs (`runHandler`) or answers; or refuses it (its id in use, or the limit
   * reached) and returns undefined.
   */
  admit<H extends RequestHost>(
    message: JsonRpcRequest,
    host: H,
    batch: BatchReply | undefined,
  ): RequestContext<H> | undefined {
    const id = message.id;
    if (this.handling.has(id)) {
      const why = `Request id ${excerpt(id)} is already in use by a request in flight`;
      return void this.refuse(message, ErrorCode.InvalidRequest, why, batch);
    }
    const max = this.limits.maxConcurrentHandlers ?? DEFAULT_MAX_CONCURRENT_HANDLERS;
    if (this.handling.size >= max) {
      const why = `Too many requests in flight (limit ${max})`;
      return void this.refuse(message, ErrorCode.InternalError, why, batch);
    }
    const span = this.trace.startInboundSpan(this.instrumentation, message);
    const startedAt = this.trace.on ? this.host.clock.now() : 0;
    const context = new RequestContext(host, id, message.method, message.params, startedAt, batch, span);
    this.handling.set(id, context);
    batch?.expect();
    return context;
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
    const reason = typeof params?.reason === 'string' ? params.reason : undefined;
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
    else this.transmit(response, id).catch((error) => this.host.logger.debug('Could not send a response', error));
  }

  // ---- the way back of the runs (RunChannel) ------------------------------------------------------------

  get logger(): Logger {
    return this.host.logger;
  }

  get clock(): Clock {
    return this.host.clock;
  }

  get progressReplyDelayMs(): number | undefined {
    return this.limits.progressReplyDelayMs;
  }

  get canReplace(): boolean {
    const state = this.host.state;
    return state !== 'closing' && state !== 'closed';
  }

  release(context: RequestContext<any>): boolean {
    if (this.handling.get(context.id) === context) this.handling.delete(context.id);
    return this.host.state !== 'closed';
  }

  deliver(response: JsonRpcResponse, context: RequestContext<any>): Promise<void> {
    return this.transmit(response, context.id);
  }

  failInternally(error: unknown): void {
    this.host.failInternally(error);
  }

  private transmit(response: JsonRpcResponse, relatedRequestId: RequestId | undefined): Promise<void> {
    if (this.host.state === 'closed') return Promise.resolve();
    return this.transport.send(response, relatedRequestId === undefined ? undefined : { relatedRequestId });
  }
}
