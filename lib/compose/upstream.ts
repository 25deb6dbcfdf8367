/**
 * One upstream server of a hub: its supervision actor (machines/upstream.ts, which decides when it runs,
 * restarts, rests when unused and wakes), its session (session-slot.ts), the catalog it last listed, and
 * everything that crosses it — downstream requests forwarded with their progress, cancellation and
 * `_meta` (their bookkeeping in upstream-calls.ts); resource subscriptions (one upstream subscription per
 * URI, kept across reconnects); its server-to-client requests routed to the downstream client whose call
 * caused them (upstream-requests.ts); its logs; its status (upstream-status.ts).
 */
import {
  catchError,
  EMPTY,
  filter,
  firstValueFrom,
  fromEvent,
  map,
  merge,
  Observable,
  switchMap,
  takeUntil,
} from 'rxjs';
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
import { ConnectionClosedError, McpError, RelayedError } from '../jsonrpc/errors';
import type { JsonObject } from '../jsonrpc/types';
import type { Root } from '../protocol/client-features';
import type {
  CallToolResult,
  CompleteParams,
  CompleteResult,
  Completion,
  GetPromptResult,
  Implementation,
  LoggingLevel,
  LoggingMessageParams,
  ReadResourceResult,
} from '../protocol/types';
import type { CatalogSource } from './catalog';
import type { ForwardedMethod } from './direct';
import { compileFilter, type NamePredicate } from './name-filter';
import { namingPolicy, type NamingPolicy } from './naming';
import { sameListsAs, UpstreamSession, type ListKind, type SessionEvents, type UpstreamCatalog } from './session';
import { SessionSlot } from './session-slot';
import { SourceOpener } from './sources';
import { CallsInFlight, type UpstreamCancel } from './upstream-calls';
import type { DownstreamTarget, ForwardedFeatures, UpstreamOptions, UpstreamStatus } from './upstream-options';
import { UpstreamRequestRouter } from './upstream-requests';
import { explainEndedCall, GIVEN_UP, StatusTracker, unavailableError, upstreamText } from './upstream-status';

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
const DEFAULT_UNAVAILABLE_WAIT_MS = 10_000;

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

  /**
   * The upstream's error response to `tools/call` (an unknown tool, invalid params) reaches the client as
   * that same JSON-RPC error; the hub's own failures (the upstream is down, the call timed out) become
   * `isError` results, as any tool's failure does.
   */
  callTool(name: string, args: JsonObject, context: Context): CallToolResult | Promise<CallToolResult> {
    let result: unknown;
    try {
      result = this.forward('tools/call', withMeta({ name, arguments: args }, context), context);
    } catch (error) {
      return relayErrorResponse(error);
    }
    return (isThenable(result) ? result.then(undefined, relayErrorResponse) : result) as
      CallToolResult | Promise<CallToolResult>;
  }

  async getPrompt(name: string, args: Readonly<Record<string, string>>, context: Context): Promise<GetPromptResult> {
    return (await this.forward(
      'prompts/get',
      withMeta({ name, arguments: args }, context),
      context,
    )) as GetPromptResult;
  }

  async readResource(uri: string, context: Context): Promise<ReadResourceResult> {
    return (await this.forward('resources/read', withMeta({ uri }, context), context)) as ReadResourceResult;
  }

  async complete(params: CompleteParams, context: Context): Promise<Completion> {
    const result = await this.forward('completion/complete', params as unknown as JsonObject, context);
    return (result as CompleteResult).completion;
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

  private forward(method: ForwardedMethod, params: JsonObject, context: Context): unknown {
    let session = this.slot.current;
    // A session whose connection just ended is reported lost a microtask later: it counts as gone already.
    // (In-process sessions are called directly: nothing to check on that path.)
    if (session && !session.direct && !session.usable) session = undefined;
    const calls = this.calls;
    let result: unknown;
    let cancel: UpstreamCancel | undefined;
    if (session?.direct) {
      // The upstream's handler gets the downstream request itself, its cancellation included.
      result = session.forward(method, params, context);
      if (!isThenable(result)) {
        calls.answered();
        return result;
      }
    } else {
      cancel = calls.cancelWith(context);
      const signal = cancel.signal;
      result = session
        ? session.forward(method, params, context, signal)
        : this.whenUp(method, context).then((up) => up.forward(method, params, context, signal));
    }
    calls.begin(context);
    return (result as Promise<unknown>).then(
      (value) => {
        calls.end(context, cancel);
        return value;
      },
      (error) => {
        calls.end(context, cancel);
        throw explainEndedCall(this.name, this.state, method, error);
      },
    );
  }

  /**
   * The session once the upstream is up: a dormant (idle-stopped) or lazy one is started first; one that is
   * starting or restarting is waited for, up to `unavailableWaitMs` (or until the downstream request ends).
   */
  private async whenUp(method: string, context: Context): Promise<UpstreamSession> {
    this.send({ type: 'use' });
    const { unavailableWaitMs = DEFAULT_UNAVAILABLE_WAIT_MS, connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS } =
      this.options;
    if (GIVEN_UP.has(this.state)) throw unavailableError(this.status, method, 0);
    // A start that no failure interrupted (lazy, woken from idle, per client) may take its whole connect
    // timeout: that is not being down. If it fails, the wait for the next attempt is bounded as any other.
    if (this.tracker.downSinceAt === undefined) {
      const startBound = Math.max(unavailableWaitMs, connectTimeoutMs);
      const session = await this.nextSession(startBound, context.signal, true);
      if (session) return session;
      if (this.state !== 'reconnecting' || context.signal.aborted) {
        throw unavailableError(this.status, method, startBound);
      }
    }
    const session = unavailableWaitMs > 0 ? await this.nextSession(unavailableWaitMs, context.signal) : undefined;
    if (!session) throw unavailableError(this.status, method, unavailableWaitMs);
    return session;
  }

  /**
   * The next usable session; undefined after `bound` ms, once it gives up or is stopped, when `signal`
   * aborts, or (`untilFailure`) when an attempt fails.
   */
  private nextSession(bound: number, signal: AbortSignal, untilFailure = false): Promise<UpstreamSession | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    const clock = this.hub.clock;
    const expired = new Observable<void>((subscriber) => {
      const timer = clock.setTimeout(() => subscriber.next(), bound);
      return () => clock.clearTimeout(timer);
    });
    const outcome = merge(
      this.slot.sessions$.pipe(filter((session): session is UpstreamSession => session?.usable === true)),
      this.status$.pipe(
        filter((status) => GIVEN_UP.has(status.state) || (untilFailure && status.state === 'reconnecting')),
        map(() => undefined),
      ),
    ).pipe(takeUntil(merge(expired, fromEvent(signal, 'abort'))));
    return firstValueFrom(outcome, { defaultValue: undefined });
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

/** The downstream request's `_meta` without its progress token (the upstream request gets its own). */
function withMeta(params: JsonObject, context: Context): JsonObject {
  const meta = context._meta;
  if (meta === undefined) return params;
  const { progressToken: _token, ...rest } = meta;
  for (const _key in rest) return { ...params, _meta: rest as JsonObject };
  return params;
}

function isThenable(value: unknown): value is Promise<unknown> {
  return typeof (value as Promise<unknown> | undefined)?.then === 'function';
}

/** An upstream's error response goes on unchanged; anything else is left to the tool-failure path. */
function relayErrorResponse(error: unknown): never {
  throw error instanceof McpError ? RelayedError.of(error) : error;
}
