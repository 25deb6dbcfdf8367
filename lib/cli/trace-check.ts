/** `switchboard trace check`: analyses a recorded trace; exit 1 when a finding is not allowed. */
import { analyzeTrace } from '../trace/analysis/analyze';
import { formatTraceReport } from '../trace/analysis/report-text';
import { EXIT_FAILURE, EXIT_OK } from './errors';
import type { CliIo } from './io';
import type { TraceCommand } from './trace-args';
import { openTraceFile } from './trace-file';

export async function traceCheck(command: Extract<TraceCommand, { action: 'check' }>, io: CliIo): Promise<number> {
  const { events, stats } = await openTraceFile(command.file);
  const report = await analyzeTrace(events, {
    allow: command.allow,
    ...(command.maxLatencyMs !== undefined && { maxLatencyMs: command.maxLatencyMs }),
  });
  if (command.json) io.out(JSON.stringify({ ...report, read: stats }, undefined, 2));
  else for (const line of formatTraceReport(report, stats)) io.out(line);
  return report.failures === 0 ? EXIT_OK : EXIT_FAILURE;
}
