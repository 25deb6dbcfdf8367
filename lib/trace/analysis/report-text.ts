/** `trace check`'s summary for a person: counts, latencies, then each finding with where and when. */
import type { TraceReport } from './analyze';
import type { TraceReadStats } from './ndjson-reader';
import type { LatencyRow } from './latency';

const iso = (time: number) => new Date(time).toISOString();

export function formatTraceReport(report: TraceReport, read?: TraceReadStats): string[] {
  const lines: string[] = [];
  const span = report.from === undefined ? '' : ` from ${iso(report.from)} to ${iso(report.to!)}`;
  lines.push(`${report.events} events on ${report.connections} connections${span}`);
  if (read && read.skipped > 0) {
    const samples = read.skippedSamples.map(({ line, why }) => `line ${line}: ${why}`).join('; ');
    lines.push(`${read.skipped} lines skipped, not trace events (${samples})`);
  }
  if (read?.truncatedLastLine) lines.push('The last line is cut short (the trace was still being written): ignored');
  lines.push(`  ${counts(report.byKind)}`);
  if (Object.keys(report.outcomes).length > 0) lines.push(`requests: ${counts(report.outcomes)}`);
  if (Object.keys(report.errorsByCode).length > 0) lines.push(`errors by code: ${counts(report.errorsByCode)}`);
  lines.push(...latencyLines('latency by method (ms)', report.latencyByMethod));
  lines.push(...latencyLines('latency by upstream (ms)', report.latencyByUpstream));
  const total = Object.values(report.findingsByRule).reduce((sum, n) => sum + n, 0);
  if (total === 0) lines.push('No findings.');
  else {
    lines.push(`${total} findings (${counts(report.findingsByRule)}), ${report.failures} not allowed:`);
    for (const finding of report.findings) {
      const where = finding.name === undefined ? finding.connection : `${finding.connection} (${finding.name})`;
      const what = [finding.method, finding.id === undefined ? undefined : `#${JSON.stringify(finding.id)}`]
        .filter(Boolean)
        .join(' ');
      const allowed = finding.allowed ? ' [allowed]' : '';
      lines.push(
        `  ${finding.rule}${allowed} ${iso(finding.time)} ${where}${what ? ` ${what}` : ''}: ${finding.detail}`,
      );
    }
    if (report.findings.length < total) lines.push(`  ... and ${total - report.findings.length} more`);
  }
  lines.push(report.failures === 0 ? 'Check passed.' : `Check failed: ${report.failures} findings not allowed.`);
  return lines;
}

function counts(record: Readonly<Record<string, number | undefined>>): string {
  return Object.entries(record)
    .map(([key, n]) => `${key} ${n}`)
    .join(', ');
}

function latencyLines(title: string, rows: readonly LatencyRow[]): string[] {
  if (rows.length === 0) return [];
  const width = Math.min(40, Math.max(...rows.map((row) => row.key.length)));
  const format = (n: number) => String(Math.round(n * 10) / 10).padStart(8);
  return [
    `${title}:`,
    `  ${''.padEnd(width)}    count      p50      p90      p99      max`,
    ...rows.map(
      (row) =>
        `  ${row.key.padEnd(width)} ${String(row.count).padStart(8)} ${format(row.p50)} ${format(row.p90)} ${format(row.p99)} ${format(row.max)}`,
    ),
  ];
}
