/**
 * The names each package entry exports, read from its source with the TypeScript checker (values and types,
 * re-exports followed), keyed by the package.json subpath (`mcp-switchboard`, `mcp-switchboard/protocol`).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import buildConfig from '../../tsup.config';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Every entry of package.json `exports` with the names it exports. */
export function entryExports(): Map<string, Set<string>> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const sources: Record<string, string> = buildConfig.entry;
  const entries = Object.keys(pkg.exports)
    .filter((subpath) => subpath !== './package.json')
    .map((subpath) => {
      const source = sources[subpath === '.' ? 'index' : subpath.slice(2)];
      if (source === undefined) throw new Error(`package.json exports ${subpath}, which tsup.config.ts does not build`);
      return { specifier: subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`, file: join(ROOT, source) };
    });
  const program = ts.createProgram(
    entries.map((entry) => entry.file),
    {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      noEmit: true,
      skipLibCheck: true,
      types: ['node'],
    },
  );
  const checker = program.getTypeChecker();
  const result = new Map<string, Set<string>>();
  for (const entry of entries) {
    const symbol = checker.getSymbolAtLocation(program.getSourceFile(entry.file)!)!;
    result.set(entry.specifier, new Set(checker.getExportsOfModule(symbol).map((exported) => exported.name)));
  }
  return result;
}
