/**
 * `switchboard trace view <trace.ndjson> [--out page.html] [--open]`: writes the trace viewer page with the
 * trace (as `--trace-file` records it) embedded, next to the trace by default, readable by its owner only
 * (a trace holds tool arguments and results), and with `--open` opens it in the browser.
 */
import { spawn } from 'node:child_process';
import { readFile, stat, writeFile, chmod } from 'node:fs/promises';
import { basename } from 'node:path';
import { withTrace } from '../trace/viewer/page';
import { browserCommand } from './browser';
import { CliFailure, EXIT_OK, UsageError } from './errors';
import type { CliIo } from './io';
import { HELP_OPTION, parseOptions } from './parse-options';
import { emptyViewerPage } from './viewer-page';

/** The largest trace a page is made for: beyond it the page would not open in a browser anyway. */
export const MAX_TRACE_BYTES = 256 * 1024 * 1024;

const TRACE_PAGE_MODE = 0o600;

export const TRACE_VIEW_USAGE = 'switchboard trace view <trace.ndjson> [--out page.html] [--open]';

/** Runs `trace view` with the arguments after `trace view`; resolves to the exit code. */
export async function runTraceView(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseOptions('trace view', args, {
    ...HELP_OPTION,
    out: { type: 'string', short: 'o' },
    open: { type: 'boolean' },
  });
  if (values.help) {
    io.out(`Usage: ${TRACE_VIEW_USAGE}`);
    return EXIT_OK;
  }
  if (positionals.length !== 1) {
    throw new UsageError(`trace view takes one trace file (${positionals.length} given): ${TRACE_VIEW_USAGE}`);
  }
  const input = positionals[0]!;
  const out = typeof values.out === 'string' ? values.out : pageNameFor(input);
  if (out === input) throw new UsageError(`The page would replace the trace ${input}: give another --out`);
  const trace = await readTrace(input);
  const page = withTrace(await emptyViewerPage(), trace, basename(input));
  try {
    await writeFile(out, page, { mode: TRACE_PAGE_MODE });
    await chmod(out, TRACE_PAGE_MODE); // a page that existed keeps its mode on write
  } catch (error) {
    throw new CliFailure(`Cannot write the page ${out}: ${(error as Error).message}`, [], { cause: error });
  }
  io.out(`Wrote ${out}`);
  if (values.open) openFile(out);
  return EXIT_OK;
}

/** `trace.ndjson` -> `trace.html`; any other name gets `.html` added. */
export function pageNameFor(input: string): string {
  return /\.(ndjson|jsonl)$/i.test(input) ? input.replace(/\.(ndjson|jsonl)$/i, '.html') : `${input}.html`;
}

async function readTrace(input: string): Promise<string> {
  try {
    const { size, isFile } = await stat(input).then((stats) => ({ size: stats.size, isFile: stats.isFile() }));
    if (!isFile) throw new Error('not a file');
    if (size > MAX_TRACE_BYTES) {
      throw new Error(`${size} bytes, more than the ${MAX_TRACE_BYTES} a page can hold: cut it first`);
    }
    return await readFile(input, 'utf8');
  } catch (error) {
    throw new CliFailure(`Cannot read the trace ${input}: ${(error as Error).message}`, [], { cause: error });
  }
}

/** Opens the page we just wrote with the platform's opener; best effort, like `openBrowser`. */
function openFile(path: string): void {
  const [command, ...args] = browserCommand(path);
  try {
    const opener = spawn(command!, args, { detached: true, stdio: 'ignore', windowsHide: true });
    opener.once('error', () => undefined); // no opener: the printed path is the way
    opener.unref();
  } catch {
    // spawn throws synchronously for some bad environments: the printed path is the way
  }
}
