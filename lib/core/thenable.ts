/** Whether `value` is a promise (or any thenable): what a handler that may answer now or later returned. */
export function isThenable<T = unknown>(value: unknown): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | undefined)?.then === 'function';
}
