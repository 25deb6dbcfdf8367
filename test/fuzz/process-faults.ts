/**
 * Counts what escapes to the process while a suite runs: an uncaught exception or an unhandled rejection is
 * a fault of the runtime (a peer's bytes must never reach there), so the suites assert the counts stay zero.
 */
export interface ProcessFaults {
  /** What escaped so far; a suite empties it after each test. */
  readonly seen: string[];
  stop(): void;
}

export function watchProcessFaults(): ProcessFaults {
  const seen: string[] = [];
  const onException = (error: unknown) => void seen.push(`uncaughtException: ${describe(error)}`);
  const onRejection = (reason: unknown) => void seen.push(`unhandledRejection: ${describe(reason)}`);
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return {
    seen,
    stop() {
      process.off('uncaughtException', onException);
      process.off('unhandledRejection', onRejection);
    },
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message.slice(0, 300)}` : String(error).slice(0, 300);
}
