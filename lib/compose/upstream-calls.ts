/**
 * The downstream calls and resource subscriptions one upstream is serving: what cancels each call, which
 * downstream client a server-to-client request of the upstream belongs to, and since when the upstream has
 * been unused (what its supervision machine's idle timer asks). Per-call work is plain bookkeeping: no
 * event reaches the machine.
 */
import type { Clock } from '../core/clock';
import type { ServerContext } from '../server/context';
import { ErrorCode, McpError } from '../jsonrpc/errors';
import type { RequestId } from '../jsonrpc/types';
import type { ServerConnection } from '../server/server';

type Context = ServerContext;

const MAX_SPARE_CONTROLLERS = 256;

export class CallsInFlight {
  /** Each call, with the controller that cancels its upstream request (none for direct dispatch). */
  private readonly callers = new Map<Context, AbortController | undefined>();
  /**
   * Controllers of calls that ended without being aborted, for the next calls: creating an AbortController
   * costs more than the rest of a forwarded call, and the correlation core removes its listener on settle.
   */
  private readonly spareControllers: AbortController[] = [];
  private subscriptions = 0;
  /** When it was last in use (a call or subscription ended, or a session opened), on `clock`. */
  private lastUsedAt: number;

  constructor(private readonly clock: Clock) {
    this.lastUsedAt = clock.now();
  }

  /** A controller for a call that goes over the wire. */
  controller(): AbortController {
    return this.spareControllers.pop() ?? new AbortController();
  }

  /** A call that is answered later. */
  begin(context: Context, controller: AbortController | undefined): void {
    this.callers.set(context, controller);
  }

  /** A call begun with `begin` was answered (or failed). */
  end(context: Context, controller: AbortController | undefined): void {
    this.callers.delete(context);
    this.recycle(controller);
    if (this.callers.size === 0) this.lastUsedAt = this.clock.now();
  }

  /** A call that was answered at once (never begun). */
  answered(controller: AbortController | undefined): void {
    this.recycle(controller);
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
   * Cancels the upstream requests forwarded for `connection` (only request `requestId`, when given): the
   * downstream client cancelled it, or went away.
   */
  cancel(connection: ServerConnection, requestId?: RequestId, reason?: string): void {
    for (const [caller, controller] of this.callers) {
      if (caller.connection === connection && (requestId === undefined || caller.id === requestId)) {
        controller?.abort(reason ?? 'The downstream request was cancelled');
      }
    }
  }

  /**
   * The latest call in flight, which a server-to-client request of `upstream` is for. MCP does not say which
   * call caused such a request: when calls of several clients are in flight it is refused rather than guessed.
   */
  callerOf(method: string, upstream: string): Context | undefined {
    let latest: Context | undefined;
    for (const caller of this.callers.keys()) {
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

  private recycle(controller: AbortController | undefined): void {
    if (controller && !controller.signal.aborted && this.spareControllers.length < MAX_SPARE_CONTROLLERS) {
      this.spareControllers.push(controller);
    }
  }
}
