/**
 * Freezes a JSON value and everything inside it. Used by the by-reference transport in debug mode.
 * Iterative: a value of any depth freezes without growing the call stack.
 */
export function deepFreeze<T>(value: T): T {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next !== 'object' || next === null || Object.isFrozen(next)) continue;
    Object.freeze(next);
    for (const key of Object.keys(next)) pending.push((next as Record<string, unknown>)[key]);
  }
  return value;
}

/** Debug switch for the memory transport: `SWITCHBOARD_FREEZE_MESSAGES=1` freezes every message it passes. */
export function freezeByDefault(): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.SWITCHBOARD_FREEZE_MESSAGES === '1';
}
