/**
 * The one place that reads XState's inspection API: it turns `@xstate.event` / `@xstate.snapshot` records
 * into state changes (`from` -> `to`) of the actors of a system. Keeping it here confines XState's
 * inspection format (which v6 changes) to one module.
 */
import type { AnyActorRef, InspectionEvent } from 'xstate';

/** What a state change reports about the snapshot entered. */
export interface InspectedSnapshot {
  readonly status: string;
  readonly value?: unknown;
  readonly output?: unknown;
  readonly error?: unknown;
  /** The per-actor data of `lifecycleLogic` actors (machines/lifecycle.ts). */
  readonly data?: unknown;
}

export interface LifecycleChange {
  readonly actor: AnyActorRef;
  readonly from: string;
  readonly to: string;
  /** The snapshot entered; its `status` is `done` once the actor reached a final state. */
  readonly snapshot: InspectedSnapshot;
  /** The event that led there. */
  readonly cause: { readonly type: string };
}

export interface InspectableSystem {
  inspect(observer: (event: InspectionEvent) => void): { unsubscribe(): void };
}

/**
 * Calls `onChange` for every state change of every actor of `system` whose snapshot has a state value
 * (machines and `lifecycleLogic` actors), from now until the returned subscription ends.
 *
 * XState reports the snapshot entered but not the one left, so the state left is remembered per actor:
 * from its last snapshot, or (for an actor first seen now) read just before it takes an event, since the
 * `@xstate.event` record of an event comes before the actor processes it.
 */
export function observeLifecycleChanges(
  system: InspectableSystem,
  onChange: (change: LifecycleChange) => void,
): { unsubscribe(): void } {
  const states = new WeakMap<AnyActorRef, string>();
  return system.inspect((event) => {
    // Inspection types its refs as `ActorRefLike`; in a system they are actors.
    if (event.type === '@xstate.event') {
      const actor = event.actorRef as AnyActorRef;
      if (states.has(actor)) return;
      const value = stateValueOf(actor.getSnapshot() as InspectedSnapshot | undefined);
      if (value !== undefined) states.set(actor, value);
    } else if (event.type === '@xstate.snapshot') {
      const actor = event.actorRef as AnyActorRef;
      const snapshot = event.snapshot as InspectedSnapshot;
      const to = stateValueOf(snapshot);
      if (to === undefined) return;
      const from = states.get(actor);
      states.set(actor, to);
      if (from !== undefined && from !== to) onChange({ actor, from, to, snapshot, cause: event.event });
    }
  });
}

/** The id of the machine an actor runs (`connection`, `upstream`, `httpSession`, ...), when it has one. */
export function machineIdOf(actor: AnyActorRef): string | undefined {
  const src = (actor as { src?: unknown }).src;
  if (typeof src === 'string') return src;
  const logic = src as { id?: unknown; config?: { id?: unknown } } | undefined;
  const id = logic?.id ?? logic?.config?.id;
  return typeof id === 'string' ? id : undefined;
}

function stateValueOf(snapshot: InspectedSnapshot | undefined): string | undefined {
  const value = snapshot?.value;
  if (typeof value === 'string') return value;
  return value !== null && typeof value === 'object' ? statePath(value) : undefined;
}

/**
 * A nested state value as a person reads it: `{ running: { stopping: 'endingStdin' } }` is
 * `running.stopping.endingStdin`; the regions of a parallel state are joined with `, ` (`a.x, b.y`).
 */
export function statePath(value: unknown): string {
  return leafPaths(value).join(', ');
}

function leafPaths(value: unknown): string[] {
  if (value === null || typeof value !== 'object') return [String(value)];
  const paths: string[] = [];
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    const rest = typeof inner === 'object' && inner !== null && Object.keys(inner).length === 0 ? [] : leafPaths(inner);
    if (rest.length === 0) paths.push(key);
    else for (const path of rest) paths.push(`${key}.${path}`);
  }
  return paths;
}
