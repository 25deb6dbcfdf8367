/**
 * The README (and the docs it links) shows the public API: every name its code examples import from the package must be exported by
 * the entry they import it from, and every error class it names must be exported by some entry (a user has
 * to reach a class to test `instanceof` on it). The entries' exports are read from their sources.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { entryExports } from '../helpers/entry-exports';

// The README and the documents it links (docs/): what they show of the API must be there.
const README = [
  '../../README.md',
  '../../docs/api.md',
  '../../docs/cli.md',
  '../../docs/runtimes.md',
  '../../docs/design.md',
  '../../docs/operations.md',
  '../../docs/benchmarks.md',
]
  .map((path) => readFileSync(new URL(path, import.meta.url), 'utf8'))
  .join('\n');
const PACKAGE = 'mcp-switchboard';
/** Error classes the README names that belong to a dependency: jose's. */
const FOREIGN_ERRORS = new Set(['JOSEError']);
// Reading every entry's exports builds one TypeScript program: a few seconds alone, more on a busy machine.
const PROGRAM_TIMEOUT_MS = 90_000;

/** The names a README code block imports from the package: `{ specifier, name }`, `A as B` read as `A`. */
function readmeImports(): { specifier: string; name: string }[] {
  const blocks = [...README.matchAll(/^```(?:ts|typescript|js|javascript)\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
  const imports = blocks.flatMap((block) => [
    ...block.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+'([^']+)'/g),
  ]);
  return imports
    .filter(([, , specifier]) => specifier === PACKAGE || specifier!.startsWith(`${PACKAGE}/`))
    .flatMap(([, names, specifier]) =>
      names!
        .split(',')
        .map(
          (name) =>
            name
              .trim()
              .replace(/^type\s+/, '')
              .split(/\s+as\s+/)[0]!,
        )
        .filter((name) => name !== '')
        .map((name) => ({ specifier: specifier!, name })),
    );
}

let exported: Map<string, Set<string>>;

beforeAll(() => {
  exported = entryExports();
}, PROGRAM_TIMEOUT_MS);

describe('the README against the package entries', () => {
  it('imports in its examples only names the entry exports', () => {
    const imports = readmeImports();
    expect(imports.length).toBeGreaterThan(20);
    const missing = imports
      .filter(({ specifier, name }) => !exported.get(specifier)?.has(name))
      .map(({ specifier, name }) => `${name} from '${specifier}'`);
    expect(missing).toEqual([]);
  });

  it('names only error classes some entry exports', () => {
    const named = new Set([...README.matchAll(/`([A-Z][A-Za-z]*Error)`/g)].map((m) => m[1]!));
    for (const foreign of FOREIGN_ERRORS) named.delete(foreign);
    expect(named.size).toBeGreaterThan(15);
    const everywhere = new Set([...exported.values()].flatMap((names) => [...names]));
    expect([...named].filter((name) => !everywhere.has(name))).toEqual([]);
  });
});
