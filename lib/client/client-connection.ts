/**
 * The connection half of `Client` (lib/client/client.ts adds the typed calls of each server feature): its
 * options, `connect` in either era (the era probe, the handshake, or the stateless revision's discovery),
 * the request path of both eras with result checks, and `close`.
 */
import {
  CLOSE_TIMEOUT_MS,
  Connection,
  handlerTable,
  type ConnectionEvents,
  type ConnectionOptions,
  type HandlerTable,
  type SendOptions,
} from '../core/connection';
import { DEFAULT_REQUEST_TIMEOUT_MS, type RequestCompletion } from '../core/correlation';
import type { EventFacade } from '../core/events';
import { defaultRuntime } from '../core/runtime';
import type { TraceEvent } from '../trace/types';
import type { Observable } from 'rxjs';
import type { QuitReason } from '../../machines/connection';
import type { Transport } from '../../transports/transport';
import { ConnectionClosedError } from '../jsonrpc/errors';
import type { JsonObject } from '../jsonrpc/types';
import { resultChecks, type ResultValidator } from '../protocol/results';
import { shape } from '../protocol/shape';
import type { ClientCapabilities, Implementation, InitializeResult, ServerCapabilities } from '../protocol/types';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, type ProtocolVersion } from '../protocol/versions';
import { MODERN_PROTOCOL_VERSIONS, namesModernRevision, type ModernProtocolVersion } from '../protocol/modern';
import type { ClientEra } from './client-era';
import { defaultEraCache, type EraCache, type EraVerdict } from './era-cache';
import { DEFAULT_ERA_PROBE_TIMEOUT_MS, forcedEra, negotiateEra } from './era-negotiation';
import { eraChoiceOf, type EraChoice, type EraOption } from './era-choice';
import { ClientFeatures, type ClientFeatureOptions, type ClientHost } from './features';
import { HandshakeClient } from './handshake-client';
import { ModernClient, type ListChangesChoice } from './modern-client';
import { ModernRequestStamp } from './modern-request-stamp';
import { ClientReconnect, type ReconnectEvents, type ReconnectHost } from './reconnect';
import { reconnectPolicy, type ReconnectOptions } from './reconnect-policy';
import { checkInitializeResult, redoDiscovery, redoHandshake } from './reconnect-reopen';

export interface ClientConnectionOptions extends ConnectionOptions, ClientFeatureOptions {
  /**
   * Extra capabilities (`experimental`, ...). `sampling`, `elicitation` and `roots` are declared by giving
   * their handlers (`sampling`, `elicitation`, `roots` options), never by this field.
   */
  readonly capabilities?: ClientCapabilities;
  /**
   * The revision to ask for (default: the newest we support). A handshake-era revision implies
   * `era: 'handshake'`; a stateless one (`'2026-07-28'`) implies `era: 'modern'`.
   */
  readonly protocolVersion?: ProtocolVersion | ModernProtocolVersion;
  /**
   * Which era to speak. `auto` (default): probe with `server/discover` over transports that name an
   * `eraKey` (stdio, Streamable HTTP), falling back to `initialize` on any handshake-era answer; other
   * transports connect with `initialize` as before. `handshake`: `initialize` at once, no probe. `modern`:
   * the stateless revision, or fail. `legacy` (deprecated): the old name of `handshake`, read as it.
   */
  readonly era?: EraOption;
  /**
   * Where era verdicts are kept, by the transport's `eraKey` (default: one cache per process); `false`:
   * none, every connection probes.
   */
  readonly eraCache?: EraCache | false;
  /** How long a stdio server has to answer the probe before it counts as handshake-era, in ms (3000). */
  readonly eraProbeTimeout?: number;
  /** Revisions we accept in the server's answer (default: all four). */
  readonly protocolVersions?: readonly ProtocolVersion[];
  /**
   * How the stateless revision's `list_changed` notifications reach `notifications$` and the list caches
   * (a server of that revision sends none unasked). `listen` (default): one `subscriptions/listen` stream,
   * open from `connect` to `close`, for the lists whose `listChanged` the server's discovery result
   * declares (none declared: no stream). `off`: no stream (lists are then reused for their `ttlMs` only).
   * The handshake era ignores it: its server sends them on the session.
   */
  readonly listChanges?: ListChangesChoice;
  /** `input_required` rounds one modern call may take before it fails (default 10). */
  readonly maxInputRounds?: number;
  /**
   * Reconnect when the connection ends without `close()` (the server died, the transport failed): back off,
   * make a new transport with `reconnect.transport()`, redo the handshake or the probe in the era `connect`
   * found, and restore resource subscriptions and listen streams (see `ReconnectOptions`). Off by default.
   */
  readonly reconnect?: ReconnectOptions;
}

/** A client's events: the connection's, and the steps of its reconnections (with a `reconnect` policy). */
export interface ClientConnectionEvents extends ConnectionEvents, ReconnectEvents {}

export interface ClientRequestOptions extends SendOptions {
  /**
   * Check the result against the method's result schema for the negotiated revision (default true). Turn
   * it off only to inspect a peer's raw answer yourself (a hub keeps an upstream's valid list entries and
   * reports the broken ones).
   */
  readonly validateResult?: boolean;
}

export interface ConnectOptions {
  /** How long to wait for the initialize response (default: the connection's default timeout). */
  readonly timeout?: number;
  readonly signal?: AbortSignal;
}

const answerPing = () => ({});

/** A client's connection to one server, in either era; `Client` is the class to use. */
export class ClientConnection extends Connection {
  readonly role = 'client';
  readonly capabilities: ClientCapabilities;
  /** @internal The application's sampling, elicitation and roots handlers. */
  readonly features: ClientFeatures;
  /**
   * @internal What differs between the eras (lib/client/client-era.ts): the handshake era's until `connect` finds the
   * stateless revision, then a `ModernClient`.
   */
  protected eraCalls: ClientEra;
  private readonly requestedVersion: ProtocolVersion;
  private readonly acceptedVersions: readonly ProtocolVersion[];
  /** The transport given to `connect`, from its era probe on: `close` closes it and waits for that. */
  private given: Transport | undefined;
  private readonly maxInputRounds: number | undefined;
  private readonly listChanges: ListChangesChoice;
  /** The result checks of the negotiated revision, kept once ready (the revision no longer changes). */
  private readyChecks: ReadonlyMap<string, ResultValidator> | undefined;
  private requestHandlers: HandlerTable<ClientHost> | undefined;
  private readonly eraChoice: EraChoice;
  private readonly eraCache: EraCache | undefined;
  private readonly eraProbeTimeout: number;
  /** The connection's default request timeout: how long an HTTP server has to answer the probe. */
  private readonly requestTimeout: number;
  /** The stateless revision `protocolVersion` names, when it names one. */
  private readonly forcedModernVersion: string | undefined;
  /** @internal The client's reconnections, with a `reconnect` policy (made by the constructor). */
  protected readonly reconnection: ClientReconnect | undefined;

  constructor(
    readonly info: Implementation,
    options: ClientConnectionOptions = {},
  ) {
    super('c', options);
    this.features = new ClientFeatures(options);

    this.acceptedVersions = options.protocolVersions ?? SUPPORTED_PROTOCOL_VERSIONS;
    const asked = options.protocolVersion;
    this.requestedVersion =
      asked !== undefined && !namesModernRevision(asked)
        ? (asked as ProtocolVersion)
        : (this.acceptedVersions[0] ?? LATEST_PROTOCOL_VERSION);
    this.eraChoice = forcedEra(eraChoiceOf(options.era), asked);
    this.eraCache = options.eraCache === false ? undefined : (options.eraCache ?? defaultEraCache());
    this.eraProbeTimeout = options.eraProbeTimeout ?? DEFAULT_ERA_PROBE_TIMEOUT_MS;
    this.requestTimeout = options.defaultTimeout ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.forcedModernVersion = asked !== undefined && namesModernRevision(asked) ? asked : undefined;
    this.capabilities = this.features.capabilities(options.capabilities, this.requestedVersion);
    this.maxInputRounds = options.maxInputRounds;
    this.listChanges = options.listChanges ?? 'listen';
    this.eraCalls = new HandshakeClient(this);
    if (options.reconnect) {
      const policy = reconnectPolicy(options.reconnect);
      this.reconnection = new ClientReconnect(policy, this.reconnectHost(), options.runtime ?? defaultRuntime());
    }
  }

  /** eventemitter3 facade: the connection's events and the client's (`ClientConnectionEvents`). */
  override get events(): EventFacade<ClientConnectionEvents> {
    return super.events as unknown as EventFacade<ClientConnectionEvents>;
  }

  /** With a `reconnect` policy, the steps of each reconnection are among the events (a `reconnect` actor's lifecycle). */
  override get trace$(): Observable<TraceEvent> {
    const connection$ = super.trace$;
    return this.reconnection ? this.reconnection.trace$(connection$) : connection$;
  }

  /** True while the client reconnects (with a `reconnect` policy): calls wait or fail, as the policy says. */
  get reconnecting(): boolean {
    return this.reconnection?.reconnecting === true;
  }

  /** @internal Emits each time the client is connected again; completes when it has closed. */
  get reconnected$(): Observable<void> | undefined {
    return this.reconnection?.reconnected$;
  }

  /** @internal The handlers of requests from the server, made on the first one: a handshake pays for no table. */
  protected get handlers(): HandlerTable<ClientHost> {
    return (this.requestHandlers ??= handlerTable<ClientHost>({
      ping: answerPing,
      ...this.features.requestHandlers(),
    }));
  }

  get serverInfo(): Implementation | undefined {
    return this.negotiated?.peerInfo as Implementation | undefined;
  }

  get serverCapabilities(): ServerCapabilities | undefined {
    return this.peerCapabilities as ServerCapabilities | undefined;
  }

  get instructions(): string | undefined {
    return this.negotiated?.instructions;
  }

  /** The era this client connected in, once connected. */
  get connectedEra(): 'handshake' | 'modern' | undefined {
    const state = this.state;
    return state === 'modern' ? 'modern' : state === 'ready' ? 'handshake' : undefined;
  }

  /**
   * Connects over `transport` in the era the `era` option picks (see `ClientConnectionOptions.era`): in the stateless
   * revision once `server/discover` (or the cached verdict) said so; otherwise with the handshake:
   * `initialize`, version check, `notifications/initialized`. On failure the connection is closed (quit
   * reason `handshake-failed`) and the error is thrown.
   */
  async connect(transport: Transport, options: ConnectOptions = {}): Promise<this> {
    if (this.given || this.state !== 'uninitialized') throw this.alreadyConnected();
    this.given = transport;
    if (this.eraChoice !== 'handshake') {
      let verdict: EraVerdict;
      try {
        verdict = await negotiateEra(transport, {
          choice: this.eraChoice,
          cache: this.eraCache,
          ours: this.modernVersions(),
          capabilities: this.capabilities as JsonObject,
          clientInfo: this.infoFor(),
          stdioTimeoutMs: this.eraProbeTimeout,
          timeoutMs: options.timeout ?? this.requestTimeout,
          clock: this.clock,
          logger: this.logger,
          trace: this.tracer,
        });
      } catch (error) {
        await this.failBeforeAttach(transport, error as Error);
        throw error;
      }
      if (this.state !== 'uninitialized') {
        // Closed during the probe: `close` has closed the transport.
        await this.transportClosed();
        throw new ConnectionClosedError('The client was closed while it was connecting');
      }
      if (verdict.era === 'modern') return this.connectModern(transport, verdict);
    }
    return this.handshake(transport, options);
  }

  /**
   * Closes the connection and resolves once its transport has closed too: for a stdio server, once the
   * child process and its process group are gone. A transport that never finishes closing is given up on
   * after `CLOSE_TIMEOUT_MS` (5 s), as the connection does; the stdio shutdown ladder's defaults fit in it.
   */
  override async close(): Promise<QuitReason> {
    this.eraCalls.stop();
    const closing = super.close();
    await this.transportClosed();
    return closing;
  }

  /**
   * `Connection.request`, with the client's `validateResult` option in its type. In the stateless revision
   * every request carries the `_meta` envelope (and a `tools/call` its `Mcp-Param-*` headers), and an
   * `input_required` result is answered and retried until the request completes (lib/client/modern-client.ts);
   * a method that revision removed (`ping`, `logging/setLevel`) rejects with `MethodRemovedError`, unsent.
   */
  override request(method: string, params?: JsonObject, options?: ClientRequestOptions): Promise<JsonObject> {
    return this.eraCalls.request(method, params, options);
  }

  /** @internal The connection's own request path, without the era's handling: what the era objects send with. */
  sendAsIs(
    method: string,
    params: JsonObject | undefined,
    options: ClientRequestOptions | undefined,
    completion?: RequestCompletion,
  ): Promise<JsonObject> {
    return this.sendRequest(method, params, options, completion);
  }

  /**
   * @internal Results are checked against the method's result schema for the negotiated revision before a request
   * resolves (a broken one rejects with `ResultValidationError`); `validateResult: false` skips that.
   */
  protected override resultCheck(
    method: string,
    options: ClientRequestOptions | undefined,
  ): ResultValidator | undefined {
    if (options?.validateResult === false) return undefined;
    return (this.readyChecks ?? this.currentChecks()).get(method);
  }

  /** The handshake era's connect: `initialize`, version check, `notifications/initialized`. */
  private async handshake(transport: Transport, options: ConnectOptions): Promise<this> {
    this.attach(this.linked(transport));
    this.transition({ type: 'initialize.start' });
    try {
      const params = this.initializeParams();
      const result = (await this.request('initialize', params, options)) as unknown as InitializeResult;
      const version = checkInitializeResult(result, this.acceptedVersions);
      this.announceVersion(version);
      this.transition({
        type: 'initialize.done',
        protocolVersion: version,
        peerCapabilities: result.capabilities,
        peerInfo: result.serverInfo as unknown as Readonly<Record<string, unknown>>,
        ...(typeof result.instructions === 'string' && { instructions: result.instructions }),
      });
      await this.notify('notifications/initialized');
      this.reconnection?.arm();
      return this;
    } catch (error) {
      const failure = error as Error;
      this.transition({
        type: 'close',
        reason: { kind: 'handshake-failed', message: failure.message, error: failure },
      });
      await this.closed;
      await this.transportClosed();
      throw error;
    }
  }

  /**
   * Attaches a transport the probe found modern: no handshake, the discovery result is what we know. The
   * list-change stream opens here (see `ClientConnectionOptions.listChanges`).
   */
  private async connectModern(transport: Transport, verdict: Extract<EraVerdict, { era: 'modern' }>): Promise<this> {
    this.attach(this.linked(transport));
    const stamp = new ModernRequestStamp(
      verdict.version,
      this.modernVersions(),
      this.capabilities as JsonObject,
      this.infoFor(),
    );
    const modern = new ModernClient(stamp, this, {
      eraCache: this.eraCache,
      eraKey: transport.eraKey,
      maxInputRounds: this.maxInputRounds,
    });
    this.eraCalls = modern;
    const { discover } = verdict;
    this.transition({
      type: 'era.modern',
      negotiated: {
        protocolVersion: verdict.version,
        peerCapabilities: discover.capabilities,
        peerInfo: discover.serverInfo,
        ...(discover.instructions !== undefined && { instructions: discover.instructions }),
      },
    });
    if (this.state !== 'modern') {
      // The transport ended as it was attached (it refused the subscription, or failed to start).
      const reason = await this.closed;
      throw new ConnectionClosedError(`The connection closed as it connected: ${reason.message}`);
    }
    modern.followListChanges(this.serverCapabilities, this.listChanges);
    this.reconnection?.arm();
    return this;
  }

  /** The transport to attach: `transport` itself, or a link that reconnects behind it (a `reconnect` policy). */
  private linked(transport: Transport): Transport {
    if (!this.reconnection) return transport;
    return (this.given = this.reconnection.linked(transport));
  }

  private initializeParams(): JsonObject {
    return {
      protocolVersion: this.requestedVersion,
      capabilities: this.capabilities as JsonObject,
      clientInfo: shape('Implementation', this.info, this.requestedVersion) as unknown as JsonObject,
    };
  }

  /** What the client's reconnections do to it (lib/client/reconnect.ts). */
  private reconnectHost(): ReconnectHost {
    const { id, upstream, clock } = this;
    return {
      ...{ id, role: 'client', upstream, clock },
      emit: (event, payload) => this.emitEvent(event, payload),
      reopen: (transport, timeoutMs) => this.reopen(transport, timeoutMs),
      // What the old server asked of us is void: nobody is left to answer.
      lost: (reason) => this.activeHandlerCount > 0 && this.inbound.cancelAll(`the server was lost (${reason})`),
      reconnected: () => this.onReconnected(),
    };
  }

  /** A reconnection's new transport: the handshake again, or the probe, in the era the first `connect` found. */
  private reopen(transport: Transport, timeoutMs: number): Promise<void> {
    const { protocolVersion: version, capabilities, clock, tracer } = this;
    if (this.state === 'modern') {
      return redoDiscovery(transport, version!, { capabilities, clientInfo: this.infoFor() }, timeoutMs, clock, tracer);
    }
    const check = (result: unknown) => checkInitializeResult(result as InitializeResult, this.acceptedVersions);
    return redoHandshake(transport, this.initializeParams(), version!, check, timeoutMs, clock, tracer);
  }

  /** @internal Role hook: the client is connected again after a reconnection (`Client` refreshes its list caches). */
  protected onReconnected(): void {}

  /** @internal Role hook: the connection has closed (a subclass that overrides it calls it). */
  protected override onClosed(): void {
    this.reconnection?.end();
  }

  /** The probe failed: the transport is closed and the connection ends as a failed handshake. */
  private async failBeforeAttach(transport: Transport, failure: Error): Promise<void> {
    this.transition({ type: 'close', reason: { kind: 'handshake-failed', message: failure.message, error: failure } });
    await this.closed;
    await transport.close().catch(() => undefined);
  }

  /** The stateless revisions this client speaks: the one `protocolVersion` names, or all of ours. */
  private modernVersions(): readonly string[] {
    return this.forcedModernVersion ? [this.forcedModernVersion] : MODERN_PROTOCOL_VERSIONS;
  }

  /** Our `clientInfo`, shaped for the newest handshake revision (2026-07-28 kept its shape). */
  private infoFor(): JsonObject {
    return shape('Implementation', this.info, LATEST_PROTOCOL_VERSION) as unknown as JsonObject;
  }

  /** Waits for the given transport's (idempotent) `close()`, at most `CLOSE_TIMEOUT_MS`. */
  private transportClosed(): Promise<void> {
    const transport = this.given;
    if (!transport) return Promise.resolve();
    return new Promise((resolve) => {
      const giveUp = this.clock.setTimeout(resolve, CLOSE_TIMEOUT_MS);
      transport.close().then(
        () => this.stopWaiting(giveUp, resolve),
        () => this.stopWaiting(giveUp, resolve),
      );
    });
  }

  private stopWaiting(giveUp: unknown, resolve: () => void): void {
    this.clock.clearTimeout(giveUp);
    resolve();
  }

  /** The result checks of the revision in force: the requested one until the server has answered. */
  private currentChecks(): ReadonlyMap<string, ResultValidator> {
    const checks = resultChecks(this.protocolVersion ?? this.requestedVersion);
    const state = this.state;
    if (state === 'ready' || state === 'modern') this.readyChecks = checks;
    return checks;
  }
}
