import { expect, it } from 'vitest';

export interface TransitionTableSpec<S extends string, E extends string, From extends S = S> {
  /** state -> event -> next state; an event absent for a state is ignored there (final states may be left out). */
  readonly table: Record<From, Partial<Record<E, S>>>;
  readonly events: readonly E[];
  /** The events that lead from the initial state to each state. */
  readonly paths: Record<S, readonly E[]>;
  /** A fresh actor: `send` names events, `state` reads its state. */
  readonly spawn: () => { send: (...events: E[]) => void; state: () => S };
}

/** One `it` per state and event: from the state (reached by its path) the event leads where the table says. */
export function itFollowsTheTable<S extends string, E extends string, From extends S>(
  spec: TransitionTableSpec<S, E, From>,
): void {
  for (const from of Object.keys(spec.table) as From[]) {
    for (const event of spec.events) {
      const target = spec.table[from][event];
      it(`${from} + ${event} -> ${target ?? `${from} (ignored)`}`, () => {
        const { send, state } = spec.spawn();
        send(...spec.paths[from]);
        expect(state()).toBe(from);
        send(event);
        expect(state()).toBe(target ?? from);
      });
    }
  }
}
