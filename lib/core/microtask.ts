const SETTLED: Promise<void> = Promise.resolve();

/**
 * Runs `task` once the current turn's synchronous work is done, as `queueMicrotask` would, without the
 * AsyncResource Node wraps around every `queueMicrotask` callback: on a per-message path that wrapper
 * cost more than the rest of the scheduling. `task` must not throw.
 */
export function afterThisTurn(task: () => void): void {
  void SETTLED.then(task);
}

/**
 * Runs `task(arg)` on a later turn: after the microtasks now queued and the I/O now pending. `setImmediate`
 * where the runtime has one; elsewhere a 0 ms timer. Not a timer on Node: it holds those for 1 ms, which was
 * most of the time of a short exchange (an input round, a task that ends at once). `arg` spares a closure.
 */
export function onLaterTurn<A>(task: (arg: A) => void, arg: A): void {
  if (typeof setImmediate === 'function') setImmediate(task, arg);
  else setTimeout(task, 0, arg);
}
