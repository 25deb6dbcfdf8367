import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../lib/core/clock';
import { CorrelationTable, type RequestOptions } from '../../lib/core/correlation';
import { McpError, RequestCancelledError, RequestTimeoutError } from '../../lib/jsonrpc/errors';
import type { RequestId } from '../../lib/jsonrpc/types';

function makeTable(defaultTimeout?: number) {
  const cancels: { id: RequestId; reason: string }[] = [];
  const callbackErrors: unknown[] = [];
  const table = new CorrelationTable(
    {
      clock: systemClock,
      sendCancelled: (id, reason) => cancels.push({ id, reason }),
      reportCallbackError: (error) => callbackErrors.push(error),
    },
    defaultTimeout,
  );
  const start = (method = 'tools/call', options?: RequestOptions) => {
    const record = table.begin(method, options);
    const outcome = record.promise.then(
      (value) => ({ value }),
      (error: Error) => ({ error }),
    );
    return { record, outcome };
  };
  return { table, cancels, callbackErrors, start };
}

beforeEach(() => {
  vi.useFakeTimers();
});

afterEach(() => {
  vi.useRealTimers();
});

describe('the correlation core', () => {
  it('settles with the result and removes the record', async () => {
    const { table, start } = makeTable();
    const { record, outcome } = start();
    expect(table.size).toBe(1);
    expect(table.resolve(record.id, { ok: true })).toBe(record);
    expect(await outcome).toEqual({ value: { ok: true } });
    expect(table.size).toBe(0);
    expect(vi.getTimerCount()).toBe(1); // the shared timer stays armed (unreferenced) until its deadline
  });

  it('settles an error response as an McpError with code, message and data', async () => {
    const { table, start } = makeTable();
    const { record, outcome } = start();
    table.reject(record.id, { code: -32602, message: 'bad', data: { uri: 'x' } });
    const { error } = (await outcome) as { error: McpError };
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: -32602, message: 'bad', data: { uri: 'x' } });
    expect(table.size).toBe(0);
  });

  it('times out after the idle timeout, sends a cancel with a neutral reason, and reports a timeout', async () => {
    const { table, cancels, start } = makeTable();
    const { record, outcome } = start('tools/call', { timeout: 1000 });
    await vi.advanceTimersByTimeAsync(999);
    expect(table.size).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    const { error } = (await outcome) as { error: RequestTimeoutError };
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect(error).toMatchObject({
      code: 'REQUEST_TIMEOUT',
      limit: 'idle',
      budgetMs: 1000,
      elapsedMs: 1000,
      method: 'tools/call',
    });
    expect(cancels).toEqual([{ id: record.id, reason: 'The request timed out' }]);
    expect(table.size).toBe(0);
  });

  it('uses the default timeout of 60 s', async () => {
    const { start } = makeTable();
    const { outcome } = start();
    await vi.advanceTimersByTimeAsync(59_999);
    await vi.advanceTimersByTimeAsync(1);
    expect(((await outcome) as { error: Error }).error).toBeInstanceOf(RequestTimeoutError);
  });

  it('restarts the idle timeout on progress when asked, without an onProgress callback', async () => {
    const { table, start } = makeTable();
    const { record, outcome } = start('tools/call', { timeout: 1000, resetTimeoutOnProgress: true });
    expect(record.wantsProgress).toBe(true);
    for (let step = 1; step <= 5; step++) {
      await vi.advanceTimersByTimeAsync(900);
      expect(table.progress({ progressToken: record.id, progress: step })).toBe('delivered');
    }
    expect(table.size).toBe(1); // 4.5 s in, alive thanks to progress
    await vi.advanceTimersByTimeAsync(1000);
    const { error } = (await outcome) as { error: RequestTimeoutError };
    expect(error).toMatchObject({ limit: 'idle', budgetMs: 1000, elapsedMs: 5500 });
  });

  it('does not restart the timeout on progress unless asked', async () => {
    const { table, start } = makeTable();
    const seen: number[] = [];
    const { record, outcome } = start('tools/call', { timeout: 1000, onProgress: (p) => seen.push(p.progress) });
    await vi.advanceTimersByTimeAsync(900);
    expect(table.progress({ progressToken: record.id, progress: 1 })).toBe('delivered');
    await vi.advanceTimersByTimeAsync(100);
    expect(((await outcome) as { error: Error }).error).toBeInstanceOf(RequestTimeoutError);
    expect(seen).toEqual([1]);
  });

  it('enforces maxTotalTimeout even while progress keeps arriving', async () => {
    const { table, cancels, start } = makeTable();
    const { record, outcome } = start('tools/call', {
      timeout: 1000,
      resetTimeoutOnProgress: true,
      maxTotalTimeout: 2500,
    });
    for (let step = 1; step <= 3; step++) {
      await vi.advanceTimersByTimeAsync(800);
      table.progress({ progressToken: record.id, progress: step });
    }
    await vi.advanceTimersByTimeAsync(100); // 2.5 s
    const { error } = (await outcome) as { error: RequestTimeoutError };
    expect(error).toMatchObject({ limit: 'total', budgetMs: 2500, elapsedMs: 2500 });
    expect(error.message).toContain('maximum total time of 2500 ms');
    expect(cancels).toHaveLength(1);
  });

  it('enforces maxTotalTimeout when no progress arrives and the idle timeout is longer', async () => {
    const { start } = makeTable();
    const { outcome } = start('tools/call', { timeout: 10_000, maxTotalTimeout: 300 });
    await vi.advanceTimersByTimeAsync(300);
    expect((await outcome) as { error: Error }).toMatchObject({ error: { limit: 'total', budgetMs: 300 } });
  });

  it('waits forever with timeout 0 unless cancelled', async () => {
    const { table, start } = makeTable();
    const { record } = start('tools/call', { timeout: 0 });
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(table.has(record.id)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('cancels on abort: cancel notification, RequestCancelledError (never a timeout), listener removed', async () => {
    const { table, cancels, start } = makeTable();
    const controller = new AbortController();
    const { record, outcome } = start('tools/call', { signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort(new Error('user pressed stop: secret internal detail'));
    const { error } = (await outcome) as { error: RequestCancelledError };
    expect(error).toBeInstanceOf(RequestCancelledError);
    expect(error).not.toBeInstanceOf(RequestTimeoutError);
    expect((error.reason as Error).message).toContain('user pressed stop');
    // The wire reason leaks nothing of the local one.
    expect(cancels).toEqual([{ id: record.id, reason: 'The request was cancelled by the requester' }]);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    expect(table.size).toBe(0);
  });

  it('removes the abort listener when the request settles normally (a shared signal does not pile up)', async () => {
    const { table, start } = makeTable();
    const shared = new AbortController();
    for (let i = 0; i < 100; i++) {
      const { record, outcome } = start('ping', { signal: shared.signal });
      table.resolve(record.id, {});
      await outcome;
    }
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });

  it('a timeout after an abort listener was added removes the listener too', async () => {
    const { start } = makeTable();
    const controller = new AbortController();
    const { outcome } = start('tools/call', { signal: controller.signal, timeout: 10 });
    await vi.advanceTimersByTimeAsync(10);
    expect(((await outcome) as { error: Error }).error).toBeInstanceOf(RequestTimeoutError);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    controller.abort(); // no effect, no throw
  });

  it('never sends a cancel for initialize', async () => {
    const { cancels, start } = makeTable();
    const controller = new AbortController();
    start('initialize', { timeout: 5 });
    start('initialize', { signal: controller.signal });
    controller.abort();
    await vi.advanceTimersByTimeAsync(5);
    expect(cancels).toEqual([]);
  });

  it('rejects everything on close with the given error and sends no cancels', async () => {
    const { table, cancels, start } = makeTable();
    const outcomes = [start().outcome, start().outcome, start('ping').outcome];
    const closed = new Error('closed');
    table.failAll(closed);
    for (const outcome of outcomes) expect(await outcome).toEqual({ error: closed });
    expect(table.size).toBe(0);
    expect(cancels).toEqual([]);
  });

  it('ignores a late response and a duplicate response', async () => {
    const { table, start } = makeTable();
    const { record, outcome } = start('tools/call', { timeout: 10 });
    await vi.advanceTimersByTimeAsync(10);
    await outcome;
    expect(table.resolve(record.id, { late: true })).toBeUndefined();
    const second = start();
    expect(table.resolve(second.record.id, { first: true })).toBe(second.record);
    expect(table.resolve(second.record.id, { duplicate: true })).toBeUndefined();
    expect(table.reject(second.record.id, { code: 1, message: 'dup' })).toBeUndefined();
    expect(await second.outcome).toEqual({ value: { first: true } });
  });

  it('ignores unknown tokens, tokens of requests that did not ask for progress, and malformed progress', () => {
    const { table, start } = makeTable();
    const quiet = start().record;
    const asked = start('tools/call', { onProgress: () => {} }).record;
    expect(table.progress({ progressToken: 'nope', progress: 1 })).toBe('unknown-token');
    expect(table.progress({ progressToken: quiet.id, progress: 1 })).toBe('unknown-token');
    expect(table.progress({ progressToken: asked.id, progress: 'x' as unknown as number })).toBe('malformed');
    expect(table.progress(undefined)).toBe('malformed');
    expect(table.progress({ progressToken: asked.id, progress: 2 })).toBe('delivered');
    expect(table.progress({ progressToken: asked.id, progress: 2 })).toBe('not-increasing');
    expect(table.progress({ progressToken: asked.id, progress: 1 })).toBe('not-increasing');
  });

  it('delivers progress to onProgress and contains a throwing callback', () => {
    const { table, callbackErrors, start } = makeTable();
    const seen: unknown[] = [];
    const { record } = start('tools/call', {
      onProgress: (progress) => {
        seen.push(progress);
        throw new Error('listener bug');
      },
    });
    expect(table.progress({ progressToken: record.id, progress: 1, total: 4, message: 'a' })).toBe('delivered');
    expect(seen).toEqual([{ progressToken: record.id, progress: 1, total: 4, message: 'a' }]);
    expect(callbackErrors).toHaveLength(1);
    expect(table.size).toBe(1);
  });

  it('keeps one timer for many requests and re-arms for the earliest remaining deadline', async () => {
    const { table, start } = makeTable();
    const long = start('a', { timeout: 5000 });
    const short = start('b', { timeout: 1000 });
    const medium = start('c', { timeout: 3000 });
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(((await short.outcome) as { error: Error }).error).toBeInstanceOf(RequestTimeoutError);
    expect(table.size).toBe(2);
    await vi.advanceTimersByTimeAsync(2000);
    expect(((await medium.outcome) as { error: Error }).error).toBeInstanceOf(RequestTimeoutError);
    table.resolve(long.record.id, {});
    expect(await long.outcome).toEqual({ value: {} });
  });

  it('fail() settles one record with a local error and ignores already-settled records', async () => {
    const { table, start } = makeTable();
    const { record, outcome } = start();
    const failure = new Error('send failed');
    table.fail(record, failure);
    table.fail(record, new Error('again'));
    expect(await outcome).toEqual({ error: failure });
  });

  it('gives every request its own id', () => {
    const { start } = makeTable();
    const ids = new Set(Array.from({ length: 50 }, () => start().record.id));
    expect(ids.size).toBe(50);
  });
});

describe('a request with a completion', () => {
  const completion = {
    complete: (result: Record<string, unknown>) => {
      if (result.broken) throw new Error('broken result');
      return result.later ? Promise.resolve({ completed: 'later' }) : { completed: result.value };
    },
    recover: (error: Error) =>
      error instanceof McpError && error.code === -32022
        ? Promise.resolve({ recovered: error.message })
        : Promise.reject(error),
  };

  function startCompleted() {
    const made = makeTable();
    const { record, outcome } = made.start();
    record.completion = completion;
    return { ...made, record, outcome };
  }

  it('resolves with what the completion makes of the result', async () => {
    const { table, record, outcome } = startCompleted();
    table.resolve(record.id, { value: 7 });
    expect(await outcome).toEqual({ value: { completed: 7 } });
  });

  it('resolves with the promise the completion returns, once it settles', async () => {
    const { table, record, outcome } = startCompleted();
    table.resolve(record.id, { later: true });
    expect(await outcome).toEqual({ value: { completed: 'later' } });
  });

  it('rejects with what the completion throws', async () => {
    const { table, record, outcome } = startCompleted();
    table.resolve(record.id, { broken: true });
    expect(((await outcome) as { error: Error }).error.message).toBe('broken result');
    expect(table.size).toBe(0);
  });

  it('hands an error response to the completion, which may recover from it', async () => {
    const { table, record, outcome } = startCompleted();
    table.reject(record.id, { code: -32022, message: 'other version' });
    expect(await outcome).toEqual({ value: { recovered: 'other version' } });
  });

  it('hands local failures (a timeout) to the completion too, which may pass them on', async () => {
    const { record, outcome } = startCompleted();
    vi.advanceTimersByTime(60_001);
    expect(((await outcome) as { error: Error }).error).toBeInstanceOf(RequestTimeoutError);
    expect(record.completion).toBe(completion);
  });
});
