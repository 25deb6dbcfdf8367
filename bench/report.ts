/** Turns stored runs into summarized rows, a plain-text table, and the JSON document. */
import type { Comparison, ComparisonTable, SeriesListing } from './comparisons';
import type { ResultStore } from './results';
import { ratios, spread, type Spread } from './stats';

export interface SeriesSummary extends Spread {
  readonly perRun: readonly number[];
}

export interface RowSummary {
  readonly label: string;
  readonly unit: string;
  readonly better: 'higher' | 'lower';
  readonly subject: SeriesSummary;
  readonly baseline: SeriesSummary;
  /** subject ÷ baseline, per run. */
  readonly ratio: SeriesSummary;
  readonly target?: {
    readonly text: string;
    readonly ratio: number;
    readonly bound: 'atLeast' | 'atMost';
    readonly pass: boolean;
  };
  /** 1-based index into the table's notes. */
  readonly note?: number;
}

export interface TableSummary {
  readonly title: string;
  readonly subjectName: string;
  readonly baselineName: string;
  readonly rows: readonly RowSummary[];
  readonly notes: readonly string[];
}

function summarizeSeries(values: readonly number[]): SeriesSummary {
  return { ...spread(values), perRun: values };
}

function summarizeRow(comparison: Comparison, store: ResultStore, note: number | undefined): RowSummary {
  const subject = store.series(comparison.subject);
  const baseline = store.series(comparison.baseline);
  const ratio = summarizeSeries(ratios(subject, baseline));
  const target = comparison.target;
  return {
    label: comparison.label,
    unit: comparison.unit,
    better: comparison.better,
    subject: summarizeSeries(subject),
    baseline: summarizeSeries(baseline),
    ratio,
    ...(target && {
      target: {
        ...target,
        pass: target.bound === 'atLeast' ? ratio.median >= target.ratio : ratio.median <= target.ratio,
      },
    }),
    ...(note !== undefined && { note }),
  };
}

export function summarizeTable(table: ComparisonTable, store: ResultStore): TableSummary {
  const notes: string[] = [];
  const rows = table.comparisons.map((comparison) =>
    summarizeRow(comparison, store, comparison.note === undefined ? undefined : notes.push(comparison.note)),
  );
  return { title: table.title, subjectName: table.subjectName, baselineName: table.baselineName, rows, notes };
}

function formatValue(value: number): string {
  if (!Number.isFinite(value)) return '-';
  const magnitude = Math.abs(value);
  if (magnitude >= 1000) return Math.round(value).toLocaleString('en-US');
  if (magnitude >= 100) return value.toFixed(0);
  if (magnitude >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

function formatRatio(value: number): string {
  return Number.isFinite(value) ? `${Number(value.toPrecision(3))}x` : '-';
}

function formatSpread(summary: Spread, format: (value: number) => string): string {
  return `${format(summary.median)} (${format(summary.min)}-${format(summary.max)})`;
}

function layout(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const line = (row: readonly string[]) => `| ${row.map((cell, column) => cell.padEnd(widths[column]!)).join(' | ')} |`;
  const rule = `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`;
  return [line(rows[0]!), rule, ...rows.slice(1).map(line)].join('\n');
}

export function formatTable(table: TableSummary): string {
  const ratioName = `${table.subjectName}/${table.baselineName}`;
  const header = [
    'figure',
    'unit',
    'better',
    `${table.subjectName} median (min-max)`,
    `${table.baselineName} median (min-max)`,
    `${ratioName} median`,
    'per run',
    'target',
    'result',
  ];
  const body = table.rows.map((row) => [
    row.note === undefined ? row.label : `${row.label} [${row.note}]`,
    row.unit,
    row.better,
    formatSpread(row.subject, formatValue),
    formatSpread(row.baseline, formatValue),
    formatRatio(row.ratio.median),
    row.ratio.perRun.map(formatRatio).join(' '),
    row.target?.text ?? '',
    row.target ? (row.target.pass ? 'PASS' : 'FAIL') : '',
  ]);
  const notes = table.notes.map((note, index) => `[${index + 1}] ${note}`);
  return [table.title, '', layout([header, ...body]), ...(notes.length > 0 ? ['', ...notes] : [])].join('\n');
}

export interface ListingSummary {
  readonly title: string;
  readonly unit: string;
  readonly series: readonly (SeriesSummary & { readonly label: string })[];
}

export function summarizeListing(listing: SeriesListing, store: ResultStore): ListingSummary {
  return {
    title: listing.title,
    unit: listing.unit,
    series: listing.series.map(({ label, ref }) => ({ label, ...summarizeSeries(store.series(ref)) })),
  };
}

export function formatListing(listing: ListingSummary): string {
  const header = ['', `${listing.unit} median (min-max)`, 'per run'];
  const body = listing.series.map((series) => [
    series.label,
    formatSpread(series, formatValue),
    series.perRun.map(formatValue).join(' '),
  ]);
  return [listing.title, '', layout([header, ...body])].join('\n');
}
