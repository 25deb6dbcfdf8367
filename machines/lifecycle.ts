import { transition, type ActorLogic, type AnyStateMachine, type EventObject, type Snapshot } from 'xstate';

/**
 * Runs a small XState machine as cheap actor logic, for lifecycles that exist once per connection.
 *
 * XState computes every (state, event type) step of `machine` once, with its own algorithm, on first
 * use; each actor then replays the cached step: a map lookup instead of a macrostep (about 1 µs instead
 * of 4 µs per event, and a quarter of the creation cost). The machine stays the single definition of the
 * lifecycle; the actors are real XState actors (inspection, `done` status, output, parents).
 *
 * The machine must be flat, guard-free and context-free, with named actions only: per-actor data lives
 * in `data`, updated by `reduce` for every step taken, and actions are implemented in `actions`.
 */
export type LifecycleSnapshot<TValue extends string, TData, TOutput> = Snapshot<TOutput> & {
  readonly value: TValue;
  readonly data: TData;
};

interface Step {
  readonly target: string;
  readonly actions: readonly string[];
  readonly done: boolean;
}

export interface LifecycleDefinition<TEvent extends EventObject, TData, TInput, TOutput> {
  readonly machine: AnyStateMachine;
  readonly data: (input: TInput) => TData;
  /** The data after a step the machine took for `event` (only called for handled events). */
  readonly reduce: (data: TData, event: TEvent) => TData;
  /** Named actions, run after the new snapshot is in place, in the order XState lists them. */
  readonly actions: Readonly<Record<string, (data: TData, event: TEvent) => void>>;
  readonly output: (data: TData) => TOutput;
}

export function lifecycleLogic<TValue extends string, TEvent extends EventObject, TData, TInput, TOutput>(
  definition: LifecycleDefinition<TEvent, TData, TInput, TOutput>,
): ActorLogic<LifecycleSnapshot<TValue, TData, TOutput>, TEvent, TInput> {
  const { machine } = definition;
  const steps = new Map<string, Map<string, Step | null>>();

  const stepFor = (value: string, type: string): Step | null => {
    let byEvent = steps.get(value);
    if (!byEvent) steps.set(value, (byEvent = new Map()));
    let step = byEvent.get(type);
    if (step === undefined) {
      const from = machine.resolveState({ value, context: {} });
      const event = { type } as EventObject;
      if (from.can(event)) {
        const [next, actions] = transition(machine, from, event);
        step = {
          target: String(next.value),
          actions: actions.map((action) => action.type),
          done: next.status === 'done',
        };
      } else {
        step = null;
      }
      byEvent.set(type, step);
    }
    return step;
  };

  for (const step of Object.values(machine.config.states ?? {})) {
    if ((step as { states?: unknown }).states) throw new Error('lifecycleLogic runs flat machines only');
  }

  return {
    config: machine,
    getInitialSnapshot: (_scope, input) => ({
      status: 'active',
      output: undefined,
      error: undefined,
      value: String(machine.config.initial) as TValue,
      data: definition.data(input as TInput),
    }),
    transition: (snapshot, event, scope) => {
      if (snapshot.status !== 'active') return snapshot;
      const step = stepFor(snapshot.value, event.type);
      if (!step) return snapshot;
      const data = definition.reduce(snapshot.data, event);
      for (const name of step.actions) {
        const action = definition.actions[name];
        if (action) scope.defer(() => action(data, event));
      }
      const next = {
        status: step.done ? 'done' : 'active',
        output: step.done ? definition.output(data) : undefined,
        error: undefined,
        value: step.target as TValue,
        data,
      };
      return next as LifecycleSnapshot<TValue, TData, TOutput>;
    },
    getPersistedSnapshot: (snapshot) => snapshot,
  };
}
