/**
 * `switchboard task get|result|cancel|list <target> [<task>]`: one request about tasks made earlier (by
 * `call --task`, or any client), connecting in the era the server speaks (connect.ts). `<task>` is the task's
 * id, or the reference `call --task` printed (checked against the server before anything is sent). Lines for
 * a person on stdout by default, JSON with `--json`; `result` follows the task to its end as `call --task` does
 * and prints the tool's result as `call` prints one. A stdio target is a new server process: it knows the
 * tasks only if it keeps them on disk.
 */
import type { Client } from '../client/client';
import { checkTaskRef, taskRefOf, type TaskEndpoint, type TaskRef } from '../client/tasks/task-ref';
import type { TaskStatusView } from '../client/tasks/task-view';
import { requestFailure, runConnected } from './connect';
import { CliFailure, EXIT_OK } from './errors';
import { printable } from './form-fields';
import type { CliIo } from './io';
import type { TaskAction, TaskCommand } from './task-args';
import { describeTtl, followToEnd, statusLine } from './task-follow';
import { withTrace } from './trace';

type Action = (client: Client, command: TaskCommand, signal: AbortSignal, io: CliIo) => Promise<number>;

/** What each action does, as its failure names it. */
const METHODS: Readonly<Record<TaskAction, string>> = {
  get: 'tasks/get',
  result: 'following the task',
  cancel: 'tasks/cancel',
  list: 'tasks/list',
};

const ACTIONS: Readonly<Record<TaskAction, Action>> = {
  get: async (client, command, _signal, io) => {
    const view = await client.getTask(taskIdOf(client, command.task!));
    for (const line of command.json ? [JSON.stringify(view, null, 2)] : describeTask(view)) io.out(line);
    return EXIT_OK;
  },
  result: async (client, command, signal, io) => {
    const handle = await client.reopenTask(refOf(client, command.task!));
    // The result is printed as call prints one, whether or not --json asks for it.
    return followToEnd(handle, io, signal, 'leave');
  },
  cancel: async (client, command, _signal, io) => {
    const taskId = taskIdOf(client, command.task!);
    await client.cancelTask(taskId);
    io.out(command.json ? JSON.stringify({ taskId, cancelRequested: true }) : `cancel requested: ${printable(taskId)}`);
    return EXIT_OK;
  },
  list: async (client, command, _signal, io) => {
    if (client.connectedEra === 'modern') {
      throw new CliFailure(
        'The server speaks 2026-07-28, whose tasks extension has no tasks/list: keep the ids "call --task" prints',
        ['(a server that also speaks the handshake era lists tasks with --era handshake)'],
      );
    }
    const tasks = await client.listTasks();
    if (command.json) io.out(JSON.stringify({ tasks }, null, 2));
    else if (tasks.length === 0) io.err('The server lists no tasks for this client');
    else for (const view of tasks) io.out(listLine(view));
    return EXIT_OK;
  },
};

export function task(command: TaskCommand, io: CliIo): Promise<number> {
  return withTrace(command, io, () =>
    runConnected(command, io, {
      run: (client, signal) => ACTIONS[command.action](client, command, signal, io),
      failure: async (error) => requestFailure(METHODS[command.action], error),
    }),
  );
}

/** The task `given` names: a bare id, or the id of a reference checked against this connection. */
function taskIdOf(client: Client, given: string): string {
  return isRef(given) ? checkTaskRef(given, endpointOf(client)) : given;
}

/** A reference to follow: the one given, or one made for a bare id on this connection. */
function refOf(client: Client, given: string): TaskRef | string {
  return isRef(given) ? given : taskRefOf(given, endpointOf(client));
}

/** A reference is JSON (an object); an id is anything else. */
function isRef(given: string): boolean {
  return given.trimStart().startsWith('{');
}

/** What a task reference made on this connection names (as `Client.callToolAsTask` writes it). */
function endpointOf(client: Client): TaskEndpoint {
  const endpoint = client.taskEndpoint;
  return {
    era: client.connectedEra ?? 'handshake',
    server: client.serverInfo?.name ?? '',
    ...(endpoint !== undefined && { endpoint }),
  };
}

/** `tasks/get` for a person: the status line, then the times. */
export function describeTask(view: TaskStatusView): string[] {
  return [
    `${printable(view.taskId)}`,
    `  ${statusLine(view)}`,
    `  created ${printable(view.createdAt)}, last updated ${printable(view.lastUpdatedAt)}`,
    `  kept for ${describeTtl(view.ttlMs)} from its creation` +
      (view.pollIntervalMs === undefined ? '' : `; poll every ${view.pollIntervalMs} ms`),
  ];
}

/** One task of `tasks/list`: its id, status and creation time. */
function listLine(view: TaskStatusView): string {
  return `${printable(view.taskId)}  ${statusLine(view)}  (created ${printable(view.createdAt)})`;
}
