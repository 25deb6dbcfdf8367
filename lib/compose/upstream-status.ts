/**
 * What one upstream reports: its status (the machine's snapshot, with when it entered its state and since
 * when it has been down), why it is in its state, and the errors that tell a caller it is down.
 */
import { BehaviorSubject, type Observable } from 'rxjs';
import type { UpstreamContext, UpstreamState } from '../../machines/upstream';
import type { Clock } from '../core/clock';
import { ConnectionClosedError } from '../jsonrpc/errors';
import { clipText } from '../jsonrpc/excerpt';
import type { UpstreamCatalog } from './session';
import type { UpstreamStatus } from './upstream-options';

/** States in which a request for the upstream does not wait: nothing will bring it back by itself. */
export const GIVEN_UP: ReadonlySet<UpstreamState> = new Set(['stopped', 'failed', 'disposed']);

/** What a status is made of, read when it is described. */
export interface StatusSources {
  readonly name: string;
  /** Where it lives (`stdio: node server.js`, a URL, `in-process`). */
  readonly source: string;
  readonly clock: Clock;
  machine(): { readonly value: unknown; readonly context: UpstreamContext };
  catalog(): UpstreamCatalog | undefined;
  /** The child's pid, while a stdio session is open. */
  pid(): number | undefined;
}

/**
 * The status of one upstream, kept current: `moved` on each of its machine's snapshots (it times the
 * changes of state), `refresh` when something else it shows changed (the catalog).
 */
export class StatusTracker {
  private state: UpstreamState;
  /** When the machine entered its state (the hub's clock). */
  private since: number;
  private downSince: number | undefined;
  private readonly subject: BehaviorSubject<UpstreamStatus>;

  constructor(private readonly sources: StatusSources) {
    this.state = sources.machine().value as UpstreamState;
    this.since = sources.clock.now();
    this.subject = new BehaviorSubject(this.describe());
  }

  get current(): UpstreamStatus {
    return this.subject.value;
  }

  get changes$(): Observable<UpstreamStatus> {
    return this.subject.asObservable();
  }

  /** Since when it has been down (after having been up, or having failed to start), while it is. */
  get downSinceAt(): number | undefined {
    return this.downSince;
  }

  /**
   * The machine took a step: returns the change of state it made, if any, with its reason (the last error
   * where a failure led there, or why it stopped), then publishes the new status.
   */
  moved(): { from: UpstreamState; to: UpstreamState; reason: string | undefined } | undefined {
    const { value, context } = this.sources.machine();
    const to = value as UpstreamState;
    const from = this.state;
    let change: { from: UpstreamState; to: UpstreamState; reason: string | undefined } | undefined;
    if (to !== from) {
      this.state = to;
      this.since = this.sources.clock.now();
      this.downSince = downSinceAfter(to, this.downSince, this.since);
      change = { from, to, reason: stateReason(to, context, this.since) };
    }
    this.refresh();
    return change;
  }

  /** Publishes the status if anything it shows changed. */
  refresh(): void {
    if (this.subject.closed) return;
    const status = this.describe();
    if (!sameStatus(status, this.subject.value)) this.subject.next(status);
  }

  complete(): void {
    this.subject.complete();
  }

  private describe(): UpstreamStatus {
    const { name, source, machine, catalog: lastCatalog, pid: currentPid } = this.sources;
    const { value, context } = machine();
    const catalog = lastCatalog();
    const pid = currentPid();
    return {
      name,
      state: value as UpstreamState,
      serving: context.serving,
      source,
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

/** Why it is in `state` (entered at `since`): its last error where a failure led there (with the next attempt), or why it stopped. */
function stateReason(state: UpstreamState, context: UpstreamContext, since: number): string | undefined {
  switch (state) {
    case 'degraded':
    case 'failed':
      return context.lastError && upstreamText(context.lastError.message);
    case 'reconnecting': {
      const delay = context.retryDelayMs ?? 0;
      const next = `next attempt in ${delay} ms, at ${new Date(since + delay).toISOString()}`;
      return context.lastError ? `${upstreamText(context.lastError.message)}; ${next}` : next;
    }
    case 'stopped':
      return context.stopReason;
    default:
      return undefined;
  }
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

function sameStatus(a: UpstreamStatus, b: UpstreamStatus): boolean {
  const keys = Object.keys(a) as (keyof UpstreamStatus)[];
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

/** The hub's own failure when the upstream is down: a tool error for `tools/call`, an internal error for the other requests. */
export function unavailableError(status: UpstreamStatus, method: string, waitedMs: number): Error {
  const { name, state, lastError, downSince, nextAttemptAt, failures } = status;
  const parts = [`Upstream ${name} is down (${state}`];
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

/** A request cut off by the session ending says so, and why (a crash, or a stop), instead of "connection closed". */
export function explainEndedCall(name: string, state: UpstreamState, method: string, error: unknown): unknown {
  if (!(error instanceof ConnectionClosedError)) return error;
  const why = GIVEN_UP.has(state)
    ? `it was stopped (${state === 'disposed' ? 'the hub is stopping' : state})`
    : `its connection ended (${upstreamText(error.message)}); it is being restarted`;
  return new ConnectionClosedError(`Upstream ${name} did not answer ${method}: ${why}`, { cause: error });
}

/** An upstream's own words (error messages, stderr) in the hub's logs, status and tool errors: bounded. */
export function upstreamText(text: string): string {
  return clipText(text, 500);
}
