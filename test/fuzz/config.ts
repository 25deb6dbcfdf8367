/**
 * How big and which seed: one definition serves `npm test` (small, fixed seed) and long runs
 * (`npm run fuzz -- --cases N --seed S`, which sets `FUZZ_CASES` and `FUZZ_SEED` for these same tests).
 */
import type { Parameters } from 'fast-check';

/** The seed of `npm test`: fixed, so a failure there reproduces as is. */
export const DEFAULT_SEED = 20_261_125;

function envInteger(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value)) throw new Error(`${name} must be an integer, got ${JSON.stringify(raw)}`);
  return value;
}

/** `FUZZ_CASES` when set (a long run), else the property's own default for `npm test`. */
export function fuzzCases(defaultCases: number): number {
  return envInteger('FUZZ_CASES') ?? defaultCases;
}

export function fuzzSeed(): number {
  return envInteger('FUZZ_SEED') ?? DEFAULT_SEED;
}

/** Whether this is a long run (`npm run fuzz`): tests scale their time budgets with it. */
export function isLongRun(): boolean {
  return envInteger('FUZZ_CASES') !== undefined;
}

/**
 * fast-check parameters for one property. Each property gets its own seed derived from the run's seed and
 * its name, so adding a property does not change what the others generate.
 */
export function fuzzParameters<T>(name: string, defaultCases: number, extra: Parameters<T> = {}): Parameters<T> {
  let hash = fuzzSeed() | 0;
  for (let i = 0; i < name.length; i++) hash = (Math.imul(hash, 31) + name.charCodeAt(i)) | 0;
  return { numRuns: fuzzCases(defaultCases), seed: hash, verbose: 0, ...extra };
}

/** A test's time budget: `base` in `npm test`, scaled with the number of cases in a long run. */
export function fuzzTimeout(base: number, defaultCases: number): number {
  return Math.max(base, Math.ceil((base * fuzzCases(defaultCases)) / defaultCases));
}
