/**
 * Long fuzz runs: `npm run fuzz -- --cases N --seed S [--only server|http-server|client]`. Runs the fuzz
 * suites of `npm test` (test/fuzz/*.test.ts) with `FUZZ_CASES` and `FUZZ_SEED` set, so each property runs N
 * cases from seed S (time budgets scale with N). A failure prints its seed and counterexample; run again
 * with that seed to reproduce it.
 */
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '10000' },
    seed: { type: 'string', default: String(Date.now() % 2 ** 31) },
    only: { type: 'string' },
  },
});
for (const name of ['cases', 'seed'] as const) {
  if (!Number.isSafeInteger(Number(values[name]))) {
    process.stderr.write(`--${name} must be an integer, got ${values[name]}\n`);
    process.exit(2);
  }
}
const files = values.only ? [`test/fuzz/${values.only}.test.ts`] : ['test/fuzz/'];
process.stderr.write(`fuzz: ${values.cases} cases per property, seed ${values.seed}, ${files.join(' ')}\n`);
const vitest = spawn('npx', ['vitest', 'run', ...files], {
  stdio: 'inherit',
  env: { ...process.env, FUZZ_CASES: values.cases, FUZZ_SEED: values.seed },
});
vitest.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
