/** Freezes a JSON value and everything inside it. Used by the by-reference transport in debug mode. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  return value;
}

/** Debug switch for the memory transport: `SWITCHBOARD_FREEZE_MESSAGES=1` freezes every message it passes. */
export function freezeByDefault(): boolean {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  return env?.SWITCHBOARD_FREEZE_MESSAGES === '1';
}
