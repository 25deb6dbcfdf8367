/**
 * The command lines about tasks: `switchboard call … tools/call … --task [--ttl <ms>]` (read here, run by
 * call-task.ts) and `switchboard task get|result|cancel|list <target> [<id>]` (task.ts). Like args.ts,
 * nothing here touches the network or the file system.
 */
import type { JsonObject } from '../jsonrpc/types';
import { MAX_TASK_ID_LENGTH } from '../client/tasks/task-view';
import { CONNECTION_OPTIONS, parseConnectionArgs, type ConnectionSettings } from './connection-args';
import { UsageError } from './errors';
import { didYouMeanWord, parseMilliseconds, type Options } from './parse-options';

/** `call --task`: the tool's call, made a task. */
export interface TaskCallSettings {
  /** `--ttl`: how long the server should keep the task (2025-11-25; a 2026-07-28 server decides alone). */
  readonly ttlMs?: number;
}

export const TASK_ACTIONS = ['get', 'result', 'cancel', 'list'] as const;
export type TaskAction = (typeof TASK_ACTIONS)[number];

export interface TaskCommand extends ConnectionSettings {
  readonly kind: 'task';
  readonly action: TaskAction;
  /** The task's id, or the reference (JSON) `call --task` printed; absent for `list`. */
  readonly task?: string;
  /** Print JSON instead of lines for a person. */
  readonly json: boolean;
}

const TASK_OPTIONS: Options = { ...CONNECTION_OPTIONS, json: { type: 'boolean' } };

/** A task reference is a small JSON object: anything this long is not one. */
const MAX_REF_LENGTH = 4096;

export function parseTask(args: readonly string[]): TaskCommand | { kind: 'help'; topic: 'task' } {
  const [action, ...rest] = args;
  if (action === undefined || action === '-h' || action === '--help') return { kind: 'help', topic: 'task' };
  if (!(TASK_ACTIONS as readonly string[]).includes(action)) {
    const hint = didYouMeanWord(action, TASK_ACTIONS) || `: use ${TASK_ACTIONS.join(', ')}`;
    throw new UsageError(`Unknown task action "${action}"${hint}`);
  }
  const parsed = parseConnectionArgs(`task ${action}`, rest, TASK_OPTIONS);
  if (parsed === 'help') return { kind: 'help', topic: 'task' };
  const { values, rest: positionals, settings } = parsed;
  const [task, ...extra] = positionals;
  if (action === 'list' && task !== undefined) throw new UsageError(`Unexpected argument "${task}": list takes no id`);
  if (extra.length > 0) throw new UsageError(`Unexpected argument "${extra[0]}" after the task id`);
  if (action !== 'list') checkTaskArgument(task);
  return {
    kind: 'task',
    ...settings,
    action: action as TaskAction,
    ...(task !== undefined && { task }),
    json: values.json === true,
  };
}

function checkTaskArgument(task: string | undefined): asserts task is string {
  if (task === undefined || task === '') {
    throw new UsageError('Missing the task: its id, or the reference "call --task" printed');
  }
  const limit = task.startsWith('{') ? MAX_REF_LENGTH : MAX_TASK_ID_LENGTH;
  if (task.length > limit) {
    throw new UsageError(`The task id is ${task.length} characters long: a task id has at most ${limit}`);
  }
}

/**
 * `--task` and `--ttl` of `call`: undefined without `--task`. A task is a `tools/call` of a named tool, with
 * arguments and nothing else (the task request is the client's to write).
 */
export function parseTaskCall(
  method: string,
  params: JsonObject | undefined,
  task: boolean,
  ttl: string | undefined,
): TaskCallSettings | undefined {
  if (!task) {
    if (ttl !== undefined) throw new UsageError('--ttl goes with --task: how long the server keeps the task');
    return undefined;
  }
  if (method !== 'tools/call') throw new UsageError(`--task calls a tool as a task: the method is tools/call`);
  const example = `'{"name":"<tool>","arguments":{...}}'`;
  if (typeof params?.name !== 'string' || params.name === '') {
    throw new UsageError(`--task needs the tool to call: tools/call ${example}`);
  }
  const other = Object.keys(params).find((key) => key !== 'name' && key !== 'arguments');
  if (other !== undefined) {
    throw new UsageError(`--task sends the tool's name and arguments only, not "${other}": tools/call ${example}`);
  }
  const { arguments: args } = params;
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
    throw new UsageError(`The tool's arguments must be a JSON object: tools/call ${example}`);
  }
  return ttl === undefined ? {} : { ttlMs: parseMilliseconds('ttl', ttl) };
}
