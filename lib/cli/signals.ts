/**
 * SIGINT (Ctrl-C) and SIGTERM, the signals that ask a command to stop. The first asks; a second one, while
 * the command is still stopping, forces: every child process group the command started is SIGKILLed and
 * the process exits at once (a child in its own group would otherwise outlive a default-killed CLI).
 */
import { StdioClientTransport } from '../../transports/stdio';
import { EXIT_INTERRUPTED } from './errors';

const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/** Calls `listener` on the first stop signal; a later one calls `forceExit`. Returns the undo. */
export function onStopSignal(listener: (signal: NodeJS.Signals) => void): () => void {
  let asked = false;
  const stop = (signal: NodeJS.Signals) => {
    if (asked) forceExit(`${signal} again while stopping`);
    asked = true;
    listener(signal);
  };
  const undo = () => {
    for (const signal of STOP_SIGNALS) process.off(signal, stop);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, stop);
  return undo;
}

/** A stop request: `requested` resolves with the first stop signal, until `dispose` (which restores defaults). */
export class StopRequest {
  readonly requested: Promise<NodeJS.Signals>;
  readonly dispose: () => void;

  constructor() {
    let resolve!: (signal: NodeJS.Signals) => void;
    this.requested = new Promise((r) => (resolve = r));
    this.dispose = onStopSignal(resolve);
  }
}

/** SIGKILLs every child process group this process started and has not seen end; returns their pids. */
export function killChildren(): number[] {
  return StdioClientTransport.killRunningChildren();
}

/** The last resort: no child left behind, and the CLI gone now. */
export function forceExit(why: string): never {
  const killed = killChildren();
  process.stderr.write(
    `switchboard: ${why}: stopped at once${killed.length ? ` (killed ${killed.length} child process group(s))` : ''}\n`,
  );
  process.exit(EXIT_INTERRUPTED);
}

/** Resolves with the first stop signal (a second one forces, as above). */
export function stopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => onStopSignal(resolve));
}
