/**
 * A client's reconnect policy (`ClientOptions.reconnect`): how a new transport is made for each attempt, the
 * back-off between attempts (exponential, capped, jittered), when to give up, and what calls made meanwhile
 * do. Off unless given: a client without it ends with its connection, as before.
 */
import type { Transport } from '../core/transport';
import { TransportError } from '../jsonrpc/errors';

export interface ReconnectOptions {
  /**
   * Makes the transport of one attempt (a transport connects once): a new `StdioClientTransport` for the
   * same command, a new `StreamableHttpClientTransport` for the same URL. A throw or rejection fails that
   * attempt.
   */
  readonly transport: () => Transport | Promise<Transport>;
  /** The delay before the first attempt, in ms (default 500). */
  readonly initialDelayMs?: number;
  /** The longest delay between attempts, in ms (default 30 000). */
  readonly maxDelayMs?: number;
  /** Each further attempt waits this many times longer (default 2). */
  readonly factor?: number;
  /**
   * The share of each delay taken off at random, 0 to 1 (default 0.2), so that many clients of one server
   * do not all come back at the same moment. A delay never exceeds `maxDelayMs`.
   */
  readonly jitter?: number;
  /** Attempts in a row before the client gives up and closes (default: no limit). */
  readonly maxAttempts?: number;
  /**
   * What a call made while the client reconnects does: `wait` (default) is sent once the client is back,
   * and fails as any call does when its own `timeout` passes first; `fail` rejects at once with a
   * `ReconnectingError`.
   */
  readonly whileReconnecting?: 'wait' | 'fail';
  /** How long one attempt may take to reopen its transport and redo the handshake or the probe, in ms (default 10 000). */
  readonly attemptTimeoutMs?: number;
}

/** `ReconnectOptions` with every default filled in. */
export interface ReconnectPolicy extends Required<ReconnectOptions> {}

export const DEFAULT_RECONNECT: Omit<ReconnectPolicy, 'transport'> = Object.freeze({
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  factor: 2,
  jitter: 0.2,
  maxAttempts: Number.POSITIVE_INFINITY,
  whileReconnecting: 'wait',
  attemptTimeoutMs: 10_000,
});

/** The policy of `options`, checked: a bad value throws at construction, naming the option. */
export function reconnectPolicy(options: ReconnectOptions): ReconnectPolicy {
  if (typeof options?.transport !== 'function') {
    throw new TypeError('reconnect.transport must be a function that makes a new transport for each attempt');
  }
  const policy: ReconnectPolicy = { ...DEFAULT_RECONNECT, ...definedOnly(options), transport: options.transport };
  for (const name of ['initialDelayMs', 'maxDelayMs', 'attemptTimeoutMs'] as const) {
    if (!(policy[name] >= 0)) throw new RangeError(`reconnect.${name} must be a number of ms >= 0`);
  }
  if (!(policy.factor >= 1)) throw new RangeError('reconnect.factor must be >= 1');
  if (!(policy.jitter >= 0 && policy.jitter <= 1)) throw new RangeError('reconnect.jitter must be between 0 and 1');
  if (!(policy.maxAttempts >= 1)) throw new RangeError('reconnect.maxAttempts must be >= 1');
  if (policy.whileReconnecting !== 'wait' && policy.whileReconnecting !== 'fail') {
    throw new RangeError("reconnect.whileReconnecting must be 'wait' or 'fail'");
  }
  return policy;
}

/**
 * The delay before attempt `attempt` (1-based): `initialDelayMs * factor^(attempt - 1)`, capped at
 * `maxDelayMs`, less a random share of at most `jitter` of it.
 */
export function reconnectDelay(policy: ReconnectPolicy, attempt: number, random: () => number = Math.random): number {
  // The exponent is bounded so that a zero initial delay never meets Infinity (0 * Infinity is NaN).
  const grown = policy.initialDelayMs * policy.factor ** Math.min(Math.max(0, attempt - 1), 64);
  const capped = Math.min(grown, policy.maxDelayMs);
  return Math.round(capped * (1 - policy.jitter * random()));
}

/**
 * A call the client could not carry while it reconnects: one in flight when the connection was lost (it is
 * not sent again: the server may have run it), or one made meanwhile with `whileReconnecting: 'fail'`.
 * A `TransportError`, so code that handles a failed transport handles it too.
 */
export class ReconnectingError extends TransportError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    // `name` is a literal in TransportError's type: set on the instance, as `Error` keeps it.
    Object.defineProperty(this, 'name', { value: 'ReconnectingError', configurable: true, writable: true });
  }
}

function definedOnly(options: ReconnectOptions): Partial<ReconnectOptions> {
  const defined: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(options)) if (value !== undefined) defined[key] = value;
  return defined as Partial<ReconnectOptions>;
}
