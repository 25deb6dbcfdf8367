/**
 * A dual-era server on a duplex connection (in memory, JSON text as stdio reads it) under 2026-07-28
 * traffic: a probe or refused requests first (the era must not latch), the latching request, then modern
 * requests well formed and mutated part by part, handshake-era requests, cancellations, notifications,
 * garbage, retries of input rounds and list changes. For every case: each request answered exactly once with
 * its id (never when cancelled), with the ladder's code or a result carrying `resultType`, every message
 * valid against the 2026-07-28 schema, the server up, and nothing left after (see modern-duplex-harness.ts).
 * Also run by `npm run fuzz -- --cases N --seed S [--only modern-duplex]`.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fuzzCases, fuzzParameters, fuzzTimeout } from './config';
import { duplexCase } from './modern-arbitraries';
import { runDuplexCase } from './modern-duplex-harness';
import { watchProcessFaults, type ProcessFaults } from './process-faults';

const CASES = 400;
const MAX_BODY = 24;

/** Active timers of this process (vitest's own included): compared before and after. */
const activeTimers = () => process.getActiveResourcesInfo().filter((kind) => kind === 'Timeout').length;

let faults: ProcessFaults;
beforeAll(() => void (faults = watchProcessFaults()));
afterAll(() => faults.stop());

describe('fuzz: a duplex server, 2026-07-28 traffic', () => {
  it(
    `answers every request of ${fuzzCases(CASES)} connections of up to ${MAX_BODY} items as the revision says, and leaves nothing behind`,
    async () => {
      const timersBefore = activeTimers();
      await fc.assert(
        fc.asyncProperty(duplexCase(MAX_BODY), (testCase) => runDuplexCase(testCase)),
        fuzzParameters('server duplex modern', CASES),
      );
      expect(activeTimers(), 'timers of this process').toBeLessThanOrEqual(timersBefore);
      expect(faults.seen.splice(0), 'nothing escaped to the process').toEqual([]);
    },
    fuzzTimeout(60_000, CASES),
  );
});
