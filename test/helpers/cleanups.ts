/** The tests' one cleanup list: run after every test, last registered first, whatever happened in it. */
import { afterEach } from 'vitest';

/** Run after each test, last registered first (their failures are ignored). */
export const cleanups: (() => Promise<unknown> | void)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
});
