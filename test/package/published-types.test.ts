/**
 * The published package, checked the way a user meets it: built and packed as test/package/packed-package.ts
 * says, extracted into the small consumer projects of test/fixtures/consumer/, type-checked there with `strict`
 * and `skipLibCheck: false` under each module resolution (node16, nodenext, bundler, node10), and run: every
 * entry imported and required by name, and a Client connected to a Server in memory, on this Node and on the
 * oldest Node that package.json's `engines` admits (a dev dependency, run by path).
 *
 * The runtime-neutral consumer lists no Node typings, so the entries it imports must type-check without them;
 * the CommonJS consumer (a package without `"type": "module"`) requires every entry from a CommonJS file and
 * imports every entry from an ES module beside it.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import buildConfig from '../../tsup.config';
import { reachesNode } from '../helpers/import-graph';
import { buildAndPack, installInto, pkg, ROOT, type PackedPackage } from './packed-package';

const run = promisify(execFile);
const FIXTURES = join(ROOT, 'test/fixtures/consumer');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const OLDEST_NODE = join(ROOT, 'node_modules/node-oldest-supported/bin/node');
const PROJECTS = ['neutral', 'node', 'commonjs'];
/** The package's entries as package.json exports them: `.` and each subpath. */
const EXPORTED = Object.keys(pkg.exports).filter((key) => key !== './package.json');

// Generous: on a busy two-core machine the declaration build alone took 40 s, and each check up to 12 s.
const BUILD_TIMEOUT_MS = 240_000;
const CHECK_TIMEOUT_MS = 90_000;

let workDir: string;
let packed: PackedPackage;

/**
 * `tsc -p` in a consumer project; resolves with tsc's exit code and its diagnostics. TypeScript's own
 * `lib.*.d.ts` are not checked (`--skipDefaultLibCheck`): they are not ours, and checking them tripled the time.
 */
async function typeCheck(project: string, tsconfig: string): Promise<{ code: number; diagnostics: string }> {
  const cwd = join(workDir, 'consumer', project);
  const args = [TSC, '-p', tsconfig, '--pretty', 'false', '--skipDefaultLibCheck'];
  try {
    await run(process.execPath, args, { cwd, timeout: CHECK_TIMEOUT_MS });
    return { code: 0, diagnostics: '' };
  } catch (failure) {
    const { code, stdout, stderr } = failure as { code?: number; stdout?: string; stderr?: string };
    return { code: code ?? -1, diagnostics: `${stdout ?? ''}${stderr ?? ''}` };
  }
}

/** The `mcp-switchboard…` specifiers that the sources of a consumer project (or those of one file) import or require. */
function importedSubpaths(project: string, file?: string): Set<string> {
  const found = new Set<string>();
  const dir = join(FIXTURES, project, 'src');
  for (const name of file ? [file] : readdirSync(dir)) {
    const source = readFileSync(join(dir, name), 'utf8');
    for (const match of source.matchAll(/(?:from|require\()\s*'(mcp-switchboard(?:\/[^']+)?)'/g)) {
      found.add(match[1] === pkg.name ? '.' : `.${match[1]!.slice(pkg.name.length)}`);
    }
  }
  return found;
}

/** test/dist-smoke.mjs, run by `node` inside the CommonJS consumer: it loads the package by name. */
async function smoke(node: string): Promise<string> {
  const cwd = join(workDir, 'consumer', 'commonjs');
  return (await run(node, ['dist-smoke.mjs'], { cwd, timeout: CHECK_TIMEOUT_MS })).stdout;
}

describe('the published package', () => {
  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'switchboard-package-'));
    packed = await buildAndPack(workDir);
    cpSync(FIXTURES, join(workDir, 'consumer'), { recursive: true });
    for (const project of PROJECTS) await installInto(join(workDir, 'consumer', project), packed.tarball);
    cpSync(join(ROOT, 'test/dist-smoke.mjs'), join(workDir, 'consumer/commonjs/dist-smoke.mjs'));
  }, BUILD_TIMEOUT_MS);

  afterAll(() => {
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it('ships the code, its declarations, package.json, README and LICENSE: no source maps, no declarations of the command line', () => {
    const unexpected = packed.files.filter(
      (path) => !/^(package\.json|README\.md|LICENSE|dist\/.+\.(js|cjs|d\.ts|d\.cts))$/.test(path),
    );
    expect(unexpected).toEqual([]);
    expect(packed.files).toContain('LICENSE');
    expect(packed.files.filter((path) => path.startsWith('dist/cli.d.'))).toEqual([]);
  });

  it('has the runtime-neutral consumer import exactly the entries that reach no Node module', () => {
    const neutral = EXPORTED.filter(
      (exported) => !reachesNode(join(ROOT, buildConfig.entry[exported === '.' ? 'index' : exported.slice(2)]!)),
    );
    expect([...importedSubpaths('neutral')].sort()).toEqual(neutral.sort());
  });

  it('has the consumers import every exported entry, and the CommonJS one require and import each', () => {
    const imported = new Set([...importedSubpaths('neutral'), ...importedSubpaths('node')]);
    expect(EXPORTED.filter((exported) => !imported.has(exported))).toEqual([]);
    expect([...importedSubpaths('commonjs', 'require.ts')].sort()).toEqual([...EXPORTED].sort());
    expect([...importedSubpaths('commonjs', 'import.mts')].sort()).toEqual([...EXPORTED].sort());
  });

  // The CommonJS project's configurations also take in the Node project's sources (an ES package, with a
  // CommonJS file): one program per resolution mode checks both.
  it.each([
    { project: 'neutral', tsconfig: 'tsconfig.node16.json', label: 'runtime-neutral entries, no Node typings, node16' },
    {
      project: 'neutral',
      tsconfig: 'tsconfig.bundler.json',
      label: 'runtime-neutral entries, no Node typings, bundler',
    },
    { project: 'neutral', tsconfig: 'tsconfig.internals.json', label: 'internal members left out of the declarations' },
    { project: 'commonjs', tsconfig: 'tsconfig.node16.json', label: 'every entry, ES and CommonJS consumers, node16' },
    {
      project: 'commonjs',
      tsconfig: 'tsconfig.nodenext.json',
      label: 'every entry, ES and CommonJS consumers, nodenext',
    },
    {
      project: 'commonjs',
      tsconfig: 'tsconfig.bundler.json',
      label: 'every entry, ES and CommonJS consumers, bundler',
    },
    { project: 'commonjs', tsconfig: 'tsconfig.node10.json', label: 'every entry, node10 (typesVersions)' },
  ])(
    'type-checks in a strict consumer: $label',
    async ({ project, tsconfig }) => {
      expect(await typeCheck(project, tsconfig)).toEqual({ code: 0, diagnostics: '' });
    },
    CHECK_TIMEOUT_MS,
  );

  it(
    "carries the trace viewer in its command line: `trace view` writes the whole page with the package's files alone",
    async () => {
      const project = join(workDir, 'consumer', 'node');
      const cli = join(project, 'node_modules', pkg.name, 'dist', 'cli.js');
      const event = {
        time: 1,
        connection: 'c1',
        role: 'client',
        kind: 'request',
        direction: 'out',
        method: 'ping',
        id: 0,
      };
      writeFileSync(join(project, 'trace.ndjson'), `${JSON.stringify(event)}\n`);
      await run(process.execPath, [cli, 'trace', 'view', 'trace.ndjson', '--out', 'page.html'], {
        cwd: project,
        timeout: CHECK_TIMEOUT_MS,
      });
      const page = readFileSync(join(project, 'page.html'), 'utf8');
      expect(page).toContain('<title>switchboard trace</title>');
      expect(page).toContain('"method":"ping"');
      // Self-contained: its script and styles are inlined, nothing is fetched.
      expect(page).not.toMatch(/<script[^>]+src=|<link[^>]+href=|(src|href)=["']?https?:|url\(["']?https?:|@import/);
    },
    CHECK_TIMEOUT_MS,
  );

  it(
    'loads every entry (import and require) and calls a tool in memory on this Node',
    async () => {
      const lines = [`esm build ok: ${EXPORTED.length} entries`, `cjs build ok: ${EXPORTED.length} entries`];
      expect(await smoke(process.execPath)).toBe(
        lines.map((line) => `${line} on Node ${process.versions.node}\n`).join(''),
      );
    },
    CHECK_TIMEOUT_MS,
  );

  it(
    'does so on the oldest Node that `engines` admits, where CommonJS cannot require an ES module',
    async () => {
      const oldest = /^>=(\d+\.\d+\.\d+)$/.exec(pkg.engines.node)![1]!;
      const lines = [`esm build ok: ${EXPORTED.length} entries`, `cjs build ok: ${EXPORTED.length} entries`];
      expect(await smoke(OLDEST_NODE)).toBe(lines.map((line) => `${line} on Node ${oldest}\n`).join(''));
    },
    CHECK_TIMEOUT_MS,
  );
});
