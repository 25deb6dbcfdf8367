import { format } from 'node:util';

const REDIRECTED = ['log', 'info', 'debug'] as const;

/**
 * Points `console.log/info/debug` at stderr, so a stray log line (often a dependency's) cannot corrupt a
 * stdio transport's stdout. Returns the undo, which restores only what is still ours.
 */
export function redirectConsoleToStderr(): () => void {
  const saved = REDIRECTED.map((name) => [name, console[name]] as const);
  const write = (...args: unknown[]): void => {
    process.stderr.write(format(...args) + '\n');
  };
  for (const name of REDIRECTED) console[name] = write;
  return () => {
    for (const [name, original] of saved) if (console[name] === write) console[name] = original;
  };
}
