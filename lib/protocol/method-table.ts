/**
 * The method table: every MCP request and notification, with a column per era. The handshake era
 * (`initialize`, sessions: revisions 2024-11-05 to 2025-11-25) and the stateless era (2026-07-28 on: a `_meta`
 * envelope on every request) each say how the method flows in that era, or have no column when the era has no
 * such method; a method the stateless era removed says what replaced it. lib/protocol/methods.ts builds the
 * per-era lookups the gate, the classifier and the server read; tests check the table against the official
 * JSON schemas (test/protocol/method-table.test.ts).
 *
 * Result shapes are not here: `resultRules` (lib/protocol/result-rules.ts) holds them by the same method
 * names, per revision, and `resultChecks` (lib/protocol/results.ts) adds the stateless era's members.
 */
import type { CapabilityPath } from './capabilities';
import { LIST_CHANGES, type ChangeableList } from './list-changes';
import { META, type ModernProtocolVersion } from './modern';
import type { ProtocolVersion } from './versions';

/** Who may send a message: the client, the server, or either. */
export type Direction = 'toServer' | 'toClient' | 'both';

/** The two protocol eras: with the `initialize` handshake, and the stateless revision without it. */
export type ProtocolEra = 'handshake' | 'stateless';

/** A revision of either era. */
export type Revision = ProtocolVersion | ModernProtocolVersion;

/** How a method flows in one era: a column of the table. */
export interface MethodSpec {
  readonly kind: 'request' | 'notification';
  readonly direction: Direction;
  /**
   * The capability that declares the method. For requests it is always the receiver's; for notifications
   * `capabilityOf` says whose (list_changed flags are the sender's, `elicitation.url` is the receiver's).
   */
  readonly capability?: CapabilityPath;
  readonly capabilityOf?: 'sender' | 'receiver';
  /** The first revision in which the capability gate applies (completions had no flag in 2024-11-05). */
  readonly capabilitySince?: ProtocolVersion;
  /**
   * Declared when any of these is (the gate does not check them: a server without them refuses the method).
   * `subscriptions/listen`: something to listen to.
   */
  readonly declaredByAny?: readonly CapabilityPath[];
  /** The first revision of the era that defines the method. */
  readonly since: Revision;
  /** Stateless era: the request travels only inside an `input_required` result, never as a JSON-RPC request. */
  readonly inputRequest?: true;
  /** Stateless era: the request may be answered with an `input_required` result. */
  readonly mayRequireInput?: true;
  /** The list change the notification reports. */
  readonly listChange?: ChangeableList;
}

/** A method the stateless era removed: in which revision, and what replaced it (for the error message). */
export interface Removal {
  readonly revision: ModernProtocolVersion;
  readonly replacement: string;
}

/** One method: its columns, and what became of it. */
export interface MethodRow {
  readonly method: string;
  readonly handshake?: MethodSpec;
  readonly stateless?: MethodSpec;
  /** Removed by the stateless era (then it has no `stateless` column). */
  readonly removed?: Removal;
  /** Left MCP's core for this extension in the stateless era: a server implementing the extension serves it. */
  readonly movedTo?: string;
  /** Not MCP: the extension (ours) that defines it, declared under `capabilities.experimental[extension]`. */
  readonly extension?: string;
  /**
   * The stateless era's column as the MCP extension `movedTo` (or the one that added the method) defines it:
   * served by a server that declares the extension under `capabilities.extensions`.
   */
  readonly extensionColumn?: MethodSpec;
}

/** The experimental capability key under which a server offers our `resources/search` extension. */
export const RESOURCE_SEARCH_EXTENSION = 'io.github.mcp-switchboard/resources-search';

/** The extension 2026-07-28 moved tasks to. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

const STATELESS: ModernProtocolVersion = '2026-07-28';

type SpecOptions = Partial<Pick<MethodSpec, 'capabilitySince' | 'inputRequest' | 'mayRequireInput' | 'declaredByAny'>>;

function request(
  direction: Direction,
  since: Revision,
  capability?: CapabilityPath,
  options?: SpecOptions,
): MethodSpec {
  return Object.freeze({
    kind: 'request' as const,
    direction,
    since,
    ...(capability && { capability, capabilityOf: 'receiver' as const }),
    ...options,
  });
}

function notification(
  direction: Direction,
  since: Revision,
  capability?: CapabilityPath,
  { capabilityOf = 'sender', listChange }: { capabilityOf?: 'sender' | 'receiver'; listChange?: ChangeableList } = {},
): MethodSpec {
  return Object.freeze({
    kind: 'notification' as const,
    direction,
    since,
    ...(capability && { capability, capabilityOf }),
    ...(listChange && { listChange }),
  });
}

/** A request of both eras: the handshake era's from `since`, the stateless era's from its first revision. */
function bothEras(direction: Direction, since: ProtocolVersion, capability?: CapabilityPath, stateless?: SpecOptions) {
  return {
    handshake: request(direction, since, capability),
    stateless: request(direction, STATELESS, capability, stateless),
  };
}

const removed = (replacement: string): Removal => Object.freeze({ revision: STATELESS, replacement });

const NO_HANDSHAKE = removed(
  'the revision has no handshake: every request carries its own _meta envelope (see server/discover)',
);
const TASKS_MOVED = removed(`tasks moved to the ${TASKS_EXTENSION} extension`);

/** A request of the stateless era's tasks extension, declared by `capabilities.extensions[TASKS_EXTENSION]`. */
const tasksExtensionRequest = (): MethodSpec => request('toServer', STATELESS, ['extensions', TASKS_EXTENSION]);

/** Each list's `list_changed`, in both eras, announced by the sender's `<list>.listChanged`. */
const LIST_CHANGED_ROWS: readonly MethodRow[] = LIST_CHANGES.map(({ list, method, capability }) => ({
  method,
  handshake: notification('toClient', '2024-11-05', capability, { listChange: list }),
  stateless: notification('toClient', STATELESS, capability, { listChange: list }),
}));

/** Every method of MCP 2024-11-05 to 2026-07-28, and our extension. */
export const METHOD_TABLE: readonly MethodRow[] = Object.freeze(
  [
    { method: 'initialize', handshake: request('toServer', '2024-11-05'), removed: NO_HANDSHAKE },
    { method: 'ping', handshake: request('both', '2024-11-05'), removed: removed('the revision has no ping') },
    { method: 'server/discover', stateless: request('toServer', STATELESS) },
    { method: 'tools/list', ...bothEras('toServer', '2024-11-05', ['tools']) },
    { method: 'tools/call', ...bothEras('toServer', '2024-11-05', ['tools'], { mayRequireInput: true }) },
    { method: 'resources/list', ...bothEras('toServer', '2024-11-05', ['resources']) },
    { method: 'resources/templates/list', ...bothEras('toServer', '2024-11-05', ['resources']) },
    { method: 'resources/read', ...bothEras('toServer', '2024-11-05', ['resources'], { mayRequireInput: true }) },
    {
      method: 'resources/subscribe',
      handshake: request('toServer', '2024-11-05', ['resources', 'subscribe']),
      removed: removed('use subscriptions/listen'),
    },
    {
      method: 'resources/unsubscribe',
      handshake: request('toServer', '2024-11-05', ['resources', 'subscribe']),
      removed: removed('close the subscriptions/listen stream'),
    },
    {
      method: 'subscriptions/listen',
      stateless: request('toServer', STATELESS, undefined, {
        // Something to listen to: a list that can change, or resources to follow.
        declaredByAny: [...LIST_CHANGES.map((entry) => entry.capability), ['resources', 'subscribe']],
      }),
    },
    { method: 'prompts/list', ...bothEras('toServer', '2024-11-05', ['prompts']) },
    { method: 'prompts/get', ...bothEras('toServer', '2024-11-05', ['prompts'], { mayRequireInput: true }) },
    {
      method: 'completion/complete',
      handshake: request('toServer', '2024-11-05', ['completions'], { capabilitySince: '2025-03-26' }),
      stateless: request('toServer', STATELESS, ['completions']),
    },
    {
      method: 'logging/setLevel',
      handshake: request('toServer', '2024-11-05', ['logging']),
      removed: removed(`set ${META.logLevel} in each request's _meta`),
    },
    { method: 'sampling/createMessage', ...bothEras('toClient', '2024-11-05', ['sampling'], { inputRequest: true }) },
    { method: 'roots/list', ...bothEras('toClient', '2024-11-05', ['roots'], { inputRequest: true }) },
    {
      method: 'elicitation/create',
      handshake: request('toClient', '2025-06-18', ['elicitation']),
      stateless: request('toClient', STATELESS, ['elicitation'], { inputRequest: true }),
    },
    {
      method: 'tasks/get',
      handshake: request('both', '2025-11-25', ['tasks']),
      movedTo: TASKS_EXTENSION,
      extensionColumn: tasksExtensionRequest(),
    },
    { method: 'tasks/result', handshake: request('both', '2025-11-25', ['tasks']), removed: TASKS_MOVED },
    { method: 'tasks/list', handshake: request('both', '2025-11-25', ['tasks', 'list']), removed: TASKS_MOVED },
    {
      method: 'tasks/cancel',
      handshake: request('both', '2025-11-25', ['tasks', 'cancel']),
      movedTo: TASKS_EXTENSION,
      extensionColumn: tasksExtensionRequest(),
    },
    { method: 'tasks/update', extensionColumn: tasksExtensionRequest() },
    {
      method: 'resources/search',
      extension: RESOURCE_SEARCH_EXTENSION,
      ...bothEras('toServer', '2024-11-05', ['experimental', RESOURCE_SEARCH_EXTENSION]),
    },

    {
      method: 'notifications/initialized',
      handshake: notification('toServer', '2024-11-05'),
      removed: removed('the revision has no handshake'),
    },
    {
      method: 'notifications/cancelled',
      handshake: notification('both', '2024-11-05'),
      // A stdio server sends it only to end a subscriptions/listen stream.
      stateless: notification('both', STATELESS),
    },
    {
      method: 'notifications/progress',
      handshake: notification('both', '2024-11-05'),
      // The client serves no requests in the stateless era, so it has no progress to report.
      stateless: notification('toClient', STATELESS),
    },
    {
      method: 'notifications/message',
      handshake: notification('toClient', '2024-11-05', ['logging']),
      stateless: notification('toClient', STATELESS, ['logging']),
    },
    ...LIST_CHANGED_ROWS,
    {
      method: 'notifications/resources/updated',
      handshake: notification('toClient', '2024-11-05', ['resources', 'subscribe']),
      stateless: notification('toClient', STATELESS, ['resources', 'subscribe']),
    },
    { method: 'notifications/subscriptions/acknowledged', stateless: notification('toClient', STATELESS) },
    {
      method: 'notifications/roots/list_changed',
      handshake: notification('toServer', '2024-11-05', ['roots', 'listChanged']),
      removed: removed('roots are requested per call as input requests'),
    },
    {
      method: 'notifications/elicitation/complete',
      handshake: notification('toClient', '2025-11-25', ['elicitation', 'url'], { capabilityOf: 'receiver' }),
      removed: removed('URL elicitations complete through a retried request'),
    },
    { method: 'notifications/tasks/status', handshake: notification('both', '2025-11-25'), movedTo: TASKS_EXTENSION },
  ].map((row: MethodRow) => Object.freeze(row)),
);
