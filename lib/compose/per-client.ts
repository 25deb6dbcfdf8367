/**
 * An upstream with one instance per downstream client (`instance: 'per-client'`): what a client sets
 * (its roots, its log level) reaches only its own instance, and what an instance sends (logs, sampling,
 * elicitation, roots requests) reaches only its own client. A first instance, the probe, lists the
 * catalog at start and then rests (its entries stay listed); each client's instance starts on that
 * client's first request and ends when the client goes away.
 */
import { BehaviorSubject, merge, Observable, switchMap } from 'rxjs';
import type { Client } from '../client/client';
import type { ServerContext } from '../server/context';
import type { JsonObject } from '../jsonrpc/types';
import type { Root } from '../protocol/client-features';
import type {
  CallToolResult,
  CompleteParams,
  Completion,
  GetPromptResult,
  LoggingLevel,
  ReadResourceResult,
} from '../protocol/types';
import type { ServerConnection } from '../server/server';
import type { CatalogSource } from './catalog';
import type { NamePredicate } from './name-filter';
import type { NamingPolicy } from './naming';
import { sameListsAs, type ListKind, type UpstreamCatalog } from './session';
import { Upstream, type HubForUpstream, type UpstreamOptions, type UpstreamStatus } from './upstream';

type Context = ServerContext;

/** The hub as a per-client upstream sees it: as its probe sees it, and as the instance of each client does. */
export interface HubForPerClientUpstream {
  readonly shared: HubForUpstream;
  /** The hub as the instance that serves `connection` only sees it. */
  forClient(connection: ServerConnection, group: PerClientUpstream): HubForUpstream;
}

export class PerClientUpstream implements CatalogSource {
  readonly name: string;
  readonly lazy: boolean;
  readonly naming: NamingPolicy;
  readonly accepts: Readonly<Record<ListKind, NamePredicate>>;
  /** Lists the catalog at start (offered an empty list of roots), then rests; it serves no request. */
  private readonly probe: Upstream;
  private readonly instances = new BehaviorSubject<ReadonlyMap<ServerConnection, Upstream>>(new Map());
  /** The newest catalog any instance (or the probe) listed. */
  private latest: UpstreamCatalog | undefined;
  private disposed = false;

  constructor(
    private readonly options: UpstreamOptions,
    private readonly hubs: HubForPerClientUpstream,
  ) {
    const hub = hubs.shared;
    this.name = options.name;
    // Offered roots like the instances (some servers list roots tools only then), but no client's: an empty list.
    this.probe = new Upstream(
      { ...options, forward: { ...options.forward, roots: this.offersRoots }, idleTimeoutMs: undefined },
      { ...hub, roots: () => [], catalogChanged: () => this.listed(this.probe) },
    );
    this.lazy = this.probe.lazy;
    this.naming = this.probe.naming;
    this.accepts = this.probe.accepts;
    // Once it has listed, the probe's session ends: a client's own instance does the work.
    this.probe.status$.subscribe((status) => {
      if (status.state === 'ready') this.probe.rest();
    });
  }

  /** Whether its instances are offered their clients' roots (unless its `forward.roots` is false). */
  get offersRoots(): boolean {
    return this.options.forward?.roots !== false;
  }

  get actorId(): string {
    return this.probe.actorId;
  }

  get catalog(): UpstreamCatalog | undefined {
    return this.latest ?? this.probe.catalog;
  }

  get serving(): boolean {
    return this.probe.serving;
  }

  /** The probe's status: whether the catalog is known and served. */
  get status(): UpstreamStatus {
    return this.probe.status;
  }

  get status$(): Observable<UpstreamStatus> {
    return this.probe.status$;
  }

  /** The status of each client's instance. */
  get instanceStatus(): UpstreamStatus[] {
    return [...this.instances.value.values()].map((instance) => instance.status);
  }

  /** The probe never serves requests: no client to show. */
  get client(): Client | undefined {
    return undefined;
  }

  start(): void {
    this.probe.start();
  }

  started(): Promise<void> {
    return this.probe.started();
  }

  /** Withdraws its entries and ends every client's instance. */
  async stop(): Promise<void> {
    await Promise.all([this.probe.stop(), this.endInstances()]);
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    await Promise.all([this.probe.dispose(), this.endInstances()]);
    this.instances.complete();
  }

  /** The hub-wide level and roots do not concern it: each instance follows its own client's. */
  applyLogLevel(_level: LoggingLevel): void {}

  applyRoots(_roots: readonly Root[]): void {}

  /** `connection` asked for another log level. */
  clientLevelChanged(connection: ServerConnection, level: LoggingLevel): void {
    this.instances.value.get(connection)?.applyLogLevel(level);
  }

  /** `connection` offers other roots. */
  clientRootsChanged(connection: ServerConnection, roots: readonly Root[]): void {
    this.instances.value.get(connection)?.applyRoots(roots);
  }

  /** `connection` went away: its instance ends. */
  private clientClosed(connection: ServerConnection): void {
    const instance = this.instances.value.get(connection);
    if (!instance) return;
    const rest = new Map(this.instances.value);
    rest.delete(connection);
    this.instances.next(rest);
    void instance.dispose();
  }

  // ---- forwarding (CatalogSource): to the caller's own instance ---------------------------------

  callTool(name: string, args: JsonObject, context: Context): CallToolResult | Promise<CallToolResult> {
    return this.instanceFor(context).callTool(name, args, context);
  }

  getPrompt(name: string, args: Readonly<Record<string, string>>, context: Context): Promise<GetPromptResult> {
    return this.instanceFor(context).getPrompt(name, args, context);
  }

  readResource(uri: string, context: Context): Promise<ReadResourceResult> {
    return this.instanceFor(context).readResource(uri, context);
  }

  complete(params: CompleteParams, context: Context): Promise<Completion> {
    return this.instanceFor(context).complete(params, context);
  }

  /**
   * The hub follows a resource's changes once for all its subscribers (not per client): the changes any
   * running instance reports. It starts no instance of its own.
   */
  resourceUpdates(uri: string): Observable<string> {
    return this.instances.pipe(
      switchMap((instances) => merge(...[...instances.values()].map((instance) => instance.resourceUpdates(uri)))),
    );
  }

  private instanceFor(context: Context): Upstream {
    // The hub's definition is served by the hub's own Server only: every host is one of its connections.
    const connection = context.connection as ServerConnection;
    let instance = this.instances.value.get(connection);
    if (instance) return instance;
    if (this.disposed || connection.state === 'closing' || connection.state === 'closed') {
      throw new Error(`Upstream ${this.name} has no instance for a client that is going away`);
    }
    const hub = this.hubs.forClient(connection, this);
    instance = new Upstream(
      { ...this.options, name: `${this.name}[${connection.id}]`, lazy: false, idleTimeoutMs: undefined },
      { ...hub, catalogChanged: () => this.listed(instance!) },
    );
    this.instances.next(new Map(this.instances.value).set(connection, instance));
    void connection.closed.then(() => this.clientClosed(connection));
    instance.start();
    return instance;
  }

  private listed(from: Upstream): void {
    // Equal lists keep their objects: a client's new instance listing the same tools changes nothing downstream.
    const catalog = from.catalog;
    if (catalog) this.latest = this.latest ? sameListsAs(this.latest, catalog) : catalog;
    this.hubs.shared.catalogChanged(this.probe);
  }

  private async endInstances(): Promise<void> {
    const instances = [...this.instances.value.values()];
    if (!this.disposed) this.instances.next(new Map());
    await Promise.all(instances.map((instance) => instance.dispose()));
  }
}
