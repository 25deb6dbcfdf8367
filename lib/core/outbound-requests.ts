/**
 * The requests we sent that wait for their response: the correlation table (one record per request, one
 * `settle`), the messages that carry them, what their responses do, and progress on them.
 */
import type { ConnectionState } from '../../machines/connection';
import { isRequestId } from '../jsonrpc/classify';
import {
  ConnectionClosedError,
  LimitExceededError,
  ProtocolViolationError,
  RequestCancelledError,
  TransportError,
} from '../jsonrpc/errors';
import { clipText, excerpt } from '../jsonrpc/excerpt';
import type {
  JsonObject,
  JsonRpcErrorResponse,
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResultResponse,
  RequestId,
} from '../jsonrpc/types';
import type { ProgressParams } from '../protocol/types';
import { withMetaEntries, type RequestInstrumentation, type RequestSpan } from '../trace/instrumentation';
import type { TraceCause } from '../trace/types';
import type { Clock } from './clock';
import type { ConnectionTrace } from './connection-trace';
import {
  CorrelationTable,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type CorrelationHost,
  type RequestCompletion,
  type RequestOptions,
  type ResultCheck,
} from './correlation';
import type { Logger } from './logger';
import type { RequestContext } from './request-context';
import type { Transport, TransportSendOptions } from './transport';

export interface SendOptions extends RequestOptions, TransportSendOptions {
  /**
   * The inbound request (on any connection) this request is made for: with an instrumentation, its span
   * is the parent of this one's (a hub forwarding a call passes the downstream request's context). A
   * request made through `ctx.request` needs none: its `relatedRequestId` names the parent.
   */
  readonly parentRequest?: RequestContext<any>;
  /**
   * Called with the request's JSON-RPC id before it is sent: a `subscriptions/listen` stream's notifications
   * name it as their subscription id, and may arrive before its response.
   */
  readonly onId?: (id: RequestId) => void;
  /**
   * @internal The request of this connection that this one tries again: an `input_required` round (`round`)
   * or the retry after a -32022 (`retry`), naming the call's first request. Its trace event's `cause`.
   */
  readonly retryOf?: { readonly id: RequestId; readonly kind: 'round' | 'retry' };
}

/** What the outbound requests read of their connection. */
export interface OutboundHost {
  readonly id: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly state: ConnectionState;
}

/** The connection's options read here (`ConnectionOptions` is one); defaults apply at use, so none is copied. */
export interface OutboundLimits {
  /** The idle timeout of a request that sets none, in ms (`DEFAULT_REQUEST_TIMEOUT_MS`). */
  readonly defaultTimeout?: number;
  /** Requests in flight at once; beyond it `request()` rejects (`DEFAULT_MAX_PENDING_REQUESTS`). */
  readonly maxPendingRequests?: number;
}

export const DEFAULT_MAX_PENDING_REQUESTS = 10_000;

export class OutboundRequests implements CorrelationHost {
  /** Created with the first request (a server may never send any). */
  private correlation: CorrelationTable | undefined;

  constructor(
    private readonly host: OutboundHost,
    private readonly transport: Transport,
    private readonly trace: ConnectionTrace,
    private readonly limits: OutboundLimits,
  ) {}

  get clock(): Clock {
    return this.host.clock;
  }

  /** Requests waiting for their response. */
  get size(): number {
    return this.correlation?.size ?? 0;
  }

  has(id: RequestId): boolean {
    return this.correlation?.has(id) === true;
  }

  /**
   * Sends a request the gate let through; `check` vets its result, `completion` (when given) makes what the
   * caller gets of it, `instrumentation` gives it a span.
   */
  request(
    method: string,
    params: JsonObject | undefined,
    options: SendOptions | undefined,
    check: ResultCheck | undefined,
    completion: RequestCompletion | undefined,
    instrumentation: RequestInstrumentation | undefined,
    parentSpan: RequestSpan | undefined,
  ): Promise<JsonObject> {
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(new RequestCancelledError(method, signal.reason));
    const table = (this.correlation ??= new CorrelationTable(
      this,
      this.limits.defaultTimeout ?? DEFAULT_REQUEST_TIMEOUT_MS,
    ));
    const max = this.limits.maxPendingRequests ?? DEFAULT_MAX_PENDING_REQUESTS;
    if (table.size >= max) {
      return Promise.reject(new LimitExceededError(`Too many requests in flight (limit ${max})`));
    }
    const record = table.begin(method, options);
    record.check = check;
    record.completion = completion;
    options?.onId?.(record.id);
    let sent = record.wantsProgress ? withMetaEntries(params, { progressToken: record.id }) : params;
    if (instrumentation) sent = this.trace.startOutboundSpan(instrumentation, record, sent, parentSpan);
    const message: JsonRpcRequest =
      sent === undefined
        ? { jsonrpc: '2.0', id: record.id, method }
        : { jsonrpc: '2.0', id: record.id, method, params: sent };
    const forTransport =
      options?.relatedRequestId === undefined && options?.headers === undefined && !options?.failWithoutStream
        ? undefined
        : options;
    const cause = this.trace.on ? causeOf(options, this.host.id) : undefined;
    this.send(message, forTransport, cause, record.span).then(undefined, (error) =>
      table.fail(record, asTransportError(error, `Could not send ${method}`)),
    );
    return record.promise;
  }

  /** Hands a message to the transport, traced (with the request it was made for, when it is a request). */
  send(
    message: JsonRpcMessage | JsonRpcMessage[],
    options?: TransportSendOptions,
    cause?: TraceCause,
    span?: RequestSpan,
  ): Promise<void> {
    if (this.trace.on && !Array.isArray(message)) {
      const m = message as Partial<JsonRpcRequest> & { result?: unknown; error?: unknown };
      const kind =
        m.id === undefined ? 'notification' : m.method !== undefined ? 'request' : m.error ? 'error' : 'result';
      this.trace.message(kind, 'out', message, m.method, m.id, undefined, undefined, cause, span);
    }
    return this.transport.send(message, options);
  }

  /** A response (a result, or an error) from the peer: it settles its request, or is traced as ignored. */
  settle(result: JsonRpcResultResponse | undefined, error: JsonRpcErrorResponse | undefined): void {
    const id = result ? result.id : error!.id;
    const table = this.correlation;
    const record = !table
      ? undefined
      : result
        ? table.resolve(result.id, result.result)
        : isRequestId(id)
          ? table.reject(id, error!.error)
          : undefined;
    if (!record && error && !isRequestId(id)) {
      this.host.logger.warn(`The peer reported an error without an id: ${clipText(error.error.message)}`);
    }
    if (!this.trace.on) return;
    const message = result ?? error;
    if (record) {
      const latency = this.host.clock.now() - record.startedAt;
      const kind = result ? 'result' : 'error';
      this.trace.message(kind, 'in', message, record.method, record.id, undefined, latency, undefined, record.span);
    } else {
      const why = result
        ? 'No request in flight has this id (late or duplicate response)'
        : 'No request in flight has this id';
      this.trace.message('ignored', 'in', message, undefined, id ?? undefined, why);
    }
  }

  /**
   * A response with a broken envelope gets no reply (JSON-RPC forbids answering a response, and two broken
   * peers would answer each other's errors forever). When it names a request in flight, that request fails
   * at once with a `ProtocolViolationError` saying what was wrong; otherwise it is logged and traced.
   */
  settleBroken(message: unknown, id: RequestId | undefined, why: string): void {
    const record =
      id === undefined
        ? undefined
        : this.correlation?.failId(
            id,
            (pending) => new ProtocolViolationError(`${pending.method} failed: the peer's response is broken: ${why}`),
          );
    if (!record) {
      const which = id === undefined ? 'without a usable id' : `to id ${excerpt(id)}, which no request in flight has`;
      this.host.logger.warn(`Connection ${this.host.id}: ignored a broken response ${which}: ${why}`);
    }
    this.trace.message('invalid', 'in', message, record?.method, id, why);
  }

  /** `notifications/progress` for one of our requests. */
  progress(message: JsonRpcNotification): void {
    const outcome = this.correlation?.progress(message.params as ProgressParams | undefined) ?? 'unknown-token';
    if (outcome !== 'delivered') {
      this.trace.message('ignored', 'in', message, message.method, undefined, `Progress ignored: ${outcome}`);
    }
  }

  /** The connection is closing: every request in flight rejects with `ConnectionClosedError`. */
  failAll(quitMessage: string, cause: Error | undefined): void {
    const table = this.correlation;
    if (table && table.size > 0)
      table.failAll(new ConnectionClosedError(`Connection closed: ${quitMessage}`, { cause }));
  }

  /** The connection has closed: the table's timer stops. */
  dispose(): void {
    this.correlation?.dispose();
  }

  /** @internal CorrelationHost: tell the peer we gave up on a request. */
  sendCancelled(id: RequestId, reason: string): void {
    const state = this.host.state;
    if (state === 'closing' || state === 'closed') return;
    this.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } }).catch((error) =>
      this.host.logger.debug('Could not send notifications/cancelled', error),
    );
  }

  /** @internal CorrelationHost: a progress callback threw. */
  reportCallbackError(error: unknown): void {
    this.host.logger.error('A progress callback threw', error);
  }
}

export function asTransportError(error: unknown, message: string): TransportError {
  return error instanceof TransportError
    ? error
    : new TransportError(`${message}: ${(error as Error)?.message ?? String(error)}`, { cause: error });
}

/**
 * The request an outbound request is made for, for its trace event: the first request of this connection's
 * call it tries again (`retryOf`: an input round, a -32022 retry; before the rest, since a forwarded call's
 * rounds carry the forwarding options too), the inbound request of another connection a hub forwards
 * (`parentRequest`: named by the id its own trace events carry), or the inbound request of this connection
 * it serves (`relatedRequestId`: a server's sampling or elicitation during a call).
 */
function causeOf(options: SendOptions | undefined, ownId: string): TraceCause | undefined {
  const retried = options?.retryOf;
  if (retried !== undefined) return { connection: ownId, id: retried.id, kind: retried.kind };
  const parent = options?.parentRequest;
  if (parent !== undefined) {
    const host = parent.connection as { readonly traceOrigin?: string; readonly id?: unknown };
    const connection = host.traceOrigin ?? (typeof host.id === 'string' ? host.id : undefined);
    return connection === undefined ? undefined : { connection, id: parent.id, kind: 'forwarded' };
  }
  const related = options?.relatedRequestId;
  return related === undefined ? undefined : { connection: ownId, id: related, kind: 'serves' };
}
