/**
 * The list cache and the 2026-07-28 cache hints (lib/client/list-cache.ts): `ttlMs` on an injected clock,
 * `ttlMs: 0`, `cacheScope`, invalidation still winning over a ttl, hints of multi-page listings, and results
 * of input_required retries never reused. The handshake-era behaviour (no hints: kept until the list changes)
 * is covered by the client's list tests (prompts, resources, result-validation, compose-hub); one case here
 * pins it next to the ttl cases.
 */
import { firstValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { completeInputRequired } from '../../lib/client/input-required';
import { cacheHintsOf, ListCache, mergeCacheHints, type HintedList } from '../../lib/client/list-cache';
import type { JsonObject } from '../../lib/jsonrpc/types';

/** A fetch that counts its calls and answers with `listing(call number)`. */
function counting<T>(listing: (call: number) => readonly T[] | HintedList<T>) {
  const calls = { count: 0 };
  const fetch = () => Promise.resolve(listing(++calls.count));
  return { calls, fetch };
}
const noRefreshError = (error: unknown) => {
  throw error;
};

describe('ListCache with cache hints', () => {
  it('reuses a list without a ttl until it is invalidated, however long it waits', async () => {
    const clock = new SimulatedClock();
    const { calls, fetch } = counting((call) => [`tool-${call}`]);
    const cache = new ListCache(fetch, noRefreshError, clock);
    await cache.get();
    clock.increment(24 * 3600_000);
    expect([await cache.get(), calls.count]).toEqual([['tool-1'], 1]);
  });

  it('reuses a list younger than its ttlMs', async () => {
    const clock = new SimulatedClock();
    const { calls, fetch } = counting((call) => ({ items: [`tool-${call}`], ttlMs: 1000 }));
    const cache = new ListCache(fetch, noRefreshError, clock);
    await cache.get();
    clock.increment(999);
    expect([await cache.get(), calls.count]).toEqual([['tool-1'], 1]);
  });

  it('lists again once the list is ttlMs old', async () => {
    const clock = new SimulatedClock();
    const { calls, fetch } = counting((call) => ({ items: [`tool-${call}`], ttlMs: 1000 }));
    const cache = new ListCache(fetch, noRefreshError, clock);
    await cache.get();
    clock.increment(1000);
    expect([await cache.get(), calls.count]).toEqual([['tool-2'], 2]);
  });

  it('counts the ttl from when the list arrived, not from when it was asked for', async () => {
    const clock = new SimulatedClock();
    let answer!: (listing: HintedList<string>) => void;
    let calls = 0;
    const cache = new ListCache<string>(
      () => {
        calls++;
        return new Promise((resolve) => (answer = resolve));
      },
      noRefreshError,
      clock,
    );
    const first = cache.get();
    clock.increment(500);
    answer({ items: ['slow'], ttlMs: 1000 });
    await first;
    clock.increment(900);
    await cache.get();
    expect(calls).toBe(1);
  });

  it('shares a listing in flight between callers even with ttlMs 0', async () => {
    const { calls, fetch } = counting((call) => ({ items: [`tool-${call}`], ttlMs: 0 }));
    const cache = new ListCache(fetch, noRefreshError, new SimulatedClock());
    await Promise.all([cache.get(), cache.get()]);
    expect(calls.count).toBe(1);
  });

  it('keeps nothing past the call with ttlMs 0', async () => {
    const { calls, fetch } = counting((call) => ({ items: [`tool-${call}`], ttlMs: 0 }));
    const cache = new ListCache(fetch, noRefreshError, new SimulatedClock());
    await cache.get();
    expect([await cache.get(), calls.count]).toEqual([['tool-2'], 2]);
  });

  it('lists again after invalidate() even within the ttl (list_changed, on the session or a listen stream)', async () => {
    const { calls, fetch } = counting((call) => ({ items: [`tool-${call}`], ttlMs: 60_000 }));
    const cache = new ListCache(fetch, noRefreshError, new SimulatedClock());
    await cache.get();
    cache.invalidate();
    expect([await cache.get(), calls.count]).toEqual([['tool-2'], 2]);
  });

  it('records the cacheScope of the cached list', async () => {
    const { fetch } = counting(() => ({ items: ['t'], ttlMs: 1000, cacheScope: 'public' as const }));
    const cache = new ListCache(fetch, noRefreshError, new SimulatedClock());
    await cache.get();
    expect(cache.scope).toBe('public');
  });

  it('emits the items of a hinted listing on changes$', async () => {
    const { fetch } = counting(() => ({ items: ['a', 'b'], ttlMs: 5 }));
    const cache = new ListCache(fetch, noRefreshError, new SimulatedClock());
    expect(await firstValueFrom(cache.changes$)).toEqual(['a', 'b']);
  });
});

describe('cache hints of results', () => {
  it('reads ttlMs and cacheScope from a result', () => {
    expect(cacheHintsOf({ resultType: 'complete', tools: [], ttlMs: 3000, cacheScope: 'private' })).toEqual({
      ttlMs: 3000,
      cacheScope: 'private',
    });
  });

  it('ignores hints that are not what the schema allows', () => {
    expect(cacheHintsOf({ ttlMs: -1, cacheScope: 'everyone' } as JsonObject)).toEqual({});
  });

  it('never reuses a result completed by an input_required retry, whatever its hints', async () => {
    const final: JsonObject = { resultType: 'complete', contents: [], ttlMs: 60_000, cacheScope: 'public' };
    const result = await completeInputRequired(
      { resultType: 'input_required', requestState: 's' },
      { method: 'resources/read', answer: () => Promise.reject(new Error('unused')), retry: async () => final },
    );
    expect(cacheHintsOf(result)).toEqual({ ttlMs: 0 });
  });

  it('merges the hints of pages: the shortest ttl, private when any page is', () => {
    expect(
      mergeCacheHints([
        { ttlMs: 5000, cacheScope: 'public' },
        { ttlMs: 2000, cacheScope: 'private' },
        { ttlMs: 9000, cacheScope: 'public' },
      ]),
    ).toEqual({ ttlMs: 2000, cacheScope: 'private' });
  });

  it('merges pages without hints into no hints', () => {
    expect(mergeCacheHints([{}, {}])).toEqual({});
  });
});
