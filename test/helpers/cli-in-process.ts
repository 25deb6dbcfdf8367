import { expect, it } from 'vitest';
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

/** One test a case: `switchboard serve a.mjs <flags>` exits 2, its first stderr line `switchboard: <message>…`. */
export function itRefusesServeFlags(cases: readonly (readonly [flags: readonly string[], message: string])[]): void {
  it.each(cases)('%j is a usage error (exit 2)', async (flags, message) => {
    const { code, err } = await runCliCapturing('serve', 'a.mjs', ...flags);
    expect(code).toBe(2);
    expect(err[0]).toContain(`switchboard: ${message}`);
  });
}
