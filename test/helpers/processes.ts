import { readdirSync, readFileSync } from 'node:fs';
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

/** The live (not zombie) processes whose process group is `pgid`, from /proc. */
export function processesInGroup(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited meanwhile
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so split after the last ')'.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state !== 'Z' && Number(pgrp) === pgid) members.push(Number(entry));
  }
  return members;
}

/** The live processes whose command line contains `text` (a unique argument marks a test's processes). */
export function processesWithArgument(text: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const state = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (commandLine.includes(text) && !/\) Z /.test(state)) found.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return found;
}

/** Parses the fixture's `proc-server <pid> grandchild <pid | none>` line. */
export function parseProcServerLine(line: string): { pid: number; grandchild: number | undefined } | undefined {
  const match = /proc-server (\d+) grandchild (\d+|none)/.exec(line);
  if (!match) return undefined;
  return { pid: Number(match[1]), grandchild: match[2] === 'none' ? undefined : Number(match[2]) };
}
