/**
 * The supervision lifecycle of one upstream server of a hub (lib/compose): whether its session is up,
 * whether its entries are served, when to try again, and when it has been idle long enough to stop. It is
 * the one place a hub supervises anything: stdio children, HTTP and in-process upstreams alike (a child
 * process's own machine never restarts it).
 *
 * idle -> connecting -> ready <-> degraded; a failed start or a lost session -> reconnecting (exponential
 * backoff, capped at `maxDelayMs`) -> connecting, for ever by default; a finite `maxRestarts` gives up
 * after that many consecutive failures: failed. A session that stays up for `stableAfterMs` clears the
 * failure count (a crash loop is failures close together, not failures ever), and so the delay.
 * `stop` -> stopped from anywhere; `start` leaves idle, stopped and failed; `dispose` ends it for good.
 *
 * Idleness: with an `idleTimeoutMs`, an upstream that is up (ready or degraded) and has not been used for
 * that long stops itself (`stopped`, reason `idle`), keeping its entries listed. Calls never reach the
 * machine: the host keeps the count, and the machine's one idle timer asks it, when it fires, how long the
 * upstream has been unused (the pattern of machines/http-session.ts). `use` (a request for an upstream with
 * no session) starts one that is idle or stopped for being idle, and nothing else.
 *
 * Entries stay served while the upstream reconnects (clients see no tools flap; calls wait for it): they
 * are withdrawn only by a requested stop, by giving up (failed), or when the hub closes. `serving` in the
 * context says whether they are.
 *
 * The machine only decides; the upstream it supervises (given as input) does the I/O: `openSession` (open
 * a session, then report `connected` or `connect.failed`), `closeSession` (idempotent), `publish` and
 * `withdraw` (serve its catalog, or stop serving it). Delays run on the actor's clock. The upstream is input
 * rather than `provide`d actions because `provide` builds a new machine, which costs more than a hub's
 * whole catalog build.
 */
import { assign, cancel, enqueueActions, setup } from 'xstate';

export interface RestartPolicy {
  /** Consecutive failures after which it gives up (default: never). */
  readonly maxRestarts: number;
  /** The delay after the first failure; each further failure doubles it. */
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
}

export interface SupervisionPolicy extends RestartPolicy {
  /** A session that stays up this long clears the failure count. */
  readonly stableAfterMs: number;
}

/** Restarts go on for ever, 0.5 s, 1 s, 2 s ... up to 30 s apart. */
export const DEFAULT_SUPERVISION: SupervisionPolicy = {
  maxRestarts: Number.POSITIVE_INFINITY,
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  stableAfterMs: 60_000,
};

/** The delay before attempt number `failures + 1`: doubling from `initialDelayMs`, capped at `maxDelayMs`. */
export function backoffDelay(policy: RestartPolicy, failures: number): number {
  // The exponent is bounded so that a zero initial delay never meets 2 ** 1024 (0 * Infinity is NaN).
  return Math.min(policy.initialDelayMs * 2 ** Math.min(Math.max(0, failures), 64), policy.maxDelayMs);
}

export type UpstreamState =
  'idle' | 'connecting' | 'ready' | 'degraded' | 'reconnecting' | 'stopped' | 'failed' | 'disposed';

/** Why an upstream is stopped: `idle` keeps its entries listed (a call starts it again), `requested` withdraws them. */
export type StopReason = 'idle' | 'requested';

export type UpstreamEvent =
  | { type: 'start' }
  /** A request wants the upstream: starts it when it is idle or stopped for being idle. */
  | { type: 'use' }
  | { type: 'connected' }
  | { type: 'connect.failed'; error: Error }
  | { type: 'lost'; error: Error }
  | { type: 'unhealthy'; error: Error }
  | { type: 'healthy' }
  | { type: 'stop'; reason: StopReason }
  | { type: 'dispose' }
  /** The machine's own idle timer (only ever raised by the machine). */
  | { type: 'idle.check' };

/** The upstream as its supervision machine sees it: what the machine calls, and what it asks. */
export interface SupervisedUpstream {
  openSession(): void;
  closeSession(): void;
  publish(): void;
  withdraw(): void;
  /**
   * How long the upstream has gone unused (no call in flight, no subscription), in ms of the actor's clock;
   * 0 while it is in use. Read only when the idle timer fires.
   */
  idleForMs(): number;
}

export interface UpstreamContext {
  readonly upstream: SupervisedUpstream | undefined;
  readonly policy: SupervisionPolicy;
  /** Stop an unused upstream after this long (ms); undefined or 0: never. */
  readonly idleTimeoutMs: number | undefined;
  /** Consecutive failures (failed starts and lost sessions) since the last stable session. */
  readonly failures: number;
  readonly lastError?: Error;
  readonly stopReason?: StopReason;
  /** While reconnecting: how long it waits before the next attempt. */
  readonly retryDelayMs?: number;
  /** Whether its entries are served: from `publish` until `withdraw`. */
  readonly serving: boolean;
}

export interface UpstreamInput {
  readonly upstream?: SupervisedUpstream;
  readonly policy?: Partial<SupervisionPolicy>;
  readonly idleTimeoutMs?: number;
}

/** The longest delay a Node timer takes (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;
const IDLE_CHECK = 'idle-check';

const errorOf = (event: UpstreamEvent): Error | undefined => ('error' in event ? event.error : undefined);

export const upstreamMachine = setup({
  types: {
    context: {} as UpstreamContext,
    events: {} as UpstreamEvent,
    input: {} as UpstreamInput,
  },
  actions: {
    openSession: ({ context }) => context.upstream?.openSession(),
    closeSession: ({ context }) => context.upstream?.closeSession(),
    publish: enqueueActions(({ context, enqueue }) => {
      enqueue.assign({ serving: true });
      enqueue(() => context.upstream?.publish());
    }),
    withdraw: enqueueActions(({ context, enqueue }) => {
      enqueue.assign({ serving: false });
      enqueue(() => context.upstream?.withdraw());
    }),
    recordFailure: assign({
      failures: ({ context }) => context.failures + 1,
      lastError: ({ event, context }) => errorOf(event) ?? context.lastError,
    }),
    recordRetryDelay: assign({
      retryDelayMs: ({ context }) => backoffDelay(context.policy, context.failures - 1),
    }),
    clearRetryDelay: assign({ retryDelayMs: undefined }),
    recordError: assign({ lastError: ({ event, context }) => errorOf(event) ?? context.lastError }),
    resetFailures: assign({ failures: 0 }),
    recordStop: assign({ stopReason: ({ event }) => (event.type === 'stop' ? event.reason : undefined) }),
    recordIdleStop: assign({ stopReason: 'idle' as const }),
    clearStop: assign({ stopReason: undefined }),
    // `after` cannot re-arm without re-entering the state, which would restart `ready`'s stability timer:
    // the idle timer is a delayed event of its own, raised again for as long as the upstream is in use.
    armIdleCheck: enqueueActions(({ context, enqueue }) => {
      if (!context.idleTimeoutMs) return;
      enqueue.raise({ type: 'idle.check' }, { id: IDLE_CHECK, delay: 'idleCheck' });
    }),
    disarmIdleCheck: cancel(IDLE_CHECK),
  },
  guards: {
    mayRetry: ({ context }) => context.failures < context.policy.maxRestarts,
    idleStop: ({ event }) => event.type === 'stop' && event.reason === 'idle',
    stoppedForIdleness: ({ context }) => context.stopReason === 'idle',
    idleTooLong: ({ context }) => (context.upstream?.idleForMs() ?? 0) >= context.idleTimeoutMs!,
  },
  delays: {
    backoff: ({ context }) => context.retryDelayMs ?? 0,
    stableAfter: ({ context }) => context.policy.stableAfterMs,
    // The earliest moment it could have been idle for the whole timeout.
    idleCheck: ({ context }) =>
      Math.min(MAX_TIMER_MS, Math.max(1, context.idleTimeoutMs! - (context.upstream?.idleForMs() ?? 0))),
  },
}).createMachine({
  id: 'upstream',
  context: ({ input }) => ({
    upstream: input.upstream,
    policy: { ...DEFAULT_SUPERVISION, ...input.policy },
    idleTimeoutMs: input.idleTimeoutMs,
    failures: 0,
    serving: false,
  }),
  initial: 'idle',
  on: {
    // An idle stop keeps the entries listed (a call starts the upstream again); a requested one withdraws them.
    stop: [
      { guard: 'idleStop', target: '.stopped', actions: 'recordStop' },
      { target: '.stopped', actions: ['recordStop', 'withdraw'] },
    ],
    dispose: '.disposed',
    // Raised only while up (ready or degraded): leaving those states cancels it.
    'idle.check': [
      { guard: 'idleTooLong', target: '.stopped', actions: 'recordIdleStop' },
      { actions: 'armIdleCheck' },
    ],
  },
  states: {
    idle: {
      on: { start: 'connecting', use: 'connecting' },
    },
    connecting: {
      entry: 'openSession',
      on: {
        connected: { target: 'ready', actions: 'publish' },
        'connect.failed': [
          { guard: 'mayRetry', target: 'reconnecting', actions: 'recordFailure' },
          { target: 'failed', actions: 'recordFailure' },
        ],
      },
    },
    ready: {
      entry: 'armIdleCheck',
      exit: 'disarmIdleCheck',
      after: { stableAfter: { actions: 'resetFailures' } },
      on: {
        unhealthy: { target: 'degraded', actions: 'recordError' },
        lost: [
          { guard: 'mayRetry', target: 'reconnecting', actions: 'recordFailure' },
          { target: 'failed', actions: 'recordFailure' },
        ],
      },
    },
    // Up but not answering as it should: its entries stay served; a second strike drops the session.
    degraded: {
      entry: 'armIdleCheck',
      exit: 'disarmIdleCheck',
      on: {
        healthy: 'ready',
        unhealthy: [
          { guard: 'mayRetry', target: 'reconnecting', actions: 'recordFailure' },
          { target: 'failed', actions: 'recordFailure' },
        ],
        lost: [
          { guard: 'mayRetry', target: 'reconnecting', actions: 'recordFailure' },
          { target: 'failed', actions: 'recordFailure' },
        ],
      },
    },
    // The entries stay served: a call waits for the next session (or for its bound).
    reconnecting: {
      entry: ['closeSession', 'recordRetryDelay'],
      exit: 'clearRetryDelay',
      after: { backoff: 'connecting' },
    },
    failed: {
      entry: ['closeSession', 'withdraw'],
      on: { start: { target: 'connecting', actions: ['resetFailures', 'clearStop'] } },
    },
    stopped: {
      entry: 'closeSession',
      on: {
        start: { target: 'connecting', actions: ['resetFailures', 'clearStop'] },
        use: { guard: 'stoppedForIdleness', target: 'connecting', actions: ['resetFailures', 'clearStop'] },
        // Stopping again may turn an idle stop into a requested one: the dormant entries go then.
        stop: [{ guard: 'idleStop', actions: 'recordStop' }, { actions: ['recordStop', 'withdraw'] }],
      },
    },
    // The hub closed: the actor ends (and leaves its actor system).
    disposed: {
      type: 'final',
      entry: ['closeSession', 'withdraw'],
    },
  },
});
