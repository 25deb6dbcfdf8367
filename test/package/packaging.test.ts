import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import buildConfig from '../../tsup.config';
import { importGraph, NODE_BUILTINS } from '../helpers/import-graph';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const entries: Record<string, string> = buildConfig.entry;

describe('packaging', () => {
  it('keeps Node-only modules off the root entry', () => {
    const { files, packages } = importGraph(resolve(root, 'lib/index.ts'));
    expect(files.size).toBeGreaterThan(20);
    expect([...packages].filter((name) => NODE_BUILTINS.has(name))).toEqual([]);
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
      expect(existsSync(resolve(root, entries[name]!))).toBe(true);
      expect(pkg.exports[subpath].import.default).toBe(`./dist/${name}.js`);
      expect(pkg.exports[subpath].require.default).toBe(`./dist/${name}.cjs`);
    }
  });

  it('has one build configuration: tsup.config.ts, none in package.json', () => {
    const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8'));
    expect(pkg).not.toHaveProperty('tsup');
  });

  it('keeps the SDK a development dependency only', () => {
    const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8'));
    expect(pkg.dependencies).not.toHaveProperty('@modelcontextprotocol/sdk');
    expect(pkg.devDependencies).toHaveProperty('@modelcontextprotocol/sdk');
  });
});
