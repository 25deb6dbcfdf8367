/**
 * The CLI's two kinds of failure and their exit codes: a `UsageError` (the command line is wrong, exit 2)
 * and everything else (the module, the network, the server: exit 1).
 */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
/** Stopped by SIGINT or SIGTERM, as shells report it (128 + SIGINT). */
export const EXIT_INTERRUPTED = 130;

/** The command line itself is wrong: an unknown option, a missing or malformed argument. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A failure whose message already says everything; `detail` lines follow it (a stack, the server's stderr). */
export class CliFailure extends Error {
  override readonly name = 'CliFailure';

  constructor(
    message: string,
    readonly detail: readonly string[] = [],
    options?: ErrorOptions & { readonly exitCode?: number },
  ) {
    super(message, options);
    this.exitCode = options?.exitCode ?? EXIT_FAILURE;
  }

  readonly exitCode: number;
}

/** The server needs a login that was not made (or no longer holds): says which command makes it. */
export class LoginRequiredError extends CliFailure {
  /** `loginCommand`: the `switchboard login ...` line to run. */
  constructor(url: URL, loginCommand: string) {
    super(`${url.href} requires authorization: run "${loginCommand}"`);
  }
}

/** The first `CliFailure` in `error`'s chain of causes: a failure deep in a library that already says everything. */
export function cliFailureIn(error: unknown): CliFailure | undefined {
  for (let current = error; current instanceof Error; current = current.cause) {
    if (current instanceof CliFailure) return current;
  }
  return undefined;
}

export function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError) return EXIT_USAGE;
  return error instanceof CliFailure ? error.exitCode : EXIT_FAILURE;
}

/** What to print on stderr for `error`: a message line, then detail lines. */
export function describeError(error: unknown): string[] {
  if (error instanceof UsageError) return [error.message, 'Run "switchboard --help" for usage.'];
  if (error instanceof CliFailure) return [error.message, ...error.detail];
  if (error instanceof Error) return [error.message];
  return [String(error)];
}
