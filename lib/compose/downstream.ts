/**
 * The hub's downstream clients: each one's connection, the logging level it asked for and the roots it
 * offers. Their transports are watched (one property check per inbound message) for what the hub must
 * act on but the server answers by itself: `logging/setLevel`, roots announcements, cancellations (passed
 * to the upstream requests they concern) and the first listing (which starts lazy upstreams).
 */
import { Observable } from 'rxjs';
import { checkRoots } from '../client/roots';
import type { Logger } from '../core/logger';
import type { InboundFrame, RequestId } from '../jsonrpc/types';
import type { Root } from '../protocol/client-features';
import { LOGGING_LEVELS, type LoggingLevel } from '../protocol/types';
import type { ServerConnection } from '../server/server';
import type { Transport } from '../../transports/transport';
import type { DownstreamTarget } from './upstream';

export interface DownstreamEvents {
  /** The most verbose level any downstream client asked for (or has by default) changed. */
  logLevelChanged(level: LoggingLevel): void;
  rootsChanged(roots: readonly Root[]): void;
  /** Whether any upstream is offered roots: if none is, the hub does not ask its clients for theirs. */
  wantsRoots(): boolean;
  /** One client asked for another log level. */
  clientLevelChanged(connection: ServerConnection, level: LoggingLevel): void;
  /** One client's roots changed. */
  clientRootsChanged(connection: ServerConnection, roots: readonly Root[]): void;
  /** A downstream client listed something. */
  listed(): void;
  /** A downstream client cancelled a request (`requestId`), or went away (all of its requests). */
  cancelled(connection: ServerConnection, requestId?: RequestId, reason?: string): void;
}

const LISTINGS = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list']);
const ROOTS_TIMEOUT_MS = 10_000;

export class Downstream {
  private readonly live = new Set<ServerConnection>();
  private readonly clientRoots = new Map<ServerConnection, readonly Root[]>();
  private level: LoggingLevel | undefined;
  private roots: readonly Root[] = [];
  private levelCheckScheduled = false;
  /** Clients whose `logging/setLevel` the server applies in this turn. */
  private readonly levelsSet = new Set<ServerConnection>();

  constructor(
    private readonly events: DownstreamEvents,
    private readonly logger: Logger,
    /** The level of a client that has not asked for one. */
    private readonly defaultLevel: LoggingLevel,
  ) {}

  /** The level `connection` asked for, or the default one: what it receives of the upstreams' logs. */
  levelOf(connection: ServerConnection): LoggingLevel {
    return connection.logLevel ?? this.defaultLevel;
  }

  get connections(): ReadonlySet<ServerConnection> {
    return this.live;
  }

  get logLevel(): LoggingLevel | undefined {
    return this.level;
  }

  /** One client's roots (those an upstream can be offered), as it last listed them. */
  rootsOf(connection: ServerConnection): readonly Root[] {
    return this.clientRoots.get(connection) ?? [];
  }

  /** The union of every downstream client's roots (by URI). */
  get currentRoots(): readonly Root[] {
    return this.roots;
  }

  /** Serves a client over `transport` through `connect`, watching what the hub needs to see. */
  attach(transport: Transport, connect: (transport: Transport) => ServerConnection): ServerConnection {
    let connection: ServerConnection | undefined;
    const watched = watchInbound(transport, (frame) => {
      if (Array.isArray(frame)) frame.forEach((element) => this.onInboundFrame(connection, element));
      else this.onInboundFrame(connection, frame);
    });
    connection = connect(watched);
    const attached = connection;
    this.live.add(attached);
    this.scheduleLevelCheck();
    attached.closed.then(() => {
      this.live.delete(attached);
      this.levelsSet.delete(attached);
      this.events.cancelled(attached);
      if (this.clientRoots.delete(attached)) this.updateRoots();
      this.scheduleLevelCheck();
    });
    return attached;
  }

  /** The only ready downstream client (that declared `capability`, when given), if there is exactly one. */
  soleTarget(capability?: string): DownstreamTarget | undefined {
    let only: ServerConnection | undefined;
    for (const connection of this.live) {
      if (connection.state !== 'ready') continue;
      if (capability && !connection.clientCapabilities?.[capability]) continue;
      if (only) return undefined;
      only = connection;
    }
    if (!only) return undefined;
    const connection = only;
    return { connection, request: (method, params, options) => connection.request(method, params, options) };
  }

  /** `connection` as a target for a server-to-client request, if it is ready and declared `capability`. */
  targetOf(connection: ServerConnection, capability?: string): DownstreamTarget | undefined {
    if (connection.state !== 'ready') return undefined;
    if (capability && !connection.clientCapabilities?.[capability]) return undefined;
    return { connection, request: (method, params, options) => connection.request(method, params, options) };
  }

  /** A log message for every ready downstream client whose level admits it. */
  broadcastLog(level: LoggingLevel, data: unknown, logger: string): void {
    for (const connection of this.live) this.sendLog(connection, level, data, logger);
  }

  /** A log message for `connection`, if it is ready and its level (asked for, or the default) admits it. */
  sendLog(connection: ServerConnection, level: LoggingLevel, data: unknown, logger: string): void {
    if (connection.state !== 'ready') return;
    if (LOGGING_LEVELS.indexOf(level) < LOGGING_LEVELS.indexOf(this.levelOf(connection))) return;
    connection.log(level, data, logger).catch((error) => this.logger.debug('Could not forward a log message', error));
  }

  /** Acts on an inbound frame the server has just received (it answers the frame by itself). */
  private onInboundFrame(connection: ServerConnection | undefined, frame: unknown): void {
    const method = (frame as { method?: unknown } | null)?.method;
    if (typeof method !== 'string' || !connection) return;
    if (method === 'notifications/cancelled') {
      const { requestId, reason } = ((frame as { params?: unknown }).params ?? {}) as Record<string, unknown>;
      if (typeof requestId === 'string' || typeof requestId === 'number') {
        this.events.cancelled(connection, requestId, typeof reason === 'string' ? reason : undefined);
      }
    } else if (method === 'logging/setLevel') {
      this.levelsSet.add(connection);
      this.scheduleLevelCheck();
    } else if (method === 'notifications/initialized' || method === 'notifications/roots/list_changed') {
      this.fetchRoots(connection);
    } else if (LISTINGS.has(method)) this.events.listed();
  }

  /** After the server applied the request (it does so synchronously, before the next microtask). */
  private scheduleLevelCheck(): void {
    if (this.levelCheckScheduled) return;
    this.levelCheckScheduled = true;
    queueMicrotask(() => {
      this.levelCheckScheduled = false;
      for (const connection of this.levelsSet) this.events.clientLevelChanged(connection, this.levelOf(connection));
      this.levelsSet.clear();
      let index: number | undefined;
      for (const connection of this.live) {
        const rank = LOGGING_LEVELS.indexOf(this.levelOf(connection));
        if (index === undefined || rank < index) index = rank;
      }
      const level = index === undefined ? undefined : LOGGING_LEVELS[index];
      if (level === this.level) return;
      this.level = level;
      if (level) this.events.logLevelChanged(level);
    });
  }

  private fetchRoots(connection: ServerConnection): void {
    if (!connection.clientCapabilities?.roots || !this.events.wantsRoots()) return;
    connection.request('roots/list', undefined, { timeout: ROOTS_TIMEOUT_MS }).then(
      (result) => {
        const roots = (result as { roots?: unknown }).roots;
        if (!Array.isArray(roots) || connection.state === 'closed') return;
        const offered = this.offerable(roots);
        this.clientRoots.set(connection, offered);
        this.events.clientRootsChanged(connection, offered);
        this.updateRoots();
      },
      (error) => this.logger.debug('Could not list the roots of a downstream client', error),
    );
  }

  /** The roots an upstream can be offered (file:// URIs, well formed); the others are left out. */
  private offerable(roots: readonly unknown[]): Root[] {
    const offered: Root[] = [];
    for (const root of roots) {
      try {
        offered.push(checkRoots([root as Root])[0]!);
      } catch (error) {
        this.logger.debug('A downstream root cannot be offered upstream', error);
      }
    }
    return offered;
  }

  /** The union by URI. */
  private updateRoots(): void {
    const byUri = new Map<string, Root>();
    for (const roots of this.clientRoots.values()) {
      for (const root of roots) if (!byUri.has(root.uri)) byUri.set(root.uri, root);
    }
    this.roots = [...byUri.values()];
    this.events.rootsChanged(this.roots);
  }
}

/** `transport`, with `watch` called on each inbound frame right after the connection received it. */
function watchInbound(transport: Transport, watch: (frame: InboundFrame) => void): Transport {
  const messages = new Observable<InboundFrame>((subscriber) =>
    transport.messages.subscribe({
      next: (frame) => {
        subscriber.next(frame);
        watch(frame);
      },
      error: (error) => subscriber.error(error),
      complete: () => subscriber.complete(),
    }),
  );
  return {
    messages,
    send: (message, options) => transport.send(message, options),
    close: () => transport.close(),
    ...(transport.setProtocolVersion && {
      setProtocolVersion: (version: string) => transport.setProtocolVersion!(version),
    }),
    ...(transport.closeStream && { closeStream: (id: RequestId) => transport.closeStream!(id) }),
    get sessionId() {
      return transport.sessionId;
    },
  };
}
