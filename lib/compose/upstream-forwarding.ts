/**
 * The downstream requests one upstream serves (`tools/call`, `prompts/get`, `resources/read`,
 * `completion/complete`): each goes to its current session (or waits for the next one while it starts or
 * restarts), with its cancellation and its `_meta` as the hub forwards them (forwarded-meta.ts), and its
 * result comes back as the hub's own. What a call costs the upstream's bookkeeping is in upstream-calls.ts.
 */
import { filter, firstValueFrom, fromEvent, map, merge, Observable, takeUntil } from 'rxjs';
import { isThenable } from '../core/thenable';
import type { UpstreamState } from '../../machines/upstream';
import type { Clock } from '../core/clock';
import { McpError, RelayedError } from '../jsonrpc/errors';
import type { JsonObject } from '../jsonrpc/types';
import type {
  CallToolResult,
  CompleteParams,
  CompleteResult,
  Completion,
  GetPromptResult,
  ReadResourceResult,
} from '../protocol/types';
import type { ServerContext } from '../server/context';
import type { CatalogSource } from './catalog';
import type { ForwardedMethod } from './direct';
import { forwardedParams, relayedResult } from './forwarded-meta';
import type { UpstreamSession } from './session';
import type { SessionSlot } from './session-slot';
import type { CallsInFlight, UpstreamCancel } from './upstream-calls';
import { explainEndedCall, GIVEN_UP, unavailableError, type StatusTracker } from './upstream-status';

type Context = ServerContext;

const DEFAULT_UNAVAILABLE_WAIT_MS = 10_000;

/** What forwarding reads of its upstream. */
export interface ForwardingHost {
  readonly name: string;
  readonly clock: Clock;
  readonly slot: SessionSlot;
  readonly calls: CallsInFlight;
  readonly tracker: StatusTracker;
  readonly unavailableWaitMs: number | undefined;
  readonly connectTimeoutMs: number;
  /** Its supervision machine's state. */
  state(): UpstreamState;
  /** A request wants it: a dormant (idle-stopped) or lazy one starts. */
  use(): void;
}

export type ForwardedRequests = Pick<CatalogSource, 'callTool' | 'getPrompt' | 'readResource' | 'complete'>;

export class UpstreamForwarding implements ForwardedRequests {
  constructor(private readonly host: ForwardingHost) {}

  /**
   * The upstream's error response to `tools/call` (an unknown tool, invalid params) reaches the client as
   * that same JSON-RPC error; the hub's own failures (the upstream is down, the call timed out) become
   * `isError` results, as any tool's failure does.
   */
  callTool(name: string, args: JsonObject, context: Context): CallToolResult | Promise<CallToolResult> {
    let result: unknown;
    try {
      result = this.forward('tools/call', { name, arguments: args }, context);
    } catch (error) {
      return relayErrorResponse(error);
    }
    return (isThenable(result) ? result.then(undefined, relayErrorResponse) : result) as
      CallToolResult | Promise<CallToolResult>;
  }

  async getPrompt(name: string, args: Readonly<Record<string, string>>, context: Context): Promise<GetPromptResult> {
    return (await this.forward('prompts/get', { name, arguments: args }, context)) as GetPromptResult;
  }

  async readResource(uri: string, context: Context): Promise<ReadResourceResult> {
    return (await this.forward('resources/read', { uri }, context)) as ReadResourceResult;
  }

  async complete(params: CompleteParams, context: Context): Promise<Completion> {
    const result = await this.forward('completion/complete', params as unknown as JsonObject, context);
    return (result as CompleteResult).completion;
  }

  /** `method` with `params` and what passes of the downstream request's `_meta`; the result as the hub's. */
  private forward(method: ForwardedMethod, params: JsonObject, context: Context): unknown {
    const { slot, calls } = this.host;
    const forwarded = forwardedParams(params, context._meta);
    let session = slot.current;
    // A session whose connection just ended is reported lost a microtask later: it counts as gone already.
    // (In-process sessions are called directly: nothing to check on that path.)
    if (session && !session.direct && !session.usable) session = undefined;
    let result: unknown;
    let cancel: UpstreamCancel | undefined;
    if (session?.direct) {
      // The upstream's handler gets the downstream request itself, its cancellation included.
      result = session.forward(method, forwarded, context);
      if (!isThenable(result)) {
        calls.answered();
        return relayedResult(result);
      }
    } else {
      cancel = calls.cancelWith(context);
      const signal = cancel.signal;
      result = session
        ? session.forward(method, forwarded, context, signal)
        : this.whenUp(method, context).then((up) => up.forward(method, forwarded, context, signal));
    }
    calls.begin(context);
    return (result as Promise<unknown>).then(
      (value) => {
        calls.end(context, cancel);
        return relayedResult(value);
      },
      (error) => {
        calls.end(context, cancel);
        throw explainEndedCall(this.host.name, this.host.state(), method, error);
      },
    );
  }

  /**
   * The session once the upstream is up: a dormant (idle-stopped) or lazy one is started first; one that is
   * starting or restarting is waited for, up to `unavailableWaitMs` (or until the downstream request ends).
   */
  private async whenUp(method: string, context: Context): Promise<UpstreamSession> {
    const { tracker, unavailableWaitMs = DEFAULT_UNAVAILABLE_WAIT_MS, connectTimeoutMs } = this.host;
    this.host.use();
    if (GIVEN_UP.has(this.host.state())) throw unavailableError(tracker.current, method, 0);
    // A start that no failure interrupted (lazy, woken from idle, per client) may take its whole connect
    // timeout: that is not being down. If it fails, the wait for the next attempt is bounded as any other.
    if (tracker.downSinceAt === undefined) {
      const startBound = Math.max(unavailableWaitMs, connectTimeoutMs);
      const session = await this.nextSession(startBound, context.signal, true);
      if (session) return session;
      if (this.host.state() !== 'reconnecting' || context.signal.aborted) {
        throw unavailableError(tracker.current, method, startBound);
      }
    }
    const session = unavailableWaitMs > 0 ? await this.nextSession(unavailableWaitMs, context.signal) : undefined;
    if (!session) throw unavailableError(tracker.current, method, unavailableWaitMs);
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
      this.host.slot.sessions$.pipe(filter((session): session is UpstreamSession => session?.usable === true)),
      this.host.tracker.changes$.pipe(
        filter((status) => GIVEN_UP.has(status.state) || (untilFailure && status.state === 'reconnecting')),
        map(() => undefined),
      ),
    ).pipe(takeUntil(merge(expired, fromEvent(signal, 'abort'))));
    return firstValueFrom(outcome, { defaultValue: undefined });
  }
}

/** An upstream's error response goes on unchanged; anything else is left to the tool-failure path. */
function relayErrorResponse(error: unknown): never {
  throw error instanceof McpError ? RelayedError.of(error) : error;
}
