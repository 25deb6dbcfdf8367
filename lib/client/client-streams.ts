/**
 * The streams of a client (`Client` adds its typed calls): every notification (`notifications$`), the log
 * messages, the completed URL elicitations, `subscriptions/listen` streams, and what keeps the stateless
 * revision's list-change stream open. Each completes on `close()` and errors with a `ConnectionClosedError`
 * when the connection ends otherwise (lib/client/stream-end.ts).
 */
import { defer, EMPTY, filter, map, Observable } from 'rxjs';
import type { QuitReason } from '../../machines/connection';
import type { JsonRpcNotification } from '../jsonrpc/types';
import type { LoggingMessageParams } from '../protocol/types';
import { ClientConnection } from './client-connection';
import type { ListChangesStatus } from './list-change-stream';
import { listen as openListenStream, type ListenFilter, type ListenHost } from './listen';
import { endingWithConnection } from './stream-end';

/** A client's connection and its streams; `Client` is the class to use. */
export class ClientStreams extends ClientConnection {
  /** List caches and `notifications$` subscribers: what keeps a stateless connection's list-change stream open. */
  private listChangeNeedCount = 0;

  /**
   * Every notification from the server. In the stateless revision (2026-07-28), where list changes come on
   * a `subscriptions/listen` stream, a subscriber keeps that stream open (see `listChangeStatus`). Like every
   * stream of the client it completes on `close()` and errors with a `ConnectionClosedError` (its
   * `quitReason` says why) when the connection ends otherwise; with a `reconnect` policy it goes on across
   * reconnections and errors only when the client gives up.
   */
  override get notifications$(): Observable<JsonRpcNotification> {
    const all = this.notificationsEndingAs('The notification stream');
    return new Observable<JsonRpcNotification>((subscriber) => {
      this.needListChanges();
      const subscription = all.subscribe(subscriber);
      return () => {
        subscription.unsubscribe();
        this.releaseListChanges();
      };
    });
  }

  /** @internal Every notification, without keeping the list-change stream open (what this client's own streams read). */
  get serverNotifications$(): Observable<JsonRpcNotification> {
    return super.notifications$;
  }

  /** @internal How many things need list changes now (a stateless connection reads it once its era is known). */
  get listChangeNeeds(): number {
    return this.listChangeNeedCount;
  }

  /**
   * Whether the server's list changes reach `notifications$` and the list caches now, and how or why not.
   * In the stateless revision they come on a `subscriptions/listen` stream that opens when a list cache is
   * made or `notifications$` gets a subscriber, and closes when no subscriber is left and no cache exists;
   * a server that refuses it (it holds a bounded number of them) gives `refused` and its reason.
   */
  get listChangeStatus(): ListChangesStatus {
    return this.eraCalls.listChangesStatus;
  }

  /**
   * `subscriptions/listen` (2026-07-28): the stream's notifications, the acknowledgement first
   * (`acknowledgedFilter` reads what the server agreed to); one listen request per subscriber, cancelled on
   * unsubscribe.
   */
  listen(filter: ListenFilter): Observable<JsonRpcNotification> {
    return openListenStream(this.streamHost(), filter);
  }

  /** The server's log messages (`notifications/message`); it ends as `notifications$` does. */
  get logs$(): Observable<LoggingMessageParams> {
    return this.notificationsEndingAs('The log stream').pipe(
      filter((notification) => notification.method === 'notifications/message'),
      map((notification) => notification.params as unknown as LoggingMessageParams),
    );
  }

  /**
   * URL-mode elicitations the server reports as completed (`notifications/elicitation/complete`); it ends as
   * `notifications$` does.
   */
  get elicitationComplete$(): Observable<{ readonly elicitationId: string }> {
    return this.notificationsEndingAs('The elicitation completion stream').pipe(
      filter((notification) => notification.method === 'notifications/elicitation/complete'),
      map((notification) => notification.params as unknown as { elicitationId: string }),
    );
  }

  protected needListChanges(): void {
    this.listChangeNeedCount++;
    this.eraCalls.needListChanges();
  }

  private releaseListChanges(): void {
    this.listChangeNeedCount--;
    this.eraCalls.releaseListChanges();
  }

  /** Why the connection ended (the first reason given), once it has begun to end. */
  protected get quitReason(): QuitReason | undefined {
    return this.actor.getSnapshot().data.quitReason;
  }

  /**
   * Every notification, for a public stream named `what`: it completes on `close()` and errors otherwise
   * (lib/client/stream-end.ts), also for a subscriber that comes after the end.
   */
  private notificationsEndingAs(what: string): Observable<JsonRpcNotification> {
    const live = defer(() => (this.state === 'closed' ? EMPTY : this.serverNotifications$));
    return endingWithConnection(live, what, () => this.quitReason);
  }

  /** This client as the host of a listen stream of its own, whose reading of notifications needs no list changes. */
  private streamHost(): ListenHost {
    return {
      notifications$: this.serverNotifications$,
      closed: this.closed,
      request: (m, p, o) => this.request(m, p, o),
      reconnected$: this.reconnected$,
    };
  }
}
