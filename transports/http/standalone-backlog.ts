/**
 * Server-to-client messages with no related request, made before the client opened its standalone GET
 * stream (a server that asks for `roots/list` as soon as the client says `notifications/initialized` does
 * this: the client opens its GET a moment later). They wait, in order, for the stream for a bounded time
 * and in a bounded number; a request that waited in vain fails its caller with an error saying so, a
 * notification is dropped with a log line.
 */
import { TransportError } from '../../lib/jsonrpc/errors';
import type { JsonRpcMessage } from '../../lib/jsonrpc/types';
import type { Clock } from '../../lib/core/clock';
import { setTimerRef } from '../../lib/core/clock';
import type { Logger } from '../../lib/core/logger';

interface Waiting {
  readonly message: JsonRpcMessage;
  readonly deadline: number;
  readonly delivered: (outcome: Promise<void>) => void;
  readonly failed: (error: TransportError) => void;
}

export interface BacklogLimits {
  /** How long a message waits for the stream (ms). */
  readonly waitMs: number;
  /** How many may wait at once. */
  readonly maxLength: number;
}

export class StandaloneBacklog {
  private waiting: Waiting[] = [];
  private timer: unknown;

  constructor(
    private readonly limits: BacklogLimits,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  get length(): number {
    return this.waiting.length;
  }

  /** Holds `message` until `release` or its deadline; settles as its delivery does. */
  hold(message: JsonRpcMessage): Promise<void> {
    if (this.waiting.length >= this.limits.maxLength) {
      return this.refuse(message, `${this.limits.maxLength} messages are already waiting for it`);
    }
    return new Promise((resolve, reject) => {
      this.waiting.push({
        message,
        deadline: this.clock.now() + this.limits.waitMs,
        delivered: resolve,
        failed: (error) => (isRequest(message) ? reject(error) : resolve()),
      });
      if (this.timer === undefined) this.arm(this.limits.waitMs);
    });
  }

  /** The stream is open: hands every waiting message to `deliver`, in order. */
  release(deliver: (message: JsonRpcMessage) => Promise<void>): void {
    this.disarm();
    const released = this.waiting;
    this.waiting = [];
    for (const entry of released) entry.delivered(deliver(entry.message));
  }

  /** The session ended: nothing waiting will be delivered. */
  abandon(why: string): void {
    this.disarm();
    const abandoned = this.waiting;
    this.waiting = [];
    for (const entry of abandoned) this.fail(entry, why);
  }

  private arm(delayMs: number): void {
    this.timer = this.clock.setTimeout(() => this.expire(), Math.max(1, delayMs));
    // The wait must not keep a process alive on its own.
    setTimerRef(this.timer, false);
  }

  private disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private expire(): void {
    this.timer = undefined;
    const now = this.clock.now();
    const due = this.waiting.filter((entry) => entry.deadline <= now);
    this.waiting = this.waiting.filter((entry) => entry.deadline > now);
    const why = `the client opened no stream for server-to-client messages (GET) within ${this.limits.waitMs} ms`;
    for (const entry of due) this.fail(entry, why);
    const next = this.waiting[0];
    if (next) this.arm(next.deadline - now);
  }

  private fail(entry: Waiting, why: string): void {
    const error = new TransportError(`${describe(entry.message)} was not delivered: ${why}`);
    if (!isRequest(entry.message)) this.logger.warn(`Streamable HTTP: dropped ${error.message}`);
    entry.failed(error);
  }

  private refuse(message: JsonRpcMessage, why: string): Promise<void> {
    const error = new TransportError(
      `${describe(message)} was not delivered: the client has no stream open yet and ${why}`,
    );
    if (isRequest(message)) return Promise.reject(error);
    this.logger.warn(`Streamable HTTP: dropped ${error.message}`);
    return Promise.resolve();
  }
}

function isRequest(message: JsonRpcMessage): boolean {
  return 'id' in message && 'method' in message;
}

function describe(message: JsonRpcMessage): string {
  const method = (message as { method?: string }).method;
  return isRequest(message) ? `The request ${method}` : `The notification ${method}`;
}
