const SETTLED: Promise<void> = Promise.resolve();

/**
 * Runs `task` once the current turn's synchronous work is done, as `queueMicrotask` would, without the
 * AsyncResource Node wraps around every `queueMicrotask` callback: on a per-message path that wrapper
 * cost more than the rest of the scheduling. `task` must not throw.
 */
export function afterThisTurn(task: () => void): void {
  void SETTLED.then(task);
}
