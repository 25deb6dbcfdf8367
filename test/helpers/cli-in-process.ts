import { runCli } from '../../lib/cli/run';

/** What a command run in this process printed: its lines on each stream, and the exit code. */
export interface CapturedRun {
  readonly code: number;
  readonly out: readonly string[];
  readonly err: readonly string[];
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `switchboard <argv>` in this process (no build, no child), capturing what it prints. */
export async function runCliCapturing(...argv: string[]): Promise<CapturedRun> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, { out: (line) => out.push(line), err: (line) => err.push(line) });
  return { code, out, err, stdout: out.join('\n'), stderr: err.join('\n') };
}
