/**
 * What differs between the two eras on a client's side, as one object the connection is given: a
 * `HandshakeClient` (lib/client/handshake-client.ts) from construction, replaced by a `ModernClient`
 * (lib/client/modern-client.ts) when `connect` finds the stateless revision (2026-07-28). `Client` and
 * `ClientConnection` call it and never ask which era they are in.
 */
import type { Observable } from 'rxjs';
import type { QuitReason } from '../../machines/connection';
import type { SendOptions } from '../core/connection';
import type { RequestCompletion, RequestOptions } from '../core/correlation';
import type { JsonObject, JsonRpcNotification } from '../jsonrpc/types';
import type { LoggingLevel, ResourceUpdatedParams, Tool } from '../protocol/types';
import type { ClientFeatures, ClientHost } from './features';
import type { HintedList, ResultCacheHints } from './list-cache';
import type { ListChangesStatus } from './list-change-stream';

/** The era-specific half of a client's calls. */
export interface ClientEra {
  /** A request as the caller of `Client.request` sees it. */
  request(method: string, params: JsonObject | undefined, options: SendOptions | undefined): Promise<JsonObject>;
  /** The round trip that shows the server is there: `ping` (the stateless revision has none: `server/discover`). */
  ping(options: RequestOptions | undefined): Promise<void>;
  /** The level of the server's log messages: `logging/setLevel`, or the envelope's log level from now on. */
  setLogLevel(level: LoggingLevel, options: SendOptions | undefined): Promise<void>;
  /** Tells the server the roots changed, where the era has a notification for it and the client is connected. */
  rootsChanged(): Promise<void>;
  /** The listed tools the client may call: all of them, or those whose `x-mcp-header` annotations are valid. */
  usableTools(tools: Tool[]): Tool[];
  /** A list cache's fetch: `list` with the cache hints of its pages where the era has them (2026-07-28). */
  listing<T>(
    list: (hints: ResultCacheHints[] | undefined) => Promise<readonly T[]>,
  ): Promise<readonly T[] | HintedList<T>>;
  /** The updates of `uri` for as long as they are subscribed to (see `ResourceSubscriptions`). */
  resourceUpdates(uri: string): Observable<ResourceUpdatedParams>;
  /** Something needs list changes (`count` things): where they come on a stream of their own, it opens. */
  needListChanges(count?: number): void;
  /** One need fewer (undoes `needListChanges`). */
  releaseListChanges(): void;
  /** Whether list changes are heard now, and how or why not. */
  readonly listChangesStatus: ListChangesStatus;
  /** The connection is closing: whatever the era keeps open ends for good. */
  stop(): void;
}

/** What an era object needs of its connection (`ClientConnection`, as `Client`). */
export interface ClientEraHost extends ClientHost {
  readonly features: ClientFeatures;
  readonly notifications$: Observable<JsonRpcNotification>;
  /** Resolves with the quit reason once the connection has closed. */
  readonly closed: Promise<QuitReason>;
  /**
   * Every notification, without counting as a need for list changes (a `Client`'s `notifications$` counts):
   * what the era's own streams read.
   */
  readonly serverNotifications$?: Observable<JsonRpcNotification>;
  /** With a reconnect policy: emits each time the client is connected again; completes when it has closed. */
  readonly reconnected$?: Observable<void>;
  /** How many needs for list changes were registered before the connection knew its era. */
  readonly listChangeNeeds?: number;
  /**
   * Sends one request as it is (the connection's own request path, without the era's handling); with
   * `completion`, the caller gets what it makes of the outcome.
   */
  sendAsIs(
    method: string,
    params: JsonObject | undefined,
    options: SendOptions | undefined,
    completion?: RequestCompletion,
  ): Promise<JsonObject>;
}

/** Drops a result the caller does not need (`ping`, `setLogLevel` resolve with nothing). */
export function ignoreResult(): void {}
