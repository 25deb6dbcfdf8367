#!/usr/bin/env node
/**
 * The `switchboard` executable. No top-level await: the bundler also emits this entry as CommonJS.
 */
import { runCli } from './run';

/** How long the exit waits for stdout and stderr to flush: a reader that stopped reading must not hold us. */
const FLUSH_TIMEOUT_MS = 2000;

void runCli(process.argv.slice(2)).then((code) => {
  // Exit explicitly once the output is flushed: a served module's timers, or a keep-alive socket, must not
  // keep a finished command running.
  const exit = () => process.exit(code);
  setTimeout(exit, FLUSH_TIMEOUT_MS).unref();
  process.stdout.write('', () => process.stderr.write('', exit));
});
