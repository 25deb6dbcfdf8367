import { Observable, Subject, type Subscription } from 'rxjs';
import { createActor, type Actor } from 'xstate';
import {
  connectionLifecycle,
  type ConnectionEvent,
  type ConnectionState,
  type Negotiated,
  type QuitReason,
} from '../../machines/connection';
import {
  CapabilityNotSupportedError,
  ConnectionClosedError,
  MethodRemovedError,
  NotReadyError,
} from '../jsonrpc/errors';
import { clipText } from '../jsonrpc/excerpt';
import type { JsonObject, JsonRpcMessage, JsonRpcNotification, JsonRpcRequest, RequestId } from '../jsonrpc/types';
import { outboundVerdict } from '../protocol/gate';
import type { OutboundKind } from '../protocol/gate';
import type { Role } from '../protocol/methods';
import type { LoggingLevel } from '../protocol/types';
import { isAtLeast } from '../protocol/versions';
import type { TraceEvent } from '../trace/types';
import { systemClock, type Clock } from './clock';
import { ConnectionTrace } from './connection-trace';
import type { RequestCompletion, ResultCheck } from './correlation';
import { EventFacade } from './events';
import { InboundRequests, type HandlerTable, type RequestHandler } from './inbound-requests';
import { Router } from './router';
import { defaultLogger, logMcpMessage, type Logger } from './logger';
import { asTransportError, OutboundRequests, type SendOptions } from './outbound-requests';
import { defaultRuntime, type Runtime } from './runtime';
import type { Transport, TransportSendOptions } from './transport';
import { sharedTimers } from './timer-queues';

export { CLOSE_TIMEOUT_MS } from '../../machines/connection';
export { handlerTable, PROGRESS_REPLY_DELAY_MS, type HandlerTable, type RequestHandler } from './inbound-requests';
export type { SendOptions } from './outbound-requests';

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
   * The name a person reads for this connection in its trace events (the CLI gives its target). Default: the
   * upstream's name for a hub's upstream, else the peer's name once it is known (`clientInfo`/`serverInfo`).
   */
  readonly name?: string;
  /**
   * How long the response to a request that reported progress waits after its last progress notification
   * left, in ms (`PROGRESS_REPLY_DELAY_MS`, 10), so SDK v1 clients read them apart and see the progress.
   */
  readonly progressReplyDelayMs?: number;
}

export interface ConnectionEvents {
  notification: (message: JsonRpcNotification) => void;
  close: (reason: QuitReason) => void;
}

let connectionCount = 0;

/**
 * One MCP connection, either role: the facade (`request`, `notify`, `close`, `attach`), the router for
 * inbound frames, and the host of its lifecycle actor (machines/connection.ts). Its parts: the gate
 * (lib/protocol/gate.ts) decides what may flow, the correlation table settles outbound requests, the
 * inbound requests (inbound-requests.ts) run handlers and answer, and the trace (connection-trace.ts)
 * reports it all.
 *
 * Routing is one switch on the structural kind of each inbound frame: responses settle correlation
 * records, requests go to the role's handler table, notifications to the built-in ones (cancel, progress)
 * and then to `notifications$`. Streams for subscribers are created on first use.
 */
export abstract class Connection {
  readonly id: string;
  abstract readonly role: Role;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The upstream server a hub reaches through this connection (`ConnectionOptions.upstream`). */
  readonly upstream: string | undefined;
  /** Resolves with the quit reason once the connection is closed, whoever closed it. */
  readonly closed: Promise<QuitReason>;
  /** @internal The lifecycle actor (see machines/connection). */
  readonly actor: Actor<typeof connectionLifecycle>;

  /** @internal */
  protected abstract readonly handlers: HandlerTable<any>;
  /** The capabilities this side declared: they gate inbound requests and the notifications we may send. */
  abstract readonly capabilities: Readonly<Record<string, unknown>>;

  private readonly options: ConnectionOptions;
  private readonly runtime: Runtime;
  private readonly tracing: ConnectionTrace;
  /** Requests we sent; created with the transport. */
  private outbound: OutboundRequests | undefined;
  /** Requests the peer sent, of either era; created with the first (a client may never get one). */
  private inboundTable: InboundRequests | undefined;
  /** Routes the transport's frames; created with the transport. */
  private router: Router | undefined;
  private transport: Transport | undefined;
  private subscription: Subscription | undefined;
  private resolveClosed: ((reason: QuitReason) => void) | undefined;
  private notificationSubject: Subject<JsonRpcNotification> | undefined;
  private eventFacade: EventFacade<ConnectionEvents> | undefined;

  constructor(idPrefix: string, options: ConnectionOptions = {}) {
    this.id = `${idPrefix}${++connectionCount}`;
    this.options = options;
    this.clock = sharedTimers(options.clock ?? systemClock);
    this.logger = options.logger ?? defaultLogger;
    this.upstream = options.upstream;
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    const runtime = (this.runtime = options.runtime ?? defaultRuntime());
    this.tracing = new ConnectionTrace(this, runtime);
    this.actor = createActor(connectionLifecycle, { input: { host: this }, parent: runtime.root }).start();
  }

  // ---- state -------------------------------------------------------------------------------------

  get state(): ConnectionState {
    return this.actor.getSnapshot().value;
  }

  /** The name its trace events carry: `ConnectionOptions.name`, else the upstream's, else the role's default. */
  get name(): string | undefined {
    return this.options.name ?? this.upstream ?? this.defaultName;
  }

  /** The name of a connection its options do not name: the peer's (`clientInfo`/`serverInfo`), once known. */
  protected get defaultName(): string | undefined {
    const peer = this.negotiated?.peerInfo?.name;
    return typeof peer === 'string' ? peer : undefined;
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
    return this.outbound?.size ?? 0;
  }

  /** Inbound requests whose handlers have not finished. */
  get activeHandlerCount(): number {
    return this.inboundTable?.size ?? 0;
  }

  // ---- streams and events ------------------------------------------------------------------------

  /**
   * Every message in and out and every lifecycle change; completes once the connection has closed.
   * Costs nothing while nobody subscribes.
   */
  get trace$(): Observable<TraceEvent> {
    return this.tracing.events$;
  }

  /** @internal This connection's tracer: what a role traces of its own (a client's era probe). */
  protected get tracer(): ConnectionTrace {
    return this.tracing;
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
   * `TransportError`, `CapabilityNotSupportedError`, `MethodRemovedError` (the peer's revision removed the
   * method), `NotReadyError`, `LimitExceededError`.
   */
  request(method: string, params?: JsonObject, options?: SendOptions): Promise<JsonObject> {
    return this.sendRequest(method, params, options, undefined);
  }

  /**
   * @internal `request`, with what the caller gets made by `completion` in the step that settles it (see
   * `RequestCompletion`).
   */
  protected sendRequest(
    method: string,
    params: JsonObject | undefined,
    options: SendOptions | undefined,
    completion: RequestCompletion | undefined,
  ): Promise<JsonObject> {
    const refusal = this.refuseOutbound(method, 'request');
    if (refusal) return Promise.reject(refusal);
    const instrumentation = this.runtime.instrumentation;
    let parent;
    if (instrumentation) {
      const related = options?.relatedRequestId;
      parent =
        options?.parentRequest?.traceSpan ?? (related === undefined ? undefined : this.inboundTable?.spanOf(related));
    }
    const check = this.resultCheck(method, options);
    return this.outbound!.request(method, params, options, check, completion, instrumentation, parent);
  }

  notify(method: string, params?: JsonObject, options?: TransportSendOptions): Promise<void> {
    const refusal = this.refuseOutbound(method, 'notification');
    if (refusal) return Promise.reject(refusal);
    const message: JsonRpcNotification =
      params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };
    return this.outbound!.send(message, options);
  }

  /** Local diagnostics for roles that cannot log to the peer; `ServerConnection` overrides it. */
  log(level: LoggingLevel, data: unknown, logger?: string, _relatedRequestId?: RequestId): Promise<void> {
    logMcpMessage(this.logger, level, data, logger);
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
    if (this.transport || this.state !== 'uninitialized') throw this.alreadyConnected();
    this.transport = transport;
    this.tracing.attach(transport);
    this.outbound = new OutboundRequests(this, transport, this.tracing, this.options);
    this.router = new Router(this, this.outbound, this.tracing);
    this.subscription = transport.messages.subscribe(this.router);
    transport.start?.().then(undefined, (error: unknown) => this.transportEnded(error));
  }

  /** @internal Why a connection takes no second transport, nor one once it has closed. */
  protected alreadyConnected(): Error {
    return new Error(
      `Connection ${this.id} already has a transport or has closed; create a new ${this.role} for another connection`,
    );
  }

  /** Sends a message as it is, past the gate, traced (what a stateless request's handler sends on its way). */
  protected sendMessage(message: JsonRpcMessage, options?: TransportSendOptions): Promise<void> {
    const outbound = this.outbound;
    if (!outbound || this.state === 'closed')
      return Promise.reject(new ConnectionClosedError('The connection is closed'));
    return outbound.send(message, options);
  }

  /**
   * @internal Role hook, asked by the router for each request before the gate: true when the role served
   * (or refused) it itself. A server serves the requests of the stateless revision here, through the same
   * inbound requests (`inbound`) as the others.
   */
  takeRequest(_message: JsonRpcRequest, _inBatch: boolean): boolean {
    return false;
  }

  /** Tells the transport the negotiated revision (HTTP puts it in a header); both roles call it. */
  protected announceVersion(version: string): void {
    this.transport?.setProtocolVersion?.(version);
  }

  /** @internal Sends `event` to the lifecycle actor, unless the connection is closed. */
  protected transition(event: ConnectionEvent): void {
    if (this.state !== 'closed') this.actor.send(event);
  }

  /**
   * @internal Role hook: how the result of an outbound `method` request is checked before it resolves (none
   * by default).
   */
  protected resultCheck(_method: string, _options: SendOptions | undefined): ResultCheck | undefined {
    return undefined;
  }

  /** Role hook for notifications other than cancel and progress. */
  protected onNotification(_message: JsonRpcNotification): void {}

  /** Emits a role's event on `events`; nothing is built while nobody has asked for `events`. */
  protected emitEvent(event: string, ...args: unknown[]): void {
    (this.eventFacade as EventFacade<Record<string, (...args: unknown[]) => void>> | undefined)?.emit(event, ...args);
  }

  /** Role hook: the connection has closed. */
  protected onClosed(): void {}

  // ---- hosted parts (the lifecycle, the correlation table, request contexts) ----------------------

  /** @internal How a handler ends the stream carrying request `id`, when the transport can (`Transport.closeStream`). */
  streamCloser(id: RequestId): (() => Promise<boolean>) | undefined {
    const transport = this.transport;
    return transport?.closeStream && (() => transport.closeStream!(id));
  }

  /** @internal Lifecycle: entered `closing`. The lifecycle itself gives up on the transport after `CLOSE_TIMEOUT_MS`. */
  beginClose(reason: QuitReason): void {
    this.releaseInFlight(reason);
    const transport = this.transport;
    if (!transport) queueMicrotask(() => this.transition({ type: 'transport.closed', reason }));
    else
      transport.close().then(
        () => this.transition({ type: 'transport.closed', reason }),
        () => this.transition({ type: 'transport.closed', reason }),
      );
  }

  /** @internal Lifecycle: entered `closed`, whichever way it got there. */
  finishClose(reason: QuitReason): void {
    const resolve = this.resolveClosed;
    if (!resolve) return;
    this.resolveClosed = undefined;
    this.releaseInFlight(reason);
    this.outbound?.dispose();
    this.subscription?.unsubscribe();
    this.subscription = undefined;
    this.transport?.close().catch(() => undefined);
    resolve(reason);
    this.eventFacade?.emit('close', reason);
    this.notificationSubject?.complete();
    this.onClosed();
  }

  /** @internal Lifecycle: the state changed. */
  lifecycleChanged(from: ConnectionState, to: ConnectionState, quitReason: QuitReason | undefined): void {
    this.tracing.lifecycle(from, to, quitReason);
  }

  /**
   * @internal Closes the connection because handling its peer's input threw: one log line, and the
   * `closing` lifecycle trace event carries the `internal-error` quit reason. Other connections are untouched.
   */
  failInternally(error: unknown): void {
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

  /** @internal The transport's stream ended; `error` is set when it failed. */
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

  private releaseInFlight(reason: QuitReason): void {
    this.outbound?.failAll(reason.message, reason.error);
    this.inboundTable?.cancelAll(reason.message);
  }

  /** @internal The requests the peer sent that are being handled, whatever their era (made with the first). */
  get inbound(): InboundRequests {
    return (this.inboundTable ??= new InboundRequests(
      this,
      this.transport!,
      this.tracing,
      this.runtime.instrumentation,
      this.options,
    ));
  }

  /** @internal The handler of inbound `method` (the router asks per request). */
  handlerFor(method: string): RequestHandler<any> | undefined {
    return this.handlers[method];
  }

  /** @internal The router passes on a notification from the peer (cancel and progress are `builtIn`). */
  notified(message: JsonRpcNotification, builtIn: boolean): void {
    if (!builtIn) this.onNotification(message);
    this.notificationSubject?.next(message);
    this.eventFacade?.emit('notification', message);
  }

  // ---- helpers -----------------------------------------------------------------------------------

  /** Why we may not send `method` now (the gate's verdict as an error), or undefined. */
  private refuseOutbound(method: string, kind: OutboundKind): Error | undefined {
    if (!this.transport) {
      const state = this.state;
      if (state !== 'closing' && state !== 'closed') return new NotReadyError(`Cannot send ${method}: not connected`);
    }
    const verdict = outboundVerdict(this, method, kind);
    if (verdict.kind === 'allow') return undefined;
    if (verdict.reason === 'closed') return new ConnectionClosedError(verdict.message);
    if (verdict.reason === 'not-ready') return new NotReadyError(verdict.message);
    if (verdict.reason === 'removed') {
      return new MethodRemovedError(method, verdict.removal.revision, verdict.removal.replacement);
    }
    return new CapabilityNotSupportedError(method, verdict.message);
  }
}
