/**
 * What keeps introspection bounded, whatever the tokens and the authorization server do: a deadline per
 * check (waiting for a slot included), a cap on introspections in flight with a bounded queue behind it, one
 * request for a token already being checked (single flight), and refusals remembered for a while, so a flood
 * of one bad token costs one introspection and a flood of different ones costs the cap. Active answers are
 * the resource server's verdict cache's business (`cacheEntries`, `cacheTtlMs`).
 */
import { checkedNumber } from './option-check';
import { InvalidTokenError, type Principal } from './principal';
import { TokenCache, tokenKey } from './token-cache';
import { TokenCheckUnavailableError, type TokenVerifier } from './token-verifier';

/** How long one check may take, from its arrival (a wait for a slot included) to the answer read (default). */
export const DEFAULT_INTROSPECTION_TIMEOUT_MS = 5_000;
/** The largest introspection answer read (default): answers are a few hundred bytes. */
export const DEFAULT_MAX_INTROSPECTION_BYTES = 64 * 1024;
/**
 * Introspections in flight at once per verifier (default): at a typical 10-50 ms per answer, hundreds of new
 * tokens a second, while one resource server cannot hold more than this many connections open to its
 * authorization server.
 */
export const DEFAULT_MAX_CONCURRENT_INTROSPECTIONS = 16;
/**
 * Checks waiting for a slot (default); beyond, a check is refused at once (503) rather than queued: each
 * waiting check holds a request, and a queue longer than the timeout lets it drain is only memory.
 */
export const DEFAULT_MAX_QUEUED_INTROSPECTIONS = 256;
/** Refused tokens remembered (default), by SHA-256: a client retrying a bad token costs nothing. */
export const DEFAULT_INTROSPECTION_NEGATIVE_CACHE_ENTRIES = 1_000;
/** How long a refusal is remembered (default). */
export const DEFAULT_INTROSPECTION_NEGATIVE_CACHE_TTL_MS = 30_000;

export interface IntrospectionLimits {
  /** Default `DEFAULT_INTROSPECTION_TIMEOUT_MS`. */
  readonly timeoutMs?: number;
  /** Default `DEFAULT_MAX_INTROSPECTION_BYTES`. */
  readonly maxResponseBytes?: number;
  /** Default `DEFAULT_MAX_CONCURRENT_INTROSPECTIONS`. */
  readonly maxConcurrent?: number;
  /** Default `DEFAULT_MAX_QUEUED_INTROSPECTIONS`. */
  readonly maxQueued?: number;
  /** Default `DEFAULT_INTROSPECTION_NEGATIVE_CACHE_ENTRIES` (0: remember none). */
  readonly negativeCacheEntries?: number;
  /** Default `DEFAULT_INTROSPECTION_NEGATIVE_CACHE_TTL_MS`. */
  readonly negativeCacheTtlMs?: number;
}

/** A remembered refusal: the `InvalidTokenError` message (no token in it). */
interface Refusal {
  readonly reason: string;
  readonly expiresAt?: number;
}

/** One introspection of `token`, ended by `signal` at the deadline. */
export type Introspect = (token: string, signal: AbortSignal) => Promise<Principal>;

/** `introspect` within `limits`, as a verifier. `now` is the refusals' clock. */
export function withIntrospectionLimits(
  introspect: Introspect,
  limits: IntrospectionLimits,
  now: () => number,
): TokenVerifier {
  const timeoutMs = checkedNumber('introspection.timeoutMs', limits.timeoutMs ?? DEFAULT_INTROSPECTION_TIMEOUT_MS, 1);
  const slots = new Slots(
    checkedNumber('introspection.maxConcurrent', limits.maxConcurrent ?? DEFAULT_MAX_CONCURRENT_INTROSPECTIONS, 1),
    checkedNumber('introspection.maxQueued', limits.maxQueued ?? DEFAULT_MAX_QUEUED_INTROSPECTIONS, 0),
  );
  const refusals = new TokenCache<Refusal>(
    checkedNumber(
      'introspection.negativeCacheEntries',
      limits.negativeCacheEntries ?? DEFAULT_INTROSPECTION_NEGATIVE_CACHE_ENTRIES,
      0,
    ),
    checkedNumber(
      'introspection.negativeCacheTtlMs',
      limits.negativeCacheTtlMs ?? DEFAULT_INTROSPECTION_NEGATIVE_CACHE_TTL_MS,
      0,
    ),
    now,
  );
  const inFlight = new Map<string, Promise<Principal>>();

  const checked = async (token: string): Promise<Principal> => {
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      await slots.acquire(signal);
    } catch (error) {
      if (!signal.aborted) throw error;
      throw new TokenCheckUnavailableError(`no introspection slot was free within ${timeoutMs} ms`);
    }
    try {
      return await introspect(token, signal);
    } catch (error) {
      if (error instanceof InvalidTokenError || !signal.aborted) throw error;
      throw new TokenCheckUnavailableError(`the introspection endpoint did not answer within ${timeoutMs} ms`, {
        cause: error,
      });
    } finally {
      slots.release();
    }
  };

  return async (token) => {
    const key = await tokenKey(token);
    const refused = refusals.get(key);
    if (refused !== undefined) throw new InvalidTokenError(refused.reason);
    const pending = inFlight.get(key);
    if (pending !== undefined) return pending;
    const check = checked(token)
      .catch((error: unknown) => {
        if (error instanceof InvalidTokenError) refusals.set(key, { reason: error.message });
        throw error;
      })
      .finally(() => inFlight.delete(key));
    inFlight.set(key, check);
    return check;
  };
}

/** `max` slots, and a queue of at most `maxQueued` waiting for one in arrival order. */
class Slots {
  private busy = 0;
  private readonly waiting = new Set<() => void>();

  constructor(
    private readonly max: number,
    private readonly maxQueued: number,
  ) {}

  /** Resolves once a slot is this caller's; rejects at once when the queue is full, or when `signal` aborts. */
  acquire(signal: AbortSignal): Promise<void> {
    if (this.busy < this.max) {
      this.busy++;
      return Promise.resolve();
    }
    if (this.waiting.size >= this.maxQueued) {
      return Promise.reject(new TokenCheckUnavailableError('too many tokens are waiting for introspection'));
    }
    return new Promise((resolve, reject) => {
      const granted = () => {
        signal.removeEventListener('abort', aborted);
        resolve();
      };
      const aborted = () => {
        this.waiting.delete(granted);
        reject(signal.reason);
      };
      this.waiting.add(granted);
      signal.addEventListener('abort', aborted, { once: true });
    });
  }

  /** Hands the slot to the first waiting caller, or frees it. */
  release(): void {
    const next = this.waiting.values().next();
    if (next.done) {
      this.busy--;
      return;
    }
    this.waiting.delete(next.value);
    next.value();
  }
}
