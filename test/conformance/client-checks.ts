/**
 * One client scenario of the conformance suite per `it`: every check it runs passes (no failure, no warning),
 * exactly `passes` of them, the client exits 0, and its stderr is empty or says what `refusals` expects (the
 * scenarios where refusing is the pass).
 */
import { expect, it } from 'vitest';
import {
  conformanceClientCommand,
  explainClientRun,
  runClientScenario,
  type ScenarioResult,
  type SpecVersion,
} from './run-suite';

export function passesEveryCheck(
  requirements: SpecVersion | undefined,
  expected: Readonly<Record<string, number>>,
  results: ScenarioResult[],
  refusals: Readonly<Record<string, RegExp>> = {},
): void {
  it.each(Object.entries(expected))(
    '%s: %i checks pass, none fails or warns',
    async (scenario, passes) => {
      const command = await conformanceClientCommand();
      const run = await runClientScenario(command, scenario, requirements ? { requirements } : {});
      results.push(run.result);
      expect({ failed: run.result.failed, warnings: run.result.warnings }, explainClientRun(run)).toEqual({
        failed: 0,
        warnings: 0,
      });
      expect(run.result.passed, explainClientRun(run)).toBe(passes);
      // The verdict also counts the client's exit code and a timeout.
      expect(run.exitCode, explainClientRun(run)).toBe(0);
      const refusal = refusals[scenario];
      if (refusal) expect(run.clientStderr).toMatch(refusal);
      else expect(run.clientStderr).toBe('');
    },
    50_000,
  );
}
