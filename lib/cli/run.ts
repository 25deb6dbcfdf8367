/**
 * The whole CLI as a function: parses the command line, runs the command and returns the exit code. Every
 * failure ends here as one `switchboard: ...` message on stderr (details indented below it).
 */
import { parseCommandLine } from './args';
import { describeError, EXIT_OK, exitCodeOf } from './errors';
import { helpText } from './help';
import { processIo, type CliIo } from './io';
import { VERSION } from './version';

export async function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  try {
    const command = parseCommandLine(argv);
    switch (command.kind) {
      case 'help':
        io.out(helpText(command.topic));
        return EXIT_OK;
      case 'version':
        io.out(VERSION);
        return EXIT_OK;
      // The runtime is loaded only for the commands that use it: --help and --version stay instant.
      case 'serve':
        return await (await import('./serve')).serve(command, io);
      case 'call':
        return await (await import('./call')).call(command, io);
      case 'task':
        return await (await import('./task')).task(command, io);
      case 'trace':
        return await (await import('./trace-command')).trace(command, io);
      case 'login':
        return await (await import('./login')).login(command, io);
      case 'logout':
        return await (await import('./logout')).logout(command, io);
    }
  } catch (error) {
    const [message, ...detail] = describeError(error);
    io.err(`switchboard: ${message}`);
    for (const line of detail) io.err(`  ${line}`);
    return exitCodeOf(error);
  }
}
