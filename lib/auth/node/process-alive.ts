/** Whether a process of this host is still running, by pid. */

/** True unless `pid` names no running process here (`kill(pid, 0)`: ESRCH). Another user's process is alive. */
export function isProcessAlive(pid: number): boolean {
  if (pid <= 0) return true; // not a pid we can probe: the caller's other rule (age, staleness) decides
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
