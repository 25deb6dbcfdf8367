/**
 * A client's calls in the handshake era (2024-11-05 .. 2025-11-25), where requests go out as they are and the
 * server sends list changes and resource updates on the session. Also what a client does before it knows its
 * era: it is the connection's era object from construction (`connect` then sends `initialize` through it),
 * and a request before `connect` fails as the connection refuses it.
 */
import type { Observable } from 'rxjs';
import type { SendOptions } from '../core/connection';
import type { RequestOptions } from '../core/correlation';
import type { JsonObject } from '../jsonrpc/types';
import type { LoggingLevel, ResourceUpdatedParams, Tool } from '../protocol/types';
import { ignoreResult, type ClientEra, type ClientEraHost } from './client-era';
import { fixedListChangesStatus, type ListChangesStatus } from './list-change-stream';
import type { ResultCacheHints } from './list-cache';
import { subscribedUpdates } from './resource-subscriptions';

export class HandshakeClient implements ClientEra {
  constructor(private readonly host: ClientEraHost) {}

  request(method: string, params: JsonObject | undefined, options: SendOptions | undefined): Promise<JsonObject> {
    return this.host.sendAsIs(method, params, options);
  }

  ping(options: RequestOptions | undefined): Promise<void> {
    return this.host.request('ping', undefined, options).then(ignoreResult);
  }

  setLogLevel(level: LoggingLevel, options: SendOptions | undefined): Promise<void> {
    return this.host.request('logging/setLevel', { level }, options).then(ignoreResult);
  }

  /** `notifications/roots/list_changed` while the session is ready (before, the server reads them with `roots/list`). */
  rootsChanged(): Promise<void> {
    const host = this.host;
    return host.state === 'ready' ? host.notify('notifications/roots/list_changed') : Promise.resolve();
  }

  usableTools(tools: Tool[]): Tool[] {
    return tools;
  }

  /** A handshake-era listing has no cache hints: it is kept until the list changes. */
  listing<T>(list: (hints: ResultCacheHints[] | undefined) => Promise<readonly T[]>): Promise<readonly T[]> {
    return list(undefined);
  }

  /** `resources/subscribe` and `resources/unsubscribe`, and the session's `notifications/resources/updated`. */
  resourceUpdates(uri: string): Observable<ResourceUpdatedParams> {
    const host = this.host;
    return subscribedUpdates(
      {
        notifications$: host.serverNotifications$ ?? host.notifications$,
        closed: host.closed,
        subscribe: (target) => host.request('resources/subscribe', { uri: target }),
        unsubscribe: (target) => host.request('resources/unsubscribe', { uri: target }),
        reconnected$: host.reconnected$,
      },
      uri,
    );
  }

  /** The server sends list changes on the session: nothing to open. */
  needListChanges(): void {}

  releaseListChanges(): void {}

  get listChangesStatus(): ListChangesStatus {
    return fixedListChangesStatus(this.host.state === 'ready' ? 'session' : 'disconnected');
  }

  stop(): void {}
}
