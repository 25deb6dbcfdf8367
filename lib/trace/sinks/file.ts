/**
 * NDJSON trace to a file (`--trace-file`). Node only: imported from `mcp-switchboard/trace/file`. A trace
 * holds tool arguments and results, so the file is the owner's alone (0600) unless told otherwise.
 */
import * as fs from 'node:fs';
import type { TraceEvent } from '../types';
import { toNdjsonLine } from './ndjson';
import type { TraceSink } from './sink';

// The types its public signatures name, so this subpath stands alone.
export type { TraceSink } from './sink';
export type { TraceCause, TraceEvent, TraceKind } from '../types';
export type { QuitReason } from '../../../machines/connection';
export type { RequestId } from '../../jsonrpc/types';

export interface NdjsonFileSinkOptions {
  /** Append to an existing file instead of replacing it. */
  readonly append?: boolean;
  /** Bytes waiting for the disk beyond which events are dropped (and counted) rather than buffered: 16 MiB. */
  readonly maxBufferedBytes?: number;
  /** The file's permissions, also applied to a file that exists already (default 0o600: the owner only). */
  readonly mode?: number;
}

export interface NdjsonFileSink extends TraceSink {
  readonly path: string;
  /** Events dropped because the disk fell behind by more than `maxBufferedBytes`. */
  readonly dropped: number;
}

const DEFAULT_MAX_BUFFERED_BYTES = 16 * 1024 * 1024;
export const DEFAULT_TRACE_FILE_MODE = 0o600;

/**
 * Writes every event as one JSON line to `path`. `close()` resolves once the file is flushed and closed,
 * and rejects with a clear error if the file could not be opened or written (events are then dropped).
 */
export function createNdjsonFileSink(path: string, options: NdjsonFileSinkOptions = {}): NdjsonFileSink {
  const maxBuffered = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
  const mode = options.mode ?? DEFAULT_TRACE_FILE_MODE;
  const stream = fs.createWriteStream(path, { flags: options.append ? 'a' : 'w', mode, fs: openingWithMode });
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

/**
 * `fs` for the write stream, whose open also sets the mode of a file that existed (an open's `mode` applies
 * only to a file it creates), before the first write. A file of another owner keeps its mode.
 */
const openingWithMode = {
  open(path: fs.PathLike, flags: string, mode: number, done: (error: Error | null, fd?: number) => void): void {
    fs.open(path, flags, mode, (error, fd) => {
      if (error) return done(error);
      fs.fchmod(fd, mode, () => done(null, fd));
    });
  },
  write: fs.write,
  writev: fs.writev,
  close: fs.close,
};
