/** What a hub is built with (`new Hub(options)`, or a config file's settings). */
import type { TokenStore } from '../auth/token-store';
import type { Client } from '../client/client';
import type { ConnectionOptions } from '../core/connection';
import type { LoggingLevel } from '../protocol/types';
import type { NamingOptions } from './naming';
import type { TaskServingOptions } from '../server/tasks/server-tasks';
import type { ForwardedFeatures, UpstreamOptions } from './upstream-options';

export interface HubOptions extends ConnectionOptions {
  /** The hub's `serverInfo` (default `mcp-switchboard-hub` 1.0.0). */
  readonly name?: string;
  readonly version?: string;
  readonly title?: string;
  /** Sent to downstream clients, followed by each upstream's instructions under its name (see `upstreamInstructions`). */
  readonly instructions?: string;
  /** Append the upstreams' instructions (default true). */
  readonly upstreamInstructions?: boolean;
  readonly upstreams: readonly UpstreamOptions[];
  /** Default naming for every upstream (each may override it). */
  readonly naming?: NamingOptions;
  /** How long after an upstream's `list_changed` it is re-listed: later ones in the window join (default 50 ms). */
  readonly listChangedDebounceMs?: number;
  /** Items per page of the hub's lists (default 100). */
  readonly pageSize?: number;
  /**
   * Client features declared to upstreams and routed to downstream clients; each upstream's own `forward`
   * goes over it. Default: sampling and elicitation on; roots off, because a shared upstream serves every
   * client and one client's roots must not decide what another may reach (a per-client upstream instance
   * is offered its own client's roots unless its `forward.roots` is false). `roots: true` offers a shared
   * upstream the union of every client's roots.
   */
  readonly forward?: Partial<ForwardedFeatures>;
  /**
   * What a downstream client that never sent `logging/setLevel` receives of the upstreams' logs (default
   * `info`). The hub asks each upstream for the most verbose level its clients need and passes each log
   * message only to the clients whose own level admits it, so no client's level changes another's logs.
   */
  readonly defaultLogLevel?: LoggingLevel;
  /**
   * Where the OAuth tokens of upstreams with `auth` (`oauth`, `client_credentials`) live (default: in
   * memory, for this hub only). `switchboard serve` gives the store `switchboard login` writes to.
   */
  readonly tokenStore?: TokenStore;
  /** Called with each upstream client before it connects. */
  readonly onUpstreamClient?: (upstream: string, client: Client) => void;
  /**
   * How the hub keeps the tasks of downstream calls (`TaskServingOptions`: store, poll interval, time to live).
   * A tool whose upstream supports tasks is offered as its upstream offers it; the hub's task then follows the
   * upstream's. With `everyTool`, every tool may run as a task: the hub runs the call, so a downstream client
   * gets a task even from an upstream without task support.
   */
  readonly tasks?: HubTaskOptions;
}

export interface HubTaskOptions extends TaskServingOptions {
  readonly everyTool?: boolean;
}
