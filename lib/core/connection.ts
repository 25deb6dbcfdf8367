import { Observable, Subject, type Observer, type Subscription } from 'rxjs';
import { createActor, type Actor } from 'xstate';
import {
  connectionLifecycle,
  type ConnectionData,
  type ConnectionEvent,
  type ConnectionHost,
  type ConnectionState,
  type Negotiated,
  type QuitReason,
} from '../../machines/connection';
import type { Transport, TransportSendOptions } from '../../transports/transport';
import { classifyMessage, describeInvalid, isParamsObject, isRequestId } from '../jsonrpc/classify';
import {
  CapabilityNotSupportedError,
  ConnectionClosedError,
  ErrorCode,
  LimitExceededError,
  NotReadyError,
  ProtocolViolationError,
  RequestCancelledError,
  TransportError,
  toWireError,
} from '../jsonrpc/errors';
import { clipText, excerpt } from '../jsonrpc/excerpt';
import {
  FrameError,
  type InboundFrame,
  type JsonObject,
  type JsonRpcErrorResponse,
  type JsonRpcMessage,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type JsonRpcResultResponse,
  type RequestId,
} from '../jsonrpc/types';
import { describeCapability, hasCapability } from '../protocol/capabilities';
import { maySend, methodSpec, type MethodSpec, type Role } from '../protocol/methods';
import type { CancelledParams, LoggingLevel, ProgressParams } from '../protocol/types';
import { isAtLeast } from '../protocol/versions';
import { TraceChannel } from '../trace/channel';
import { connectionLifecycleEvent, messageTraceEvent } from '../trace/event';
import {
  withMetaEntries,
  type RequestInstrumentation,
  type RequestOutcome,
  type RequestSpan,
  type TracedRequest,
} from '../trace/instrumentation';
import { REDACTED, redactTraceEvent } from '../trace/redact';
import type { TraceEvent, TraceKind } from '../trace/types';
import type { LifecycleChange } from '../trace/xstate-inspection';
import { BatchReply } from './batch';
import { systemClock, type Clock } from './clock';
import { afterThisTurn } from './microtask';
import {
  CorrelationTable,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type PendingRequest,
  type RequestOptions,
  type ResultCheck,
} from './correlation';
import { EventFacade } from './events';
import { defaultLogger, type Logger } from './logger';
import { RequestContext } from './request-context';
import { defaultRuntime, TRACE_LIFECYCLE, type LifecycleTraceHost, type Runtime } from './runtime';

export interface ConnectionOptions {
  /** The actor system this connection's lifecycle actor joins (default: one per process). */
  readonly runtime?: Runtime;
  readonly clock?: Clock;
  readonly logger?: Logger;
  /** Default idle timeout for outbound requests, in ms (60 000). */
  readonly defaultTimeout?: number;
  /** Outbound requests in flight at once; beyond it `request()` rejects (10 000). */
  readonly maxPendingRequests?: number;
  /** Inbound requests being handled at once; beyond it the peer gets -32603 (10 000). */
  readonly maxConcurrentHandlers?: number;
  /** Stamped on this connection's trace events: the upstream server a hub reaches through it. */
  readonly upstream?: string;
  /**
   * How long the response to a request that reported progress waits after its last progress notification
   * left, in ms (`PROGRESS_REPLY_DELAY_MS`, 10), so SDK v1 clients read them apart and see the progress.
   */
  readonly progressReplyDelayMs?: number;
}

export interface SendOptions extends RequestOptions, TransportSendOptions {
  /**
   * The inbound request (on any connection) this request is made for: with an instrumentation, its span
   * is the parent of this one's (a hub forwarding a call passes the downstream request's context). A
   * request made through `ctx.request` needs none: its `relatedRequestId` names the parent.
   */
  readonly parentRequest?: RequestContext<any>;
}

export type RequestHandler<C extends Connection = Connection> = (
  context: RequestContext<C>,
  params: JsonObject | undefined,
) => unknown;

/** Method -> handler. A null-prototype object, so no inherited key can pose as a method. */
export type HandlerTable<C extends Connection = Connection> = Readonly<Record<string, RequestHandler<C>>>;

export function handlerTable<C extends Connection>(handlers: Record<string, RequestHandler<C>>): HandlerTable<C> {
  return Object.freeze(Object.assign(Object.create(null) as Record<string, RequestHandler<C>>, handlers));
}

export interface ConnectionEvents {
  notification: (message: JsonRpcNotification) => void;
  close: (reason: QuitReason) => void;
}

let connectionCount = 0;
const DEFAULT_LIMIT = 10_000;
/**
 * How long `closing` waits for the transport to close before the connection counts as closed (and
 * `Client.close()` stops waiting for it). The stdio client's shutdown ladder, with its defaults (2 s after
 * stdin EOF, 2 s after SIGTERM, then SIGKILL), ends the child well within it.
 */
export const CLOSE_TIMEOUT_MS = 5_000;

/** Receives the transport's frames; kept apart so the connection's public surface has no `next()`. */
class InboundObserver implements Observer<InboundFrame> {
  constructor(private readonly connection: Connection) {}
  next(frame: InboundFrame): void {
    this.connection.receive(frame);
  }
  error(error: unknown): void {
    this.connection.transportEnded(error);
  }
  complete(): void {
    this.connection.transportEnded(undefined);
  }
}

/**
 * One MCP connection, either role: the lifecycle actor, the router for inbound messages, the correlation
 * core for outbound requests, and the handlers' contexts for inbound ones.
 *
 * Routing is one switch on the structural kind of each inbound frame: responses settle correlation
 * records, requests go to the role's handler table, notifications to the built-in ones (cancel, progress)
 * and then to `notifications$`. Streams for subscribers (`notifications$`, `trace$`) are created on
 * first use, and nothing is built for them while nobody listens.
 */
export abstract class Connection implements ConnectionHost, LifecycleTraceHost {
  readonly id: string;
  abstract readonly role: Role;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The upstream server a hub reaches through this connection (`ConnectionOptions.upstream`). */
  readonly upstream: string | undefined;
  /** Resolves with the quit reason once the connection is closed, whoever closed it. */
  readonly closed: Promise<QuitReason>;

  protected abstract readonly handlers: HandlerTable<any>;
  /** The capabilities this side declared: they gate inbound requests and the notifications we may send. */
  abstract readonly capabilities: Readonly<Record<string, unknown>>;

  /** The lifecycle actor (see machines/connection). */
  readonly actor: Actor<typeof connectionLifecycle>;
  /** Outbound requests in flight; created with the first one (a server may never send any). */
  private correlationTable: CorrelationTable | undefined;
  /** Inbound requests being handled; created with the first one (a client may never receive any). */
  private handling: Map<RequestId, RequestContext<any>> | undefined;
  private readonly defaultTimeout: number;
  private readonly maxPending: number;
  private readonly maxHandlers: number;
  private readonly progressReplyDelayMs: number;
  private transport: Transport | undefined;
  private subscription: Subscription | undefined;
  private resolveClosed: ((reason: QuitReason) => void) | undefined;
  private readonly runtime: Runtime;
  private traceChannel: TraceChannel | undefined;
  /** Spans of outbound requests in flight, by id (only with an instrumentation): progress lands on them. */
  private outboundSpans: Map<RequestId, RequestSpan> | undefined;
  private notificationSubject: Subject<JsonRpcNotification> | undefined;
  private eventFacade: EventFacade<ConnectionEvents> | undefined;

  constructor(idPrefix: string, options: ConnectionOptions = {}) {
    this.id = `${idPrefix}${++connectionCount}`;
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? defaultLogger;
    this.maxPending = options.maxPendingRequests ?? DEFAULT_LIMIT;
    this.maxHandlers = options.maxConcurrentHandlers ?? DEFAULT_LIMIT;
    this.defaultTimeout = options.defaultTimeout ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.upstream = options.upstream;
    this.progressReplyDelayMs = options.progressReplyDelayMs ?? PROGRESS_REPLY_DELAY_MS;
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    const runtime = (this.runtime = options.runtime ?? defaultRuntime());
    this.actor = createActor(connectionLifecycle, { input: { host: this }, parent: runtime.root }).start();
  }

  // ---- state -------------------------------------------------------------------------------------

  get state(): ConnectionState {
    return this.actor.getSnapshot().value as ConnectionState;
  }

  get negotiated(): Negotiated | undefined {
    return this.actor.getSnapshot().data.negotiated;
  }

  get protocolVersion(): string | undefined {
    return this.negotiated?.protocolVersion;
  }

  get peerCapabilities(): Readonly<Record<string, unknown>> | undefined {
    return this.negotiated?.peerCapabilities;
  }

  /** `notifications/progress` has carried `message` since 2025-03-26. */
  get supportsProgressMessage(): boolean {
    const version = this.protocolVersion;
    return version === undefined || isAtLeast(version, '2025-03-26');
  }

  /** Outbound requests waiting for their response. */
  get pendingRequestCount(): number {
    return this.correlationTable?.size ?? 0;
  }

  /** Inbound requests whose handlers have not finished. */
  get activeHandlerCount(): number {
    return this.handling?.size ?? 0;
  }

  // ---- streams and events ------------------------------------------------------------------------

  /**
   * Every message in and out and every lifecycle change (from XState inspection, attached to the runtime
   * while someone subscribes); completes once the connection has closed. Costs nothing while nobody subscribes.
   */
  get trace$(): Observable<TraceEvent> {
    if (!this.traceChannel) {
      const runtime = this.runtime;
      this.traceChannel = new TraceChannel((observed) => runtime.traceDemand(observed));
      if (this.state === 'closed') this.traceChannel.complete();
    }
    return this.traceChannel.events$;
  }

  /** Every inbound notification, after the runtime has acted on it. */
  get notifications$(): Observable<JsonRpcNotification> {
    return (this.notificationSubject ??= new Subject<JsonRpcNotification>()).asObservable();
  }

  /** eventemitter3 facade for those who do not use RxJS. A throwing listener does not stop the others. */
  get events(): EventFacade<ConnectionEvents> {
    return (this.eventFacade ??= new EventFacade<ConnectionEvents>((error, event) =>
      this.logger.error(`A listener for "${String(event)}" threw`, error),
    ));
  }

  // ---- outbound ----------------------------------------------------------------------------------

  /**
   * Sends a request and resolves with its result. Rejects with `McpError` for an error response, or with
   * a local error: `RequestTimeoutError`, `RequestCancelledError`, `ConnectionClosedError`,
   * `TransportError`, `CapabilityNotSupportedError`, `NotReadyError`, `LimitExceededError`.
   */
  request(method: string, params?: JsonObject, options?: SendOptions): Promise<JsonObject> {
    const refusal = this.refuseOutbound(method, 'request');
    if (refusal) return Promise.reject(refusal);
    const signal = options?.signal;
    if (signal?.aborted) return Promise.reject(new RequestCancelledError(method, signal.reason));
    const correlation = (this.correlationTable ??= new CorrelationTable(this, this.defaultTimeout));
    if (correlation.size >= this.maxPending) {
      return Promise.reject(new LimitExceededError(`Too many requests in flight (limit ${this.maxPending})`));
    }
    const record = correlation.begin(method, options);
    record.check = this.resultCheck(method, options);
    let sentParams = record.wantsProgress ? withMetaEntries(params, { progressToken: record.id }) : params;
    const instrumentation = this.runtime.instrumentation;
    if (instrumentation) sentParams = this.startOutboundSpan(instrumentation, record, sentParams, options);
    const message: JsonRpcRequest =
      sentParams === undefined
        ? { jsonrpc: '2.0', id: record.id, method }
        : { jsonrpc: '2.0', id: record.id, method, params: sentParams };
    this.send(message, options?.relatedRequestId === undefined ? undefined : options).then(undefined, (error) =>
      correlation.fail(record, asTransportError(error, `Could not send ${method}`)),
    );
    return record.promise;
  }

  notify(method: string, params?: JsonObject, options?: TransportSendOptions): Promise<void> {
    const refusal = this.refuseOutbound(method, 'notification');
    if (refusal) return Promise.reject(refusal);
    const message: JsonRpcNotification =
      params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
    return this.send(message, options);
  }

  /** Local diagnostics for roles that cannot log to the peer; `ServerConnection` overrides it. */
  log(level: LoggingLevel, data: unknown, logger?: string, _relatedRequestId?: RequestId): Promise<void> {
    const text = `${logger ? `${logger}: ` : ''}${typeof data === 'string' ? data : showData(data)}`;
    if (level === 'debug') this.logger.debug(text);
    else if (level === 'info' || level === 'notice') this.logger.info(text);
    else if (level === 'warning') this.logger.warn(text);
    else this.logger.error(text);
    return Promise.resolve();
  }

  /** Closes the connection: pending requests reject, running handlers are aborted, the transport closes. */
  close(): Promise<QuitReason> {
    const state = this.state;
    if (state !== 'closing' && state !== 'closed') {
      this.transition({ type: 'close', reason: { kind: 'local-close', message: `Closed by the ${this.role}` } });
    }
    return this.closed;
  }

  // ---- for subclasses ----------------------------------------------------------------------------

  /** Binds the transport and starts routing its messages. A connection takes exactly one transport. */
  protected attach(transport: Transport): void {
    if (this.transport || this.state !== 'uninitialized') {
      throw new Error(
        `Connection ${this.id} already has a transport or has closed; create a new ${this.role} for another connection`,
      );
    }
    this.transport = transport;
    this.subscription = transport.messages.subscribe(new InboundObserver(this));
    transport.start?.().then(undefined, (error: unknown) => this.transportEnded(error));
  }

  /** @internal How a handler ends the stream carrying request `id`, when the transport can (`Transport.closeStream`). */
  streamCloser(id: RequestId): (() => Promise<boolean>) | undefined {
    const transport = this.transport;
    return transport?.closeStream && (() => transport.closeStream!(id));
  }

  /** Tells the transport the negotiated revision (HTTP puts it in a header); both roles call it. */
  protected announceVersion(version: string): void {
    this.transport?.setProtocolVersion?.(version);
  }

  protected transition(event: ConnectionEvent): void {
    if (this.state !== 'closed') this.actor.send(event);
  }

  /** Role hook: how the result of an outbound `method` request is checked before it resolves (none by default). */
  protected resultCheck(_method: string, _options: SendOptions | undefined): ResultCheck | undefined {
    return undefined;
  }

  /** Role hook for notifications other than cancel and progress. */
  protected onNotification(_message: JsonRpcNotification): void {}

  // ---- machine host ------------------------------------------------------------------------------

  /** @internal Called by the machine on entering `closing`. */
  beginClose(reason: QuitReason): void {
    this.releaseInFlight(reason);
    const transport = this.transport;
    if (!transport) {
      queueMicrotask(() => this.transition({ type: 'transport.closed', reason }));
      return;
    }
    let finished = false;
    let giveUp: unknown;
    const done = () => {
      finished = true;
      if (giveUp !== undefined) this.clock.clearTimeout(giveUp);
      this.transition({ type: 'transport.closed', reason });
    };
    transport.close().then(done, done);
    // A transport that never finishes closing must not keep the connection in `closing` forever. Most
    // close at once (`done` has run by the time this does), so they cost no timer.
    afterThisTurn(() => {
      if (!finished) {
        giveUp = this.clock.setTimeout(() => this.transition({ type: 'transport.closed', reason }), CLOSE_TIMEOUT_MS);
      }
    });
  }

  /** @internal Called when the transport's stream ends; `error` is set when it failed. */
  transportEnded(error: unknown): void {
    const reason: QuitReason =
      error === undefined
        ? { kind: 'transport-closed', message: 'The transport closed' }
        : {
            kind: 'transport-error',
            message: `The transport failed: ${(error as Error)?.message ?? String(error)}`,
            error: asTransportError(error, 'The transport failed'),
          };
    this.transition({ type: 'transport.closed', reason });
  }

  /** @internal Called by the machine on entering `closed`, whichever way it got there. */
  finishClose(reason: QuitReason): void {
    const resolve = this.resolveClosed;
    if (!resolve) return;
    this.resolveClosed = undefined;
    this.releaseInFlight(reason);
    this.correlationTable?.dispose();
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.transport?.close().catch(() => undefined);
    resolve(reason);
    this.eventFacade?.emit('close', reason);
    this.notificationSubject?.complete();
    // An observed trace ends with its `closed` lifecycle event, which XState reports after this.
    if (this.traceChannel && !this.traceChannel.observed) this.traceChannel.complete();
    this.onClosed();
  }

  /** Role hook: the connection has closed. */
  protected onClosed(): void {}

  private releaseInFlight(reason: QuitReason): void {
    const correlation = this.correlationTable;
    if (correlation && correlation.size > 0) {
      correlation.failAll(new ConnectionClosedError(`Connection closed: ${reason.message}`, { cause: reason.error }));
    }
    const handling = this.handling;
    if (handling && handling.size > 0) {
      const abortReason = new ConnectionClosedError(`Connection closed: ${reason.message}`);
      for (const context of handling.values()) context.abort(abortReason);
      handling.clear();
    }
  }

  /** @internal CorrelationHost */
  sendCancelled(id: RequestId, reason: string): void {
    if (this.state === 'closing' || this.state === 'closed') return;
    this.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } }).catch((error) =>
      this.logger.debug('Could not send notifications/cancelled', error),
    );
  }

  /** @internal CorrelationHost */
  reportCallbackError(error: unknown): void {
    this.logger.error('A progress callback threw', error);
  }

  // ---- inbound -----------------------------------------------------------------------------------

  /**
   * @internal Routes one inbound frame. Never throws: whatever throws while handling it (a bug, an input
   * no check foresaw) closes this connection with an `internal-error` quit reason, and nothing else.
   */
  receive(frame: InboundFrame): void {
    if (this.state === 'closed') return;
    try {
      if (frame instanceof FrameError) this.refuseFrame(frame);
      else this.route(frame, undefined);
    } catch (error) {
      this.failInternally(error);
    }
  }

  /**
   * Closes the connection because handling its peer's input threw: one log line, and the `closing`
   * lifecycle trace event carries the `internal-error` quit reason. Other connections are untouched.
   */
  private failInternally(error: unknown): void {
    const message = `Closed after an internal error while handling the peer's input: ${clipText(
      (error as Error)?.message ?? String(error),
    )}`;
    try {
      this.logger.error(`Connection ${this.id}: ${message}`, error);
    } catch {
      // a logger that throws must not stop the close
    }
    const state = this.state;
    if (state === 'closing' || state === 'closed') return;
    const cause = error instanceof Error ? error : new Error(String(error));
    this.transition({ type: 'close', reason: { kind: 'internal-error', message, error: cause } });
  }

  /** A frame the transport could not decode: an error reply, or for a broken response, what `onBrokenResponse` does. */
  private refuseFrame(frame: FrameError): void {
    if (frame.response) {
      this.onBrokenResponse(frame, frame.id, frame.message);
      return;
    }
    this.trace('invalid', 'in', frame, undefined, frame.id, frame.message);
    this.sendError(frame.id, frame.code, frame.message, undefined);
  }

  private route(message: unknown, batch: BatchReply | undefined): void {
    switch (classifyMessage(message)) {
      case 'request':
        return this.onRequest(message as JsonRpcRequest, batch);
      case 'notification':
        return this.onNotificationMessage(message as JsonRpcNotification);
      case 'result':
        return this.onResult(message as JsonRpcResultResponse);
      case 'error':
        return this.onErrorResponse(message as JsonRpcErrorResponse);
      case 'batch':
        return batch ? this.refuseInvalid(message, batch) : this.onBatch(message as unknown[]);
      default:
        return this.refuseInvalid(message, batch);
    }
  }

  private refuseInvalid(message: unknown, batch: BatchReply | undefined): void {
    const invalid = describeInvalid(message);
    if (invalid.response || this.answersRequestInFlight(message, invalid.id)) {
      this.onBrokenResponse(message, invalid.id, invalid.message);
      return;
    }
    this.trace('invalid', 'in', message, undefined, invalid.id, invalid.message);
    this.sendError(invalid.id, invalid.code, invalid.message, batch);
  }

  /**
   * A method-less message that names a request of ours in flight (`{"jsonrpc":"2.0","id":3}`): it could be a
   * broken request or a broken response, and the id says which is likelier.
   */
  private answersRequestInFlight(message: unknown, id: RequestId | undefined): boolean {
    return (
      id !== undefined &&
      (message as { method?: unknown }).method === undefined &&
      this.correlationTable?.has(id) === true
    );
  }

  /**
   * A response with a broken envelope gets no reply (JSON-RPC forbids answering a response, and two broken
   * peers would answer each other's errors forever). When it names a request in flight, that request fails
   * at once with a `ProtocolViolationError` saying what was wrong; otherwise it is logged and traced.
   */
  private onBrokenResponse(message: unknown, id: RequestId | undefined, why: string): void {
    const record =
      id === undefined
        ? undefined
        : this.correlationTable?.failId(
            id,
            (pending) => new ProtocolViolationError(`${pending.method} failed: the peer's response is broken: ${why}`),
          );
    if (!record) {
      const which = id === undefined ? 'without a usable id' : `to id ${excerpt(id)}, which no request in flight has`;
      this.logger.warn(`Connection ${this.id}: ignored a broken response ${which}: ${why}`);
    }
    this.trace('invalid', 'in', message, record?.method, id, why);
  }

  private onResult(message: JsonRpcResultResponse): void {
    const record = this.correlationTable?.resolve(message.id, message.result);
    if (this.traced()) {
      if (record)
        this.trace('result', 'in', message, record.method, message.id, undefined, this.clock.now() - record.startedAt);
      else
        this.trace(
          'ignored',
          'in',
          message,
          undefined,
          message.id,
          'No request in flight has this id (late or duplicate response)',
        );
    }
  }

  private onErrorResponse(message: JsonRpcErrorResponse): void {
    const id = message.id;
    const record = isRequestId(id) ? this.correlationTable?.reject(id, message.error) : undefined;
    if (!record) {
      if (!isRequestId(id))
        this.logger.warn(`The peer reported an error without an id: ${clipText(message.error.message)}`);
      this.trace('ignored', 'in', message, undefined, id ?? undefined, 'No request in flight has this id');
      return;
    }
    if (this.traced())
      this.trace('error', 'in', message, record.method, id, undefined, this.clock.now() - record.startedAt);
  }

  private onBatch(elements: unknown[]): void {
    this.trace('batch', 'in', elements);
    if (elements.length === 0) {
      this.sendError(undefined, ErrorCode.InvalidRequest, 'Invalid Request: an empty batch', undefined);
      return;
    }
    if (this.protocolVersion !== '2025-03-26') {
      const message = 'Invalid Request: JSON-RPC batches are only allowed with protocol version 2025-03-26';
      this.sendError(undefined, ErrorCode.InvalidRequest, message, undefined);
      return;
    }
    const reply = new BatchReply((responses) => this.send(responses).catch((error) => this.reportSendFailure(error)));
    for (const element of elements) this.route(element, reply);
    reply.seal();
  }

  private onRequest(message: JsonRpcRequest, batch: BatchReply | undefined): void {
    const { id, method } = message;
    this.trace('request', 'in', message, method, id);
    const refusal = this.refuseInbound(message, batch);
    if (refusal === 'drop') return;
    const instrumentation = this.runtime.instrumentation;
    if (refusal) {
      const [code, reason] = refusal;
      this.startInboundSpan(instrumentation, message)?.end(
        { kind: 'error', error: { code, message: reason } },
        this.clock.now(),
      );
      this.sendError(id, code, reason, batch);
      return;
    }
    const handler = this.handlers[method]!;
    const context = new RequestContext(this, id, method, message.params, this.traced() ? this.clock.now() : 0, batch);
    (this.handling ??= new Map()).set(id, context);
    batch?.expect();
    let result: unknown;
    try {
      const span = (context.traceSpan = this.startInboundSpan(instrumentation, message));
      result = span?.run ? span.run(() => handler(context, message.params)) : handler(context, message.params);
    } catch (error) {
      this.answerError(context, error);
      return;
    }
    if (isThenable(result)) {
      result.then(
        (value) => this.settleHandler(context, value, false),
        (error) => this.settleHandler(context, error, true),
      );
    } else {
      this.answer(context, result);
    }
  }

  /** Why an inbound request is refused (code and message), `drop` to ignore it, or undefined to serve it. */
  private refuseInbound(message: JsonRpcRequest, batch: BatchReply | undefined): [number, string] | 'drop' | undefined {
    const { id, method } = message;
    const spec = methodSpec(method);
    if (!this.handlers[method] || (spec && (spec.kind !== 'request' || !maySend(spec, peerRole(this.role))))) {
      return [ErrorCode.MethodNotFound, `Method not found: ${clipText(method)}`];
    }
    const state = this.state;
    if (state === 'closing' || state === 'closed') return 'drop';
    if (method === 'initialize') {
      if (state !== 'uninitialized')
        return [ErrorCode.InvalidRequest, 'initialize was already received: it may be sent once per connection'];
      if (batch) return [ErrorCode.InvalidRequest, 'initialize must not be part of a JSON-RPC batch'];
    } else if (method !== 'ping' && state !== 'ready') {
      return [ErrorCode.InvalidRequest, `${method} received before initialization completed: send initialize first`];
    }
    if (spec && state === 'ready' && !isAtLeast(this.protocolVersion!, spec.since)) {
      return [ErrorCode.MethodNotFound, `Method not found: ${method} (it needs protocol version ${spec.since})`];
    }
    if (spec && state === 'ready' && this.gatedOut(spec, this.capabilities)) {
      return [
        ErrorCode.MethodNotFound,
        `Method not found: ${method} (this ${this.role} did not declare the ${describeCapability(spec.capability!)} capability)`,
      ];
    }
    if (!isParamsObject(message.params)) return [ErrorCode.InvalidParams, `Invalid params: "params" must be an object`];
    if (this.handling?.has(id))
      return [ErrorCode.InvalidRequest, `Request id ${excerpt(id)} is already in use by a request in flight`];
    if (this.activeHandlerCount >= this.maxHandlers)
      return [ErrorCode.InternalError, `Too many requests in flight (limit ${this.maxHandlers})`];
    return undefined;
  }

  /** Whether the capability gate of `spec` (checked against `capabilities`) keeps it out at the negotiated version. */
  private gatedOut(spec: MethodSpec, capabilities: Readonly<Record<string, unknown>> | undefined): boolean {
    if (!spec.capability) return false;
    const version = this.protocolVersion;
    if (spec.capabilitySince && version !== undefined && !isAtLeast(version, spec.capabilitySince)) return false;
    return !hasCapability(capabilities, spec.capability);
  }

  /** An async handler finished: its answer, outside `receive`'s guard, so guarded here. */
  private settleHandler(context: RequestContext<any>, outcome: unknown, failed: boolean): void {
    try {
      if (failed) this.answerError(context, outcome);
      else this.answer(context, outcome);
    } catch (error) {
      this.failInternally(error);
    }
  }

  private answer(context: RequestContext<any>, value: unknown): void {
    if (!this.finishHandler(context)) return;
    const result = (value === undefined || value === null ? {} : value) as JsonObject;
    const response: JsonRpcResultResponse = { jsonrpc: '2.0', id: context.id, result };
    this.replyAfterProgress(context, response, 'result');
  }

  private answerError(context: RequestContext<any>, error: unknown): void {
    if (!this.finishHandler(context)) return;
    if (!(error instanceof Error && 'code' in error && typeof error.code === 'number')) {
      this.logger.debug(`Handler for ${context.method} failed`, error);
    }
    const response: JsonRpcErrorResponse = { jsonrpc: '2.0', id: context.id, error: toWireError(error) };
    this.replyAfterProgress(context, response, 'error');
  }

  /**
   * Replies at once, except to a request that sent progress: then the reply waits until the last progress
   * notification was handed to the transport, and `PROGRESS_REPLY_DELAY_MS` more, so it leaves in a later
   * write that the peer reads apart. SDK v1 clients drop a progress notification that arrives in the same
   * chunk as its result (they dispatch notifications a microtask late, responses at once). Requests without
   * progress pay nothing.
   */
  private replyAfterProgress(context: RequestContext<any>, response: JsonRpcResponse, kind: 'result' | 'error'): void {
    const progressSent = context.progressSent;
    if (progressSent === undefined) {
      this.reply(context, response, kind);
      return;
    }
    const delay = () => afterDelay(this.progressReplyDelayMs);
    progressSent
      .then(delay, delay)
      .then(() => this.reply(context, response, kind))
      .then(undefined, (error: unknown) => this.failInternally(error));
  }

  /** Ends a handler's record; false when its answer must not be sent (cancelled, or the connection closed). */
  private finishHandler(context: RequestContext<any>): boolean {
    if (this.handling?.get(context.id) === context) this.handling.delete(context.id);
    if (context.cancelled) {
      context.batch?.skip();
      this.trace(
        'ignored',
        'out',
        undefined,
        context.method,
        context.id,
        'The request was cancelled: no response is sent',
      );
      return false;
    }
    context.done = true;
    return this.state !== 'closed';
  }

  private reply(context: RequestContext<any>, response: JsonRpcResponse, kind: 'result' | 'error'): void {
    const span = context.traceSpan;
    if (span) {
      const outcome: RequestOutcome =
        kind === 'result'
          ? { kind, result: (response as JsonRpcResultResponse).result }
          : { kind, error: (response as JsonRpcErrorResponse).error };
      span.end(outcome, this.clock.now());
    }
    if (this.traced()) {
      this.trace(
        kind,
        'out',
        response,
        context.method,
        context.id,
        undefined,
        context.startedAt ? this.clock.now() - context.startedAt : undefined,
      );
    }
    if (context.batch) context.batch.answer(response);
    else this.transmit(response, context.id);
  }

  private sendError(id: RequestId | undefined, code: number, message: string, batch: BatchReply | undefined): void {
    const response: JsonRpcErrorResponse =
      id === undefined
        ? { jsonrpc: '2.0', error: { code, message } }
        : { jsonrpc: '2.0', id, error: { code, message } };
    this.trace('error', 'out', response, undefined, id);
    if (batch) batch.reject(response);
    else this.transmit(response, id);
  }

  private transmit(response: JsonRpcResponse, relatedRequestId: RequestId | undefined): void {
    const transport = this.transport;
    if (!transport || this.state === 'closed') return;
    let sent: Promise<void>;
    try {
      sent = transport.send(response, relatedRequestId === undefined ? undefined : { relatedRequestId });
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
    if (!('result' in response) || id === undefined || this.state === 'closing' || this.state === 'closed') {
      this.reportSendFailure(error);
      return;
    }
    const cause = (error as Error)?.cause ?? error;
    const why = clipText((cause as Error)?.message ?? String(cause));
    this.logger.warn(`Connection ${this.id}: the result of request ${excerpt(id)} could not be sent: ${why}`);
    const replacement: JsonRpcErrorResponse = {
      jsonrpc: '2.0',
      id,
      error: { code: ErrorCode.InternalError, message: `Internal error: the result could not be sent: ${why}` },
    };
    this.trace('error', 'out', replacement, undefined, id, 'The result could not be sent');
    this.transmit(replacement, relatedRequestId);
  }

  private reportSendFailure(error: unknown): void {
    this.logger.debug('Could not send a response', error);
  }

  private onNotificationMessage(message: JsonRpcNotification): void {
    this.trace('notification', 'in', message, message.method);
    switch (message.method) {
      case 'notifications/cancelled':
        this.onCancelled(message.params as CancelledParams | undefined);
        break;
      case 'notifications/progress': {
        const params = message.params as ProgressParams | undefined;
        const outcome = this.correlationTable?.progress(params) ?? 'unknown-token';
        if (outcome === 'delivered')
          this.outboundSpans?.get(params!.progressToken)?.progress(params!, this.clock.now());
        else this.trace('ignored', 'in', message, message.method, undefined, `Progress ignored: ${outcome}`);
        break;
      }
      default:
        this.onNotification(message);
    }
    this.notificationSubject?.next(message);
    this.eventFacade?.emit('notification', message);
  }

  private onCancelled(params: CancelledParams | undefined): void {
    const requestId = params?.requestId;
    const context = isRequestId(requestId) ? this.handling?.get(requestId) : undefined;
    if (!context || context.method === 'initialize') {
      this.trace('ignored', 'in', params, 'notifications/cancelled', requestId, 'No cancellable request has this id');
      return;
    }
    this.handling!.delete(context.id);
    const reason = typeof params?.reason === 'string' ? params.reason : undefined;
    context.abort(new RequestCancelledError(context.method, reason));
  }

  // ---- helpers -----------------------------------------------------------------------------------

  private send(message: JsonRpcMessage | JsonRpcMessage[], options?: TransportSendOptions): Promise<void> {
    const transport = this.transport;
    if (!transport) return Promise.reject(new NotReadyError('Not connected: attach a transport first'));
    if (this.traced() && !Array.isArray(message)) {
      const m = message as Partial<JsonRpcRequest>;
      this.trace(m.id === undefined ? 'notification' : 'request', 'out', message, m.method, m.id);
    }
    return transport.send(message, options);
  }

  /** Why we may not send `method` now, or undefined. */
  private refuseOutbound(method: string, kind: 'request' | 'notification'): Error | undefined {
    const state = this.state;
    if (state === 'closing' || state === 'closed')
      return new ConnectionClosedError(`Cannot send ${method}: the connection is ${state}`);
    if (!this.transport) return new NotReadyError(`Cannot send ${method}: not connected`);
    const spec = methodSpec(method);
    if (spec) {
      if (spec.kind !== kind)
        return new CapabilityNotSupportedError(method, `${method} is a ${spec.kind}, not a ${kind}`);
      if (!maySend(spec, this.role))
        return new CapabilityNotSupportedError(method, `A ${this.role} cannot send ${method}`);
    }
    if (state !== 'ready') {
      return mayPrecedeReady(method, this.role, state)
        ? undefined
        : new NotReadyError(`Cannot send ${method} before initialization completes (state: ${state})`);
    }
    if (!spec) return undefined; // extension methods are not gated
    const version = this.protocolVersion!;
    if (!isAtLeast(version, spec.since)) {
      return new CapabilityNotSupportedError(
        method,
        `${method} needs protocol version ${spec.since} or later; ${version} was negotiated`,
      );
    }
    const senderGated = spec.capabilityOf === 'sender';
    if (this.gatedOut(spec, senderGated ? this.capabilities : this.peerCapabilities)) {
      const capability = describeCapability(spec.capability!);
      return new CapabilityNotSupportedError(
        method,
        senderGated
          ? `Cannot send ${method}: this ${this.role} did not declare the ${capability} capability`
          : `The ${peerRole(this.role)} did not declare the ${capability} capability, so ${method} cannot be used`,
      );
    }
    return undefined;
  }

  private traced(): boolean {
    return this.traceChannel?.observed === true || this.runtime.traceChannel.observed;
  }

  private trace(
    kind: TraceKind,
    direction: 'in' | 'out',
    message: unknown,
    method?: string,
    id?: RequestId,
    reason?: string,
    latencyMs?: number,
  ): void {
    if (!this.traced()) return;
    this.publishTrace(
      messageTraceEvent(this, this.clock.now(), kind, direction, message, method, id, reason, latencyMs),
    );
  }

  /** Redacts `event` (once, whoever listens) and hands it to this connection's stream and its runtime's. */
  private publishTrace(event: TraceEvent): void {
    const redact = this.runtime.redact;
    let shown = event;
    if (redact) {
      try {
        shown = redactTraceEvent(event, redact);
      } catch (error) {
        this.logger.error('The trace redactor threw: the message is left out of the trace event', error);
        shown = { ...event, message: REDACTED };
      }
    }
    const own = this.traceChannel;
    if (own?.observed) own.next(shown);
    const shared = this.runtime.traceChannel;
    if (shared.observed) shared.next(shown);
  }

  /** @internal The runtime's XState inspection saw this connection's lifecycle change (see `Runtime`). */
  [TRACE_LIFECYCLE](change: LifecycleChange): void {
    if (this.traced()) {
      const quit = (change.snapshot.data as ConnectionData | undefined)?.quitReason;
      this.publishTrace(connectionLifecycleEvent(this, this.clock.now(), change.from, change.to, quit));
    }
    // The actor reports `closed` after its entry actions ran: the trace ends only now.
    if (change.snapshot.status === 'done') this.traceChannel?.complete();
  }

  private tracedRequest(
    method: string,
    id: RequestId,
    params: JsonObject | undefined,
    time: number,
    parent: RequestSpan | undefined,
  ): TracedRequest {
    return {
      connection: this.id,
      role: this.role,
      upstream: this.upstream,
      protocolVersion: this.protocolVersion,
      method,
      id,
      params,
      time,
      parent,
      redact: this.runtime.redact,
    };
  }

  /** Starts the span of an outbound request, ends it however the request settles; returns the params to send. */
  private startOutboundSpan(
    instrumentation: RequestInstrumentation,
    record: PendingRequest,
    params: JsonObject | undefined,
    options: SendOptions | undefined,
  ): JsonObject | undefined {
    const related = options?.relatedRequestId;
    const parent =
      options?.parentRequest?.traceSpan ?? (related === undefined ? undefined : this.handling?.get(related)?.traceSpan);
    const span = instrumentation.startOutbound(
      this.tracedRequest(record.method, record.id, params, record.startedAt, parent),
    );
    if (!span) return params;
    const spans = (this.outboundSpans ??= new Map());
    spans.set(record.id, span);
    const end = (outcome: RequestOutcome) => {
      spans.delete(record.id);
      span.end(outcome, this.clock.now());
    };
    record.promise
      .then(
        (result) => end({ kind: 'result', result }),
        (error: unknown) => end({ kind: 'error', error }),
      )
      .then(undefined, (error: unknown) => this.logger.error('The instrumentation failed to end a span', error));
    return span.meta ? withMetaEntries(params, span.meta) : params;
  }

  private startInboundSpan(
    instrumentation: RequestInstrumentation | undefined,
    message: JsonRpcRequest,
  ): RequestSpan | undefined {
    if (!instrumentation) return undefined;
    const params = isParamsObject(message.params) ? message.params : undefined;
    return instrumentation.startInbound(
      this.tracedRequest(message.method, message.id, params, this.clock.now(), undefined),
    );
  }
}

function peerRole(role: Role): Role {
  return role === 'client' ? 'server' : 'client';
}

/** Before `ready` only the handshake, ping, logging, and cancel/progress for those may flow. */
function mayPrecedeReady(method: string, role: Role, state: ConnectionState): boolean {
  switch (method) {
    case 'ping':
    case 'notifications/cancelled':
    case 'notifications/progress':
      return true;
    case 'initialize':
      return role === 'client' && state === 'initializing';
    case 'notifications/message':
      return role === 'server';
    default:
      return false;
  }
}

/** What `log` prints of a non-string value: JSON, or a bounded excerpt when JSON cannot show it (a cycle, deep nesting). */
function showData(data: unknown): string {
  try {
    return JSON.stringify(data) ?? String(data);
  } catch {
    return excerpt(data, 2_000);
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

function asTransportError(error: unknown, message: string): TransportError {
  return error instanceof TransportError
    ? error
    : new TransportError(`${message}: ${(error as Error)?.message ?? String(error)}`, { cause: error });
}
