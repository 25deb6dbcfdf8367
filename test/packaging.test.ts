import { existsSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const NODE_ONLY = new Set([...builtinModules, ...builtinModules.map((name) => `node:${name}`)]);

function resolveModule(path: string): string {
  const found = [`${path}.ts`, `${path}/index.ts`].find((candidate) => existsSync(candidate));
  if (found) return found;
  throw new Error(`Cannot resolve ${path}`);
}

/** Every module reachable from `entry` through static imports, and the bare specifiers they import. */
function importGraph(entry: string): { files: Set<string>; packages: Set<string> } {
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
  visit(resolve(root, entry));
  return { files, packages };
}

describe('packaging', () => {
  it('keeps Node-only modules off the root entry', () => {
    const { files, packages } = importGraph('lib/index.ts');
    expect(files.size).toBeGreaterThan(20);
    expect([...packages].filter((name) => NODE_ONLY.has(name))).toEqual([]);
    expect([...packages].sort()).toEqual([
      'ajv',
      'ajv-formats',
      'ajv/dist/2019.js',
      'ajv/dist/2020.js',
      'eventemitter3',
      'rxjs',
      'xstate',
    ]);
  });

  it('builds every subpath export from an entry of the build', () => {
    const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8'));
    for (const subpath of Object.keys(pkg.exports).filter((key) => key !== './package.json')) {
      const name = subpath === '.' ? 'index' : subpath.slice(2);
      expect(existsSync(resolve(root, pkg.tsup.entry[name]))).toBe(true);
      expect(pkg.exports[subpath].import.default).toBe(`./dist/${name}.js`);
      expect(pkg.exports[subpath].require.default).toBe(`./dist/${name}.cjs`);
    }
  });

  it('keeps the SDK a development dependency only', () => {
    const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8'));
    expect(pkg.dependencies).not.toHaveProperty('@modelcontextprotocol/sdk');
    expect(pkg.devDependencies).toHaveProperty('@modelcontextprotocol/sdk');
  });
});
