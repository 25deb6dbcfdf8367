/**
 * The hub's downstream clients: each one's connection, the logging level it asked for and the roots it
 * offers. The hub hears what it must act on, but the server answers by itself, from each connection's
 * events: a new log level (`logLevelChanged`), roots that may have changed (`rootsChanged`, which the hub
 * lists again) and a read list (`listed`, which starts lazy upstreams). Each event fires once the server
 * has applied what it reports. Cancellations need no watching: each forwarded call registers on its
 * request's `onCancel` (upstream.ts).
 */
import { checkRoots } from '../client/roots';
import type { Logger } from '../core/logger';
import type { Root } from '../protocol/client-features';
import { LOGGING_LEVELS, type LoggingLevel } from '../protocol/types';
import type { ServerConnection } from '../server/server';
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
}

const ROOTS_TIMEOUT_MS = 10_000;

export class Downstream {
  private readonly live = new Set<ServerConnection>();
  private readonly clientRoots = new Map<ServerConnection, readonly Root[]>();
  private level: LoggingLevel | undefined;
  private roots: readonly Root[] = [];

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

  /** Follows `connection`, a new client of the hub's server, before it reads its first message. */
  attach(connection: ServerConnection): void {
    this.live.add(connection);
    const events = connection.events;
    events.on('logLevelChanged', (level) => this.clientLevelChanged(connection, level));
    events.on('rootsChanged', () => this.fetchRoots(connection));
    events.on('listed', () => this.events.listed());
    void connection.closed.then(() => this.detach(connection));
    this.updateLevel();
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

  private detach(connection: ServerConnection): void {
    this.live.delete(connection);
    if (this.clientRoots.delete(connection)) this.updateRoots();
    this.updateLevel();
  }

  private clientLevelChanged(connection: ServerConnection, level: LoggingLevel): void {
    this.events.clientLevelChanged(connection, level);
    this.updateLevel();
  }

  /** The most verbose level of the clients (asked for, or the default): announced when it changed. */
  private updateLevel(): void {
    let index: number | undefined;
    for (const connection of this.live) {
      const rank = LOGGING_LEVELS.indexOf(this.levelOf(connection));
      if (index === undefined || rank < index) index = rank;
    }
    const level = index === undefined ? undefined : LOGGING_LEVELS[index];
    if (level === this.level) return;
    this.level = level;
    if (level) this.events.logLevelChanged(level);
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
