import { PeerError, RequestCancelledError, RequestTimeoutError } from '../jsonrpc/errors';
import type { JsonObject, JsonRpcErrorObject, RequestId } from '../jsonrpc/types';
import type { Progress, ProgressParams } from '../protocol/types';
import { TIMEOUT_CANCEL_REASON } from '../trace/cancel-reason';
import type { RequestSpan } from '../trace/instrumentation';
import { setTimerRef, type Clock } from './clock';

export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/** Checks a result before its request resolves: the error to reject with instead, or undefined to accept it. */
export type ResultCheck = (result: JsonObject) => Error | undefined;

/**
 * What the caller of one request gets instead of its raw outcome, worked out in the step that settles it
 * (no promise step of its own): the stateless revision's client strips `resultType`, answers `input_required`
 * rounds and retries a -32022 this way. `complete` may throw; both may return a promise to wait for. `id` is
 * the settled request's: what a round or a retry names as its cause in the trace.
 */
export interface RequestCompletion {
  complete(result: JsonObject, id: RequestId): JsonObject | PromiseLike<JsonObject>;
  recover(error: Error, id: RequestId): PromiseLike<JsonObject>;
}

export interface RequestOptions {
  /** Idle timeout in ms: how long to wait for the response (or, with `resetTimeoutOnProgress`, for progress). Default 60 000; 0 or Infinity waits forever. */
  readonly timeout?: number;
  /** Each progress notification restarts the idle timeout. Attaches a progress token even without `onProgress`. */
  readonly resetTimeoutOnProgress?: boolean;
  /** Absolute cap in ms from the moment the request is sent; progress never extends it. */
  readonly maxTotalTimeout?: number;
  /** Aborting it cancels the request: the peer gets `notifications/cancelled`, the caller a `RequestCancelledError`. */
  readonly signal?: AbortSignal;
  /** Called for every progress notification of this request. Asking for it attaches a progress token. */
  readonly onProgress?: (progress: Progress) => void;
}

/** What the correlation core needs from its connection. */
export interface CorrelationHost {
  readonly clock: Clock;
  /** Tell the peer we gave up on a request (timeout or abort). `reason` is safe to send. */
  sendCancelled(id: RequestId, reason: string): void;
  /** A progress callback threw. */
  reportCallbackError(error: unknown): void;
}

/**
 * The one record of an in-flight outbound request: its promise settlers, deadlines, progress state and
 * abort listener. Every exit goes through `CorrelationTable.settle`, which removes the record and what it
 * owns. The record is also the AbortSignal listener (`handleEvent`), so no closure is allocated for it.
 */
export class PendingRequest {
  private resolve!: (result: JsonObject | PromiseLike<JsonObject>) => void;
  private reject!: (error: Error) => void;
  readonly promise: Promise<JsonObject>;
  idleDeadline: number;
  lastProgress = -Infinity;
  /** Set by the connection's role (the method's result schema): checked in the same step that resolves. */
  check: ResultCheck | undefined = undefined;
  /** The request's span, when the runtime has an instrumentation: progress lands on it. */
  span: RequestSpan | undefined = undefined;
  /** Set by the caller that completes results itself (`Connection.sendRequest`). */
  completion: RequestCompletion | undefined = undefined;

  constructor(
    private readonly table: CorrelationTable,
    readonly id: RequestId,
    readonly method: string,
    readonly startedAt: number,
    readonly timeoutMs: number,
    readonly totalDeadline: number,
    readonly resetOnProgress: boolean,
    readonly onProgress: ((progress: Progress) => void) | undefined,
    readonly signal: AbortSignal | undefined,
  ) {
    this.promise = new Promise<JsonObject>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.idleDeadline = timeoutMs > 0 ? startedAt + timeoutMs : Infinity;
  }

  /** Whether the request carries a progress token (its id). */
  get wantsProgress(): boolean {
    return this.resetOnProgress || this.onProgress !== undefined;
  }

  get deadline(): number {
    return this.idleDeadline < this.totalDeadline ? this.idleDeadline : this.totalDeadline;
  }

  /** AbortSignal listener. */
  handleEvent(): void {
    this.table.cancel(this);
  }

  /** Settles the caller's promise with `result` (completed first, when the request has a completion). */
  succeed(result: JsonObject): void {
    const completion = this.completion;
    if (completion === undefined) return this.resolve(result);
    try {
      this.resolve(completion.complete(result, this.id));
    } catch (error) {
      this.reject(error as Error);
    }
  }

  /** Settles the caller's promise with `error` (or what the request's completion recovers from it). */
  fail(error: Error): void {
    const completion = this.completion;
    if (completion === undefined) this.reject(error);
    else this.resolve(completion.recover(error, this.id));
  }
}

export type ProgressOutcome = 'delivered' | 'unknown-token' | 'not-increasing' | 'malformed';

/**
 * In-flight outbound requests, keyed by id (and the progress token is the id, so one map serves both).
 *
 * Timeouts use one timer per table, armed for the earliest deadline, instead of a timer per request:
 * with equal timeouts new deadlines always come later, so a request costs no timer call at all. When the
 * timer fires it expires what is due and re-arms for the next deadline. Progress only moves deadlines
 * later, so it never re-arms.
 */
export class CorrelationTable {
  private readonly pending = new Map<RequestId, PendingRequest>();
  private nextId = 0;
  private timer: unknown = undefined;
  private timerAt = Infinity;

  constructor(
    private readonly host: CorrelationHost,
    private readonly defaultTimeout = DEFAULT_REQUEST_TIMEOUT_MS,
  ) {}

  get size(): number {
    return this.pending.size;
  }

  has(id: RequestId): boolean {
    return this.pending.has(id);
  }

  begin(method: string, options: RequestOptions | undefined): PendingRequest {
    const now = this.host.clock.now();
    const timeout = options?.timeout ?? this.defaultTimeout;
    const maxTotal = options?.maxTotalTimeout;
    const record = new PendingRequest(
      this,
      this.nextId++,
      method,
      now,
      timeout === Infinity ? 0 : timeout,
      maxTotal !== undefined && maxTotal > 0 && maxTotal !== Infinity ? now + maxTotal : Infinity,
      options?.resetTimeoutOnProgress === true,
      options?.onProgress,
      options?.signal,
    );
    if (this.pending.size === 0 && this.timer !== undefined) setTimerRef(this.timer, true);
    this.pending.set(record.id, record);
    if (record.deadline !== Infinity) this.arm(record.deadline, now);
    record.signal?.addEventListener('abort', record, { once: true });
    return record;
  }

  /** Returns the record that a response settles, or undefined for a late/unknown id. */
  resolve(id: RequestId, result: JsonObject): PendingRequest | undefined {
    const record = this.pending.get(id);
    if (record) {
      this.settle(record);
      const problem = record.check?.(result);
      if (problem) record.fail(problem);
      else record.succeed(result);
    }
    return record;
  }

  reject(id: RequestId, error: JsonRpcErrorObject): PendingRequest | undefined {
    const record = this.pending.get(id);
    if (record) {
      this.settle(record);
      record.fail(new PeerError(error.code, error.message, error.data));
    }
    return record;
  }

  /** Settles the request `id` with a local error made for it (its response was broken); undefined when none is in flight. */
  failId(id: RequestId, error: (record: PendingRequest) => Error): PendingRequest | undefined {
    const record = this.pending.get(id);
    if (record) {
      this.settle(record);
      record.fail(error(record));
    }
    return record;
  }

  /** Settles a request with a local error (transport failure, closed connection). */
  fail(record: PendingRequest, error: Error): void {
    if (this.pending.get(record.id) !== record) return;
    this.settle(record);
    record.fail(error);
  }

  cancel(record: PendingRequest): void {
    if (this.pending.get(record.id) !== record) return;
    this.settle(record);
    this.notifyPeer(record, 'The request was cancelled by the requester');
    record.fail(new RequestCancelledError(record.method, record.signal?.reason));
  }

  progress(params: ProgressParams | undefined): ProgressOutcome {
    if (!params || typeof params.progress !== 'number') return 'malformed';
    const record = this.pending.get(params.progressToken);
    if (!record || !record.wantsProgress) return 'unknown-token';
    if (!(params.progress > record.lastProgress)) return 'not-increasing';
    record.lastProgress = params.progress;
    if (record.resetOnProgress && record.timeoutMs > 0) record.idleDeadline = this.host.clock.now() + record.timeoutMs;
    if (record.onProgress) {
      try {
        record.onProgress(params);
      } catch (error) {
        this.host.reportCallbackError(error);
      }
    }
    record.span?.progress(params, this.host.clock.now());
    return 'delivered';
  }

  /** Rejects every pending request (the connection closed). No cancel notifications: there is no peer. */
  failAll(error: Error): void {
    for (const record of [...this.pending.values()]) this.fail(record, error);
  }

  /** Stops the timer, whose callback would keep a closed connection reachable. Call after `failAll`. */
  dispose(): void {
    if (this.timer !== undefined) this.host.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }

  private settle(record: PendingRequest): void {
    this.pending.delete(record.id);
    record.signal?.removeEventListener('abort', record);
    if (this.pending.size === 0 && this.timer !== undefined) setTimerRef(this.timer, false);
  }

  private arm(deadline: number, now: number): void {
    if (deadline >= this.timerAt) return;
    if (this.timer !== undefined) this.host.clock.clearTimeout(this.timer);
    this.timerAt = deadline;
    // A closure per arming (rare: only for a new earliest deadline), not a bound function per table.
    this.timer = this.host.clock.setTimeout(() => this.onTimer(), Math.max(0, deadline - now));
  }

  private onTimer(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.host.clock.now();
    let next = Infinity;
    for (const record of [...this.pending.values()]) {
      const deadline = record.deadline;
      if (deadline <= now) this.expire(record, now);
      else if (deadline < next) next = deadline;
    }
    if (next !== Infinity) this.arm(next, now);
  }

  /** `initialize` must never be the target of `notifications/cancelled`. */
  private notifyPeer(record: PendingRequest, reason: string): void {
    if (record.method !== 'initialize') this.host.sendCancelled(record.id, reason);
  }

  private expire(record: PendingRequest, now: number): void {
    this.settle(record);
    this.notifyPeer(record, TIMEOUT_CANCEL_REASON);
    const total = record.totalDeadline <= now;
    const budget = total ? record.totalDeadline - record.startedAt : record.timeoutMs;
    record.fail(new RequestTimeoutError(record.method, total ? 'total' : 'idle', budget, now - record.startedAt));
  }
}
