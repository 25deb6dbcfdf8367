import { assign, setup } from 'xstate';

/** A POSIX signal name as Node reports it ('SIGTERM', 'SIGKILL', …), spelled so the type needs no Node typings. */
export type SignalName = `SIG${string}`;

/** How a child process ended, or failed to start: the machine's output. */
export interface ChildExit {
  /** `stopped`: it exited after we asked it to stop; `crashed`: on its own; `spawn-failed`: it never ran. */
  readonly kind: 'stopped' | 'crashed' | 'spawn-failed';
  readonly code: number | null;
  readonly signal: SignalName | null;
  readonly error?: Error;
  /** How many times it was restarted before this end. */
  readonly restarts: number;
}

export interface RestartPolicy {
  readonly maxRestarts: number;
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
}

export interface ShutdownPolicy {
  /** How long to wait for an exit after ending stdin, before SIGTERM (default 2 s). */
  readonly stdinGraceMs: number;
  /** How long to wait after SIGTERM, before SIGKILL (default 2 s). */
  readonly terminateGraceMs: number;
}

export const DEFAULT_SHUTDOWN: ShutdownPolicy = { stdinGraceMs: 2000, terminateGraceMs: 2000 };

export interface ChildProcessInput {
  readonly restart?: RestartPolicy;
  readonly shutdown?: Partial<ShutdownPolicy>;
}

export type ChildProcessEvent =
  | { type: 'start' }
  | { type: 'spawned' }
  | { type: 'spawn.failed'; error: Error }
  | { type: 'exited'; code: number | null; signal: SignalName | null }
  | { type: 'stop' };

interface ChildProcessContext {
  readonly restart: RestartPolicy;
  readonly shutdown: ShutdownPolicy;
  readonly restarts: number;
  readonly exit?: Omit<ChildExit, 'restarts'>;
}

const NO_RESTART: RestartPolicy = { maxRestarts: 0, initialDelayMs: 0, maxDelayMs: 0 };

/** The delay before restart number `restarts + 1`: doubling from `initialDelayMs`, capped at `maxDelayMs`. */
export function backoffDelay(policy: RestartPolicy, restarts: number): number {
  return Math.min(policy.initialDelayMs * 2 ** restarts, policy.maxDelayMs);
}

/**
 * The lifecycle of one child process: idle -> (start) -> starting -> running -> stopping (endingStdin -> terminating ->
 * killing) -> exited, or, when it dies on its own, crashed -> restarting (exponential backoff) -> starting
 * until `maxRestarts` is spent. Output: the `ChildExit`.
 *
 * The machine only decides; the I/O lives in provided actions: `spawn` (report `spawned`/`spawn.failed`,
 * then `exited`), `endStdin`, `terminate` (SIGTERM), `kill` (SIGKILL) and `reap` (runs on every exit, so
 * whatever the child left in its process group goes too). Delays run on the actor's clock.
 */
export const childProcessMachine = setup({
  types: {
    context: {} as ChildProcessContext,
    events: {} as ChildProcessEvent,
    input: {} as ChildProcessInput,
    output: {} as ChildExit,
  },
  actions: {
    spawn: () => {},
    endStdin: () => {},
    terminate: () => {},
    kill: () => {},
    reap: () => {},
    recordExit: assign({
      exit: ({ event }, kind: ChildExit['kind']) =>
        event.type === 'exited'
          ? { kind, code: event.code, signal: event.signal }
          : event.type === 'spawn.failed'
            ? { kind: 'spawn-failed' as const, code: null, signal: null, error: event.error }
            : undefined,
    }),
    countRestart: assign({ restarts: ({ context }) => context.restarts + 1 }),
  },
  guards: {
    mayRestart: ({ context }) => context.restarts < context.restart.maxRestarts,
  },
  delays: {
    stdinGrace: ({ context }) => context.shutdown.stdinGraceMs,
    terminateGrace: ({ context }) => context.shutdown.terminateGraceMs,
    backoff: ({ context }) => backoffDelay(context.restart, context.restarts),
  },
}).createMachine({
  id: 'childProcess',
  context: ({ input }) => ({
    restart: input.restart ?? NO_RESTART,
    shutdown: { ...DEFAULT_SHUTDOWN, ...input.shutdown },
    restarts: 0,
  }),
  initial: 'idle',
  states: {
    // Nothing runs until `start`: a stop here ends the machine with nothing to signal.
    idle: {
      on: { start: 'starting', stop: 'exited' },
    },
    starting: {
      entry: 'spawn',
      on: {
        spawned: 'running',
        'spawn.failed': { target: 'exited', actions: { type: 'recordExit', params: 'spawn-failed' } },
        exited: { target: 'crashed', actions: { type: 'recordExit', params: 'crashed' } },
        // Not started yet: there is nothing to end gently, so go straight to SIGTERM.
        stop: 'stopping.terminating',
      },
    },
    running: {
      on: {
        exited: { target: 'crashed', actions: { type: 'recordExit', params: 'crashed' } },
        stop: 'stopping',
      },
    },
    stopping: {
      initial: 'endingStdin',
      on: {
        exited: { target: 'exited', actions: { type: 'recordExit', params: 'stopped' } },
        'spawn.failed': { target: 'exited', actions: { type: 'recordExit', params: 'spawn-failed' } },
      },
      states: {
        endingStdin: { entry: 'endStdin', after: { stdinGrace: 'terminating' } },
        terminating: { entry: 'terminate', after: { terminateGrace: 'killing' } },
        // SIGKILL cannot be ignored: wait for the exit it brings.
        killing: { entry: 'kill' },
      },
    },
    crashed: {
      entry: 'reap',
      always: [{ guard: 'mayRestart', target: 'restarting' }, { target: 'exited' }],
    },
    restarting: {
      after: { backoff: { target: 'starting', actions: 'countRestart' } },
      on: { stop: 'exited' },
    },
    exited: {
      type: 'final',
      entry: 'reap',
    },
  },
  output: ({ context }) => ({
    ...(context.exit ?? { kind: 'stopped', code: null, signal: null }),
    restarts: context.restarts,
  }),
});
