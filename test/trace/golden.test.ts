/**
 * Golden traces: a short session on a fake clock, recorded from the runtime's trace stream through the
 * NDJSON and pretty sinks, compared with the stored expectation in test/fixtures/traces/. They double as
 * documentation of what flows in a session. After an intended change, refresh them with `vitest -u`.
 */
import { map } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Runtime } from '../../lib/core/runtime';
import { Server } from '../../lib/server/server';
import { createNdjsonTraceSink } from '../../lib/trace/sinks/ndjson';
import { createPrettyTraceSink } from '../../lib/trace/sinks/pretty';
import type { TraceEvent } from '../../lib/trace/types';
import { fakeClock, openPair, runGoldenSession, traceServer } from '../fixtures/traces/session';

describe('golden traces', () => {
  it('records a short session the same way every time, through both sinks', async () => {
    const clock = fakeClock();
    const runtime = new Runtime({ clock });
    const ndjson: string[] = [];
    const pretty: string[] = [];
    // Connection ids come from a process-wide counter: name them by role (one client, one server here).
    const named = runtime.trace$.pipe(
      map((event): TraceEvent => ({ ...event, connection: event.role ?? event.connection })),
    );
    const ndjsonSink = createNdjsonTraceSink((line) => ndjson.push(line));
    const prettySink = createPrettyTraceSink((line) => pretty.push(line), { maxPayload: 100 });
    const subscriptions = [named.subscribe(ndjsonSink), named.subscribe(prettySink)];

    const pair = await openPair(new Server(traceServer(clock)), runtime, runtime, {
      client: { clock },
      server: { clock },
    });
    await runGoldenSession(pair, clock);
    for (const subscription of subscriptions) subscription.unsubscribe();
    await Promise.all([ndjsonSink.close(), prettySink.close()]);

    expect(ndjson.every((line) => typeof JSON.parse(line) === 'object')).toBe(true);
    await expect(`${ndjson.join('\n')}\n`).toMatchFileSnapshot('../fixtures/traces/session.ndjson');
    await expect(`${pretty.join('\n')}\n`).toMatchFileSnapshot('../fixtures/traces/session.txt');
  });
});
