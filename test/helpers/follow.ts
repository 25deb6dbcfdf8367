import type { Observable } from 'rxjs';
import { deferred } from './fixtures';

/** Subscribes to `stream`: its first value, and how it ended ('completed' or the error). */
export function follow<T>(stream: Observable<T>) {
  const first = deferred<T>();
  const ended = new Promise<unknown>((resolve) =>
    stream.subscribe({ next: (value) => first.resolve(value), error: resolve, complete: () => resolve('completed') }),
  );
  return { first: first.promise, ended };
}
