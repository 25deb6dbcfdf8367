/** SIGINT (Ctrl-C) and SIGTERM, the signals that ask a command to stop. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/** Calls `listener` on the first stop signal; returns the undo (stop signals get their default back). */
export function onStopSignal(listener: (signal: NodeJS.Signals) => void): () => void {
  const stop = (signal: NodeJS.Signals) => {
    undo();
    listener(signal);
  };
  const undo = () => {
    for (const signal of STOP_SIGNALS) process.off(signal, stop);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, stop);
  return undo;
}

/** Resolves with the first stop signal. */
export function stopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => onStopSignal(resolve));
}
