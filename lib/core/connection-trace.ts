/**
 * A connection's tracing: its `trace$` stream, the trace events of its messages and lifecycle (published
 * to its own stream and its runtime's, redacted once), and the spans of its requests when the runtime
 * has an instrumentation. Nothing is built while nobody listens: `on` is two property reads.
 */
import type { Observable } from 'rxjs';
import type { ConnectionState, QuitReason } from '../../machines/connection';
import { isParamsObject } from '../jsonrpc/classify';
import type { JsonObject, JsonRpcRequest, RequestId } from '../jsonrpc/types';
import { TraceChannel } from '../trace/channel';
import { connectionLifecycleEvent, connectionPartEvent, messageTraceEvent, type SpanIds } from '../trace/event';
import {
  withMetaEntries,
  type RequestInstrumentation,
  type RequestOutcome,
  type RequestSpan,
  type SessionTiming,
  type TracedRequest,
} from '../trace/instrumentation';
import { REDACTED, redactTraceEvent } from '../trace/redact';
import type { TraceCause, TraceEvent, TraceKind, TraceOrigin } from '../trace/types';
import type { Clock } from './clock';
import type { PendingRequest } from './correlation';
import type { Logger } from './logger';
import type { Runtime } from './runtime';
import type { Transport } from './transport';

/** What the tracer reads of its connection. */
export interface TracedConnection extends TraceOrigin {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly state: ConnectionState;
  readonly protocolVersion: string | undefined;
}

export class ConnectionTrace {
  private channel: TraceChannel | undefined;
  /** Where a span reads the session id and the network from (set once the connection has its transport). */
  private transport: Pick<Transport, 'sessionId' | 'network'> | undefined;
  /** The connection's session, timed while an instrumentation with `startSession` watches. */
  private session: SessionTiming | undefined;

  constructor(
    private readonly connection: TracedConnection,
    private readonly runtime: Runtime,
  ) {}

  /** Whether anyone listens (to this connection's stream or its runtime's). */
  get on(): boolean {
    return this.channel?.observed === true || this.runtime.traceChannel.observed;
  }

  /** The connection's own stream; completes once the connection has closed (at once for a closed one). */
  get events$(): Observable<TraceEvent> {
    if (!this.channel) {
      this.channel = new TraceChannel();
      if (this.connection.state === 'closed') this.channel.complete();
    }
    return this.channel.events$;
  }

  /** A message in or out (or one dropped, with the reason). Callers on hot paths check `on` first. */
  message(
    kind: TraceKind,
    direction: 'in' | 'out',
    message: unknown,
    method?: string,
    id?: RequestId,
    reason?: string,
    latencyMs?: number,
    cause?: TraceCause,
    span?: SpanIds,
  ): void {
    if (!this.on) return;
    const connection = this.connection;
    const time = connection.clock.now();
    this.publish(
      messageTraceEvent(connection, time, kind, direction, message, method, id, reason, latencyMs, cause, span),
    );
  }

  /** The id this trace's events name as their connection (a stateless request over HTTP has one of its own). */
  get originId(): string {
    return this.connection.id;
  }

  /** The connection has its transport: its spans and session say what it runs over. */
  attach(transport: Pick<Transport, 'sessionId' | 'network'>): void {
    this.transport = transport;
  }

  /**
   * The lifecycle moved; on `closed` the connection's stream ends, after this last event. The session is timed
   * from `ready` (the handshake done) or `modern` (the era settled as stateless) to `closed`.
   */
  lifecycle(from: ConnectionState, to: ConnectionState, quit: QuitReason | undefined): void {
    if (this.on) this.publish(connectionLifecycleEvent(this.connection, this.connection.clock.now(), from, to, quit));
    if (to === 'ready' || to === 'modern') this.startSession();
    else if (to === 'closed') {
      this.endSession(quit);
      this.channel?.complete();
    }
  }

  /**
   * A part of this connection that is not its lifecycle machine moved (`actor`: the client's `era-probe`):
   * a lifecycle event on the connection's lane, naming the part.
   */
  partLifecycle(actor: string, from: string, to: string, reason: string | undefined): void {
    if (!this.on) return;
    const connection = this.connection;
    this.publish(connectionPartEvent(connection, connection.clock.now(), actor, from, to, reason));
  }

  /** Starts the span of an outbound request on its record, ends it however the request settles; returns the params to send. */
  startOutboundSpan(
    instrumentation: RequestInstrumentation,
    record: PendingRequest,
    params: JsonObject | undefined,
    parent: RequestSpan | undefined,
  ): JsonObject | undefined {
    const span = instrumentation.startOutbound(
      this.tracedRequest(record.method, record.id, params, record.startedAt, parent),
    );
    if (!span) return params;
    record.span = span;
    record.promise
      .then(
        (result) => this.endSpan(span, { kind: 'result', result }),
        (error: unknown) => this.endSpan(span, { kind: 'error', error }),
      )
      .then(undefined, (error: unknown) =>
        this.connection.logger.error('The instrumentation failed to end a span', error),
      );
    return span.meta ? withMetaEntries(params, span.meta) : params;
  }

  startInboundSpan(
    instrumentation: RequestInstrumentation | undefined,
    message: JsonRpcRequest,
  ): RequestSpan | undefined {
    if (!instrumentation) return undefined;
    const params = isParamsObject(message.params) ? message.params : undefined;
    return instrumentation.startInbound(
      this.tracedRequest(message.method, message.id, params, this.connection.clock.now(), undefined),
    );
  }

  endSpan(span: RequestSpan, outcome: RequestOutcome): void {
    span.end(outcome, this.connection.clock.now());
  }

  private startSession(): void {
    const instrumentation = this.runtime.instrumentation;
    if (!instrumentation?.startSession || this.session) return;
    const connection = this.connection;
    const transport = this.transport;
    try {
      this.session = instrumentation.startSession({
        connection: connection.id,
        role: connection.role,
        upstream: connection.upstream,
        protocolVersion: connection.protocolVersion,
        sessionId: transport?.sessionId,
        network: transport?.network,
        time: connection.clock.now(),
      });
    } catch (error) {
      connection.logger.error('The instrumentation failed to start a session', error);
    }
  }

  /** A close by either side ends the session plainly; a failure (transport, internal) with its error. */
  private endSession(quit: QuitReason | undefined): void {
    const session = this.session;
    if (!session) return;
    this.session = undefined;
    const failed = quit !== undefined && quit.kind !== 'local-close' && quit.kind !== 'transport-closed';
    try {
      session.end(failed ? (quit.error ?? new Error(quit.message)) : undefined, this.connection.clock.now());
    } catch (error) {
      this.connection.logger.error('The instrumentation failed to end a session', error);
    }
  }

  /** Redacts `event` (once, whoever listens) and hands it to this connection's stream and its runtime's. */
  private publish(event: TraceEvent): void {
    const redact = this.runtime.redact;
    let shown = event;
    if (redact) {
      try {
        shown = redactTraceEvent(event, redact);
      } catch (error) {
        this.connection.logger.error('The trace redactor threw: the message is left out of the trace event', error);
        shown = { ...event, message: REDACTED };
      }
    }
    const own = this.channel;
    if (own?.observed) own.next(shown);
    const shared = this.runtime.traceChannel;
    if (shared.observed) shared.next(shown);
  }

  private tracedRequest(
    method: string,
    id: RequestId,
    params: JsonObject | undefined,
    time: number,
    parent: RequestSpan | undefined,
  ): TracedRequest {
    const connection = this.connection;
    return {
      connection: connection.id,
      role: connection.role,
      upstream: connection.upstream,
      protocolVersion: connection.protocolVersion,
      method,
      id,
      params,
      time,
      parent,
      redact: this.runtime.redact,
      sessionId: this.transport?.sessionId,
      network: this.transport?.network,
    };
  }
}
