/**
 * `switchboard call <target> tools/call '{"name":…,"arguments":…}' --task [--ttl <ms>]`: the tool called as a
 * task (`Client.callToolAsTask`, either era). Once the server made it, the task's id, the commands that follow
 * or cancel it from elsewhere and its reference go to stderr at once; then it is followed to its end
 * (task-follow.ts). Ctrl-C cancels the task. A server that makes no task runs the call at once: its result is
 * printed all the same.
 */
import type { Client } from '../client/client';
import type { TaskHandle } from '../client/tasks/task-handle';
import type { JsonObject } from '../jsonrpc/types';
import type { CallCommand } from './args';
import type { CallTarget } from './connection-args';
import { printable } from './form-fields';
import { commandLine } from './hints';
import type { CliIo } from './io';
import type { TaskCallSettings } from './task-args';
import { describeTtl, followToEnd } from './task-follow';

export async function callAsTask(
  client: Client,
  command: CallCommand,
  settings: TaskCallSettings,
  signal: AbortSignal,
  io: CliIo,
): Promise<number> {
  // parseTaskCall checked these.
  const { name, arguments: args } = command.params as { name: string; arguments?: JsonObject };
  const ttl = settings.ttlMs === undefined ? {} : { ttlMs: settings.ttlMs };
  const handle = await client.callToolAsTask(name, args, { signal, ...ttl });
  if (handle.isTask) announce(handle, command.target, io);
  else io.err(`${printable(name)} ran at once: the server made no task of it (no task support for this tool)`);
  if (handle.isTask && settings.ttlMs !== undefined && client.connectedEra === 'modern') {
    const kept = handle.status?.ttlMs;
    io.err(`--ttl: a 2026-07-28 server decides how long it keeps a task (this one: ${describeTtl(kept)})`);
  }
  return followToEnd(handle, io, signal, 'cancel');
}

/** The task's id, how to follow or cancel it from another shell, and its reference (for `Client.reopenTask`). */
function announce(handle: TaskHandle, target: CallTarget, io: CliIo): void {
  const id = handle.taskId!;
  io.err(`task ${printable(id)} created`);
  io.err(`  follow it: ${taskCommand('result', target, id)}`);
  io.err(`  cancel it: ${taskCommand('cancel', target, id)}`);
  if (target.kind === 'stdio') {
    io.err('  (each starts the server again: it finds the task only if it keeps its tasks on disk)');
  }
  io.err(`  reference: ${printable(JSON.stringify(handle.ref))}`);
}

/** `switchboard task <action> <url> <id>`, or `… <id> -- <command…>`, quoted for a POSIX shell. */
export function taskCommand(action: string, target: CallTarget, id: string): string {
  const words =
    target.kind === 'http'
      ? ['task', action, target.url.href, id]
      : ['task', action, id, '--', target.command, ...target.args];
  return `switchboard ${printable(commandLine(words))}`;
}
