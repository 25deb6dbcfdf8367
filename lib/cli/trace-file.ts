/** Opens a recorded trace for the `trace` commands: its events, streamed, and what the reader skipped. */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { emptyReadStats, readTraceEvents, type TraceReadStats } from '../trace/analysis/ndjson-reader';
import type { TraceEvent } from '../trace/types';
import { CliFailure } from './errors';

export interface OpenedTrace {
  readonly events: AsyncIterable<TraceEvent>;
  readonly stats: TraceReadStats;
}

/** Fails with a clear message when `path` is not a readable file. */
export async function openTraceFile(path: string): Promise<OpenedTrace> {
  try {
    if (!(await stat(path)).isFile()) throw new CliFailure(`The trace ${path} is not a file`);
  } catch (error) {
    if (error instanceof CliFailure) throw error;
    throw new CliFailure(`Cannot read the trace ${path}: ${(error as Error).message}`);
  }
  const stats = emptyReadStats();
  const stream = createReadStream(path, { highWaterMark: 256 * 1024 });
  return { events: readTraceEvents(stream as AsyncIterable<Uint8Array>, stats), stats };
}
