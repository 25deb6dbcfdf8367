/**
 * NDJSON trace to a file (`--trace-file`). Node only: imported from `mcp-switchboard/trace/file`.
 */
import { createWriteStream } from 'node:fs';
import type { TraceEvent } from '../types';
import { toNdjsonLine } from './ndjson';
import type { TraceSink } from './sink';

export interface NdjsonFileSinkOptions {
  /** Append to an existing file instead of replacing it. */
  readonly append?: boolean;
  /** Bytes waiting for the disk beyond which events are dropped (and counted) rather than buffered: 16 MiB. */
  readonly maxBufferedBytes?: number;
}

export interface NdjsonFileSink extends TraceSink {
  readonly path: string;
  /** Events dropped because the disk fell behind by more than `maxBufferedBytes`. */
  readonly dropped: number;
}

const DEFAULT_MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

/**
 * Writes every event as one JSON line to `path`. `close()` resolves once the file is flushed and closed,
 * and rejects with a clear error if the file could not be opened or written (events are then dropped).
 */
export function createNdjsonFileSink(path: string, options: NdjsonFileSinkOptions = {}): NdjsonFileSink {
  const maxBuffered = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
  const stream = createWriteStream(path, { flags: options.append ? 'a' : 'w' });
  let failure: Error | undefined;
  let ending = false;
  let dropped = 0;
  stream.on('error', (error) => {
    failure ??= new Error(`Cannot write the trace file ${path}: ${error.message}`, { cause: error });
  });
  const streamClosed = new Promise<void>((resolve) => stream.once('close', resolve));

  const close = async (): Promise<void> => {
    if (!ending) {
      ending = true;
      if (!stream.destroyed) stream.end();
    }
    await streamClosed;
    if (failure) throw failure;
  };
  // The stream completing ends the file; a failure to write it surfaces from `close()`, never as an unhandled rejection.
  const finish = () => void close().catch(() => undefined);

  return {
    path,
    get dropped() {
      return dropped;
    },
    next(event: TraceEvent) {
      if (ending || failure) return;
      if (stream.writableLength > maxBuffered) dropped++;
      else stream.write(`${toNdjsonLine(event)}\n`);
    },
    error: finish,
    complete: finish,
    close,
  };
}
