/**
 * The trace tap is free while nobody subscribes: the router builds no trace event (the builders in
 * lib/trace/event.ts are counted here), the redactor never runs and XState inspection stays detached.
 * Counted, not timed: the benchmark (`npm run bench`, the trace-tap table) has the figures.
 */
import { describe, expect, it, vi } from 'vitest';
import { Runtime } from '../../lib/core/runtime';
import { Server } from '../../lib/server/server';
import { openPair, runGoldenSession, fakeClock, traceServer } from '../fixtures/traces/session';

const built = vi.hoisted(() => ({ messages: 0, lifecycles: 0 }));

vi.mock('../../lib/trace/event', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../lib/trace/event')>();
  return {
    ...actual,
    messageTraceEvent: (...args: Parameters<typeof actual.messageTraceEvent>) => {
      built.messages++;
      return actual.messageTraceEvent(...args);
    },
    connectionLifecycleEvent: (...args: Parameters<typeof actual.connectionLifecycleEvent>) => {
      built.lifecycles++;
      return actual.connectionLifecycleEvent(...args);
    },
    actorLifecycleEvent: (...args: Parameters<typeof actual.actorLifecycleEvent>) => {
      built.lifecycles++;
      return actual.actorLifecycleEvent(...args);
    },
  };
});

async function session(runtime: Runtime): Promise<void> {
  const clock = fakeClock();
  const pair = await openPair(new Server(traceServer(clock)), runtime, runtime, { validate: false });
  await runGoldenSession(pair, clock);
}

describe('the cost of the trace tap', () => {
  /** A session on a runtime nobody listens to: its redactor and the system's inspect, spied on. */
  async function unwatchedSession() {
    const redact = vi.fn((message: unknown) => message);
    const runtime = new Runtime({ redact });
    const inspect = vi.spyOn(runtime.root.system, 'inspect');
    built.messages = built.lifecycles = 0;
    await session(runtime);
    return { redact, inspect };
  }

  it('builds no trace event while nobody subscribes', async () => {
    await unwatchedSession();
    expect(built).toEqual({ messages: 0, lifecycles: 0 });
  });

  it('runs no redactor while nobody subscribes', async () => {
    expect((await unwatchedSession()).redact).not.toHaveBeenCalled();
  });

  it('attaches no inspection while nobody subscribes', async () => {
    expect((await unwatchedSession()).inspect).not.toHaveBeenCalled();
  });

  it('builds each event once for all subscribers, here and on the runtime', async () => {
    const redact = vi.fn((message: unknown) => message);
    const runtime = new Runtime({ redact });
    const seen = { runtime: 0, twice: 0 };
    runtime.trace$.subscribe(() => seen.runtime++);
    runtime.trace$.subscribe(() => seen.twice++);
    built.messages = built.lifecycles = 0;
    await session(runtime);
    expect(built.messages).toBeGreaterThan(20);
    expect(built.lifecycles).toBe(6); // client: 4 changes, server: 2 (its handshake is one step)
    expect(seen.runtime).toBe(built.messages + built.lifecycles);
    expect(seen.twice).toBe(seen.runtime);
    expect(redact).toHaveBeenCalledTimes(
      // every message event but the suppressed reply, which has no message
      built.messages - 1,
    );
  });

  it('a subscriber on one connection does not make the other connections build events', async () => {
    const runtime = new Runtime();
    const server = new Server(traceServer());
    const watched = await openPair(server, runtime, runtime, { validate: false });
    const unwatched = await openPair(server, runtime, runtime, { validate: false });
    const events: unknown[] = [];
    watched.client.trace$.subscribe((event) => events.push(event));
    built.messages = built.lifecycles = 0;
    await unwatched.client.callTool('echo', { text: 'x' });
    await unwatched.client.close();
    expect(built).toEqual({ messages: 0, lifecycles: 0 });
    await watched.client.ping();
    expect(built.messages).toBe(2);
    expect(events).toHaveLength(2);
    await watched.client.close();
  });
});
