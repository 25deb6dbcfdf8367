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
}

export interface ShutdownPolicy {
  /** How long to wait for an exit after ending stdin, before SIGTERM (default 2 s). */
  readonly stdinGraceMs: number;
  /** How long to wait after SIGTERM, before SIGKILL (default 2 s). */
  readonly terminateGraceMs: number;
}

export const DEFAULT_SHUTDOWN: ShutdownPolicy = { stdinGraceMs: 2000, terminateGraceMs: 2000 };

export interface ChildProcessInput {
  readonly shutdown?: Partial<ShutdownPolicy>;
}

export type ChildProcessEvent =
  | { type: 'start' }
  | { type: 'spawned' }
  | { type: 'spawn.failed'; error: Error }
  | { type: 'exited'; code: number | null; signal: SignalName | null }
  | { type: 'stop' };

interface ChildProcessContext {
  readonly shutdown: ShutdownPolicy;
  readonly exit?: ChildExit;
}

/**
 * The lifecycle of one child process: idle -> (start) -> starting -> running -> stopping (endingStdin ->
 * terminating -> killing) -> exited; a child that dies on its own ends the machine too (its exit says
 * `crashed`). Output: the `ChildExit`.
 *
 * It never restarts a child: a process is one run. Whoever wants another run starts another transport, and
 * supervision (back-off, failure counting) lives in one place, the hub's upstream machine (upstream.ts),
 * which treats a stdio child like any other upstream.
 *
 * The machine only decides; the I/O lives in provided actions: `spawn` (report `spawned`/`spawn.failed`,
 * then `exited`), `endStdin`, `terminate` (SIGTERM), `kill` (SIGKILL) and `reap` (runs on every exit, so
 * whatever the child left in its process group goes too). Delays run on the actor's clock: the runtime's,
 * when the actor joins a runtime (transports/stdio.ts does).
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
  },
  delays: {
    stdinGrace: ({ context }) => context.shutdown.stdinGraceMs,
    terminateGrace: ({ context }) => context.shutdown.terminateGraceMs,
  },
}).createMachine({
  id: 'childProcess',
  context: ({ input }) => ({ shutdown: { ...DEFAULT_SHUTDOWN, ...input.shutdown } }),
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
        exited: { target: 'exited', actions: { type: 'recordExit', params: 'crashed' } },
        // Not started yet: there is nothing to end gently, so go straight to SIGTERM.
        stop: 'stopping.terminating',
      },
    },
    running: {
      on: {
        exited: { target: 'exited', actions: { type: 'recordExit', params: 'crashed' } },
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
    exited: {
      type: 'final',
      entry: 'reap',
    },
  },
  output: ({ context }) => context.exit ?? { kind: 'stopped', code: null, signal: null },
});
