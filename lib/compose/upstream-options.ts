/** What a hub upstream is configured with, and what it reports: the types of `Upstream` that callers see. */
import type { StopReason, SupervisionPolicy, UpstreamState } from '../../machines/upstream';
import type { EraOption } from '../client/era-choice';
import type { SendOptions } from '../core/connection';
import type { JsonObject } from '../jsonrpc/types';
import type { Implementation } from '../protocol/types';
import type { ServerConnection } from '../server/server';
import type { NameFilter } from './name-filter';
import type { NamingOptions } from './naming';
import type { UpstreamSource } from './sources';

export interface UpstreamOptions {
  /** Unique within the hub; it names the upstream in status, logs and renamed entries. */
  readonly name: string;
  readonly source: UpstreamSource;
  /** Over the hub's default naming. */
  readonly naming?: NamingOptions;
  /** Which of its tools, prompts and resources (by URI or URI template) the hub takes. */
  readonly tools?: NameFilter;
  readonly prompts?: NameFilter;
  readonly resources?: NameFilter;
  /** Not started with the hub: on the first downstream listing or the first use instead. */
  readonly lazy?: boolean;
  /** Stop it after this long without a call or a subscription; its entries stay listed and a call starts it. */
  readonly idleTimeoutMs?: number;
  readonly supervision?: Partial<SupervisionPolicy>;
  /** Handshake plus the first listing (default 30 s). */
  readonly connectTimeoutMs?: number;
  /** Idle timeout of a forwarded request, restarted by progress (default 60 s). */
  readonly requestTimeoutMs?: number;
  /** Ping it this often, and count a ping without an answer within the interval as a strike (default: never). */
  readonly pingIntervalMs?: number;
  /**
   * How long a request for it waits while it is down (restarting) before it fails with a tool error saying
   * so (default 10 s; 0 fails at once). While it starts without having failed (lazy, woken from idle, per
   * client) a request waits up to `connectTimeoutMs` if that is longer.
   */
  readonly unavailableWaitMs?: number;
  /**
   * `shared` (default): one instance serves every downstream client, and gets no client's roots unless
   * `forward.roots` says so. `per-client`: one instance per downstream connection, started on its first
   * use and ended when that client goes away; it gets its own client's roots, log level and requests only.
   */
  readonly instance?: UpstreamInstance;
  /** Over the hub's `forward`: which client features it is offered. */
  readonly forward?: Partial<ForwardedFeatures>;
  /**
   * Which protocol era the hub speaks to it (the client's `era` option, default `auto`: it probes with
   * `server/discover` and speaks 2026-07-28 to a server that answers it, the handshake to the others).
   * `handshake` skips the probe (a server that exits on an unknown first request); `legacy` (deprecated) is
   * read as `handshake`.
   */
  readonly era?: EraOption;
}

export type UpstreamInstance = 'shared' | 'per-client';

export interface UpstreamStatus {
  readonly name: string;
  readonly state: UpstreamState;
  /** Whether its entries are in the hub's catalog. */
  readonly serving: boolean;
  /** Where it lives (`stdio: node server.js`, a URL, `in-process`). */
  readonly source: string;
  /** Consecutive failures since its last stable session. */
  readonly failures: number;
  readonly lastError?: string;
  readonly stopReason?: StopReason;
  /** When it entered this state (the hub's clock). */
  readonly since: number;
  /** While it is down after having been up or having failed to start: since when (the hub's clock). */
  readonly downSince?: number;
  /** While it waits to reconnect: when the next attempt starts (the hub's clock). */
  readonly nextAttemptAt?: number;
  readonly serverInfo?: Implementation;
  readonly protocolVersion?: string;
  /** The child's pid, for a stdio upstream that runs. */
  readonly pid?: number;
  /** What it offered when it last listed. */
  readonly tools: number;
  readonly prompts: number;
  readonly resources: number;
  readonly resourceTemplates: number;
}

/** Which client features the hub declares to upstreams and routes to downstream clients. */
export interface ForwardedFeatures {
  readonly sampling: boolean;
  readonly elicitation: boolean;
  readonly roots: boolean;
}

/** A downstream client a server-to-client request can go to. */
export interface DownstreamTarget {
  readonly connection: ServerConnection;
  request(method: string, params: JsonObject | undefined, options: SendOptions): Promise<JsonObject>;
}
