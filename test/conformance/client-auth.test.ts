/**
 * Every `auth/*` client scenario of the official conformance suite (0.2.0-alpha.12) against our OAuth client
 * (lib/auth/client, inside our Streamable HTTP client transport; the conformance client gives it a headless
 * interaction, since the mock authorization servers approve at once): the 2025-11-25 and 2026-07-28
 * requirement sets at their wire, the two 2025-03-26 fallback scenarios, and the extension scenarios
 * (client credentials, workload identity, enterprise-managed authorization, DPoP). Each passes every check
 * it runs, with no failure and no warning; the scenarios where the right outcome is a refusal (a resource or
 * issuer that does not match, a scope that never comes) end with the client's clear error on stderr, which
 * the suite allows there. The pass counts pin how many checks ran: a flow that silently skipped a step
 * would pass fewer.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { passesEveryCheck } from './client-checks';
import { formatTotals, listClientScenarios, totalsOf, type ScenarioResult } from './run-suite';

/** Scenario -> the checks it passes at the 2025-11-25 wire. */
const PASSES_2025: Readonly<Record<string, number>> = {
  'auth/metadata-default': 19,
  'auth/metadata-var1': 19,
  'auth/metadata-var2': 19,
  'auth/metadata-var3': 19,
  'auth/basic-cimd': 14,
  'auth/scope-from-www-authenticate': 15,
  'auth/scope-from-scopes-supported': 15,
  'auth/scope-omitted-when-undefined': 15,
  'auth/scope-step-up': 23,
  'auth/scope-retry-limit': 26,
  'auth/token-endpoint-auth-basic': 20,
  'auth/token-endpoint-auth-post': 20,
  'auth/token-endpoint-auth-none': 20,
  'auth/pre-registration': 14,
};

/** Scenario -> the checks it passes at the 2026-07-28 wire (stateless: the era probe meets the 401). */
const PASSES_2026: Readonly<Record<string, number>> = {
  'auth/metadata-default': 18,
  'auth/metadata-var1': 18,
  'auth/metadata-var2': 18,
  'auth/metadata-var3': 18,
  'auth/basic-cimd': 12,
  'auth/scope-from-www-authenticate': 14,
  'auth/scope-from-scopes-supported': 14,
  'auth/scope-omitted-when-undefined': 14,
  'auth/scope-step-up': 25,
  'auth/scope-retry-limit': 27,
  'auth/token-endpoint-auth-basic': 19,
  'auth/token-endpoint-auth-post': 19,
  'auth/token-endpoint-auth-none': 19,
  'auth/pre-registration': 12,
  'auth/resource-mismatch': 2,
  'auth/offline-access-scope': 12,
  'auth/offline-access-not-supported': 14,
  'auth/authorization-server-migration': 27,
  'auth/iss-supported': 14,
  'auth/iss-not-advertised': 14,
  'auth/iss-supported-missing': 8,
  'auth/iss-wrong-issuer': 8,
  'auth/iss-unexpected': 8,
  'auth/iss-normalized': 8,
  'auth/metadata-issuer-mismatch': 3,
};

/** The 2025-03-26 revision's fallbacks: no resource metadata; no metadata at all. */
const PASSES_2025_03: Readonly<Record<string, number>> = {
  'auth/2025-03-26-oauth-metadata-backcompat': 13,
  'auth/2025-03-26-oauth-endpoint-fallback': 8,
};

const PASSES_EXTENSIONS: Readonly<Record<string, number>> = {
  'auth/client-credentials-jwt': 9,
  'auth/client-credentials-basic': 9,
  'auth/enterprise-managed-authorization': 10,
  'auth/dpop': 12,
  'auth/dpop-nonce': 14,
  'auth/wif-jwt-bearer': 9,
};

/** Where refusing is the pass: what the client must say on its way out. */
const REFUSALS: Readonly<Record<string, RegExp>> = {
  'auth/scope-retry-limit': /HTTP 403 Forbidden: .*insufficient_scope/,
  'auth/resource-mismatch': /is for https:\/\/evil\.example\.com\/mcp, not for .*: refusing to authorize/,
  'auth/iss-supported-missing': /authorization response was refused: response parameter "iss" \(issuer\) missing/,
  'auth/iss-wrong-issuer': /authorization response was refused: unexpected "iss"/,
  'auth/iss-unexpected': /authorization response was refused: unexpected "iss"/,
  'auth/iss-normalized': /authorization response was refused: unexpected "iss"/,
  'auth/metadata-issuer-mismatch':
    /authorization server metadata at .* cannot be used: .*"issuer" property does not match/,
};

const results: ScenarioResult[] = [];

afterAll(() => {
  if (results.length) console.log(formatTotals(totalsOf(results), 'client auth scenarios'));
});

describe('the auth scenarios of the 2025-11-25 requirement set', () => {
  it('are the ones this file runs', async () => {
    const scenarios = (await listClientScenarios('2025-11-25')).filter((name) => name.startsWith('auth/'));
    expect([...scenarios].sort()).toEqual(Object.keys(PASSES_2025).sort());
  });

  passesEveryCheck('2025-11-25', PASSES_2025, results, REFUSALS);
});

describe('the auth scenarios of the 2026-07-28 requirement set', () => {
  it('are the ones this file runs', async () => {
    const scenarios = (await listClientScenarios('2026-07-28')).filter((name) => name.startsWith('auth/'));
    expect([...scenarios].sort()).toEqual(Object.keys(PASSES_2026).sort());
  });

  passesEveryCheck('2026-07-28', PASSES_2026, results, REFUSALS);
});

describe('the 2025-03-26 fallbacks', () => {
  passesEveryCheck('2025-03-26', PASSES_2025_03, results, REFUSALS);
});

describe('the authorization extensions', () => {
  passesEveryCheck(undefined, PASSES_EXTENSIONS, results, REFUSALS);
});
