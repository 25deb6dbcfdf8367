import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, resolve } from 'node:path';

/** Node's built-in modules, with and without the `node:` prefix. */
export const NODE_BUILTINS: ReadonlySet<string> = new Set([
  ...builtinModules,
  ...builtinModules.map((name) => `node:${name}`),
]);

function resolveModule(path: string): string {
  const found = [`${path}.ts`, `${path}/index.ts`].find((candidate) => existsSync(candidate));
  if (found) return found;
  throw new Error(`Cannot resolve ${path}`);
}

/** Every source module reachable from `entry` (a path) through static imports, and the bare specifiers they import. */
export function importGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const source = readFileSync(file, 'utf8');
    for (const match of source.matchAll(/^(?:import|export)\s[^;]*?from\s+'([^']+)'/gms)) {
      const specifier = match[1]!;
      if (specifier.startsWith('.')) visit(resolveModule(resolve(dirname(file), specifier)));
      else packages.add(specifier);
    }
  };
  visit(entry);
  return { files, packages };
}

/** Dependencies that are native Node add-ons: an entry importing one is Node-only too. */
const NATIVE_PACKAGES: ReadonlySet<string> = new Set(['lmdb']);

/** Whether the module at `entry` reaches a Node built-in module (or a native add-on) through its static imports. */
export function reachesNode(entry: string): boolean {
  return [...importGraph(entry).packages].some((name) => NODE_BUILTINS.has(name) || NATIVE_PACKAGES.has(name));
}
