/**
 * Waiting in tests, in one place and with one default. Prefer awaiting an event (`nextEvent`) or driving the
 * injectable clock; `eventually` polls, for the few states that announce themselves through no event.
 */
import { filter, firstValueFrom, type Observable } from 'rxjs';

/** How long a test waits for anything before it fails naming what it waited for. */
export const WAIT_MS = 5000;

/** Settles as `promise` does within `ms`, or fails the test naming `what` it waited for. */
export function within<T>(promise: Promise<T>, what = 'a result', ms = WAIT_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout>;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Timed out waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** The first value of `source` that satisfies `matches`, or a failure naming `what` after `ms`. */
export function nextEvent<T>(
  source: Observable<T>,
  matches: (value: T) => boolean,
  what: string,
  ms = WAIT_MS,
): Promise<T> {
  return within(firstValueFrom(source.pipe(filter(matches))), what, ms);
}

/**
 * Resolves once `check` holds (polled every 10 ms), or fails the test after `ms`. Only for a state that no
 * event announces (a child process's own counters, a socket the server closed): say so where it is used.
 */
export async function eventually(check: () => boolean | Promise<boolean>, what: string, ms = WAIT_MS): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
