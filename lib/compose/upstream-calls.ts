/**
 * The downstream calls and resource subscriptions one upstream is serving: what cancels each call's
 * upstream request, which downstream client a server-to-client request of the upstream belongs to, and
 * since when the upstream has been unused (what its supervision machine's idle timer asks). Per-call work
 * is plain bookkeeping: no event reaches the machine.
 */
import type { Clock } from '../core/clock';
import type { ServerContext } from '../server/context';
import { ErrorCode, McpError } from '../jsonrpc/errors';

type Context = ServerContext;

const MAX_SPARE_CANCELS = 256;

/**
 * Cancels one forwarded call's upstream request when its downstream request is cancelled (the client sent
 * `notifications/cancelled`, or its connection closed): `abort` is what the downstream request's
 * `onCancel` calls. The upstream request needs an AbortSignal (`Client.request` takes one), and creating
 * an AbortController costs more than the rest of a forwarded call: one that did not fire serves the next
 * call, and so does its `abort`, made once per object rather than once per call.
 */
export class UpstreamCancel {
  private readonly controller = new AbortController();
  readonly abort = (reason: Error): void => this.controller.abort(reason);
  /** Takes `abort` off the downstream request it was registered on. */
  release: () => void = noop;

  get signal(): AbortSignal {
    return this.controller.signal;
  }
}

export class CallsInFlight {
  /** The downstream request of each call that is answered later. */
  private readonly callers = new Set<Context>();
  private readonly spareCancels: UpstreamCancel[] = [];
  private subscriptions = 0;
  /** When it was last in use (a call or subscription ended, or a session opened), on `clock`. */
  private lastUsedAt: number;

  constructor(private readonly clock: Clock) {
    this.lastUsedAt = clock.now();
  }

  /**
   * For a call that goes over the wire: its upstream request's signal, which aborts when `context` is
   * cancelled. Give it back with `end` (or `answered`).
   */
  cancelWith(context: Context): UpstreamCancel {
    const cancel = this.spareCancels.pop() ?? new UpstreamCancel();
    cancel.release = context.onCancel(cancel.abort);
    return cancel;
  }

  /** A call that is answered later. */
  begin(context: Context): void {
    this.callers.add(context);
  }

  /** A call begun with `begin` was answered (or failed). */
  end(context: Context, cancel: UpstreamCancel | undefined): void {
    this.callers.delete(context);
    if (cancel) this.recycle(cancel);
    if (this.callers.size === 0) this.lastUsedAt = this.clock.now();
  }

  /** A call that was answered at once (never begun). */
  answered(): void {
    this.lastUsedAt = this.clock.now();
  }

  subscribed(): void {
    this.subscriptions++;
  }

  unsubscribed(): void {
    if (--this.subscriptions === 0) this.lastUsedAt = this.clock.now();
  }

  /** Counts as use: a fresh session is not idle from the start. */
  touch(): void {
    this.lastUsedAt = this.clock.now();
  }

  /** How long nothing has used the upstream; 0 while a call or a subscription is open. */
  idleForMs(): number {
    return this.callers.size > 0 || this.subscriptions > 0 ? 0 : this.clock.now() - this.lastUsedAt;
  }

  /**
   * The latest call in flight, which a server-to-client request of `upstream` is for. MCP does not say which
   * call caused such a request: when calls of several clients are in flight it is refused rather than guessed.
   */
  callerOf(method: string, upstream: string): Context | undefined {
    let latest: Context | undefined;
    for (const caller of this.callers) {
      if (latest && caller.connection !== latest.connection) {
        throw new McpError(
          ErrorCode.InternalError,
          `The hub cannot tell which downstream client ${method} from ${upstream} is for: calls of several clients are in flight`,
        );
      }
      latest = caller;
    }
    return latest;
  }

  /** The call ended: its `abort` leaves the downstream request, and serves again unless it fired. */
  private recycle(cancel: UpstreamCancel): void {
    cancel.release();
    cancel.release = noop;
    if (!cancel.signal.aborted && this.spareCancels.length < MAX_SPARE_CANCELS) this.spareCancels.push(cancel);
  }
}

function noop(): void {}
