/**
 * The hub: one MCP server in front of many upstream servers in one process. Downstream clients see one
 * catalog (named by each upstream's policy, filtered, and rebuilt atomically when an upstream's list
 * changes); each request goes to the upstream that owns the entry, with progress, cancellation and the
 * `_meta` that crosses a hub (forwarded-meta.ts: the hub's own envelope, never the caller's);
 * what upstreams send back (logs, resource updates, sampling, elicitation, roots) reaches the right
 * downstream clients. Each upstream is supervised (machines/upstream.ts): restarted with backoff, its
 * entries withdrawn while it is down, its status observable. `trace$` shows all of it: both sides' messages
 * and every state change, with the upstream named; forwarded requests are the children of the downstream
 * requests in OpenTelemetry.
 */
import { filter, merge, ReplaySubject, takeUntil, type Observable } from 'rxjs';
import type { Client } from '../client/client';
import { systemClock, type Clock } from '../core/clock';
import type { Connection, ConnectionOptions } from '../core/connection';
import { defaultLogger } from '../core/logger';
import { defaultRuntime, type Runtime } from '../core/runtime';
import { TraceChannel } from '../trace/channel';
import { actorLifecycleEvent } from '../trace/event';
import type { TraceEvent } from '../trace/types';
import type { Transport } from '../core/transport';
import { LOGGING_LEVELS, type LoggingLevel, type LoggingMessageParams } from '../protocol/types';
import { defineServer, type ServerDefinition, type ServerSpec } from '../server/definition';
import { Server, type ServerConnection, type ServerOptions } from '../server/server';
import type { SchemaValidator } from '../validation/json-schema';
import { HubCatalog, type BuiltCatalog, type CatalogProblem } from './catalog';
import { swapLists } from './catalog-swap';
import { MemoryTokenStore } from '../auth/memory-token-store';
import { Downstream } from './downstream';
import type { HubOptions } from './hub-options';
import { namingPolicy } from './naming';
import { PerClientUpstream } from './per-client';
import type { UpstreamCatalog } from './session';
import { Upstream, type DownstreamTarget, type HubForUpstream, type UpstreamStatus } from './upstream';
import { SwitchboardError, type LocalErrorCode } from '../jsonrpc/errors';

export type { HubOptions } from './hub-options';

/** What callers may do with one upstream of a hub. */
export interface UpstreamHandle {
  readonly name: string;
  readonly status: UpstreamStatus;
  /** The current status, then every change. Completes when the hub closes. */
  readonly status$: Observable<UpstreamStatus>;
  /** The client of the current session, while one is up. */
  readonly client: Client | undefined;
  readonly catalog: UpstreamCatalog | undefined;
  /** Starts it (from idle, stopped or failed); a no-op otherwise. */
  start(): void;
  /** Stops it and withdraws its entries; resolves once its session (or the one opening) has closed. */
  stop(): Promise<void>;
}

/** An upstream as the hub holds it: one shared instance, or one per downstream client. */
type Member = Upstream | PerClientUpstream;

/** The catalog has conflicts its policies call errors (collisions under `collision: 'error'`). */
export class CatalogConflictError extends SwitchboardError {
  override readonly name = 'CatalogConflictError';
  readonly code: LocalErrorCode = 'CATALOG_CONFLICT';

  constructor(readonly problems: readonly CatalogProblem[]) {
    super(`The hub's catalog has conflicts:\n${problems.map((problem) => `- ${problem.message}`).join('\n')}`);
  }
}

/** The hub checks nothing its upstreams check: tool arguments and results are validated upstream. */
const ACCEPT_ALL: SchemaValidator = { compile: () => () => undefined };

const DEFAULT_LIST_CHANGED_DEBOUNCE_MS = 50;
const DEFAULT_LOG_LEVEL: LoggingLevel = 'info';

/** The capability a downstream client must have declared to receive a server-to-client request. */
const CAPABILITY_OF: Readonly<Record<string, string>> = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
};

/** The hub's server: it shows the hub each connection before the connection reads its first message. */
class HubServer extends Server {
  constructor(
    private readonly connected: (connection: ServerConnection) => void,
    private readonly modernListed: () => void,
    definition: ServerDefinition,
    options: ServerOptions,
  ) {
    super(definition, options);
  }

  protected override onConnection(connection: ServerConnection): void {
    this.connected(connection);
  }

  protected override onModernListed(): void {
    this.modernListed();
  }
}

export class Hub {
  /** Serve it with any transport handler (`createStreamableHttpHandler(hub.server)`), or `hub.connect`. */
  readonly server: Server;
  private readonly upstreams: readonly Member[];
  private readonly byName = new Map<string, Member>();
  private readonly perClient: PerClientUpstream[] = [];
  private readonly downstream: Downstream;
  private readonly catalog: HubCatalog;
  private built: BuiltCatalog = { tools: [], prompts: [], resources: [], resourceTemplates: [], problems: [] };
  private reported = new Set<string>();
  private readonly baseSpec: ServerSpec;
  private rebuildScheduled = false;
  /** While `start` waits for the first attempts: one catalog build at the end instead of one per upstream. */
  private starting = false;
  private closing: Promise<void> | undefined;
  private readonly runtime: Runtime;
  private readonly clock: Clock;
  /** The ids of the hub's live connections (downstream and upstream): `trace$` picks their events. */
  private readonly connectionIds = new Set<string>();
  /** The upstreams' state changes, built only while `trace$` is observed. */
  private readonly upstreamTrace = new TraceChannel();
  private readonly closed$ = new ReplaySubject<void>(1);
  private traceStream: Observable<TraceEvent> | undefined;

  constructor(private readonly options: HubOptions) {
    if (!Array.isArray(options?.upstreams)) throw new TypeError('Hub: upstreams must be a list');
    this.catalog = new HubCatalog(options.tasks?.everyTool === true);
    const logger = options.logger ?? defaultLogger;
    const clock = (this.clock = options.clock ?? systemClock);
    const runtime = (this.runtime = options.runtime ?? defaultRuntime());
    this.downstream = new Downstream(
      {
        logLevelChanged: (level) => this.upstreams.forEach((upstream) => upstream.applyLogLevel(level)),
        rootsChanged: (roots) => this.upstreams.forEach((upstream) => upstream.applyRoots(roots)),
        listed: () => this.startLazyUpstreams(),
        wantsRoots: () =>
          this.upstreams.some((upstream) =>
            upstream instanceof PerClientUpstream ? upstream.offersRoots : upstream.features.roots,
          ),
        clientLevelChanged: (connection, level) =>
          this.perClient.forEach((upstream) => upstream.clientLevelChanged(connection, level)),
        clientRootsChanged: (connection, roots) =>
          this.perClient.forEach((upstream) => upstream.clientRootsChanged(connection, roots)),
      },
      logger,
      options.defaultLogLevel ?? DEFAULT_LOG_LEVEL,
    );
    const name = options.name ?? 'mcp-switchboard-hub';
    const version = options.version ?? '1.0.0';
    const hubForUpstream: HubForUpstream = {
      clock,
      logger,
      runtime,
      clientInfo: { name, version },
      defaultNaming: namingPolicy(options.naming),
      listChangedDebounceMs: options.listChangedDebounceMs ?? DEFAULT_LIST_CHANGED_DEBOUNCE_MS,
      features: { sampling: true, elicitation: true, roots: false, ...options.forward },
      tokenStore: options.tokenStore ?? new MemoryTokenStore(),
      catalogChanged: () => this.scheduleRebuild(),
      fallbackTarget: (method) => this.fallbackTarget(method),
      forwardLog: (upstream, params) => this.forwardLog(upstream, params),
      logLevel: () => this.downstream.logLevel,
      roots: () => this.downstream.currentRoots,
      stateChanged: (upstream, from, to, reason) => this.traceUpstreamState(upstream, from, to, reason),
      onClient: (upstream, client) => {
        this.includeInTrace(client);
        options.onUpstreamClient?.(upstream, client);
      },
    };
    try {
      this.upstreams = options.upstreams.map((upstreamOptions, index) => {
        const upstreamName = upstreamOptions?.name;
        if (typeof upstreamName !== 'string' || upstreamName === '') {
          throw new TypeError(`Hub: upstreams[${index}] needs a non-empty name`);
        }
        if (this.byName.has(upstreamName)) throw new TypeError(`Hub: two upstreams are named ${upstreamName}`);
        const upstream =
          upstreamOptions.instance === 'per-client'
            ? new PerClientUpstream(upstreamOptions, {
                shared: hubForUpstream,
                forClient: (connection) => this.hubForClientInstance(connection, hubForUpstream),
              })
            : new Upstream(upstreamOptions, hubForUpstream);
        if (upstream instanceof PerClientUpstream) this.perClient.push(upstream);
        this.byName.set(upstreamName, upstream);
        return upstream;
      });
    } catch (error) {
      // The upstreams made before the bad one have actors in the runtime: end them.
      this.closing = Promise.resolve();
      for (const upstream of this.byName.values()) void upstream.dispose();
      throw error;
    }
    this.baseSpec = {
      name,
      version,
      ...(options.title !== undefined && { title: options.title }),
      ...(options.instructions !== undefined && { instructions: options.instructions }),
      tools: [],
      prompts: [],
      resources: [],
      resourceTemplates: [],
      validator: ACCEPT_ALL,
      ...(options.pageSize !== undefined && { pageSize: options.pageSize }),
    };
    const { defaultTimeout, maxPendingRequests, maxConcurrentHandlers } = options;
    const serverOptions: ServerOptions = {
      runtime,
      clock,
      logger,
      defaultTimeout,
      maxPendingRequests,
      maxConcurrentHandlers,
      ...(options.tasks && { tasks: options.tasks }),
    };
    this.server = new HubServer(
      (connection) => {
        // Before its first event, as every transport handler (HTTP included) connects through `server`.
        this.includeInTrace(connection);
        this.downstream.attach(connection);
      },
      () => this.startLazyUpstreams(),
      defineServer(this.baseSpec),
      serverOptions,
    );
  }

  /**
   * Starts every upstream that is not lazy and resolves once each has had its first attempt (up, or failed
   * and retrying: see `status`). Rejects with a `CatalogConflictError` when the catalog has conflicts that
   * the naming policies call errors; the hub keeps serving the rest (close it if that is fatal).
   */
  async start(): Promise<void> {
    const eager = this.upstreams.filter((upstream) => !upstream.lazy);
    this.starting = true;
    try {
      for (const upstream of eager) upstream.start();
      await Promise.all(eager.map((upstream) => upstream.started()));
    } finally {
      this.starting = false;
    }
    this.rebuild();
    const errors = this.problems.filter((problem) => problem.severity === 'error');
    if (errors.length > 0) throw new CatalogConflictError(errors);
  }

  /** Serves one downstream client over `transport`. */
  connect(transport: Transport, options?: ConnectionOptions): ServerConnection {
    return this.server.connect(transport, options);
  }

  upstream(name: string): UpstreamHandle | undefined {
    return this.byName.get(name);
  }

  /**
   * Every upstream's status, in order; a per-client upstream's (whether its catalog is known) is followed
   * by the status of each client's instance (named `<name>[<connection id>]`).
   */
  status(): UpstreamStatus[] {
    return this.upstreams.flatMap((upstream) =>
      upstream instanceof PerClientUpstream ? [upstream.status, ...upstream.instanceStatus] : [upstream.status],
    );
  }

  /** Each upstream's current status, then every change of any of them. */
  get status$(): Observable<UpstreamStatus> {
    return merge(...this.upstreams.map((upstream) => upstream.status$));
  }

  /**
   * Every trace event of the hub: each message and lifecycle change of its downstream connections and of
   * its connections to upstreams (stamped with `upstream`), picked from its runtime's `trace$` (built once
   * whoever else listens, redacted by the runtime's redactor); and each upstream's state changes (`actor`
   * `upstream`, `connection` `upstream:<name>`, `reason` the error that caused a failure or why it was
   * stopped). Costs nothing while nobody subscribes. Completes once the hub has closed.
   */
  get trace$(): Observable<TraceEvent> {
    return (this.traceStream ??= merge(
      this.runtime.trace$.pipe(
        filter((event) => event.actor === undefined && this.connectionIds.has(event.connection)),
      ),
      // Not the runtime's events for these actors: another hub there may have upstreams of the same names.
      this.upstreamTrace.events$,
    ).pipe(takeUntil(this.closed$)));
  }

  /** What the last catalog build reported: collisions, renames, shadowed resources, invalid entries. */
  get problems(): readonly CatalogProblem[] {
    return this.built.problems;
  }

  /**
   * Stops every upstream, whatever its state (a connect under way is abandoned, a backoff cancelled), then
   * closes every downstream connection. Resolves once every upstream's transport has closed: a stdio child
   * has exited (stdin ended, then SIGTERM to its group, then SIGKILL, after each grace). Requests in flight
   * get an error saying the upstream was stopped; new ones meanwhile get the tool error of an upstream that
   * is down. Idempotent; `stop()` is the same.
   */
  close(): Promise<void> {
    return (this.closing ??= (async () => {
      // Upstreams first: calls in flight are answered with their error while their clients are connected.
      await Promise.all(this.upstreams.map((upstream) => upstream.dispose()));
      await this.server.close();
      this.closed$.next();
      this.closed$.complete();
    })());
  }

  /** The same as `close()`: what a CLI calls on SIGTERM, SIGINT or the end of its stdin. */
  stop(): Promise<void> {
    return this.close();
  }

  // ---- the trace ------------------------------------------------------------------------------------

  /** Traces `connection` as the hub's until it closes (its `closed` event is published before that resolves). */
  private includeInTrace(connection: Connection): void {
    const ids = this.connectionIds;
    ids.add(connection.id);
    void connection.closed.then(() => ids.delete(connection.id));
  }

  private traceUpstreamState(upstream: Upstream, from: string, to: string, reason: string | undefined): void {
    if (!this.upstreamTrace.observed) return;
    this.upstreamTrace.next(actorLifecycleEvent(this.clock.now(), upstream.actorId, 'upstream', from, to, reason));
  }

  // ---- the catalog ---------------------------------------------------------------------------------

  /** Upstream changes in one tick are applied together: one `list_changed` per list downstream. */
  private scheduleRebuild(): void {
    if (this.rebuildScheduled || this.starting || this.closing) return;
    this.rebuildScheduled = true;
    queueMicrotask(() => {
      this.rebuildScheduled = false;
      if (!this.closing) this.rebuild();
    });
  }

  private rebuild(): void {
    const previous = this.built;
    const built = (this.built = this.catalog.build(this.upstreams));
    this.report(built.problems);
    const current = this.server.definition;
    const instructions = this.instructions();
    const next =
      instructions === current.instructions
        ? swapLists(current, previous, built)
        : defineServer({
            ...this.baseSpec,
            ...(instructions !== undefined && { instructions }),
            tools: built.tools,
            prompts: built.prompts,
            resources: built.resources,
            resourceTemplates: built.resourceTemplates,
          });
    if (next !== current) this.server.update(next);
  }

  /** The hub's instructions, then those of every upstream that gave some (known ones, up or not). */
  private instructions(): string | undefined {
    const parts = [this.options.instructions];
    if (this.options.upstreamInstructions !== false) {
      for (const upstream of this.upstreams) {
        const text = upstream.catalog?.instructions;
        if (text) parts.push(`## ${upstream.name}\n\n${text}`);
      }
    }
    const text = parts.filter((part) => part).join('\n\n');
    return text === '' ? undefined : text;
  }

  /**
   * Logs each warning and error when it appears (not again at every build while it lasts). Renames are the
   * policy at work: they are only listed in `problems`.
   */
  private report(problems: readonly CatalogProblem[]): void {
    const logger = this.options.logger ?? defaultLogger;
    const current = new Set<string>();
    for (const problem of problems) {
      if (problem.severity === 'info') continue;
      current.add(problem.message);
      if (this.reported.has(problem.message)) continue;
      if (problem.severity === 'error') logger.error(problem.message);
      else logger.warn(problem.message);
    }
    this.reported = current;
  }

  // ---- what flows back from upstreams ------------------------------------------------------------

  private fallbackTarget(method: string): DownstreamTarget | undefined {
    return this.downstream.soleTarget(CAPABILITY_OF[method]);
  }

  /**
   * What an upstream instance that serves `connection` only is given: that client's roots (unless its
   * `forward.roots` is false) and log level, and it sends its logs and requests to that client alone.
   */
  private hubForClientInstance(connection: ServerConnection, shared: HubForUpstream): HubForUpstream {
    return {
      ...shared,
      features: { ...shared.features, roots: true },
      fallbackTarget: (method) => this.downstream.targetOf(connection, CAPABILITY_OF[method]),
      forwardLog: (upstream, params) => this.forwardLog(upstream, params, connection),
      logLevel: () => this.downstream.levelOf(connection),
      roots: () => this.downstream.rootsOf(connection),
    };
  }

  /** To every client (each one filters by the level it asked for), or to `only`. */
  private forwardLog(upstream: Upstream, params: LoggingMessageParams, only?: ServerConnection): void {
    if (!LOGGING_LEVELS.includes(params?.level as LoggingLevel)) return;
    const logger = typeof params.logger === 'string' ? `${upstream.name}/${params.logger}` : upstream.name;
    if (only) this.downstream.sendLog(only, params.level, params.data, logger);
    else this.downstream.broadcastLog(params.level, params.data, logger);
  }

  private startLazyUpstreams(): void {
    for (const upstream of this.upstreams) {
      if (upstream.lazy && upstream.status.state === 'idle') upstream.start();
    }
  }
}
