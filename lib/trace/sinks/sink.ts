/** What every trace sink is: an observer of trace events that can be closed. */
import type { Observer } from 'rxjs';
import type { TraceEvent } from '../types';

/** Writes one line (without its newline). */
export type LineWriter = (line: string) => void;

/**
 * An observer of trace events that can be closed. Subscribe it to any trace stream; `close()` (or the
 * stream completing) stops it and resolves once everything it wrote is out. Events after that are dropped.
 */
export interface TraceSink extends Observer<TraceEvent> {
  close(): Promise<void>;
}

/** A sink that turns each event into one line for `write`, until closed. A throwing `write` loses that line only. */
export function lineSink(write: LineWriter, toLine: (event: TraceEvent) => string): TraceSink {
  let open = true;
  return {
    next: (event) => {
      if (!open) return;
      // A sink never throws into the stream it observes (RxJS would rethrow it asynchronously, ending the
      // process): a line that cannot be built or written is dropped.
      try {
        write(toLine(event));
      } catch {
        // dropped
      }
    },
    error: () => void (open = false),
    complete: () => void (open = false),
    close: async () => void (open = false),
  };
}
