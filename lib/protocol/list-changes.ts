/**
 * The server lists a client can be told have changed, in one place: each list's `list_changed` notification,
 * the capability that announces it, and the field of a `subscriptions/listen` filter (2026-07-28) that asks
 * for it. The handshake era sends the notification on the session; the stateless era on a listen stream.
 */
import type { CapabilityPath } from './capabilities';

/** A server list that can change: its cache, its notification and its capability are named after it. */
export type ChangeableList = 'tools' | 'resources' | 'prompts';

/** The field of a listen filter that asks for a list's changes (and the kind of the server's change event). */
export type ListChangedKind = 'toolsListChanged' | 'promptsListChanged' | 'resourcesListChanged';

/** Which notifications a listen stream asks for (schema `SubscriptionFilter`); each kind is opt-in. */
export interface ListenFilter {
  readonly toolsListChanged?: boolean;
  readonly promptsListChanged?: boolean;
  readonly resourcesListChanged?: boolean;
  /** `notifications/resources/updated` for these URIs (what `resources/subscribe` did in the handshake era). */
  readonly resourceSubscriptions?: readonly string[];
}

/** One list's change: what announces it, what reports it, what asks for it. */
export interface ListChange {
  readonly list: ChangeableList;
  /** The notification that reports the change. */
  readonly method: `notifications/${ChangeableList}/list_changed`;
  /** The sender's capability that announces the notification (`<list>.listChanged`). */
  readonly capability: CapabilityPath;
  /** The listen filter field that asks for it. */
  readonly filterField: ListChangedKind;
}

const change = (list: ChangeableList, filterField: ListChangedKind): ListChange =>
  Object.freeze({
    list,
    method: `notifications/${list}/list_changed` as const,
    capability: Object.freeze([list, 'listChanged']),
    filterField,
  });

/** Every list change, tools first (the order a listen filter and a server's update name them in). */
export const LIST_CHANGES: readonly ListChange[] = Object.freeze([
  change('tools', 'toolsListChanged'),
  change('prompts', 'promptsListChanged'),
  change('resources', 'resourcesListChanged'),
]);

function indexBy<K extends string>(key: (entry: ListChange) => K): Readonly<Record<K, ListChange>> {
  const index = Object.create(null) as Record<K, ListChange>;
  for (const entry of LIST_CHANGES) index[key(entry)] = entry;
  return Object.freeze(index);
}

/** Each list's change, by list. */
export const LIST_CHANGE_OF_LIST: Readonly<Record<ChangeableList, ListChange>> = indexBy((entry) => entry.list);

/** Each list's change, by the listen filter field that asks for it. */
export const LIST_CHANGE_OF_FILTER: Readonly<Record<ListChangedKind, ListChange>> = indexBy(
  (entry) => entry.filterField,
);

const BY_METHOD: Readonly<Record<string, ListChange>> = indexBy((entry) => entry.method);

/** The list change a notification reports, or undefined when it reports none. */
export function listChangeOf(method: string): ListChange | undefined {
  return BY_METHOD[method];
}
