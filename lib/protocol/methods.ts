import type { CapabilityPath } from './capabilities';
import type { ProtocolVersion } from './versions';

export type Role = 'client' | 'server';

/** Who may send a message: the client, the server, or either. */
export type Direction = 'toServer' | 'toClient' | 'both';

export interface MethodSpec {
  readonly kind: 'request' | 'notification';
  readonly direction: Direction;
  /**
   * The capability that gates the method. For requests it is always the receiver's; for notifications
   * `capabilityOf` says whose (list_changed flags are the sender's, `elicitation.url` is the receiver's).
   */
  readonly capability?: CapabilityPath;
  readonly capabilityOf?: 'sender' | 'receiver';
  /** The first revision in which the capability gate applies (completions had no flag in 2024-11-05). */
  readonly capabilitySince?: ProtocolVersion;
  /** The first revision that defines the method. */
  readonly since: ProtocolVersion;
}

const request = (
  direction: Direction,
  since: ProtocolVersion,
  capability?: CapabilityPath,
  capabilitySince?: ProtocolVersion,
): MethodSpec => ({
  kind: 'request',
  direction,
  since,
  ...(capability && { capability, capabilityOf: 'receiver' as const }),
  ...(capabilitySince && { capabilitySince }),
});

const notification = (
  direction: Direction,
  since: ProtocolVersion,
  capability?: CapabilityPath,
  capabilityOf: 'sender' | 'receiver' = 'sender',
): MethodSpec => ({
  kind: 'notification',
  direction,
  since,
  ...(capability && { capability, capabilityOf }),
});

/** Every MCP method and notification of revisions 2024-11-05 to 2025-11-25. */
export const METHODS: Readonly<Record<string, MethodSpec>> = Object.freeze({
  initialize: request('toServer', '2024-11-05'),
  ping: request('both', '2024-11-05'),
  'tools/list': request('toServer', '2024-11-05', ['tools']),
  'tools/call': request('toServer', '2024-11-05', ['tools']),
  'resources/list': request('toServer', '2024-11-05', ['resources']),
  'resources/templates/list': request('toServer', '2024-11-05', ['resources']),
  'resources/read': request('toServer', '2024-11-05', ['resources']),
  'resources/subscribe': request('toServer', '2024-11-05', ['resources', 'subscribe']),
  'resources/unsubscribe': request('toServer', '2024-11-05', ['resources', 'subscribe']),
  'prompts/list': request('toServer', '2024-11-05', ['prompts']),
  'prompts/get': request('toServer', '2024-11-05', ['prompts']),
  'completion/complete': request('toServer', '2024-11-05', ['completions'], '2025-03-26'),
  'logging/setLevel': request('toServer', '2024-11-05', ['logging']),
  'sampling/createMessage': request('toClient', '2024-11-05', ['sampling']),
  'roots/list': request('toClient', '2024-11-05', ['roots']),
  'elicitation/create': request('toClient', '2025-06-18', ['elicitation']),
  'tasks/get': request('both', '2025-11-25', ['tasks']),
  'tasks/result': request('both', '2025-11-25', ['tasks']),
  'tasks/list': request('both', '2025-11-25', ['tasks', 'list']),
  'tasks/cancel': request('both', '2025-11-25', ['tasks', 'cancel']),

  'notifications/initialized': notification('toServer', '2024-11-05'),
  'notifications/cancelled': notification('both', '2024-11-05'),
  'notifications/progress': notification('both', '2024-11-05'),
  'notifications/message': notification('toClient', '2024-11-05', ['logging']),
  'notifications/resources/list_changed': notification('toClient', '2024-11-05', ['resources', 'listChanged']),
  'notifications/resources/updated': notification('toClient', '2024-11-05', ['resources', 'subscribe']),
  'notifications/prompts/list_changed': notification('toClient', '2024-11-05', ['prompts', 'listChanged']),
  'notifications/tools/list_changed': notification('toClient', '2024-11-05', ['tools', 'listChanged']),
  'notifications/roots/list_changed': notification('toServer', '2024-11-05', ['roots', 'listChanged']),
  'notifications/elicitation/complete': notification('toClient', '2025-11-25', ['elicitation', 'url'], 'receiver'),
  'notifications/tasks/status': notification('both', '2025-11-25'),
});

export function methodSpec(method: string): MethodSpec | undefined {
  return Object.prototype.hasOwnProperty.call(METHODS, method) ? METHODS[method] : undefined;
}

/** Whether a party in `role` may send this method at all. */
export function maySend(spec: MethodSpec, role: Role): boolean {
  return spec.direction === 'both' || spec.direction === (role === 'client' ? 'toServer' : 'toClient');
}
