/**
 * `npm run bench` (full: several runs) or `npm run bench -- --quick` / `BENCH_QUICK=1` (one short run).
 * Runs every scenario for ours and the SDK in this one process, alternating which goes first, prints
 * the comparison tables and writes everything to bench/results/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { FRAMED_VS_LINES, LEAK_CHECK, OURS_VS_SDK, STDIO_VS_BARE, STDIO_VS_SDK, TRACE_TAP } from './comparisons';
import { settingsFrom, warmupSettings, type BenchSettings } from './config';
import { describeEnvironment } from './environment';
import { formatListing, formatTable, summarizeListing, summarizeTable } from './report';
import { ResultStore } from './results';
import { SCENARIOS, type Figures } from './scenarios';

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
  for (const scenario of SCENARIOS) {
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

async function main(): Promise<void> {
  if (typeof globalThis.gc !== 'function') throw new Error('Run with node --expose-gc (npm run bench)');
  const settings = settingsFrom(process.argv.slice(2), process.env);
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

  const tables = [OURS_VS_SDK, STDIO_VS_BARE, STDIO_VS_SDK, FRAMED_VS_LINES, TRACE_TAP].map((table) =>
    summarizeTable(table, store),
  );
  const leakCheck = summarizeListing(LEAK_CHECK, store);
  const durationSeconds = Number(((performance.now() - started) / 1000).toFixed(1));
  const sections = [...tables.map(formatTable), formatListing(leakCheck)];
  const footer = `${settings.runs} run(s), ${durationSeconds} s, node ${environment.node}, ${environment.cpus} x ${environment.cpuModel}, SDK ${environment.sdkVersion}, zod ${environment.zodVersion}`;
  process.stdout.write(`\n${sections.join('\n\n')}\n\n${footer}\n`);

  const directory = new URL('./results/', import.meta.url);
  mkdirSync(directory, { recursive: true });
  // A smoke run must not overwrite the committed figures of a full run (*.tmp.json is git-ignored).
  const file = new URL(settings.mode === 'full' ? 'latest.json' : 'quick.tmp.json', directory);
  const document = {
    generatedAt: new Date().toISOString(),
    durationSeconds,
    settings,
    environment,
    tables,
    leakCheck,
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
