/**
 * The process group of a stdio server: signalled as one (servers started through `npx`, `uvx` or `sh -c` are
 * wrappers around the real one), and watched until none of its processes runs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { defaultLogger } from '../lib/core/logger';

/** Process groups are a POSIX notion; elsewhere only the child itself is signalled. */
export const USE_PROCESS_GROUP = process.platform !== 'win32';
/**
 * After the child exits, how long to wait for the rest of its process group to end (it was sent SIGKILL)
 * before giving up with a warning: only a process stuck in the kernel (uninterruptible sleep) takes that long.
 */
const GROUP_END_TIMEOUT_MS = 2000;
/** The longest pause between two looks at the group (the first ones come sooner). */
const GROUP_POLL_MAX_MS = 50;

/** Sends `signal` to the process group `pid` leads (to the process alone where there are no groups). */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(USE_PROCESS_GROUP ? -pid : pid, signal);
  } catch {
    // ESRCH: already gone.
  }
}

/**
 * Resolves once no process of the group `pgid` runs any more (the machine has sent it SIGKILL); each look
 * that finds one still running sends SIGKILL again, for a member that joined after the first. A zombie counts
 * as ended: it runs nothing and holds nothing but its pid, and reaping an orphan is init's job, which init
 * may do a second later. Gives up after `GROUP_END_TIMEOUT_MS`, saying so on stderr, so that a process
 * stuck in the kernel cannot hang a close for ever.
 */
export async function waitForGroupEnd(pgid: number, command: string): Promise<void> {
  const deadline = Date.now() + GROUP_END_TIMEOUT_MS;
  for (let pause = 1; ; pause = Math.min(2 * pause, GROUP_POLL_MAX_MS)) {
    const running = runningInGroup(pgid);
    if (running.length === 0) break;
    if (Date.now() >= deadline) {
      defaultLogger.warn(
        `Gave up waiting for the process group ${pgid} of "${command}": ${running.length === 1 ? 'process' : 'processes'} ` +
          `${running.join(', ')} still running ${GROUP_END_TIMEOUT_MS} ms after SIGKILL`,
      );
      break;
    }
    signalGroup(pgid, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/**
 * The pids of the processes of group `pgid` that still run (zombies excluded), read from /proc; where there
 * is no /proc, the group's id stands for its members while a signal reaches any (an exited leader's orphans
 * are reaped at once there).
 */
function runningInGroup(pgid: number): number[] {
  if (!USE_PROCESS_GROUP || !groupExists(pgid)) return [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [pgid];
  }
  const running: number[] = [];
  for (const entry of entries) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    } catch {
      continue; // ended meanwhile
    }
    // `pid (comm) state ppid pgrp ...`: comm may hold spaces and parentheses, so split after the last ')'.
    const [state, , group] = stat.slice(stat.lastIndexOf(')') + 2).split(' ', 3);
    if (Number(group) === pgid && state !== 'Z' && state !== 'X') running.push(pid);
  }
  return running;
}

/** Whether any process (a zombie included) is still in group `pgid`. */
function groupExists(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
