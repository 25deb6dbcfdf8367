/**
 * A task in both wire forms: the 2025-11-25 renderings checked against that revision's official schema
 * (`Task`, `CreateTaskResult`, `GetTaskResult`, `CancelTaskResult`, `ListTasksResult`), the 2026-07-28
 * extension's against what the conformance suite's tasks scenarios check (flat, `ttlMs`, no legacy names,
 * the end inlined by status only).
 */
import { describe, expect, it } from 'vitest';
import {
  handshakeCreateResult,
  handshakeTask,
  MODERN_TASK_ACK,
  modernCreateResult,
  modernGetResult,
} from '../../lib/tasks/task-wire';
import type { TaskRecord, TaskStatus } from '../../lib/tasks/types';
import { schemaProblem } from '../helpers/schema';

const BASE: TaskRecord = {
  taskId: '5f0c7d0e-1b7a-4c53-9a40-2d3b7c1e9f10',
  status: 'working',
  createdAt: Date.UTC(2026, 10, 28, 12, 0, 0),
  lastUpdatedAt: Date.UTC(2026, 10, 28, 12, 0, 5),
  ttlMs: 60_000,
  pollIntervalMs: 500,
  owner: { principalId: 'alice' },
  method: 'tools/call',
  params: { name: 'build' },
  bootEpoch: 'boot-1',
};

const RESULT = { content: [{ type: 'text', text: 'done' }] };
const ERROR = { code: -32603, message: 'it broke' };
const INPUT = {
  name: { method: 'elicitation/create', params: { message: 'Name?', requestedSchema: { type: 'object' } } },
};

function recordIn(status: TaskStatus, extra: Partial<TaskRecord> = {}): TaskRecord {
  return { ...BASE, status, result: RESULT, error: ERROR, inputRequests: INPUT, ...extra };
}

const STATUSES: readonly TaskStatus[] = ['working', 'input_required', 'completed', 'failed', 'cancelled'];

describe('the 2025-11-25 form', () => {
  it.each(STATUSES)('renders a %s task as the schema says, in every result that carries one', (status) => {
    const task = handshakeTask(recordIn(status, { statusMessage: 'note' }));
    expect(task).toEqual({
      taskId: BASE.taskId,
      status,
      statusMessage: 'note',
      createdAt: '2026-11-28T12:00:00.000Z',
      lastUpdatedAt: '2026-11-28T12:00:05.000Z',
      ttl: 60_000,
      pollInterval: 500,
    });
    expect(schemaProblem('2025-11-25', 'Task', task)).toBeUndefined();
    expect(schemaProblem('2025-11-25', 'GetTaskResult', task)).toBeUndefined();
    expect(schemaProblem('2025-11-25', 'CancelTaskResult', task)).toBeUndefined();
    expect(schemaProblem('2025-11-25', 'ListTasksResult', { tasks: [task] })).toBeUndefined();
    expect(schemaProblem('2025-11-25', 'CreateTaskResult', handshakeCreateResult(recordIn(status)))).toBeUndefined();
  });

  it('reports a task kept without limit as ttl null, and leaves out what it does not have', () => {
    const task = handshakeTask({ ...BASE, ttlMs: null, pollIntervalMs: undefined });
    expect(task.ttl).toBeNull();
    expect(Object.keys(task)).not.toContain('pollInterval');
    expect(schemaProblem('2025-11-25', 'Task', task)).toBeUndefined();
  });
});

describe('the 2026-07-28 extension form', () => {
  it('answers a creation flat, with resultType task and nothing of the end', () => {
    const created = modernCreateResult(recordIn('working'));
    expect(created).toEqual({
      resultType: 'task',
      taskId: BASE.taskId,
      status: 'working',
      createdAt: '2026-11-28T12:00:00.000Z',
      lastUpdatedAt: '2026-11-28T12:00:05.000Z',
      ttlMs: 60_000,
      pollIntervalMs: 500,
    });
    for (const absent of ['task', 'result', 'error', 'inputRequests', 'ttl', 'pollInterval', 'requestState']) {
      expect(Object.keys(created)).not.toContain(absent);
    }
  });

  it.each([
    ['working', []],
    ['input_required', ['inputRequests']],
    ['completed', ['result']],
    ['failed', ['error']],
    ['cancelled', []],
  ] as const)('inlines in tasks/get of a %s task only %j', (status, inlined) => {
    const got = modernGetResult(recordIn(status));
    expect(got.resultType).toBe('complete');
    const carried = ['result', 'error', 'inputRequests'].filter((key) => key in got);
    expect(carried).toEqual(inlined);
    if (status === 'completed') expect(got.result).toEqual(RESULT);
    if (status === 'failed') expect(got.error).toEqual(ERROR);
    expect(Object.keys(got)).not.toContain('ttl');
  });

  it('acknowledges cancel and update with resultType complete and nothing else', () => {
    expect(MODERN_TASK_ACK).toEqual({ resultType: 'complete' });
    expect(Object.isFrozen(MODERN_TASK_ACK)).toBe(true);
  });
});
