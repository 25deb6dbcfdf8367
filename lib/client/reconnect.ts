/**
 * A client's reconnections, made by `connect` when the client has a reconnect policy: the link the
 * connection attaches (lib/client/reconnect-link.ts), the report of each step as a client event
 * (`reconnecting`, `reconnected`, `reconnectFailed`) and as a trace event (a lifecycle event of the
 * client's `reconnect` actor on its `trace$` and its runtime's), and `reconnected$`, where what the client
 * restores (resource subscriptions, listen streams, list caches) hears that it is back.
 */
import { merge, Subject, type Observable } from 'rxjs';
import type { Runtime } from '../core/runtime';
import type { Transport } from '../core/transport';
import { TraceChannel } from '../trace/channel';
import type { TraceEvent, TraceOrigin } from '../trace/types';
import type { Clock } from '../core/clock';
import { ReconnectingLink, type LinkHost, type ReconnectStep } from './reconnect-link';
import type { ReconnectPolicy } from './reconnect-policy';

/** What `reconnecting` reports: attempt `attempt` starts after `delayMs`; `reason` says what was lost or failed. */
export interface ReconnectingEvent {
  readonly attempt: number;
  readonly delayMs: number;
  readonly reason: string;
}

/** What `reconnected` reports: the attempt that succeeded (1 when the first did). */
export interface ReconnectedEvent {
  readonly attempt: number;
}

/** What `reconnectFailed` reports: attempt `attempt` failed with `error`; `final` when the client gives up. */
export interface ReconnectFailedEvent {
  readonly attempt: number;
  readonly error: Error;
  readonly final: boolean;
}

/** A client's events of its reconnections (`ClientConnectionEvents`). */
export interface ReconnectEvents {
  /** The connection was lost, or an attempt failed: attempt `attempt` starts after `delayMs`. */
  reconnecting: (event: ReconnectingEvent) => void;
  /** The client is connected again; its subscriptions are being restored. */
  reconnected: (event: ReconnectedEvent) => void;
  /** An attempt failed; with `final`, the client gives up and closes (its quit reason says why). */
  reconnectFailed: (event: ReconnectFailedEvent) => void;
}

/** What reconnections need of their client. */
export interface ReconnectHost extends TraceOrigin {
  readonly clock: Clock;
  /** Emits a client event (`reconnecting`, `reconnected`, `reconnectFailed`). */
  emit(event: ReconnectStep['type'], payload: ReconnectingEvent | ReconnectedEvent | ReconnectFailedEvent): void;
  reopen(transport: Transport, timeoutMs: number): Promise<void>;
  lost(reason: string): void;
  reconnected(): void;
}

/** The `reconnect` actor's state after each step, as its trace events name it. */
const STATE_AFTER: Readonly<Record<ReconnectStep['type'], string>> = {
  reconnecting: 'backing-off',
  reopening: 'reopening',
  reconnected: 'connected',
  reconnectFailed: 'failed',
};

export class ClientReconnect implements LinkHost {
  /** Emits each time the client is connected again; completes when the client has closed. */
  readonly reconnected$ = new Subject<void>();
  private link: ReconnectingLink | undefined;
  private trace: TraceChannel | undefined;
  private state = 'connected';

  constructor(
    private readonly policy: ReconnectPolicy,
    private readonly host: ReconnectHost,
    private readonly runtime: Runtime,
  ) {}

  get clock(): Clock {
    return this.host.clock;
  }

  /** True while the client is reconnecting. */
  get reconnecting(): boolean {
    return this.link?.reconnecting === true;
  }

  /** The transport the connection attaches: `first` now, the policy's next ones after each loss. */
  linked(first: Transport): Transport {
    return (this.link = new ReconnectingLink(first, this.policy, this));
  }

  /** The first connect succeeded: a loss from now on is reconnected. */
  arm(): void {
    this.link?.arm();
  }

  /** The connection's trace with the reconnect steps among its events. */
  trace$(connection$: Observable<TraceEvent>): Observable<TraceEvent> {
    return merge(connection$, (this.trace ??= new TraceChannel()).events$);
  }

  reopen(transport: Transport, timeoutMs: number): Promise<void> {
    return this.host.reopen(transport, timeoutMs);
  }

  lost(reason: string): void {
    this.host.lost(reason);
  }

  reconnected(): void {
    this.host.reconnected();
    this.reconnected$.next();
  }

  report(step: ReconnectStep): void {
    const { type, ...payload } = step;
    if (type !== 'reopening') this.host.emit(type, payload as ReconnectingEvent);
    const to = type === 'reconnectFailed' && step.final ? 'gave-up' : STATE_AFTER[type];
    this.traceStep(to, describe(step));
  }

  /** The client has closed: the streams end. */
  end(): void {
    this.reconnected$.complete();
    (this.trace ??= new TraceChannel()).complete();
  }

  private traceStep(to: string, reason: string): void {
    const from = this.state;
    this.state = to;
    const own = this.trace;
    const shared = this.runtime.traceChannel;
    if (!own?.observed && !shared.observed) return;
    const { id, role, upstream } = this.host;
    const event: TraceEvent = {
      time: this.host.clock.now(),
      connection: id,
      role,
      ...(upstream !== undefined && { upstream }),
      kind: 'lifecycle',
      actor: 'reconnect',
      from,
      to,
      reason,
    };
    if (own?.observed) own.next(event);
    if (shared.observed) shared.next(event);
  }
}

function describe(step: ReconnectStep): string {
  switch (step.type) {
    case 'reconnecting':
      return `attempt ${step.attempt} in ${step.delayMs} ms: ${step.reason}`;
    case 'reopening':
      return `attempt ${step.attempt}: reopening the transport`;
    case 'reconnected':
      return `connected again on attempt ${step.attempt}`;
    case 'reconnectFailed':
      return `attempt ${step.attempt} failed: ${step.error.message}${step.final ? ' (the last one: giving up)' : ''}`;
  }
}
