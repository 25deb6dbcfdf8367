/**
 * `npm run bench` (full: several runs) or `npm run bench -- --quick` / `BENCH_QUICK=1` (one short run);
 * `--only <prefix>` keeps the scenarios whose id starts with it (e.g. `--only http`) and the tables they fill.
 * Runs every scenario for ours and the SDK in this one process, alternating which goes first, prints
 * the comparison tables and writes everything to bench/results/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import {
  FRAMED_VS_LINES,
  HTTP_CONNECTIONS,
  HTTP_VS_BARE,
  HTTP_VS_SDK,
  LEAK_CHECK,
  MODERN_HTTP_ERAS,
  MODERN_HTTP_FETCH,
  MODERN_HTTP_FETCH_COST,
  MODERN_HTTP_ROUND,
  MODERN_HTTP_VS_BARE,
  MODERN_HTTP_VS_SDK_V2,
  MODERN_IN_PROCESS_ERAS,
  OURS_VS_SDK,
  STDIO_VS_BARE,
  STDIO_VS_SDK,
  TRACE_TAP,
  type SeriesRef,
} from './comparisons';
import { settingsFrom, warmupSettings, type BenchSettings } from './config';
import { describeEnvironment } from './environment';
import { formatListing, formatTable, summarizeListing, summarizeTable } from './report';
import { ResultStore } from './results';
import { AUTH_OVERHEAD, AUTH_SCENARIOS } from './auth';
import { CONNECT_ERAS, CONNECT_SCENARIOS } from './connect';
import { HUB_OVERHEAD, HUB_SCENARIOS } from './hub';
import { MODERN_SCENARIOS } from './modern';
import { MODERN_IN_PROCESS_SCENARIOS } from './modern-in-process';
import { SCENARIOS, type Figures, type Scenario } from './scenarios';
import { TASK_CALL_COST, TASK_CALL_POLLS, TASK_CALL_SCENARIOS, TASK_CALL_VS_SDK } from './task-call';
import { TASK_STORE_SCENARIOS, TASK_STORE_SIZE, TASK_STORES } from './tasks';
import { TOOL_VALIDATION, VALIDATION_SCENARIOS } from './validation';

type Recorder = (scenario: string, entrant: string, figures: Figures) => void;

const progress = (line: string) => process.stderr.write(`${line}\n`);

function describeFigures(figures: Figures): string {
  return Object.entries(figures)
    .filter(([name]) => name !== 'count')
    .map(([name, value]) => `${name}=${Number(value.toPrecision(4))}`)
    .join(' ');
}

/** Every scenario once. Odd runs reverse the entrant order, so neither side always goes first. */
async function runAllScenarios(settings: BenchSettings, runIndex: number, record: Recorder): Promise<void> {
  for (const scenario of chosenScenarios(settings)) {
    const entrants = runIndex % 2 === 1 ? [...scenario.entrants].reverse() : scenario.entrants;
    for (const entrant of entrants) {
      // Each measurement starts from a collected heap, so none pays for the previous one's garbage.
      globalThis.gc!();
      const figures = await entrant.measure(settings);
      record(scenario.id, entrant.name, figures);
      progress(`  ${scenario.id.padEnd(16)} ${entrant.name.padEnd(14)} ${describeFigures(figures)}`);
    }
  }
}

/** A smoke run or a partial one must not overwrite the committed figures of a full run (*.tmp.json is git-ignored). */
function resultFileName(settings: BenchSettings): string {
  if (settings.only !== undefined) return `only-${settings.only.replace(/[^\w-]/g, '_')}.tmp.json`;
  return settings.mode === 'full' ? 'latest.json' : 'quick.tmp.json';
}

function chosenScenarios(settings: BenchSettings): readonly Scenario[] {
  const only = settings.only;
  const all = [
    ...SCENARIOS,
    ...CONNECT_SCENARIOS,
    ...MODERN_IN_PROCESS_SCENARIOS,
    ...MODERN_SCENARIOS,
    ...HUB_SCENARIOS,
    ...AUTH_SCENARIOS,
    ...VALIDATION_SCENARIOS,
    ...TASK_STORE_SCENARIOS,
    ...TASK_CALL_SCENARIOS,
  ];
  return only === undefined ? all : all.filter((scenario) => scenario.id.startsWith(only));
}

async function main(): Promise<void> {
  if (typeof globalThis.gc !== 'function') throw new Error('Run with node --expose-gc (npm run bench)');
  const settings = settingsFrom(process.argv.slice(2), process.env);
  if (chosenScenarios(settings).length === 0) throw new Error(`No scenario id starts with ${settings.only}`);
  const environment = describeEnvironment();
  const started = performance.now();
  progress(`bench: ${settings.mode}, ${settings.runs} run(s), node ${environment.node}, SDK ${environment.sdkVersion}`);

  if (settings.warmupPass) {
    progress('warm-up pass (discarded)');
    await runAllScenarios(warmupSettings(settings), 0, () => {});
  }
  const store = new ResultStore();
  for (let run = 0; run < settings.runs; run++) {
    progress(`run ${run + 1}/${settings.runs}`);
    await runAllScenarios(settings, run, (scenario, entrant, figures) => store.record(scenario, entrant, figures));
  }

  const measured = new Set(chosenScenarios(settings).map((scenario) => scenario.id));
  const wasMeasured = (refs: readonly SeriesRef[]) => refs.every((ref) => measured.has(ref.scenario));
  const tables = [
    OURS_VS_SDK,
    CONNECT_ERAS,
    STDIO_VS_BARE,
    STDIO_VS_SDK,
    FRAMED_VS_LINES,
    HTTP_VS_SDK,
    HTTP_VS_BARE,
    MODERN_HTTP_VS_SDK_V2,
    MODERN_IN_PROCESS_ERAS,
    MODERN_HTTP_VS_BARE,
    MODERN_HTTP_ROUND,
    MODERN_HTTP_ERAS,
    MODERN_HTTP_FETCH,
    MODERN_HTTP_FETCH_COST,
    TRACE_TAP,
    HUB_OVERHEAD,
    AUTH_OVERHEAD,
    TOOL_VALIDATION,
    TASK_STORES,
    TASK_CALL_COST,
    TASK_CALL_VS_SDK,
  ]
    .filter((table) => wasMeasured(table.comparisons.flatMap((row) => [row.subject, row.baseline])))
    .map((table) => summarizeTable(table, store));
  const listings = Object.fromEntries(
    Object.entries({
      leakCheck: LEAK_CHECK,
      httpConnections: HTTP_CONNECTIONS,
      taskStoreSize: TASK_STORE_SIZE,
      taskCallPolls: TASK_CALL_POLLS,
    })
      .filter(([, listing]) => wasMeasured(listing.series.map((series) => series.ref)))
      .map(([key, listing]) => [key, summarizeListing(listing, store)]),
  );
  const durationSeconds = Number(((performance.now() - started) / 1000).toFixed(1));
  const sections = [...tables.map(formatTable), ...Object.values(listings).map(formatListing)];
  const footer = `${settings.runs} run(s), ${durationSeconds} s, node ${environment.node}, ${environment.cpus} x ${environment.cpuModel}, SDK ${environment.sdkVersion}, zod ${environment.zodVersion}`;
  process.stdout.write(`\n${sections.join('\n\n')}\n\n${footer}\n`);

  const directory = new URL('./results/', import.meta.url);
  mkdirSync(directory, { recursive: true });
  const file = new URL(resultFileName(settings), directory);
  const document = {
    generatedAt: new Date().toISOString(),
    durationSeconds,
    settings,
    environment,
    tables,
    ...listings,
    raw: store.toJSON(),
  };
  writeFileSync(file, `${JSON.stringify(document, null, 2)}\n`);
  progress(`wrote ${file.pathname}`);
}

// The event loop only empties before main() settles when a measurement awaits something that never comes.
process.on('beforeExit', () => {
  console.error('bench: stalled (a measurement waited for an event that never came)');
  process.exit(1);
});

main().then(
  // Nothing left over (a handle a library forgot to release) may keep the process alive after the report.
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
