import { createActor, fromTransition, type AnyActorRef, type InspectionEvent, type Observer } from 'xstate';
import { systemClock, type Clock } from './clock';

export interface RuntimeOptions {
  /** Drives XState's scheduler for every actor of this runtime. */
  readonly clock?: Clock;
  /** XState inspection for every actor of this runtime (connections included). */
  readonly inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
}

/**
 * One XState actor system. Every connection's lifecycle actor is a child of its runtime's root, so one
 * inspector sees them all and a connection costs no system of its own. A connection stays registered
 * until it closes: close what you connect.
 */
export class Runtime {
  readonly root: AnyActorRef;

  constructor(options: RuntimeOptions = {}) {
    // The root only parents connections: it ignores the done events they send when they close.
    this.root = createActor(
      fromTransition((state: null) => state, null),
      {
        clock: options.clock ?? systemClock,
        ...(options.inspect && { inspect: options.inspect }),
      },
    ).start();
  }
}

let shared: Runtime | undefined;

/** The process-wide runtime used when a connection is given none. */
export function defaultRuntime(): Runtime {
  return (shared ??= new Runtime());
}
