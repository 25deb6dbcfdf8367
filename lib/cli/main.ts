#!/usr/bin/env node
/**
 * The `switchboard` executable. No top-level await: the bundler also emits this entry as CommonJS.
 */
import { runCli } from './run';

void runCli(process.argv.slice(2)).then((code) => {
  // Exit explicitly once the output is flushed: a served module's timers, or a keep-alive socket, must not
  // keep a finished command running.
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
});
