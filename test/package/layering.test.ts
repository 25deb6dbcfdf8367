/**
 * The layering rule of `.dependency-cruiser.cjs` as a failing check: no module imports from a layer above
 * its own, and no import cycle, type-only imports included. The same rule set also cruises a small fixture
 * tree that breaks it on purpose, so a rule that stopped reporting anything would fail here too.
 */
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseOptions, type ICruiseResult, type IViolation } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { beforeAll, describe, expect, it } from 'vitest';
import { fixturePath } from '../helpers/paths';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = fixturePath('layering/');
const TSCONFIG = `${ROOT}tsconfig.json`;
/** A cruise takes about 2 s alone; the margin is for a machine busy with the rest of the suite. */
const CRUISE_TIMEOUT_MS = 60_000;

/** The violations of cruising `roots` under `baseDir` with the project's rule set, one line each. */
async function violationsOf(baseDir: string, roots: string[]): Promise<string[]> {
  const options: ICruiseOptions = {
    ...(await extractDepcruiseOptions(`${ROOT}.dependency-cruiser.cjs`)),
    baseDir,
    tsConfig: { fileName: TSCONFIG },
  };
  const { output } = await cruise(roots, options, {}, { tsConfig: extractTSConfig(TSCONFIG) });
  const result = (typeof output === 'string' ? JSON.parse(output) : output) as ICruiseResult;
  return (result.summary.violations ?? []).map(describeViolation).sort();
}

/** `rule: from → to`, and the whole loop for a cycle. */
function describeViolation(violation: IViolation): string {
  const path = violation.cycle
    ? [violation.from, ...violation.cycle.map((step) => step.name)]
    : [violation.from, violation.to];
  return `${violation.rule.name}: ${path.join(' → ')}`;
}

describe('the layer order and no cycles (.dependency-cruiser.cjs)', () => {
  it(
    'holds for lib/, machines/ and transports/',
    async () => {
      expect(await violationsOf(ROOT, ['lib', 'machines', 'transports'])).toEqual([]);
    },
    CRUISE_TIMEOUT_MS,
  );

  describe('on a fixture tree that breaks it on purpose', () => {
    let reported: string[];
    beforeAll(async () => {
      reported = await violationsOf(FIXTURE, ['lib']);
    }, CRUISE_TIMEOUT_MS);

    it('reports the import from a layer above', () => {
      expect(reported).toContain('core-imports-upward: lib/core/reaches-up.ts → lib/server/catalog.ts');
    });

    it('reports the type-only import cycle', () => {
      expect(reported).toContain('no-circular: lib/server/catalog.ts → lib/server/entry.ts → lib/server/catalog.ts');
    });

    it('reports nothing else: the downward import lib/server → lib/core is allowed', () => {
      expect(reported).toEqual([
        'core-imports-upward: lib/core/reaches-up.ts → lib/server/catalog.ts',
        'no-circular: lib/server/catalog.ts → lib/server/entry.ts → lib/server/catalog.ts',
      ]);
    });
  });
});
