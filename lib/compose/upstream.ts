/**
 * One upstream server of a hub: its supervision actor (machines/upstream.ts), its current session, the
 * catalog it last listed, and everything that crosses it — downstream requests forwarded with their
 * progress, cancellation and `_meta`; resource subscriptions (one upstream subscription per URI, kept
 * across reconnects); its server-to-client requests routed to the downstream client whose call caused
 * them; its logs. Lazy upstreams start on first use; idle ones stop and keep their entries listed.
 */
import {
  BehaviorSubject,
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
  type UpstreamContext,
  type UpstreamEvent,
  type UpstreamMachineHost,
  type UpstreamState,
} from '../../machines/upstream';
import type { Client, ClientOptions } from '../client/client';
import type { ClientContext } from '../client/features';
import { setTimerRef, type Clock } from '../core/clock';
import type { Logger } from '../core/logger';
import type { ServerContext } from '../server/context';
import type { Runtime } from '../core/runtime';
import { ConnectionClosedError, ErrorCode, McpError, RelayedError } from '../jsonrpc/errors';
import { clipText } from '../jsonrpc/excerpt';
import type { JsonObject, JsonRpcNotification, RequestId } from '../jsonrpc/types';
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
import type { ServerConnection } from '../server/server';
import type { CatalogSource } from './catalog';
import type { ForwardedMethod } from './direct';
import { compileFilter, type NamePredicate } from './name-filter';
import { namingPolicy, type NamingPolicy } from './naming';
import { SourceOpener } from './sources';
import { UpstreamSession, type ListKind, type UpstreamCatalog } from './session';
import type { DownstreamTarget, ForwardedFeatures, UpstreamOptions, UpstreamStatus } from './upstream-options';

type Context = ServerContext;

export type {
  DownstreamTarget,
  ForwardedFeatures,
  UpstreamInstance,
  UpstreamOptions,
  UpstreamStatus,
} from './upstream-options';

/** What an upstream needs from its hub. */
export interface UpstreamHost {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly runtime: Runtime;
  readonly clientInfo: Implementation;
  readonly defaultNaming: NamingPolicy;
  readonly listChangedDebounceMs: number;
  readonly features: ForwardedFeatures;
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
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
const DEFAULT_UNAVAILABLE_WAIT_MS = 10_000;
/** States in which a request for the upstream does not wait: nothing will bring it back by itself. */
const GIVEN_UP: ReadonlySet<UpstreamState> = new Set(['stopped', 'failed', 'disposed']);
/** URL elicitations remembered for routing their completion notice; the oldest are forgotten beyond it. */
const MAX_URL_ELICITATIONS = 1_000;
const MAX_SPARE_CONTROLLERS = 256;

export class Upstream implements CatalogSource {
  readonly name: string;
  /** Its supervision actor's id in the runtime (`upstream:<name>`), as trace events name it. */
  readonly actorId: string;
  readonly naming: NamingPolicy;
  readonly accepts: Readonly<Record<ListKind, NamePredicate>>;
  readonly lazy: boolean;
  /** The client features it is offered: the hub's, with its own `forward` over them. */
  readonly features: ForwardedFeatures;
  /** Whether its entries are served (set by the machine's publish and withdraw). */
  serving = false;
  private readonly opener: SourceOpener;
  private readonly actor: Actor<typeof upstreamMachine>;
  private session: UpstreamSession | undefined;
  /** Bumped whenever a session opens or closes: an open that finishes for an older serial is discarded. */
  private serial = 0;
  private closingSession: Promise<void> = Promise.resolve();
  /** The last session opening, and what abandons it (closing what it opened so far). */
  private opening: Promise<void> = Promise.resolve();
  private abandonOpening: AbortController | undefined;
  private known: UpstreamCatalog | undefined;
  private since: number;
  private downSince: number | undefined;
  private readonly statusSubject: BehaviorSubject<UpstreamStatus>;
  private readonly sessions = new BehaviorSubject<UpstreamSession | undefined>(undefined);
  /**
   * Downstream requests being forwarded, each with the controller that cancels its upstream request (none
   * for direct dispatch). Wire sessions route server-to-client requests by them.
   */
  private readonly callers = new Map<Context, AbortController | undefined>();
  /**
   * Controllers of calls that ended without being aborted, for the next calls: creating an AbortController
   * costs more than the rest of a forwarded call, and the correlation core removes its listener on settle.
   */
  private readonly spareControllers: AbortController[] = [];
  private subscriptionCount = 0;
  private idleTimer: unknown;
  private readonly urlElicitations = new Map<string, ServerConnection>();

  constructor(
    private readonly options: UpstreamOptions,
    private readonly host: UpstreamHost,
  ) {
    this.name = options.name;
    this.actorId = `upstream:${options.name}`;
    this.naming = namingPolicy(options.naming, host.defaultNaming);
    this.accepts = {
      tools: compileFilter(options.tools, `${options.name}.tools`),
      prompts: compileFilter(options.prompts, `${options.name}.prompts`),
      resources: compileFilter(options.resources, `${options.name}.resources`),
    };
    this.lazy = options.lazy ?? false;
    this.features = { ...host.features, ...options.forward };
    this.opener = new SourceOpener(options.source, {
      onStderr: (line) => host.logger.debug(`[${options.name}] ${upstreamText(line)}`),
      connectionOptions: { runtime: host.runtime, logger: host.logger, clock: host.clock, upstream: options.name },
    });
    this.since = host.clock.now();
    const machineHost: UpstreamMachineHost = {
      openSession: () => void (this.opening = this.openSession()),
      closeSession: () => this.closeSession(),
      publish: () => this.setServing(true),
      withdraw: () => this.setServing(false),
    };
    this.actor = createActor(upstreamMachine, {
      id: this.actorId,
      input: { host: machineHost, policy: { ...DEFAULT_SUPERVISION, ...options.supervision } },
      parent: host.runtime.root,
    });
    this.statusSubject = new BehaviorSubject(this.describe());
    let previous = this.state;
    this.actor.subscribe((snapshot) => {
      const state = snapshot.value as UpstreamState;
      const from = previous;
      previous = state;
      if (state !== from) {
        this.since = host.clock.now();
        this.downSince = downSinceAfter(state, this.downSince, this.since);
        host.stateChanged(this, from, state, this.reasonOf(state, snapshot.context));
      }
      this.emitStatus();
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

  get catalog(): UpstreamCatalog | undefined {
    return this.known;
  }

  get status(): UpstreamStatus {
    return this.statusSubject.value;
  }

  /** The current status, then every change. Completes when the hub closes. */
  get status$(): Observable<UpstreamStatus> {
    return this.statusSubject.asObservable();
  }

  /** The client of the current session, while one is up. */
  get client(): Client | undefined {
    return this.session?.client;
  }

  /** Starts it (from idle, stopped or failed); a no-op otherwise. */
  start(): void {
    this.send({ type: 'start' });
  }

  /** Stops it and withdraws its entries; resolves once its session (or the one opening) has closed. */
  async stop(): Promise<void> {
    this.send({ type: 'stop', reason: 'requested' });
    await Promise.all([this.closingSession, this.opening]);
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
    await Promise.all([this.closingSession, this.opening]);
    this.clearIdleTimer();
    this.statusSubject.complete();
    this.sessions.complete();
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
      this.subscriptionCount++;
      this.clearIdleTimer();
      this.wake();
      const inner = this.sessions
        .pipe(
          switchMap((session) =>
            session
              ? session.client.subscribeResource(uri).pipe(
                  catchError((error) => {
                    // A session that died ends its subscriptions; the next session resubscribes.
                    if (error instanceof ConnectionClosedError)
                      this.host.logger.debug(`[${this.name}] Subscription to ${uri} ended with its session`, error);
                    else this.host.logger.warn(`[${this.name}] Could not subscribe to ${uri}`, error);
                    return EMPTY;
                  }),
                )
              : EMPTY,
          ),
        )
        .subscribe((update) => subscriber.next(update.uri));
      return () => {
        inner.unsubscribe();
        this.subscriptionCount--;
        this.armIdleTimer();
      };
    });
  }

  /** Forwards the downstream clients' logging level (when the upstream logs at all). */
  applyLogLevel(level: LoggingLevel): void {
    const session = this.session;
    if (!session?.catalog.capabilities.logging) return;
    session.client
      .setLoggingLevel(level)
      .catch((error) => this.host.logger.debug(`[${this.name}] Could not set the logging level`, error));
  }

  /** Tells the upstream that the roots it is offered changed (when it is offered roots at all). */
  applyRoots(roots: readonly Root[]): void {
    const client = this.session?.client;
    if (!this.features.roots || !client?.roots) return;
    client.setRoots(roots).catch((error) => this.host.logger.debug(`[${this.name}] Could not update roots`, error));
  }

  /**
   * Cancels the upstream requests forwarded for `connection` (only request `requestId`, when given): the
   * downstream client cancelled it, or went away.
   */
  cancelCalls(connection: ServerConnection, requestId?: RequestId, reason?: string): void {
    for (const [caller, controller] of this.callers) {
      if (caller.connection === connection && (requestId === undefined || caller.id === requestId)) {
        controller?.abort(reason ?? 'The downstream request was cancelled');
      }
    }
  }

  private forward(method: ForwardedMethod, params: JsonObject, context: Context): unknown {
    let session = this.session;
    // A session whose connection just ended is reported lost a microtask later: it counts as gone already.
    // (In-process sessions are called directly: nothing to check on that path.)
    if (session && !session.direct && !session.usable) session = undefined;
    const controller = session?.direct ? undefined : (this.spareControllers.pop() ?? new AbortController());
    const result = session
      ? session.forward(method, params, context, controller?.signal)
      : this.whenUp(method, context).then((up) => up.forward(method, params, context, controller?.signal));
    if (!isThenable(result)) {
      this.recycle(controller);
      return result;
    }
    this.callers.set(context, controller);
    this.clearIdleTimer();
    return result.then(
      (value) => {
        this.finished(context, controller);
        return value;
      },
      (error) => {
        this.finished(context, controller);
        throw this.explainFailure(method, error);
      },
    );
  }

  /** A request cut off by the session ending says so, and why (a crash, or a stop), instead of "connection closed". */
  private explainFailure(method: string, error: unknown): unknown {
    if (!(error instanceof ConnectionClosedError)) return error;
    const state = this.state;
    const why = GIVEN_UP.has(state)
      ? `it was stopped (${state === 'disposed' ? 'the hub is stopping' : state})`
      : `its connection ended (${upstreamText(error.message)}); it is being restarted`;
    return new ConnectionClosedError(`Upstream ${this.name} did not answer ${method}: ${why}`, { cause: error });
  }

  private finished(context: Context, controller: AbortController | undefined): void {
    this.callers.delete(context);
    this.recycle(controller);
    this.armIdleTimer();
  }

  private recycle(controller: AbortController | undefined): void {
    if (controller && !controller.signal.aborted && this.spareControllers.length < MAX_SPARE_CONTROLLERS) {
      this.spareControllers.push(controller);
    }
  }

  /**
   * The session once the upstream is up: a dormant (idle-stopped) or lazy one is started first; one that is
   * starting or restarting is waited for, up to `unavailableWaitMs` (or until the downstream request ends).
   */
  private async whenUp(method: string, context: Context): Promise<UpstreamSession> {
    this.wake();
    const { unavailableWaitMs = DEFAULT_UNAVAILABLE_WAIT_MS, connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS } =
      this.options;
    if (GIVEN_UP.has(this.state)) throw this.unavailable(method, 0);
    // A start that no failure interrupted (lazy, woken from idle, per client) may take its whole connect
    // timeout: that is not being down. If it fails, the wait for the next attempt is bounded as any other.
    if (this.downSince === undefined) {
      const startBound = Math.max(unavailableWaitMs, connectTimeoutMs);
      const session = await this.nextSession(startBound, context.signal, true);
      if (session) return session;
      if (this.state !== 'reconnecting' || context.signal.aborted) throw this.unavailable(method, startBound);
    }
    const session = unavailableWaitMs > 0 ? await this.nextSession(unavailableWaitMs, context.signal) : undefined;
    if (!session) throw this.unavailable(method, unavailableWaitMs);
    return session;
  }

  /**
   * The next usable session; undefined after `bound` ms, once it gives up or is stopped, when `signal`
   * aborts, or (`untilFailure`) when an attempt fails.
   */
  private nextSession(bound: number, signal: AbortSignal, untilFailure = false): Promise<UpstreamSession | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    const clock = this.host.clock;
    const expired = new Observable<void>((subscriber) => {
      const timer = clock.setTimeout(() => subscriber.next(), bound);
      return () => clock.clearTimeout(timer);
    });
    const outcome = merge(
      this.sessions.pipe(filter((session): session is UpstreamSession => session?.usable === true)),
      this.status$.pipe(
        filter((status) => GIVEN_UP.has(status.state) || (untilFailure && status.state === 'reconnecting')),
        map(() => undefined),
      ),
    ).pipe(takeUntil(merge(expired, fromEvent(signal, 'abort'))));
    return firstValueFrom(outcome, { defaultValue: undefined });
  }

  /** Starts a lazy upstream that never ran, or one stopped for being idle. */
  private wake(): void {
    const { value, context } = this.actor.getSnapshot();
    if (value === 'idle' || (value === 'stopped' && context.stopReason === 'idle')) this.start();
  }

  /** The hub's own failure: a tool error for `tools/call`, an internal error for the other requests. */
  private unavailable(method: string, waitedMs: number): Error {
    const { state, lastError, downSince, nextAttemptAt, failures } = this.status;
    const parts = [`Upstream ${this.name} is down (${state}`];
    if (downSince !== undefined) parts.push(` since ${new Date(downSince).toISOString()}`);
    if (failures > 0) parts.push(`, ${failures} failure${failures === 1 ? '' : 's'} in a row`);
    parts.push(`), so ${method} cannot reach it`);
    if (!GIVEN_UP.has(state) && waitedMs > 0) parts.push(` (waited ${waitedMs} ms)`);
    if (lastError) parts.push(`. Last error: ${lastError}`);
    if (nextAttemptAt !== undefined) parts.push(`. Next attempt at ${new Date(nextAttemptAt).toISOString()}`);
    else if (state === 'connecting') parts.push('. It is starting');
    else if (GIVEN_UP.has(state)) parts.push('. It will not be restarted unless started again');
    return new Error(`${parts.join('')}.`);
  }

  // ---- server-to-client requests -----------------------------------------------------------------

  private clientOptions(): ClientOptions {
    const { runtime, logger, clock } = this.host;
    const features = this.features;
    const route = (method: string) => (params: object, context: ClientContext) =>
      this.route(method, params as JsonObject, context) as Promise<never>;
    return {
      runtime,
      logger,
      clock,
      upstream: this.name,
      defaultTimeout: this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      ...(features.sampling && { sampling: { tools: true, handler: route('sampling/createMessage') } }),
      ...(features.elicitation && {
        elicitation: { form: route('elicitation/create'), url: route('elicitation/create'), applyDefaults: false },
      }),
      ...(features.roots && { roots: this.host.roots() }),
    };
  }

  /**
   * A sampling or elicitation request from the upstream goes to the downstream client whose call is in
   * flight on this upstream (MCP does not say which call caused it: when calls of several clients are in
   * flight it is refused rather than guessed), else to the hub's fallback (the only downstream client).
   */
  private async route(method: string, params: JsonObject, upstreamContext: ClientContext): Promise<JsonObject> {
    const target = this.callerTarget(method) ?? this.host.fallbackTarget(method);
    if (!target) {
      throw new McpError(
        ErrorCode.InternalError,
        `The hub has no downstream client to send ${method} from ${this.name} to: no call of this upstream is in flight and several (or no) clients are connected`,
      );
    }
    // Its span continues the upstream's request (a child of the hub's span for it), not the downstream call.
    const result = await target.request(method, params, {
      signal: upstreamContext.signal,
      timeout: 0,
      parentRequest: upstreamContext,
    });
    if (method === 'elicitation/create' && params.mode === 'url' && typeof params.elicitationId === 'string') {
      this.rememberUrlElicitation(params.elicitationId, target.connection);
    }
    return result;
  }

  private callerTarget(method: string): DownstreamTarget | undefined {
    let latest: Context | undefined;
    for (const caller of this.callers.keys()) {
      if (latest && caller.connection !== latest.connection) {
        throw new McpError(
          ErrorCode.InternalError,
          `The hub cannot tell which downstream client ${method} from ${this.name} is for: calls of several clients are in flight`,
        );
      }
      latest = caller;
    }
    if (!latest) return undefined;
    const caller = latest;
    return {
      // The hub's definition is served by the hub's own Server only: every host is one of its connections.
      connection: caller.connection as ServerConnection,
      // Tied to the downstream call: cancelled with it, or when the upstream cancels its own request.
      request: (target, params, options) =>
        caller.request(target, params, { ...options, signal: AbortSignal.any([options.signal!, caller.signal]) }),
    };
  }

  private rememberUrlElicitation(id: string, connection: ServerConnection): void {
    this.urlElicitations.set(id, connection);
    if (this.urlElicitations.size > MAX_URL_ELICITATIONS) {
      this.urlElicitations.delete(this.urlElicitations.keys().next().value!);
    }
  }

  private onNotification(message: JsonRpcNotification): void {
    if (message.method !== 'notifications/elicitation/complete') return;
    const id = (message.params as { elicitationId?: unknown } | undefined)?.elicitationId;
    const connection = typeof id === 'string' ? this.urlElicitations.get(id) : undefined;
    if (!connection) return;
    this.urlElicitations.delete(id as string);
    if (connection.state !== 'ready') return;
    connection
      .notify(message.method, message.params)
      .catch((error) => this.host.logger.debug(`[${this.name}] Could not forward ${message.method}`, error));
  }

  // ---- the machine's actions ---------------------------------------------------------------------

  private async openSession(): Promise<void> {
    const serial = ++this.serial;
    const { host, options } = this;
    const abandon = (this.abandonOpening = new AbortController());
    let session: UpstreamSession;
    try {
      session = await UpstreamSession.open(
        this.opener,
        {
          clientInfo: host.clientInfo,
          clientOptions: this.clientOptions(),
          clock: host.clock,
          connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
          requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
          listChangedDebounceMs: host.listChangedDebounceMs,
          pingIntervalMs: options.pingIntervalMs ?? 0,
          ...(host.onClient && { onClient: (client: Client) => host.onClient!(this.name, client) }),
        },
        {
          relisted: (from) => this.current(from) && this.catalogUpdated(from.catalog),
          health: (from, error) => {
            if (!this.current(from)) return;
            if (error) host.logger.warn(`[${this.name}] Unhealthy: ${upstreamText(error.message)}`);
            this.send(error ? { type: 'unhealthy', error } : { type: 'healthy' });
          },
          lost: (from, error) => {
            if (!this.current(from)) return;
            host.logger.warn(`[${this.name}] Lost: ${upstreamText(error.message)}`);
            this.send({ type: 'lost', error });
          },
          log: (params) => host.forwardLog(this, params),
          notification: (message) => this.onNotification(message),
        },
        abandon.signal,
      );
    } catch (error) {
      if (serial !== this.serial) return;
      host.logger.warn(`[${this.name}] Could not start: ${upstreamText((error as Error).message)}`);
      this.send({ type: 'connect.failed', error: error as Error });
      return;
    }
    if (serial !== this.serial) {
      await session.close();
      return;
    }
    this.abandonOpening = undefined;
    this.session = session;
    // The same lists after a restart keep their objects: the catalog (and its definitions) stays as it was.
    this.known = this.known ? sameListsAs(this.known, session.catalog) : session.catalog;
    session.catalog = this.known;
    const level = host.logLevel();
    if (level) this.applyLogLevel(level);
    this.sessions.next(session);
    this.send({ type: 'connected' });
    this.armIdleTimer();
  }

  private current(session: UpstreamSession): boolean {
    return this.session === session;
  }

  private closeSession(): void {
    this.serial++;
    this.abandonOpening?.abort();
    this.abandonOpening = undefined;
    const session = this.session;
    this.session = undefined;
    if (this.sessions.value) this.sessions.next(undefined);
    this.clearIdleTimer();
    if (session) this.closingSession = session.close();
  }

  private catalogUpdated(catalog: UpstreamCatalog): void {
    this.known = catalog;
    this.host.catalogChanged(this);
    this.emitStatus();
  }

  /** A machine action: the status follows when the transition completes. */
  private setServing(serving: boolean): void {
    this.serving = serving;
    this.host.catalogChanged(this);
  }

  // ---- idleness ----------------------------------------------------------------------------------

  private armIdleTimer(): void {
    const timeout = this.options.idleTimeoutMs;
    if (!timeout || this.idleTimer !== undefined || this.callers.size > 0 || this.subscriptionCount > 0) return;
    if (!this.session) return;
    const clock = this.host.clock;
    this.idleTimer = clock.setTimeout(() => {
      this.idleTimer = undefined;
      if (this.callers.size === 0 && this.subscriptionCount === 0 && this.session) {
        this.host.logger.info(`[${this.name}] Idle for ${timeout} ms: stopping it`);
        this.send({ type: 'stop', reason: 'idle' });
      }
    }, timeout);
    setTimerRef(this.idleTimer, false);
  }

  private clearIdleTimer(): void {
    if (this.idleTimer === undefined) return;
    this.host.clock.clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  // ---- status ------------------------------------------------------------------------------------

  /** Why it is in `state`: its last error where a failure led there (with the next attempt), or why it stopped. */
  private reasonOf(state: UpstreamState, context: UpstreamContext): string | undefined {
    switch (state) {
      case 'degraded':
      case 'failed':
        return context.lastError && upstreamText(context.lastError.message);
      case 'reconnecting': {
        const delay = context.retryDelayMs ?? 0;
        const next = `next attempt in ${delay} ms, at ${new Date(this.since + delay).toISOString()}`;
        return context.lastError ? `${upstreamText(context.lastError.message)}; ${next}` : next;
      }
      case 'stopped':
        return context.stopReason;
      default:
        return undefined;
    }
  }

  private emitStatus(): void {
    if (!this.statusSubject || this.statusSubject.closed) return;
    const status = this.describe();
    if (!sameStatus(status, this.statusSubject.value)) this.statusSubject.next(status);
  }

  private describe(): UpstreamStatus {
    const { value, context } = this.actor.getSnapshot();
    const catalog = this.known;
    const pid = this.session?.opened.pid;
    return {
      name: this.name,
      state: value as UpstreamState,
      serving: this.serving,
      source: this.opener.describe(),
      failures: context.failures,
      ...(context.lastError && { lastError: upstreamText(context.lastError.message) }),
      ...(context.stopReason && { stopReason: context.stopReason }),
      since: this.since,
      ...(this.downSince !== undefined && { downSince: this.downSince }),
      ...(context.retryDelayMs !== undefined && { nextAttemptAt: this.since + context.retryDelayMs }),
      ...(catalog && { serverInfo: catalog.serverInfo, protocolVersion: catalog.protocolVersion }),
      ...(pid !== undefined && { pid }),
      tools: catalog?.tools.length ?? 0,
      prompts: catalog?.prompts.length ?? 0,
      resources: catalog?.resources.length ?? 0,
      resourceTemplates: catalog?.resourceTemplates.length ?? 0,
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

/** When an upstream entering `state` at `now` has been down since: kept while it stays down. */
function downSinceAfter(state: UpstreamState, downSince: number | undefined, now: number): number | undefined {
  switch (state) {
    case 'reconnecting':
    case 'failed':
      return downSince ?? now;
    case 'connecting':
      return downSince;
    default:
      return undefined;
  }
}

/** `next`, with each list equal to the one in `known` replaced by that one. */
export function sameListsAs(known: UpstreamCatalog, next: UpstreamCatalog): UpstreamCatalog {
  const keep = <T>(before: readonly T[], after: readonly T[]) =>
    before.length === after.length && sameJson(before, after) ? before : after;
  return {
    ...next,
    tools: keep(known.tools, next.tools),
    prompts: keep(known.prompts, next.prompts),
    resources: keep(known.resources, next.resources),
    resourceTemplates: keep(known.resourceTemplates, next.resourceTemplates),
  };
}

/** Whether two lists an upstream sent serialize alike; lists too deep to serialize count as different. */
function sameJson(a: unknown, b: unknown): boolean {
  try {
    return JSON.stringify(a) === JSON.stringify(b);
  } catch {
    return false;
  }
}

function sameStatus(a: UpstreamStatus, b: UpstreamStatus): boolean {
  const keys = Object.keys(a) as (keyof UpstreamStatus)[];
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

function isThenable(value: unknown): value is Promise<unknown> {
  return typeof (value as Promise<unknown> | undefined)?.then === 'function';
}

/** An upstream's error response goes on unchanged; anything else is left to the tool-failure path. */
function relayErrorResponse(error: unknown): never {
  throw error instanceof McpError ? RelayedError.of(error) : error;
}

/** An upstream's own words (error messages, stderr) in the hub's logs, status and tool errors: bounded. */
function upstreamText(text: string): string {
  return clipText(text, 500);
}
