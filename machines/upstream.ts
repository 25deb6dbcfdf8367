/**
 * The supervision lifecycle of one upstream server of a hub (lib/compose): whether its session is up,
 * whether its entries are served, and when to try again.
 *
 * idle -> connecting -> ready <-> degraded; a failed start or a lost session -> reconnecting (exponential
 * backoff, capped at `maxDelayMs`) -> connecting, for ever by default; a finite `maxRestarts` gives up
 * after that many consecutive failures: failed. A session that stays up for `stableAfterMs` clears the
 * failure count (a crash loop is failures close together, not failures ever), and so the delay.
 * `stop` -> stopped from anywhere; `start` leaves idle, stopped and failed; `dispose` ends it for good.
 *
 * Entries stay served while the upstream reconnects (clients see no tools flap; calls wait for it): they
 * are withdrawn only by a requested stop, by giving up (failed), or when the hub closes.
 *
 * The machine only decides; its host (given as input) does the I/O: `openSession` (open a session, then
 * report `connected` or `connect.failed`), `closeSession` (idempotent), `publish` (serve the fresh
 * catalog) and `withdraw` (stop serving it). Delays run on the actor's clock. The host is input rather
 * than `provide`d actions because `provide` builds a new machine, which costs more than a hub's whole
 * catalog build.
 */
import { assign, setup } from 'xstate';
import { backoffDelay, type RestartPolicy } from './child-process';

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

export type UpstreamState =
  'idle' | 'connecting' | 'ready' | 'degraded' | 'reconnecting' | 'stopped' | 'failed' | 'disposed';

/** Why an upstream is stopped: `idle` keeps its entries listed (a call starts it again), `requested` withdraws them. */
export type StopReason = 'idle' | 'requested';

export type UpstreamEvent =
  | { type: 'start' }
  | { type: 'connected' }
  | { type: 'connect.failed'; error: Error }
  | { type: 'lost'; error: Error }
  | { type: 'unhealthy'; error: Error }
  | { type: 'healthy' }
  | { type: 'stop'; reason: StopReason }
  | { type: 'dispose' };

/** The side effects the machine asks for. */
export interface UpstreamMachineHost {
  openSession(): void;
  closeSession(): void;
  publish(): void;
  withdraw(): void;
}

export interface UpstreamContext {
  readonly host: UpstreamMachineHost | undefined;
  readonly policy: SupervisionPolicy;
  /** Consecutive failures (failed starts and lost sessions) since the last stable session. */
  readonly failures: number;
  readonly lastError?: Error;
  readonly stopReason?: StopReason;
  /** While reconnecting: how long it waits before the next attempt. */
  readonly retryDelayMs?: number;
}

export interface UpstreamInput {
  readonly host?: UpstreamMachineHost;
  readonly policy?: Partial<SupervisionPolicy>;
}

const errorOf = (event: UpstreamEvent): Error | undefined => ('error' in event ? event.error : undefined);

export const upstreamMachine = setup({
  types: {
    context: {} as UpstreamContext,
    events: {} as UpstreamEvent,
    input: {} as UpstreamInput,
  },
  actions: {
    openSession: ({ context }) => context.host?.openSession(),
    closeSession: ({ context }) => context.host?.closeSession(),
    publish: ({ context }) => context.host?.publish(),
    withdraw: ({ context }) => context.host?.withdraw(),
    recordFailure: assign({
      failures: ({ context }) => context.failures + 1,
      lastError: ({ event, context }) => errorOf(event) ?? context.lastError,
    }),
    recordRetryDelay: assign({
      // The exponent is bounded so that a zero initial delay never meets 2 ** 1024 (0 * Infinity is NaN).
      retryDelayMs: ({ context }) => backoffDelay(context.policy, Math.min(Math.max(0, context.failures - 1), 64)),
    }),
    clearRetryDelay: assign({ retryDelayMs: undefined }),
    recordError: assign({ lastError: ({ event, context }) => errorOf(event) ?? context.lastError }),
    resetFailures: assign({ failures: 0 }),
    recordStop: assign({ stopReason: ({ event }) => (event.type === 'stop' ? event.reason : undefined) }),
    clearStop: assign({ stopReason: undefined }),
  },
  guards: {
    mayRetry: ({ context }) => context.failures < context.policy.maxRestarts,
    idleStop: ({ event }) => event.type === 'stop' && event.reason === 'idle',
  },
  delays: {
    backoff: ({ context }) => context.retryDelayMs ?? 0,
    stableAfter: ({ context }) => context.policy.stableAfterMs,
  },
}).createMachine({
  id: 'upstream',
  context: ({ input }) => ({
    host: input.host,
    policy: { ...DEFAULT_SUPERVISION, ...input.policy },
    failures: 0,
  }),
  initial: 'idle',
  on: {
    // An idle stop keeps the entries listed (a call starts the upstream again); a requested one withdraws them.
    stop: [
      { guard: 'idleStop', target: '.stopped', actions: 'recordStop' },
      { target: '.stopped', actions: ['recordStop', 'withdraw'] },
    ],
    dispose: '.disposed',
  },
  states: {
    idle: {
      on: { start: 'connecting' },
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
