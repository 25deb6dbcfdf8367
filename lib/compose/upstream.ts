/**
 * One upstream server of a hub: its supervision actor (machines/upstream.ts, which decides when it runs,
 * restarts, rests when unused and wakes), its session (session-slot.ts), the catalog it last listed, and
 * everything that crosses it — downstream requests forwarded with their progress, cancellation and
 * `_meta` (upstream-forwarding.ts; their bookkeeping in upstream-calls.ts); resource subscriptions (one upstream subscription per
 * URI, kept across reconnects); its server-to-client requests routed to the downstream client whose call
 * caused them (upstream-requests.ts); its logs; its status (upstream-status.ts).
 */
import { catchError, EMPTY, filter, firstValueFrom, Observable, switchMap } from 'rxjs';
import { createActor, type Actor } from 'xstate';
import {
  DEFAULT_SUPERVISION,
  upstreamMachine,
  type SupervisedUpstream,
  type UpstreamEvent,
  type UpstreamState,
} from '../../machines/upstream';
import type { TokenStore } from '../auth/token-store';
import type { Client, ClientOptions } from '../client/client';
import type { ClientContext } from '../client/features';
import type { Clock } from '../core/clock';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../core/correlation';
import type { Logger } from '../core/logger';
import type { ServerContext } from '../server/context';
import type { Runtime } from '../core/runtime';
import { ConnectionClosedError } from '../jsonrpc/errors';
import type { JsonObject } from '../jsonrpc/types';
import type { Root } from '../protocol/client-features';
import type {
  CallToolResult,
  CompleteParams,
  Completion,
  GetPromptResult,
  Implementation,
  LoggingLevel,
  LoggingMessageParams,
  ReadResourceResult,
} from '../protocol/types';
import type { CatalogSource } from './catalog';
import { compileFilter, type NamePredicate } from './name-filter';
import { namingPolicy, type NamingPolicy } from './naming';
import { sameListsAs, UpstreamSession, type ListKind, type SessionEvents, type UpstreamCatalog } from './session';
import { SessionSlot } from './session-slot';
import { SourceOpener } from './sources';
import { CallsInFlight } from './upstream-calls';
import { UpstreamForwarding } from './upstream-forwarding';
import type { DownstreamTarget, ForwardedFeatures, UpstreamOptions, UpstreamStatus } from './upstream-options';
import { UpstreamRequestRouter } from './upstream-requests';
import { StatusTracker, upstreamText } from './upstream-status';

type Context = ServerContext;

export type {
  DownstreamTarget,
  ForwardedFeatures,
  UpstreamInstance,
  UpstreamOptions,
  UpstreamStatus,
} from './upstream-options';

/** The hub as an upstream sees it: what an upstream is given by, and calls on, its hub. */
export interface HubForUpstream {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly runtime: Runtime;
  /** Who the hub is to its upstreams: the client info of every session it opens (and every envelope). */
  readonly clientInfo: Implementation;
  readonly defaultNaming: NamingPolicy;
  readonly listChangedDebounceMs: number;
  readonly features: ForwardedFeatures;
  /** Where an HTTP upstream's OAuth tokens live. */
  readonly tokenStore: TokenStore;
  /** Its catalog, or whether it is served, changed. */
  catalogChanged(upstream: Upstream): void;
  /** Where a server-to-client request goes when no downstream call of this upstream is in flight. */
  fallbackTarget(method: string): DownstreamTarget | undefined;
  forwardLog(upstream: Upstream, params: LoggingMessageParams): void;
  /** The level to ask of it: the most verbose one its downstream clients asked for, if any did. */
  logLevel(): LoggingLevel | undefined;
  /** The roots it is offered when `forward.roots` is on. */
  roots(): readonly Root[];
  /** Its supervision state changed; `reason` is the last error (or why it was stopped) where it applies. */
  stateChanged(upstream: Upstream, from: UpstreamState, to: UpstreamState, reason: string | undefined): void;
  onClient?(upstream: string, client: Client): void;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;

export class Upstream implements CatalogSource {
  readonly name: string;
  /** Its supervision actor's id in the runtime (`upstream:<name>`), as trace events name it. */
  readonly actorId: string;
  readonly naming: NamingPolicy;
  readonly accepts: Readonly<Record<ListKind, NamePredicate>>;
  readonly lazy: boolean;
  /** The client features it is offered: the hub's, with its own `forward` over them. */
  readonly features: ForwardedFeatures;
  private readonly opener: SourceOpener;
  private readonly actor: Actor<typeof upstreamMachine>;
  private readonly slot = new SessionSlot();
  private readonly calls: CallsInFlight;
  private readonly requests: UpstreamRequestRouter;
  private readonly tracker: StatusTracker;
  private readonly forwarding: UpstreamForwarding;
  /** The catalog of its last session, kept while it is down (its names stay reserved). */
  private lastCatalog: UpstreamCatalog | undefined;

  constructor(
    private readonly options: UpstreamOptions,
    private readonly hub: HubForUpstream,
  ) {
    this.name = options.name;
    this.actorId = `upstream:${options.name}`;
    this.naming = namingPolicy(options.naming, hub.defaultNaming);
    this.accepts = {
      tools: compileFilter(options.tools, `${options.name}.tools`),
      prompts: compileFilter(options.prompts, `${options.name}.prompts`),
      resources: compileFilter(options.resources, `${options.name}.resources`),
    };
    this.lazy = options.lazy ?? false;
    this.features = { ...hub.features, ...options.forward };
    this.opener = new SourceOpener(options.source, {
      onStderr: (line) => hub.logger.debug(`[${options.name}] ${upstreamText(line)}`),
      connectionOptions: { runtime: hub.runtime, logger: hub.logger, clock: hub.clock, upstream: options.name },
      tokenStore: hub.tokenStore,
    });
    // Idleness is measured on the clock that runs the machine's idle timer: the runtime's.
    this.calls = new CallsInFlight(hub.runtime.clock);
    this.requests = new UpstreamRequestRouter({
      upstream: options.name,
      logger: hub.logger,
      calls: this.calls,
      fallbackTarget: (method) => hub.fallbackTarget(method),
    });
    const supervised: SupervisedUpstream = {
      openSession: () => this.openSession(),
      closeSession: () => this.slot.close(),
      publish: () => hub.catalogChanged(this),
      withdraw: () => hub.catalogChanged(this),
      idleForMs: () => this.calls.idleForMs(),
    };
    this.actor = createActor(upstreamMachine, {
      id: this.actorId,
      input: {
        upstream: supervised,
        policy: { ...DEFAULT_SUPERVISION, ...options.supervision },
        idleTimeoutMs: options.idleTimeoutMs,
      },
      parent: hub.runtime.root,
    });
    this.tracker = new StatusTracker({
      name: this.name,
      source: this.opener.describe(),
      clock: hub.clock,
      machine: () => this.actor.getSnapshot(),
      catalog: () => this.lastCatalog,
      pid: () => this.slot.current?.opened.pid,
    });
    this.actor.subscribe(() => {
      const change = this.tracker.moved();
      if (!change) return;
      if (change.to === 'stopped' && change.reason === 'idle' && options.idleTimeoutMs) {
        hub.logger.info(`[${this.name}] Unused for ${options.idleTimeoutMs} ms: stopped (its entries stay listed)`);
      }
      hub.stateChanged(this, change.from, change.to, change.reason);
    });
    this.forwarding = new UpstreamForwarding({
      name: this.name,
      clock: hub.clock,
      slot: this.slot,
      calls: this.calls,
      tracker: this.tracker,
      unavailableWaitMs: options.unavailableWaitMs,
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      state: () => this.state,
      use: () => this.send({ type: 'use' }),
    });
    this.actor.start();
  }

  /** Events for the machine; none once it has ended (the hub closed). */
  private send(event: UpstreamEvent): void {
    if (this.actor.getSnapshot().status === 'active') this.actor.send(event);
  }

  get state(): UpstreamState {
    return this.actor.getSnapshot().value as UpstreamState;
  }

  /** Whether its entries are served (the machine publishes and withdraws them). */
  get serving(): boolean {
    return this.actor.getSnapshot().context.serving;
  }

  get catalog(): UpstreamCatalog | undefined {
    return this.lastCatalog;
  }

  get status(): UpstreamStatus {
    return this.tracker.current;
  }

  /** The current status, then every change. Completes when the hub closes. */
  get status$(): Observable<UpstreamStatus> {
    return this.tracker.changes$;
  }

  /** The client of the current session, while one is up. */
  get client(): Client | undefined {
    return this.slot.current?.client;
  }

  /** Starts it (from idle, stopped or failed); a no-op otherwise. */
  start(): void {
    this.send({ type: 'start' });
  }

  /** Stops it and withdraws its entries; resolves once its session (or the one opening) has closed. */
  async stop(): Promise<void> {
    this.send({ type: 'stop', reason: 'requested' });
    await this.slot.settled();
  }

  /** Resolves once the first start attempt has an outcome (up, or failed and retrying). */
  async started(): Promise<void> {
    await firstValueFrom(this.status$.pipe(filter((status) => status.state !== 'connecting')));
  }

  /** Stops it as an idle one: its entries stay listed, and a request for it starts it again. */
  rest(): void {
    this.send({ type: 'stop', reason: 'idle' });
  }

  /** Stops everything for good (the hub is closing). */
  async dispose(): Promise<void> {
    this.send({ type: 'dispose' });
    await this.slot.settled();
    this.tracker.complete();
    this.slot.dispose();
    await this.opener.dispose();
  }

  // ---- forwarding (CatalogSource) ----------------------------------------------------------------

  callTool(name: string, args: JsonObject, context: Context): CallToolResult | Promise<CallToolResult> {
    return this.forwarding.callTool(name, args, context);
  }

  getPrompt(name: string, args: Readonly<Record<string, string>>, context: Context): Promise<GetPromptResult> {
    return this.forwarding.getPrompt(name, args, context);
  }

  readResource(uri: string, context: Context): Promise<ReadResourceResult> {
    return this.forwarding.readResource(uri, context);
  }

  complete(params: CompleteParams, context: Context): Promise<Completion> {
    return this.forwarding.complete(params, context);
  }

  resourceUpdates(uri: string): Observable<string> {
    return new Observable<string>((subscriber) => {
      this.calls.subscribed();
      this.send({ type: 'use' });
      const inner = this.slot.sessions$
        .pipe(
          switchMap((session) =>
            session
              ? session.client.subscribeResource(uri).pipe(
                  catchError((error) => {
                    // A session that died ends its subscriptions; the next session resubscribes.
                    if (error instanceof ConnectionClosedError)
                      this.hub.logger.debug(`[${this.name}] Subscription to ${uri} ended with its session`, error);
                    else this.hub.logger.warn(`[${this.name}] Could not subscribe to ${uri}`, error);
                    return EMPTY;
                  }),
                )
              : EMPTY,
          ),
        )
        .subscribe((update) => subscriber.next(update.uri));
      return () => {
        inner.unsubscribe();
        this.calls.unsubscribed();
      };
    });
  }

  /** Forwards the downstream clients' logging level (when the upstream logs at all). */
  applyLogLevel(level: LoggingLevel): void {
    const session = this.slot.current;
    if (!session?.catalog.capabilities.logging) return;
    session.client
      .setLoggingLevel(level)
      .catch((error) => this.hub.logger.debug(`[${this.name}] Could not set the logging level`, error));
  }

  /** Tells the upstream that the roots it is offered changed (when it is offered roots at all). */
  applyRoots(roots: readonly Root[]): void {
    const client = this.slot.current?.client;
    if (!this.features.roots || !client?.roots) return;
    client.setRoots(roots).catch((error) => this.hub.logger.debug(`[${this.name}] Could not update roots`, error));
  }

  // ---- its session -------------------------------------------------------------------------------

  /** The machine's `openSession`: `connected` or `connect.failed` follows, unless the attempt is abandoned. */
  private openSession(): void {
    const { hub, options } = this;
    const sessionOptions = {
      clientInfo: hub.clientInfo,
      clientOptions: this.clientOptions(),
      clock: hub.clock,
      connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
      requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      listChangedDebounceMs: hub.listChangedDebounceMs,
      pingIntervalMs: options.pingIntervalMs ?? 0,
      ...(hub.onClient && { onClient: (client: Client) => hub.onClient!(this.name, client) }),
    };
    this.slot.open((signal) => UpstreamSession.open(this.opener, sessionOptions, this.sessionEvents, signal), {
      opened: (session) => {
        // The same lists after a restart keep their objects: the catalog (and its definitions) stays as it was.
        this.lastCatalog = this.lastCatalog ? sameListsAs(this.lastCatalog, session.catalog) : session.catalog;
        session.catalog = this.lastCatalog;
        const level = hub.logLevel();
        if (level) this.applyLogLevel(level);
        this.calls.touch();
        this.send({ type: 'connected' });
      },
      failed: (error) => {
        hub.logger.warn(`[${this.name}] Could not start: ${upstreamText(error.message)}`);
        this.send({ type: 'connect.failed', error });
      },
    });
  }

  /** What a session reports; a session that is no longer the current one is not listened to. */
  private readonly sessionEvents: SessionEvents = {
    relisted: (from) => {
      if (this.slot.current !== from) return;
      this.lastCatalog = from.catalog;
      this.hub.catalogChanged(this);
      this.tracker.refresh();
    },
    health: (from, error) => {
      if (this.slot.current !== from) return;
      if (error) this.hub.logger.warn(`[${this.name}] Unhealthy: ${upstreamText(error.message)}`);
      this.send(error ? { type: 'unhealthy', error } : { type: 'healthy' });
    },
    lost: (from, error) => {
      if (this.slot.current !== from) return;
      this.hub.logger.warn(`[${this.name}] Lost: ${upstreamText(error.message)}`);
      this.send({ type: 'lost', error });
    },
    log: (params) => this.hub.forwardLog(this, params),
    notification: (message) => this.requests.notified(message),
  };

  private clientOptions(): ClientOptions {
    const { runtime, logger, clock } = this.hub;
    const features = this.features;
    const route = (method: string) => (params: object, context: ClientContext) =>
      this.requests.route(method, params as JsonObject, context) as Promise<never>;
    return {
      runtime,
      logger,
      clock,
      upstream: this.name,
      era: this.options.era ?? 'auto',
      defaultTimeout: this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      ...(features.sampling && { sampling: { tools: true, handler: route('sampling/createMessage') } }),
      ...(features.elicitation && {
        elicitation: { form: route('elicitation/create'), url: route('elicitation/create'), applyDefaults: false },
      }),
      ...(features.roots && { roots: this.hub.roots() }),
    };
  }
}
