/** `switchboard trace export`: a recorded trace as OTLP/JSON or HAR 1.2, to stdout or a file, streamed. */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { TraceAnalyzer } from '../trace/analysis/analyze';
import type { Exchange } from '../trace/analysis/exchanges';
import { harWriter } from '../trace/analysis/har';
import { otlpWriter } from '../trace/analysis/otlp';
import { CliFailure, EXIT_OK } from './errors';
import type { CliIo } from './io';
import type { TraceCommand } from './trace-args';
import { openTraceFile } from './trace-file';
import { VERSION } from './version';

export async function traceExport(
  command: Extract<TraceCommand, { action: 'export' }>,
  io: CliIo,
  stdout: Writable = process.stdout,
): Promise<number> {
  const { events, stats } = await openTraceFile(command.file);
  const target = command.out === undefined ? stdout : createWriteStream(command.out, { mode: 0o600 });
  const failed = new Promise<never>((_, reject) =>
    target.once('error', (error: Error) =>
      reject(new CliFailure(`Cannot write ${command.out ?? 'stdout'}: ${error.message}`)),
    ),
  );
  failed.catch(() => undefined);
  const writer =
    command.format === 'otlp'
      ? (() => {
          const otlp = otlpWriter({ scopeVersion: VERSION });
          return { begin: otlp.begin, piece: otlp.span, end: otlp.end };
        })()
      : (() => {
          const har = harWriter({ creatorVersion: VERSION });
          return { begin: har.begin, piece: har.entry, end: har.end };
        })();
  let pending: string[] = [];
  const analyzer = new TraceAnalyzer({ onExchange: (exchange: Exchange) => void pending.push(writer.piece(exchange)) });
  const flush = async () => {
    if (pending.length === 0) return;
    const text = pending.join('');
    pending = [];
    if (!target.write(text)) await Promise.race([once(target, 'drain'), failed]);
  };
  pending.push(writer.begin());
  for await (const event of events) {
    analyzer.add(event);
    await flush();
  }
  const report = analyzer.finish();
  pending.push(writer.end());
  await flush();
  if (command.out !== undefined) {
    target.end();
    await Promise.race([once(target, 'finish'), failed]);
  }
  const skipped = stats.skipped > 0 ? `, ${stats.skipped} lines skipped (not trace events)` : '';
  const requests = Object.values(report.outcomes).reduce((sum, n) => sum + n, 0);
  io.err(
    `Exported ${requests} requests as ${command.format.toUpperCase()}${command.out ? ` to ${command.out}` : ''}${skipped}`,
  );
  return EXIT_OK;
}
