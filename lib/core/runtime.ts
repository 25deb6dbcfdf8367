/**
 * The runtime: one XState actor system that every connection (and every other lifecycle actor: HTTP
 * sessions, a hub's upstreams) joins, and the trace stream of all of them.
 */
import type { Observable } from 'rxjs';
import { createActor, fromTransition, type AnyActorRef, type InspectionEvent, type Observer } from 'xstate';
import { TraceChannel } from '../trace/channel';
import { actorLifecycleEvent } from '../trace/event';
import type { RequestInstrumentation } from '../trace/instrumentation';
import { secretsRedactor, type Redactor } from '../trace/redact';
import type { TraceEvent } from '../trace/types';
import { machineIdOf, observeLifecycleChanges, type LifecycleChange } from '../trace/xstate-inspection';
import { connectionLifecycle } from '../../machines/connection';
import { backgroundClock, systemClock, type Clock } from './clock';
import { indexDelayedEvents } from './indexed-scheduler';
import { sharedTimers } from './timer-queues';

export interface RuntimeOptions {
  /**
   * Drives XState's scheduler for every actor of this runtime (its timers never hold the process open on
   * their own), and times its actors' trace events.
   */
  readonly clock?: Clock;
  /** XState inspection for every actor of this runtime (connections included). */
  readonly inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /**
   * Runs on every trace event of this runtime's connections before any subscriber or sink sees it, and on
   * the payloads an instrumentation records (see `createRedactor`).
   */
  readonly redact?: Redactor;
  /** A span per request on every connection of this runtime (`openTelemetry()` from `mcp-switchboard/trace/otel`). */
  readonly instrumentation?: RequestInstrumentation;
}

/**
 * One XState actor system. Every connection's lifecycle actor is a child of its runtime's root, so one
 * inspector sees them all and a connection costs no system of its own. A connection stays registered
 * until it closes: close what you connect.
 *
 * `trace$` is every message and lifecycle change of every connection of this runtime (each connection
 * publishes its own), and the state changes of its other actors, from XState's inspection API, attached
 * only while someone subscribes here.
 */
export class Runtime {
  readonly root: AnyActorRef;
  readonly clock: Clock;
  readonly redact: Redactor | undefined;
  readonly instrumentation: RequestInstrumentation | undefined;
  /** @internal Where connections publish what `trace$` shows. */
  readonly traceChannel = new TraceChannel((observed) => this.traceDemand(observed));
  private demand = 0;
  private inspection: { unsubscribe(): void } | undefined;

  constructor(options: RuntimeOptions = {}) {
    this.clock = options.clock ?? systemClock;
    // Credentials never reach a trace: a runtime without its own redactor still hides tokens and secrets.
    this.redact = options.redact ?? secretsRedactor;
    this.instrumentation = options.instrumentation;
    // The root only parents connections: it ignores the done events they send when they close. Its
    // system's delayed events are lifecycle timers, which never hold the process open on their own.
    this.root = createActor(
      fromTransition((state: null) => state, null),
      {
        clock: backgroundClock(sharedTimers(this.clock)),
        ...(options.inspect && { inspect: options.inspect }),
      },
    ).start();
    indexDelayedEvents(this.root.system);
  }

  /** Every trace event of this runtime. Costs nothing while nobody subscribes. */
  get trace$(): Observable<TraceEvent> {
    return this.traceChannel.events$;
  }

  /** The runtime's trace stream gained (true) or lost its last subscriber: inspection follows. */
  private traceDemand(observed: boolean): void {
    if (observed) {
      if (this.demand++ === 0) this.inspection = observeLifecycleChanges(this.root.system, this.onLifecycleChange);
    } else if (--this.demand === 0) {
      this.inspection?.unsubscribe();
      this.inspection = undefined;
    }
  }

  private readonly onLifecycleChange = (change: LifecycleChange): void => {
    // Connections trace their own lifecycle (with their quit reason), whoever listens.
    if (change.actor.src === connectionLifecycle) return;
    if (this.traceChannel.observed) {
      const { actor, from, to } = change;
      this.traceChannel.next(
        actorLifecycleEvent(this.clock.now(), actor.id, machineIdOf(actor), from, to, reasonOf(change)),
      );
    }
  };
}

/**
 * Why an actor changed state: the error or output it ended with, else what the event that moved it says
 * (an `error`, or a `reason`, as the upstream machine's failure and stop events carry).
 */
function reasonOf({ snapshot, cause }: LifecycleChange): string | undefined {
  const ending =
    snapshot.status === 'error' ? snapshot.error : snapshot.status === 'done' ? snapshot.output : undefined;
  const { error, reason } = cause as { error?: unknown; reason?: unknown };
  return messageOf(ending) ?? messageOf(error) ?? (typeof reason === 'string' ? reason : messageOf(reason));
}

function messageOf(value: unknown): string | undefined {
  const message = (value as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? message : undefined;
}

let shared: Runtime | undefined;

/** The process-wide runtime used when a connection is given none. */
export function defaultRuntime(): Runtime {
  return (shared ??= new Runtime());
}
