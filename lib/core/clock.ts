/**
 * Time as the runtime sees it. Injectable so timeout tests are deterministic; the default resolves the
 * global timer functions at call time, so vitest's fake timers (and XState's) take effect.
 * XState's `Clock` is a subset of this interface, so one clock drives both.
 */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Lets a timer stop (or resume) keeping the process alive, where the platform supports it. */
export function setTimerRef(handle: unknown, keepAlive: boolean): void {
  const timer = handle as { ref?: () => void; unref?: () => void } | undefined;
  if (keepAlive) timer?.ref?.();
  else timer?.unref?.();
}

/**
 * `clock` for lifecycle timers (an HTTP session's idle check, an upstream's reconnect backoff): they run
 * while the I/O they watch over is open, and that I/O, not the timer, decides whether the process lives.
 */
export function backgroundClock(clock: Clock): Clock {
  return {
    now: () => clock.now(),
    setTimeout: (callback, ms) => {
      const handle = clock.setTimeout(callback, ms);
      setTimerRef(handle, false);
      return handle;
    },
    clearTimeout: (handle) => clock.clearTimeout(handle),
  };
}
