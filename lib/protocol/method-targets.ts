/**
 * One scope rule per method: for every method a client may send a server, in either era, which item it
 * touches and where its params name it. The HTTP layer reads it for every request of both eras (an endpoint
 * with `auth` refuses with 403 `insufficient_scope` a call whose items need scopes its token lacks), and a
 * server definition resolves the named items to their `scopes`. A method missing here is refused by the
 * method gate (-32601); the scope check treats it as needing only the endpoint's scopes.
 */

/** The kinds of item a request may name, each with `scopes` of its own. */
export type ItemKind = 'tool' | 'prompt' | 'resource' | 'resourceTemplate';

/**
 * Finds the `scopes` of an item (a server definition does): a tool or prompt by name, a resource by URI (its
 * own, or the first matching template's), a resource template by its URI template. Undefined: none needed,
 * or no such item (the method's handler answers that).
 */
export interface ItemScopes {
  scopesOf(kind: ItemKind, key: string): readonly string[] | undefined;
}

/**
 * How a method is guarded beyond the scopes its endpoint requires of every request:
 * - `item`: it touches the items its params name, which need their own `scopes` too;
 * - `listing`: it lists items: nothing to refuse, but a server with `hideUnauthorized` lists only the items
 *   the caller's token may use;
 * - `owner`: it touches a task, which belongs to the principal that created it (the call that created it was
 *   checked for its scopes then); whatever serves tasks must refuse another principal's task;
 * - `endpoint`: it names no item (the handshake, ping, the log level, every notification).
 */
export type MethodGuard = 'item' | 'listing' | 'owner' | 'endpoint';

export interface MethodTarget {
  readonly guard: MethodGuard;
  /** What the method touches and where its params name it. */
  readonly touches: string;
  /** The kinds of item its params may name (`item` only). */
  readonly items?: readonly ItemKind[];
  /**
   * The scopes the items named by `params` need (`item` only); undefined when none, or when the params name
   * nothing where expected (the handler refuses those params).
   */
  readonly scopes?: (params: unknown, items: ItemScopes) => readonly string[] | undefined;
}

type Params = Readonly<Record<string, unknown>> | undefined;

const asParams = (params: unknown): Params =>
  typeof params === 'object' && params !== null ? (params as Record<string, unknown>) : undefined;

/** An `item` method whose params name one item of `kind` in the string member `member`. */
function named(kind: ItemKind, member: 'name' | 'uri', touches: string): MethodTarget {
  return {
    guard: 'item',
    touches,
    items: [kind],
    scopes: (params, items) => {
      const key = asParams(params)?.[member];
      return typeof key === 'string' ? items.scopesOf(kind, key) : undefined;
    },
  };
}

/** `completion/complete`: its `ref` names a prompt (`ref/prompt`) or a resource template (`ref/resource`). */
function completionScopes(params: unknown, items: ItemScopes): readonly string[] | undefined {
  const ref = asParams(asParams(params)?.ref);
  if (ref?.type === 'ref/prompt' && typeof ref.name === 'string') return items.scopesOf('prompt', ref.name);
  // Completion serves a template's variables only, found by its URI template string (lib/server/completion.ts).
  if (ref?.type === 'ref/resource' && typeof ref.uri === 'string') return items.scopesOf('resourceTemplate', ref.uri);
  return undefined;
}

/** `subscriptions/listen`: the union of the scopes of every URI its filter subscribes to. */
function listenScopes(params: unknown, items: ItemScopes): readonly string[] | undefined {
  const uris = asParams(asParams(params)?.notifications)?.resourceSubscriptions;
  if (!Array.isArray(uris)) return undefined;
  let union: Set<string> | undefined;
  for (const uri of uris) {
    if (typeof uri !== 'string') continue;
    const scopes = items.scopesOf('resource', uri);
    if (scopes === undefined || scopes.length === 0) continue;
    union ??= new Set();
    for (const scope of scopes) union.add(scope);
  }
  return union && [...union];
}

const listing = (touches: string): MethodTarget => ({ guard: 'listing', touches });
const owner = (touches: string): MethodTarget => ({ guard: 'owner', touches });
const endpoint = (touches: string): MethodTarget => ({ guard: 'endpoint', touches });

/** The table: every method a client may send a server, in the handshake era and in 2026-07-28. */
export const METHOD_TARGETS: ReadonlyMap<string, MethodTarget> = new Map<string, MethodTarget>([
  ['tools/call', named('tool', 'name', 'the tool params.name')],
  ['prompts/get', named('prompt', 'name', 'the prompt params.name')],
  ['resources/read', named('resource', 'uri', 'the resource params.uri (or its template)')],
  ['resources/subscribe', named('resource', 'uri', 'the resource params.uri (or its template)')],
  ['resources/unsubscribe', named('resource', 'uri', 'the resource params.uri (or its template)')],
  [
    'completion/complete',
    {
      guard: 'item',
      touches: 'the prompt params.ref.name (ref/prompt) or the resource template params.ref.uri (ref/resource)',
      items: ['prompt', 'resourceTemplate'],
      scopes: completionScopes,
    },
  ],
  [
    'subscriptions/listen',
    {
      guard: 'item',
      touches: 'every resource of params.notifications.resourceSubscriptions (the union of their scopes)',
      items: ['resource'],
      scopes: listenScopes,
    },
  ],

  ['tools/list', listing('the tools')],
  ['prompts/list', listing('the prompts')],
  ['resources/list', listing('the resources')],
  ['resources/templates/list', listing('the resource templates')],
  ['resources/search', listing('the resources found for params.query (the resources-search extension)')],

  ['tasks/get', owner('the task params.taskId')],
  ['tasks/result', owner('the task params.taskId')],
  ['tasks/cancel', owner('the task params.taskId')],
  ['tasks/update', owner('the task params.taskId')],
  ['tasks/list', owner("the caller's own tasks")],

  ['initialize', endpoint('the session it opens')],
  ['ping', endpoint('nothing')],
  ['server/discover', endpoint("the server's identity and capabilities")],
  ['logging/setLevel', endpoint("the session's log level")],
  ['notifications/initialized', endpoint('nothing')],
  ['notifications/cancelled', endpoint("the caller's own request")],
  ['notifications/progress', endpoint("the caller's own request")],
  ['notifications/roots/list_changed', endpoint('nothing')],
  ['notifications/tasks/status', endpoint("the caller's own task")],
]);

/** The table's entry for `method` (undefined for a method no client may send: refused by the method gate). */
export function methodTarget(method: unknown): MethodTarget | undefined {
  return typeof method === 'string' ? METHOD_TARGETS.get(method) : undefined;
}
