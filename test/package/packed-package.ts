/**
 * The package as a user gets it, made without touching the repository's dist: built with the package's own tsup
 * config into a temporary folder (and its CommonJS declarations marked by scripts/cjs-declarations.ts, as
 * `npm run build` does), packed with `npm pack` (so package.json's `files` decides what ships), and extracted
 * into consumer projects.
 *
 * No registry is involved: a consumer's node_modules holds the extracted tarball and symlinks into this
 * repository's install for the package's dependencies and for what the consumer's own package.json lists.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { build } from 'tsup';
import buildConfig from '../../tsup.config';
import { markEsmImportsIn } from '../../scripts/cjs-declarations';

const run = promisify(execFile);
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

/** What `npm pack --json` reports of one tarball. */
export interface PackedPackage {
  /** The tarball's path. */
  readonly tarball: string;
  /** Bytes packed and unpacked. */
  readonly size: number;
  readonly unpackedSize: number;
  /** The paths inside the package. */
  readonly files: readonly string[];
}

function absolute(entries: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(entries).map(([name, path]) => [name, join(ROOT, path)]));
}

/** Builds the whole package (code and declarations) into `workDir/package` and packs it into `workDir`. */
export async function buildAndPack(workDir: string): Promise<PackedPackage> {
  const stage = join(workDir, 'package');
  mkdirSync(stage);
  for (const file of ['package.json', 'README.md', 'LICENSE']) {
    if (existsSync(join(ROOT, file))) cpSync(join(ROOT, file), join(stage, file));
  }
  await build({
    ...buildConfig,
    config: false,
    entry: absolute(buildConfig.entry),
    dts: { ...buildConfig.dts, entry: absolute(buildConfig.dts.entry) },
    outDir: join(stage, 'dist'),
    silent: true,
  });
  markEsmImportsIn(join(stage, 'dist'));
  const pack = ['pack', '--json', '--offline', '--ignore-scripts', '--pack-destination', workDir];
  const { stdout } = await run('npm', pack, { cwd: stage });
  const [report] = JSON.parse(stdout) as {
    filename: string;
    size: number;
    unpackedSize: number;
    files: { path: string }[];
  }[];
  return {
    tarball: join(workDir, report!.filename),
    size: report!.size,
    unpackedSize: report!.unpackedSize,
    files: report!.files.map((file) => file.path),
  };
}

/** Gives the consumer project at `project` a node_modules: the tarball, and links to the shared install. */
export async function installInto(project: string, tarball: string): Promise<void> {
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
