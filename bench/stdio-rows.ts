/**
 * Only the stdio rows, for working on the stdio path without the whole suite: each run measures every chosen
 * entrant (alternating which goes first) with the full suite's I/O window, then medians and per-run ratios
 * to the bare echo are printed.
 *
 * node --expose-gc --import tsx bench/stdio-rows.ts [runs=7] [entrants=ours,bare]
 */
import { settingsFrom } from './config';
import { measureLatency, measureThroughput } from './harness';
import { median } from './stats';
import { STDIO_ENTRANTS } from './stdio';

type EntrantName = keyof typeof STDIO_ENTRANTS;
interface RunFigures {
  readonly c1: number;
  readonly p50Us: number;
  readonly c256: number;
}

const runs = Number(process.argv[2] ?? 7);
const entrants = (process.argv[3] ?? 'ours,bare').split(',') as EntrantName[];
const settings = settingsFrom([], process.env);

async function measure(name: EntrantName): Promise<RunFigures> {
  const pair = await STDIO_ENTRANTS[name]();
  try {
    const sequential = await measureLatency(pair.callEcho, settings.ioWindow);
    const c256 = await measureThroughput(pair.callEcho, settings.concurrency, settings.ioWindow);
    return { c1: sequential.perSecond, p50Us: sequential.p50Us, c256 };
  } finally {
    await pair.close();
  }
}

const results = new Map<EntrantName, RunFigures[]>(entrants.map((name) => [name, []]));
for (let run = 0; run < runs; run++) {
  const order = run % 2 === 0 ? entrants : [...entrants].reverse();
  for (const name of order) results.get(name)!.push(await measure(name));
  const line = entrants.map((name) => {
    const last = results.get(name)!.at(-1)!;
    return `${name} c1 ${last.c1.toFixed(0)} p50 ${last.p50Us.toFixed(1)}us c256 ${last.c256.toFixed(0)}`;
  });
  console.log(`run ${run + 1}: ${line.join(' | ')}`);
}

const series = (name: EntrantName, figure: keyof RunFigures) => results.get(name)!.map((run) => run[figure]);
for (const name of entrants) {
  console.log(
    `${name}: median c1 ${median(series(name, 'c1')).toFixed(0)}/s, p50 ${median(series(name, 'p50Us')).toFixed(1)}us, c256 ${median(series(name, 'c256')).toFixed(0)}/s`,
  );
}
if (results.has('bare')) {
  for (const name of entrants.filter((entrant) => entrant !== 'bare')) {
    for (const figure of ['c1', 'c256'] as const) {
      const perRun = series(name, figure).map((value, index) => value / series('bare', figure)[index]!);
      console.log(
        `${name}/bare ${figure}: median ${median(perRun).toFixed(2)}x (runs ${perRun.map((r) => r.toFixed(2)).join(' ')})`,
      );
    }
  }
}
