/**
 * The task command lines, read in process (`runCli`): help for `task`, and every usage error of `call --task`,
 * `task ...` and `serve --task-store` (exit 2, nothing sent, nothing served).
 */
import { describe, expect, it } from 'vitest';
import { runCliCapturing } from '../helpers/cli-in-process';

const URL = 'http://127.0.0.1:1/mcp';

describe('help', () => {
  it('lists task in the overview, and prints its page however it is asked for', async () => {
    expect((await runCliCapturing('--help')).stdout).toContain('task get|result|cancel|list <url> [id]');
    for (const argv of [
      ['help', 'task'],
      ['task'],
      ['task', '--help'],
      ['task', 'get', '--help'],
      ['task', 'list', '-h'],
    ]) {
      const run = await runCliCapturing(...argv);
      expect(run.code).toBe(0);
      expect(run.stdout).toMatch(/^Usage: switchboard task get\|result\|cancel \[options\] <url> <task>/);
    }
  });

  it('documents --task, --ttl and --task-store', async () => {
    expect((await runCliCapturing('help', 'call')).stdout).toMatch(
      /--task {2,}call the tool \(tools\/call\) as a task/,
    );
    expect((await runCliCapturing('help', 'call')).stdout).toMatch(/--ttl <ms> {2,}with --task/);
    expect((await runCliCapturing('help', 'serve')).stdout).toContain('--task-store <dir>');
  });
});

describe('usage errors (exit 2)', () => {
  it.each([
    [['call', '--task', URL, 'tools/list'], '--task calls a tool as a task: the method is tools/call'],
    [['call', '--task', URL, 'tools/call'], '--task needs the tool to call'],
    [['call', '--task', URL, 'tools/call', '{"arguments":{}}'], '--task needs the tool to call'],
    [['call', '--task', URL, 'tools/call', '{"name":"a","task":{"ttl":1}}'], 'not "task"'],
    [
      ['call', '--task', URL, 'tools/call', '{"name":"a","arguments":[1]}'],
      "The tool's arguments must be a JSON object",
    ],
    [['call', '--ttl', '5', URL, 'tools/call', '{"name":"a"}'], '--ttl goes with --task'],
    [['call', '--task', '--ttl', '0', URL, 'tools/call', '{"name":"a"}'], '--ttl needs milliseconds greater than 0'],
    [['call', '--task', '--ttl', '1e3', URL, 'tools/call', '{"name":"a"}'], '--ttl needs milliseconds greater than 0'],
    [['task', 'gett', URL, 'x'], 'Unknown task action "gett": did you mean get?'],
    [['task', 'show', URL, 'x'], 'Unknown task action "show": use get, result, cancel, list'],
    [['task', 'get', URL], 'Missing the task: its id, or the reference "call --task" printed'],
    [['task', 'get', URL, ''], 'Missing the task'],
    [['task', 'get', URL, 'a', 'b'], 'Unexpected argument "b" after the task id'],
    [['task', 'get', URL, 'x'.repeat(513)], 'The task id is 513 characters long: a task id has at most 512'],
    [
      ['task', 'result', URL, `{${' '.repeat(5000)}}`],
      'The task id is 5002 characters long: a task id has at most 4096',
    ],
    [['task', 'list', URL, 'x'], 'Unexpected argument "x": list takes no id'],
    [['task', 'get', 'x'], 'is not a URL'],
    [['task', 'get'], 'Missing the target'],
    [['task', 'get', '--jsn', URL, 'x'], 'Unknown option "--jsn" for switchboard task get: did you mean --json?'],
    [['task', 'get', 'x', '-H', 'A: b', '--', 'node', 's.js'], '--header applies to HTTP targets only'],
    [['serve', 'hub.json', '--task-store', 'tasks'], '--task-store applies to a server module, not to a hub config'],
    [['serve', 'a.mjs', '--task-store', ''], '--task-store needs the folder to keep the tasks in'],
  ])('%j', async (argv, message) => {
    const run = await runCliCapturing(...argv);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.err[0]).toContain(message);
  });
});
