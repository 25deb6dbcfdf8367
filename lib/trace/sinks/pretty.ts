/** Pretty lines, one per trace event, for a terminal (`--trace` writes them to stderr). */
import { formatTraceEvent } from '../format';
import { lineSink, type LineWriter, type TraceSink } from './sink';

export interface PrettySinkOptions {
  /** Characters of a message shown before it is cut (default 160). */
  readonly maxPayload?: number;
}

/** Standard error where there is one (Node, Deno, Bun), the console elsewhere. */
const writeStderr: LineWriter = (line) => {
  const stderr = (globalThis as { process?: { stderr?: { write(text: string): unknown } } }).process?.stderr;
  if (stderr) stderr.write(`${line}\n`);
  else console.error(line);
};

export function createPrettyTraceSink(write: LineWriter = writeStderr, options: PrettySinkOptions = {}): TraceSink {
  return lineSink(write, (event) => formatTraceEvent(event, options));
}
