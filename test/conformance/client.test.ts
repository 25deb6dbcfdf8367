/**
 * The client half of the official MCP conformance suite (0.2.0-alpha.12): the suite spawns our conformance
 * client (client.ts: our Client over our Streamable HTTP client transport, era probe on, checking everything
 * it sends against its era's official schema) against each scenario's mock server, one scenario at a time
 * (the suite's parallel mode makes the timing checks of sse-retry flaky on two cores), at the wire of the
 * revision under test (`--spec-version`).
 *
 * - 2025-11-25: the four non-auth scenarios of that requirement set pass every check (the probe is refused
 *   by those handshake-era mocks and the client falls back to initialize).
 * - 2026-07-28: every non-auth scenario of that requirement set, and json-schema-2020-12-preservation
 *   (added after the release), pass every check.
 * - auth/*: client-auth.test.ts.
 *
 * The totals are printed at the end.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { passesEveryCheck } from './client-checks';
import { formatTotals, listClientScenarios, totalsOf, type ScenarioResult } from './run-suite';

/** Scenario -> the checks it passes at the 2025-11-25 wire (INFO records are not checks). */
const PASSES_2025: Readonly<Record<string, number>> = {
  initialize: 1,
  tools_call: 2,
  // One per field with a default: string, integer, number, enum, boolean.
  'elicitation-sep1034-client-defaults': 5,
  // Reconnected after the stream closed, at the server's retry interval, with Last-Event-ID.
  'sse-retry': 3,
};

/** Scenario -> the checks it passes at the 2026-07-28 wire. */
const PASSES_2026: Readonly<Record<string, number>> = {
  tools_call: 2,
  // Version header, envelope, client info, header = envelope, declared capabilities, the -32022 retry.
  'request-metadata': 6,
  'http-standard-headers': 9,
  'http-custom-headers': 18,
  'http-invalid-tool-headers': 12,
  'json-schema-ref-no-deref': 1,
  'json-schema-2020-12-preservation': 9,
  // State echoed byte for byte, a new id per retry, no state when none came, calls kept apart, no resultType = complete.
  'sep-2322-client-request-state': 5,
};

const results: ScenarioResult[] = [];

afterAll(() => {
  if (results.length) console.log(formatTotals(totalsOf(results), 'client, one scenario at a time'));
});

describe('the 2025-11-25 client scenarios against our client', () => {
  it('are the four this file runs', async () => {
    const scenarios = await listClientScenarios('2025-11-25');
    expect(scenarios.filter((scenario) => !scenario.startsWith('auth/'))).toEqual(Object.keys(PASSES_2025));
  });

  passesEveryCheck('2025-11-25', PASSES_2025, results);
});

describe('the 2026-07-28 client scenarios against our client', () => {
  it('are the ones this file runs (and the auth scenarios of client-auth.test.ts)', async () => {
    const scenarios = await listClientScenarios('2026-07-28');
    const required = scenarios.filter((scenario) => !scenario.startsWith('auth/'));
    const added = Object.keys(PASSES_2026).filter((scenario) => !required.includes(scenario));
    expect(added).toEqual(['json-schema-2020-12-preservation']); // added after the release, never scored
    expect([...required].sort()).toEqual(
      Object.keys(PASSES_2026)
        .filter((s) => !added.includes(s))
        .sort(),
    );
  });

  passesEveryCheck('2026-07-28', PASSES_2026, results);
});
