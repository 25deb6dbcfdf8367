/**
 * The API report of every entry the package exports (`api/*.api.md`), written by Microsoft API Extractor.
 *
 * `npm run api` rewrites the committed reports; test/package/api-report.test.ts writes them into a temporary folder
 * and fails when they differ, so a change of the public surface shows up as a diff of `api/`.
 *
 * API Extractor reads declarations, so the entries' `.d.ts` files are first emitted with the TypeScript
 * compiler (with `stripInternal`, as the published build does) into a temporary folder, which links to the
 * package's node_modules so that the declarations resolve its dependencies; one compiler state then serves every
 * entry's analysis.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CompilerState, Extractor, ExtractorConfig, type IConfigFile } from '@microsoft/api-extractor';
import ts from 'typescript';
import buildConfig from '../tsup.config';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Where the committed reports live. */
export const API_DIR = join(ROOT, 'api');

/** One exported entry: its package.json subpath, its source file and the name of its report. */
export interface ApiEntry {
  subpath: string;
  source: string;
  /** `mcp-switchboard` for the root, else the subpath with `-` for `/`: `transports-http`. */
  reportName: string;
}

/** The entries of package.json `exports`, each with the source tsup builds it from. */
export function apiEntries(): ApiEntry[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const sources: Record<string, string> = buildConfig.entry;
  return Object.keys(pkg.exports)
    .filter((subpath) => subpath !== './package.json')
    .map((subpath) => {
      const name = subpath === '.' ? 'index' : subpath.slice(2);
      const source = sources[name];
      if (source === undefined) throw new Error(`package.json exports ${subpath}, which tsup.config.ts does not build`);
      return { subpath, source, reportName: name === 'index' ? pkg.name : name.replaceAll('/', '-') };
    });
}

/** The file name of an entry's report. */
export const reportFile = (entry: ApiEntry): string => `${entry.reportName}.api.md`;

/**
 * Emits the declarations of the entries (and all they import) under `outDir`, mirroring the source tree. Never
 * incremental: the order TypeScript writes a union's members in follows the order its types were first made,
 * which an incremental program inherits from earlier runs, so a kept build cache wrote reports a fresh
 * checkout would not (the union of a machine's states in another order).
 */
function emitDeclarations(entries: ApiEntry[], outDir: string): void {
  const configPath = join(ROOT, 'tsconfig.json');
  const parsed = ts.parseJsonConfigFileContent(ts.readConfigFile(configPath, ts.sys.readFile).config, ts.sys, ROOT);
  const options: ts.CompilerOptions = {
    ...parsed.options,
    noEmit: false,
    declaration: true,
    emitDeclarationOnly: true,
    stripInternal: true,
    rootDir: ROOT,
    outDir,
  };
  const rootNames = entries.map((entry) => join(ROOT, entry.source));
  const { diagnostics, emitSkipped } = ts.createProgram({ rootNames, options }).emit();
  if (emitSkipped || diagnostics.length > 0) {
    const host = { getCanonicalFileName: (f: string) => f, getCurrentDirectory: () => ROOT, getNewLine: () => '\n' };
    throw new Error(`declaration emit failed:\n${ts.formatDiagnostics(diagnostics, host)}`);
  }
}

/** The API Extractor configuration of one entry, reading `dtsDir` and writing its report into `reportDir`. */
function extractorConfig(entry: ApiEntry, dtsDir: string, reportDir: string, tempDir: string): ExtractorConfig {
  const declarations = join(dtsDir, entry.source.replace(/\.ts$/, '.d.ts'));
  const configObject: IConfigFile = {
    projectFolder: dirname(dtsDir),
    mainEntryPointFilePath: declarations,
    compiler: {
      overrideTsconfig: {
        compilerOptions: {
          target: 'ES2022',
          lib: ['ES2022', 'DOM'],
          module: 'ESNext',
          moduleResolution: 'Bundler',
          strict: true,
          skipLibCheck: true,
          types: ['node'],
        },
        include: [dtsDir],
      },
    },
    newlineKind: 'lf',
    apiReport: {
      enabled: true,
      reportFileName: entry.reportName,
      reportFolder: reportDir,
      reportTempFolder: tempDir,
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    messages: {
      // The report is the product: what is worth knowing (a forgotten export, say) is written into it, and the
      // console stays quiet. Release tags (@public, @beta) are not used in this package.
      compilerMessageReporting: { default: { logLevel: 'error' as never } },
      extractorMessageReporting: {
        default: { logLevel: 'none' as never },
        'ae-forgotten-export': { logLevel: 'none' as never, addToApiReportFile: true },
        'ae-missing-release-tag': { logLevel: 'none' as never, addToApiReportFile: false },
      },
      tsdocMessageReporting: { default: { logLevel: 'none' as never } },
    },
  };
  return ExtractorConfig.prepare({
    configObject,
    configObjectFullPath: undefined,
    packageJsonFullPath: join(ROOT, 'package.json'),
  });
}

/**
 * Writes the report of every entry into `reportDir` and returns their file names. Throws on a compiler error or
 * when API Extractor fails on an entry.
 */
export function writeApiReports(reportDir: string): string[] {
  const entries = apiEntries();
  mkdirSync(reportDir, { recursive: true });
  // Not under node_modules: API Extractor takes whatever lies there for an external package.
  const scratch = mkdtempSync(join(tmpdir(), 'api-report-'));
  try {
    symlinkSync(join(ROOT, 'node_modules'), join(scratch, 'node_modules'), 'dir');
    const dtsDir = join(scratch, 'dts');
    emitDeclarations(entries, dtsDir);

    const configs = entries.map((entry) => extractorConfig(entry, dtsDir, reportDir, join(scratch, 'temp')));
    const compilerState = CompilerState.create(configs[0]!, {
      additionalEntryPoints: configs.map((config) => config.mainEntryPointFilePath),
    });

    const problems: string[] = [];
    for (const [index, config] of configs.entries()) {
      const result = Extractor.invoke(config, {
        localBuild: true,
        compilerState,
        messageCallback: (message) => {
          if (message.logLevel === 'error')
            problems.push(`${entries[index]!.subpath}: ${message.formatMessageWithLocation(ROOT)}`);
          message.handled = true;
        },
      });
      if (!result.succeeded) problems.push(`${entries[index]!.subpath}: API Extractor failed`);
    }
    if (problems.length > 0) throw new Error(problems.join('\n'));
    // Warnings name the declaration file they are about: keep its path, not the temporary folder's.
    const written = entries.map(reportFile);
    for (const file of written) {
      const path = join(reportDir, file);
      writeFileSync(path, readFileSync(path, 'utf8').replaceAll(`${dtsDir}/`, ''));
    }
    // The report of an entry that is gone goes too.
    for (const file of readdirSync(reportDir)) {
      if (file.endsWith('.api.md') && !written.includes(file)) rmSync(join(reportDir, file));
    }
    return written;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const written = writeApiReports(API_DIR);
  process.stdout.write(`wrote ${written.length} API reports to ${relative(process.cwd(), API_DIR) || '.'}/\n`);
}
