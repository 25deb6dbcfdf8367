/**
 * A scenario module run on its own (`node --expose-gc --import tsx bench/<module>.ts [--quick]`): its
 * scenarios the way bench/run.ts runs them (a discarded warm-up pass in full mode, entrant order reversed on
 * odd runs, a collected heap before each measurement), then its tables.
 */
import { pathToFileURL } from 'node:url';
import type { ComparisonTable } from './comparisons';
import { settingsFrom, warmupSettings, type BenchSettings } from './config';
import { formatTable, summarizeTable } from './report';
import { ResultStore } from './results';
import type { Scenario } from './scenarios';

const progress = (line: string) => process.stderr.write(`${line}\n`);

async function runScenarios(
  scenarios: readonly Scenario[],
  settings: BenchSettings,
  runIndex: number,
  store?: ResultStore,
): Promise<void> {
  for (const { id, entrants } of scenarios) {
    for (const entrant of runIndex % 2 === 1 ? [...entrants].reverse() : entrants) {
      globalThis.gc!();
      const figures = await entrant.measure(settings);
      store?.record(id, entrant.name, figures);
      const shown = Object.entries(figures).map(([name, value]) => `${name}=${Number(value.toPrecision(4))}`);
      progress(`  ${id.padEnd(20)} ${entrant.name.padEnd(14)} ${shown.join(' ')}`);
    }
  }
}

async function runStandalone(
  module: string,
  scenarios: readonly Scenario[],
  tables: readonly ComparisonTable[],
): Promise<void> {
  if (typeof globalThis.gc !== 'function') throw new Error(`Run with node --expose-gc --import tsx ${module}`);
  const settings = settingsFrom(process.argv.slice(2), process.env);
  progress(`${module}: ${settings.mode}, ${settings.runs} run(s), node ${process.version}`);
  if (settings.warmupPass) await runScenarios(scenarios, warmupSettings(settings), 0);
  const store = new ResultStore();
  for (let run = 0; run < settings.runs; run++) {
    progress(`run ${run + 1}/${settings.runs}`);
    await runScenarios(scenarios, settings, run, store);
  }
  const sections = tables.map((table) => formatTable(summarizeTable(table, store)));
  process.stdout.write(`\n${sections.join('\n\n')}\n`);
}

/**
 * Runs the module's scenarios and prints its tables when `moduleUrl` (its `import.meta.url`) is the script
 * node was started with; does nothing when bench/run.ts imports it.
 */
export function runWhenMain(
  moduleUrl: string,
  scenarios: readonly Scenario[],
  tables: readonly ComparisonTable[],
): void {
  if (moduleUrl !== pathToFileURL(process.argv[1] ?? '').href) return;
  const module = `bench/${moduleUrl.slice(moduleUrl.lastIndexOf('/') + 1)}`;
  runStandalone(module, scenarios, tables).then(
    // A library's forgotten handle may not keep the process alive after the report.
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`${(error as Error).stack ?? error}\n`);
      process.exit(1);
    },
  );
}
