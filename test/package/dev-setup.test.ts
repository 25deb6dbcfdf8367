/**
 * This repository's own install, not a consumer's: dev dependencies that ship a Node binary (the conformance
 * suite's Node 22, the oldest supported Node) declare a `node` bin, and npm links node_modules/.bin/node to it,
 * which npm scripts and `npx` would then run instead of the Node you installed with. package.json's `prepare`
 * script (not an install script: a consumer never runs it) removes the link.
 *
 * Checked with real, offline `npm install`s of a small project that has this package's `prepare` script and a
 * local dev dependency declaring a `node` bin.
 */
import { execFile } from 'node:child_process';
import { cpSync, lstatSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { pkg, ROOT } from './packed-package';

const run = promisify(execFile);
const INSTALL_TIMEOUT_MS = 60_000;
const workDir = mkdtempSync(join(tmpdir(), 'switchboard-dev-setup-'));

function writeJson(path: string, value: unknown): void {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** Whether the project's node_modules/.bin/node exists (as a link or otherwise). */
function nodeBinLinked(project: string): boolean {
  try {
    lstatSync(join(project, 'node_modules/.bin/node'));
    return true;
  } catch {
    return false;
  }
}

describe('the dev setup', () => {
  afterAll(() => rmSync(workDir, { recursive: true, force: true }));

  it(
    'removes the node link a dev dependency makes, on `npm install`',
    async () => {
      const binary = join(workDir, 'node-binary');
      mkdirSync(join(binary, 'bin'), { recursive: true });
      // Another Node, as the real ones are: npm runs `prepare` with node_modules/.bin first on PATH, so on it.
      writeFileSync(join(binary, 'bin/node'), `#!/bin/sh\nexec '${process.execPath}' "$@"\n`, { mode: 0o755 });
      writeJson(join(binary, 'package.json'), { name: 'node-binary', version: '1.0.0', bin: { node: 'bin/node' } });

      const project = join(workDir, 'project');
      mkdirSync(join(project, 'scripts'), { recursive: true });
      cpSync(join(ROOT, 'scripts/unshadow-node.mjs'), join(project, 'scripts/unshadow-node.mjs'));
      writeJson(join(project, 'package.json'), {
        name: 'dev-setup',
        version: '1.0.0',
        private: true,
        scripts: { prepare: pkg.scripts.prepare },
        devDependencies: { 'node-binary': 'file:../node-binary' },
      });

      const install = ['install', '--offline', '--no-audit', '--no-fund'];
      await run('npm', [...install, '--ignore-scripts'], { cwd: project, timeout: INSTALL_TIMEOUT_MS });
      expect(nodeBinLinked(project)).toBe(true);
      await run('npm', install, { cwd: project, timeout: INSTALL_TIMEOUT_MS });
      expect(nodeBinLinked(project)).toBe(false);
    },
    INSTALL_TIMEOUT_MS * 2,
  );
});
