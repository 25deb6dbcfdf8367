/**
 * One live session with an upstream: a connected `Client`, the catalog it listed, the debounced re-list
 * after each `list_changed` (an atomic replace of that list), an optional health ping, and the forwarding
 * of downstream requests with their progress, cancellation and timeouts. A session never reconnects: the
 * upstream's supervisor opens a new one.
 */
import type { Subscription } from 'rxjs';
import { Client, type ClientOptions } from '../client/client';
import { collectPages } from '../client/pages';
import { setTimerRef, type Clock } from '../core/clock';
import type { ServerContext } from '../server/context';
import { ErrorCode, McpError } from '../jsonrpc/errors';
import { clipText } from '../jsonrpc/excerpt';
import type { JsonObject, JsonRpcNotification } from '../jsonrpc/types';
import type {
  Implementation,
  LoggingMessageParams,
  Progress,
  Prompt,
  Resource,
  ResourceTemplate,
  ServerCapabilities,
  Tool,
} from '../protocol/types';
import { listChangeOf, LIST_CHANGES, type ChangeableList } from '../protocol/list-changes';
import { dispatchDirect, type ForwardedMethod } from './direct';
import { TaskContext } from '../server/tasks/task-context';
import { isPlainObject } from '../jsonrpc/classify';
import type { OpenedTransport, SourceOpener } from './sources';

/** The lists a hub takes from an upstream; `resources` covers resources and resource templates. */
export type ListKind = ChangeableList;

const LIST_KINDS: readonly ListKind[] = LIST_CHANGES.map((change) => change.list);

/** What an upstream offered in its last session (kept while it is down: it reserves names). */
export interface UpstreamCatalog {
  readonly serverInfo: Implementation;
  readonly protocolVersion: string;
  readonly capabilities: ServerCapabilities;
  readonly instructions?: string;
  readonly tools: readonly Tool[];
  readonly prompts: readonly Prompt[];
  readonly resources: readonly Resource[];
  readonly resourceTemplates: readonly ResourceTemplate[];
}

export interface SessionEvents {
  /** A list was re-listed after `list_changed` and replaced in `session.catalog`. */
  relisted(session: UpstreamSession, kind: ListKind): void;
  /** A re-list or a ping failed (`error`), or a ping succeeded again (undefined). */
  health(session: UpstreamSession, error: Error | undefined): void;
  /** The connection ended without us closing it. */
  lost(session: UpstreamSession, error: Error): void;
  log(params: LoggingMessageParams): void;
  /** Any other notification (`notifications/elicitation/complete`, ...). */
  notification(message: JsonRpcNotification): void;
}

export interface SessionOptions {
  readonly clientInfo: Implementation;
  readonly clientOptions: ClientOptions;
  readonly clock: Clock;
  /** Handshake plus the first listing. */
  readonly connectTimeoutMs: number;
  /** Idle timeout of each forwarded request (progress restarts it). */
  readonly requestTimeoutMs: number;
  readonly listChangedDebounceMs: number;
  /** 0: no health ping. */
  readonly pingIntervalMs: number;
  /** Called with each new client before it connects (tests validate what it emits). */
  readonly onClient?: (client: Client) => void;
}

type Context = ServerContext;

export class UpstreamSession {
  private closing = false;
  private readonly timers = new Map<ListKind | 'ping', unknown>();
  private readonly generations = new Map<ListKind, number>();

  private constructor(
    readonly client: Client,
    readonly opened: OpenedTransport,
    public catalog: UpstreamCatalog,
    private readonly options: SessionOptions,
    private readonly events: SessionEvents,
    private readonly subscription: Subscription,
  ) {
    client.closed.then((reason) => {
      if (!this.closing) this.events.lost(this, reason.error ?? new Error(reason.message));
      this.stopTimers();
    });
    this.schedulePing();
  }

  /**
   * Opens a transport, performs the handshake and lists everything. Closes what it opened when it fails,
   * or when `signal` aborts first (the upstream was stopped meanwhile).
   */
  static async open(
    opener: SourceOpener,
    options: SessionOptions,
    events: SessionEvents,
    signal: AbortSignal,
  ): Promise<UpstreamSession> {
    const opened = await opener.open();
    if (signal.aborted) {
      await opened.transport.close().catch(() => undefined);
      throw new Error('The upstream was stopped while it was starting');
    }
    const client = new Client(options.clientInfo, options.clientOptions);
    options.onClient?.(client);
    const abandon = () => void client.close();
    signal.addEventListener('abort', abandon, { once: true });
    let session: UpstreamSession | undefined;
    // Subscribed before connecting: in the stateless revision a subscriber is what opens the upstream's
    // list-change stream, and it is open by the time the catalog is listed. The stream errors when the
    // upstream dies: `client.closed` reports that death (the session's `lost`), or `open` fails.
    const subscription = client.notifications$.subscribe({
      next: (message) => session?.onNotification(message),
      error: () => undefined,
    });
    try {
      await client.connect(opened.transport, { timeout: options.connectTimeoutMs });
      const lists = await listEverything(client, options.connectTimeoutMs);
      const catalog: UpstreamCatalog = {
        serverInfo: client.serverInfo!,
        protocolVersion: client.protocolVersion!,
        capabilities: client.serverCapabilities ?? {},
        ...(client.instructions !== undefined && { instructions: client.instructions }),
        ...lists,
      };
      session = new UpstreamSession(client, opened, catalog, options, events, subscription);
      return session;
    } catch (error) {
      subscription.unsubscribe();
      await client.close();
      await opened.transport.close().catch(() => undefined);
      throw withStderr(error as Error, opened);
    } finally {
      signal.removeEventListener('abort', abandon);
    }
  }

  /** Whether requests can still go through it (its connection has not begun to close). */
  get usable(): boolean {
    const state = this.client.state;
    return state !== 'closing' && state !== 'closed' && !this.closing;
  }

  /** Requests go straight into an in-process definition (no upstream request to cancel). */
  get direct(): boolean {
    return this.opened.direct !== undefined;
  }

  /**
   * Forwards one downstream request with its progress (when the downstream asked for it) and `_meta`;
   * `signal` cancels the upstream request (unused when `direct`: the handler gets the downstream context).
   */
  forward(method: ForwardedMethod, params: JsonObject, context: Context, signal?: AbortSignal): unknown {
    const direct = this.opened.direct;
    if (direct) return dispatchDirect(direct.definition, method, params, context);
    // A call the hub runs as a task goes on as one upstream (or as a plain call where the upstream has none).
    if (method === 'tools/call' && context instanceof TaskContext) return this.callAsTask(params, context, signal);
    // The downstream request is the parent of the upstream one: one OpenTelemetry trace crosses the hub.
    if (context.progressToken === undefined) {
      return this.client.request(method, params, {
        signal,
        timeout: this.options.requestTimeoutMs,
        parentRequest: context,
      });
    }
    return this.client.request(method, params, {
      signal,
      timeout: this.options.requestTimeoutMs,
      parentRequest: context,
      resetTimeoutOnProgress: true,
      onProgress: (progress) => relayProgress(context, progress),
    });
  }

  /**
   * `tools/call` as a task of the upstream's, for a downstream call the hub runs as a task: the downstream
   * sees the hub's task id only (the upstream's stays in the handle), the upstream's status messages as the
   * hub task's, and cancelling the hub's task cancels the upstream's. A tool or upstream without tasks runs
   * as a plain call. A 2025-11-25 upstream fails a task on a tool error: its result is what is passed on.
   */
  private async callAsTask(params: JsonObject, context: ServerContext, signal?: AbortSignal): Promise<JsonObject> {
    const args = isPlainObject(params.arguments) ? params.arguments : {};
    const handle = await this.client.callToolAsTask(String(params.name), args, { signal });
    let reports = 0;
    const statuses = handle.status$.subscribe({
      next: (view) => {
        if (view.statusMessage !== undefined) void context.progress(++reports, undefined, view.statusMessage);
      },
      error: () => undefined, // the result says how it ended
    });
    try {
      return (await handle.result) as unknown as JsonObject;
    } catch (error) {
      const failed = error instanceof McpError ? (error.data as { result?: unknown } | undefined)?.result : undefined;
      if (isPlainObject(failed)) return failed;
      throw error;
    } finally {
      statuses.unsubscribe();
    }
  }

  /**
   * Ends the session (idempotent): the client closes, and so does its transport. Resolves once the
   * transport has closed (a stdio child has exited), whether or not the client waited for that.
   */
  async close(): Promise<void> {
    this.closing = true;
    this.stopTimers();
    this.subscription.unsubscribe();
    await this.client.close();
    await this.opened.transport.close().catch(() => undefined);
  }

  private onNotification(message: JsonRpcNotification): void {
    const kind = listChangeOf(message.method)?.list;
    if (kind) this.scheduleRelist(kind);
    else if (message.method === 'notifications/message')
      this.events.log(message.params as unknown as LoggingMessageParams);
    else this.events.notification(message);
  }

  /** Several `list_changed` within the debounce window cause one re-list. */
  private scheduleRelist(kind: ListKind): void {
    const clock = this.options.clock;
    const pending = this.timers.get(kind);
    if (pending !== undefined) clock.clearTimeout(pending);
    this.timers.set(
      kind,
      clock.setTimeout(() => {
        this.timers.delete(kind);
        void this.relist(kind);
      }, this.options.listChangedDebounceMs),
    );
  }

  private async relist(kind: ListKind): Promise<void> {
    const generation = (this.generations.get(kind) ?? 0) + 1;
    this.generations.set(kind, generation);
    try {
      const lists = await LISTERS[kind](this.client, this.options.requestTimeoutMs);
      // A later list_changed started a newer re-list: only the newest result replaces the list.
      if (this.closing || this.generations.get(kind) !== generation) return;
      this.catalog = { ...this.catalog, ...lists };
      this.events.relisted(this, kind);
    } catch (error) {
      if (!this.closing) this.events.health(this, error as Error);
    }
  }

  private schedulePing(): void {
    const { pingIntervalMs, clock } = this.options;
    if (pingIntervalMs <= 0 || this.closing) return;
    const timer = clock.setTimeout(() => {
      this.timers.delete('ping');
      this.client
        .ping({ timeout: pingIntervalMs })
        .then(
          () => !this.closing && this.events.health(this, undefined),
          (error: Error) => !this.closing && this.events.health(this, error),
        )
        .finally(() => this.schedulePing());
    }, pingIntervalMs);
    setTimerRef(timer, false);
    this.timers.set('ping', timer);
  }

  private stopTimers(): void {
    for (const timer of this.timers.values()) this.options.clock.clearTimeout(timer);
    this.timers.clear();
  }
}

/** Progress of the upstream request, reported on the downstream one (its token, its revision's shape). */
function relayProgress(context: Context, progress: Progress): void {
  try {
    context.progress(progress.progress, progress.total, progress.message).catch(() => undefined);
  } catch {
    // Not increasing: the correlation core already drops those, so this cannot happen; never throw here.
  }
}

type Lists = Partial<Pick<UpstreamCatalog, 'tools' | 'prompts' | 'resources' | 'resourceTemplates'>>;

// Lists are read unchecked: the catalog keeps an upstream's valid entries and reports the broken ones,
// where a strict check would refuse the whole upstream for one bad tool.
const LISTERS: Readonly<Record<ListKind, (client: Client, timeout: number) => Promise<Lists>>> = {
  tools: async (client, timeout) => ({
    tools: client.serverCapabilities?.tools
      ? await collectPages<Tool, 'tools'>('tools/list', 'tools', (cursor) =>
          client.listToolsPage(cursor, { timeout, validateResult: false }),
        )
      : [],
  }),
  prompts: async (client, timeout) => ({
    prompts: client.serverCapabilities?.prompts
      ? await collectPages('prompts/list', 'prompts', (cursor) =>
          client.listPromptsPage(cursor, { timeout, validateResult: false }),
        )
      : [],
  }),
  resources: async (client, timeout) => {
    if (!client.serverCapabilities?.resources) return { resources: [], resourceTemplates: [] };
    const [resources, resourceTemplates] = await Promise.all([
      collectPages('resources/list', 'resources', (cursor) =>
        client.listResourcesPage(cursor, { timeout, validateResult: false }),
      ),
      collectPages('resources/templates/list', 'resourceTemplates', (cursor) =>
        client.listResourceTemplatesPage(cursor, { timeout, validateResult: false }),
      ).catch((error) => {
        // Servers from before templates answer -32601: they simply have none.
        if (error instanceof McpError && error.code === ErrorCode.MethodNotFound) return [];
        throw error;
      }),
    ]);
    return { resources, resourceTemplates };
  },
};

async function listEverything(client: Client, timeout: number) {
  const [tools, prompts, resources] = await Promise.all(LIST_KINDS.map((kind) => LISTERS[kind](client, timeout)));
  return {
    tools: tools!.tools!,
    prompts: prompts!.prompts!,
    resources: resources!.resources!,
    resourceTemplates: resources!.resourceTemplates!,
  };
}

/** `next`, with each list equal to the one in `known` replaced by that one (a catalog keeps its objects). */
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

/** How much of each recent stderr line an upstream's start-up error quotes. */
const MAX_STDERR_QUOTE_CHARS = 500;

/** A child that failed usually said why on stderr: put its last lines in the error. */
function withStderr(error: Error, opened: OpenedTransport): Error {
  const lines = opened.recentStderr?.().slice(-5) ?? [];
  if (lines.length === 0) return error;
  const shown = lines.map((line) => clipText(line, MAX_STDERR_QUOTE_CHARS));
  return new Error(`${error.message} (stderr: ${shown.join(' | ')})`, { cause: error });
}
