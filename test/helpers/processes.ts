import { readFileSync } from 'node:fs';
import { expect } from 'vitest';

/** Whether `pid` still runs. A zombie counts as gone: reaping orphans is init's job, and it may be slow. */
export function isAlive(pid: number): boolean {
  try {
    if (/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) return false;
  } catch {
    // no procfs entry: fall through to the signal probe
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    expect((error as NodeJS.ErrnoException).code).toBe('ESRCH');
    return false;
  }
}
