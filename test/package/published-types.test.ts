/**
 * The published types, checked the way a user meets them: the declarations are built with the package's own
 * tsup config (into a temporary folder: the repository's dist is left alone), packed with `npm pack` (so
 * package.json's `files` decides what ships), extracted into the small consumer projects of
 * test/fixtures/consumer/ and type-checked there with `strict` and `skipLibCheck: false`.
 *
 * No registry is involved: each consumer's node_modules holds the extracted tarball and symlinks into this
 * repository's install for the package's dependencies and for what the consumer's own package.json lists.
 * The runtime-neutral consumer lists no Node typings, so the root entry must type-check without them.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'tsup';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import buildConfig from '../../tsup.config';
import { reachesNode } from '../helpers/import-graph';

const run = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const FIXTURES = join(ROOT, 'test/fixtures/consumer');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
/** The package's entries as package.json exports them: `.` and each subpath. */
const EXPORTED = Object.keys(pkg.exports).filter((key) => key !== './package.json');

// Generous: on a busy two-core machine the declaration build alone took 40 s, and each check up to 12 s.
const BUILD_TIMEOUT_MS = 180_000;
const CHECK_TIMEOUT_MS = 90_000;

let workDir: string;

/** The package as `npm pack` ships it, declarations only (`dts.only`): all a type check reads. */
async function packDeclarations(): Promise<string> {
  const stage = join(workDir, 'package');
  mkdirSync(stage);
  cpSync(join(ROOT, 'package.json'), join(stage, 'package.json'));
  const entry = Object.fromEntries(Object.entries(buildConfig.entry).map(([name, path]) => [name, join(ROOT, path)]));
  await build({
    ...buildConfig,
    config: false,
    entry,
    outDir: join(stage, 'dist'),
    dts: { ...buildConfig.dts, only: true },
    sourcemap: false,
    silent: true,
  });
  const pack = ['pack', '--json', '--offline', '--ignore-scripts', '--pack-destination', workDir];
  const { stdout } = await run('npm', pack, { cwd: stage });
  return join(workDir, JSON.parse(stdout)[0].filename);
}

/** Copies the consumer fixtures and gives each a node_modules: the tarball, and links to the shared install. */
async function installConsumers(tarball: string): Promise<void> {
  cpSync(FIXTURES, join(workDir, 'consumer'), { recursive: true });
  for (const name of ['neutral', 'node']) {
    const project = join(workDir, 'consumer', name);
    const own = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
    const modules = join(project, 'node_modules');
    const installed = join(modules, pkg.name);
    mkdirSync(installed, { recursive: true });
    await run('tar', ['-xzf', tarball, '-C', installed, '--strip-components=1']);
    const linked = new Set([
      ...Object.keys(pkg.dependencies ?? {}),
      ...Object.keys(own.dependencies ?? {}),
      ...Object.keys(own.devDependencies ?? {}),
    ]);
    linked.delete(pkg.name);
    for (const dependency of linked) {
      mkdirSync(dirname(join(modules, dependency)), { recursive: true });
      symlinkSync(join(ROOT, 'node_modules', dependency), join(modules, dependency), 'dir');
    }
  }
}

/** `tsc -p` in a consumer project; resolves with tsc's exit code and its diagnostics. */
async function typeCheck(project: string, tsconfig: string): Promise<{ code: number; diagnostics: string }> {
  const cwd = join(workDir, 'consumer', project);
  try {
    await run(process.execPath, [TSC, '-p', tsconfig, '--pretty', 'false'], { cwd, timeout: CHECK_TIMEOUT_MS });
    return { code: 0, diagnostics: '' };
  } catch (failure) {
    const { code, stdout, stderr } = failure as { code?: number; stdout?: string; stderr?: string };
    return { code: code ?? -1, diagnostics: `${stdout ?? ''}${stderr ?? ''}` };
  }
}

/** The `mcp-switchboard…` specifiers a consumer project's sources import or require. */
function importedSubpaths(project: string): Set<string> {
  const found = new Set<string>();
  const dir = join(FIXTURES, project, 'src');
  for (const file of readdirSync(dir)) {
    const source = readFileSync(join(dir, file), 'utf8');
    for (const match of source.matchAll(/(?:from|require\()\s*'(mcp-switchboard(?:\/[^']+)?)'/g)) {
      found.add(match[1] === pkg.name ? '.' : `.${match[1]!.slice(pkg.name.length)}`);
    }
  }
  return found;
}

describe('the published types', () => {
  beforeAll(async () => {
    workDir = mkdtempSync(join(tmpdir(), 'switchboard-types-'));
    await installConsumers(await packDeclarations());
  }, BUILD_TIMEOUT_MS);

  afterAll(() => {
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it('has the runtime-neutral consumer import exactly the entries that reach no Node module', () => {
    const neutral = EXPORTED.filter(
      (exported) => !reachesNode(join(ROOT, buildConfig.entry[exported === '.' ? 'index' : exported.slice(2)]!)),
    );
    expect([...importedSubpaths('neutral')].sort()).toEqual(neutral.sort());
  });

  it('has the consumers import every exported entry between them', () => {
    const imported = new Set([...importedSubpaths('neutral'), ...importedSubpaths('node')]);
    expect(EXPORTED.filter((exported) => !imported.has(exported))).toEqual([]);
  });

  it.each([
    {
      project: 'neutral',
      tsconfig: 'tsconfig.node16.json',
      label: 'runtime-neutral entries, no Node typings, node16 (ESM and CJS)',
    },
    {
      project: 'neutral',
      tsconfig: 'tsconfig.bundler.json',
      label: 'runtime-neutral entries, no Node typings, bundler resolution',
    },
    {
      project: 'node',
      tsconfig: 'tsconfig.node16.json',
      label: 'Node-only subpaths, with Node typings, node16 (ESM and CJS)',
    },
    {
      project: 'node',
      tsconfig: 'tsconfig.bundler.json',
      label: 'Node-only subpaths, with Node typings, bundler resolution',
    },
  ])(
    'type-checks in a strict consumer: $label',
    async ({ project, tsconfig }) => {
      expect(await typeCheck(project, tsconfig)).toEqual({ code: 0, diagnostics: '' });
    },
    CHECK_TIMEOUT_MS,
  );

  it(
    'leaves internal members out of the declarations',
    async () => {
      expect(await typeCheck('neutral', 'tsconfig.internals.json')).toEqual({ code: 0, diagnostics: '' });
    },
    CHECK_TIMEOUT_MS,
  );
});
