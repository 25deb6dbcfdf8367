/**
 * The task machine on its own: the whole transition table (written out here, independently of `TASK_MOVES`,
 * and checked against it), what the host hears (each status entered, each refusal), a start from a status read
 * back from a store, and the time to live on a simulated clock.
 */
import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import {
  canMoveTask,
  isFinalTaskStatus,
  nextTaskStatus,
  taskMachine,
  type TaskMove,
  type TaskHost,
  type TaskStatus,
} from '../../machines/task';
import { itFollowsTheTable } from '../helpers/transition-table';

type EventName = TaskMove;
const EVENTS: readonly EventName[] = ['report', 'input.needed', 'input.answered', 'complete', 'fail', 'cancel'];
const STATUSES: readonly TaskStatus[] = ['working', 'input_required', 'completed', 'failed', 'cancelled'];

/** status -> event -> next status; absent: refused (the status stays). */
const TABLE: Record<TaskStatus, Partial<Record<EventName, TaskStatus>>> = {
  working: {
    report: 'working',
    'input.needed': 'input_required',
    complete: 'completed',
    fail: 'failed',
    cancel: 'cancelled',
  },
  input_required: {
    report: 'input_required',
    'input.needed': 'input_required',
    'input.answered': 'working',
    complete: 'completed',
    fail: 'failed',
    cancel: 'cancelled',
  },
  completed: {},
  failed: {},
  cancelled: {},
};

const PATHS: Record<TaskStatus, readonly EventName[]> = {
  working: [],
  input_required: ['input.needed'],
  completed: ['complete'],
  failed: ['fail'],
  cancelled: ['cancel'],
};

function recordingHost() {
  const heard: string[] = [];
  const host: TaskHost = {
    entered: (status, event) => void heard.push(`entered ${status} on ${event.type}`),
    refused: (status, event) => void heard.push(`refused ${event.type} in ${status}`),
    expired: () => void heard.push('expired'),
  };
  return { host, heard };
}

function spawn(options: { ttlMs?: number | null; status?: TaskStatus; clock?: SimulatedClock } = {}) {
  const { host, heard } = recordingHost();
  const actor = createActor(taskMachine, {
    input: { host, ttlMs: options.ttlMs ?? null, status: options.status },
    ...(options.clock && { clock: options.clock }),
  }).start();
  return {
    actor,
    heard,
    send: (...events: EventName[]) => events.forEach((type) => actor.send({ type })),
    state: () => actor.getSnapshot().value as TaskStatus | 'expired' | 'disposed',
  };
}

describe('the task machine', () => {
  describe('follows its transition table', () => {
    itFollowsTheTable({
      table: TABLE,
      events: EVENTS,
      paths: PATHS,
      spawn: () => spawn() as { send: (...events: EventName[]) => void; state: () => TaskStatus },
    });
  });

  it('is the table the stores obey: TASK_MOVES, nextTaskStatus and canMoveTask say what this file says', () => {
    for (const status of STATUSES) {
      for (const event of EVENTS) expect(nextTaskStatus(status, event)).toBe(TABLE[status][event]);
      const reachable = new Set(Object.values(TABLE[status]));
      for (const to of STATUSES) expect(canMoveTask(status, to)).toBe(reachable.has(to));
      expect(isFinalTaskStatus(status)).toBe(Object.keys(TABLE[status]).length === 0);
    }
  });

  it('tells its host each status entered (a stay re-enters) and each refusal', () => {
    const { send, heard } = spawn();
    send('report', 'input.needed', 'input.answered', 'input.answered', 'complete', 'cancel');
    expect(heard).toEqual([
      'entered working on xstate.init',
      'entered working on report',
      'entered input_required on input.needed',
      'entered working on input.answered',
      'refused input.answered in working',
      'entered completed on complete',
      'refused cancel in completed',
    ]);
  });

  it.each(STATUSES)('starts in %s when a store says the task is there', (status) => {
    expect(spawn({ status }).state()).toBe(status);
  });

  it('is gone once its time to live has run, whatever it was doing, and not a moment before', () => {
    const clock = new SimulatedClock();
    const task = spawn({ ttlMs: 60_000, clock });
    task.send('input.needed');
    clock.increment(59_999);
    expect(task.state()).toBe('input_required');
    clock.increment(1);
    expect(task.state()).toBe('expired');
    expect(task.actor.getSnapshot().status).toBe('done');
    expect(task.heard.at(-1)).toBe('expired');
  });

  it('keeps a final task until its time to live, then drops it', () => {
    const clock = new SimulatedClock();
    const task = spawn({ ttlMs: 1_000, clock });
    task.send('complete');
    clock.increment(999);
    expect(task.state()).toBe('completed');
    clock.increment(1);
    expect(task.state()).toBe('expired');
  });

  it.each(STATUSES)('ends on dispose from %s, telling the host no status', (status) => {
    const task = spawn({ status });
    task.heard.length = 0;
    task.actor.send({ type: 'dispose' });
    expect([task.state(), task.actor.getSnapshot().status, task.heard]).toEqual(['disposed', 'done', []]);
  });

  it('never expires without a time to live', () => {
    const clock = new SimulatedClock();
    const task = spawn({ ttlMs: null, clock });
    clock.increment(365 * 24 * 3600 * 1000);
    expect(task.state()).toBe('working');
  });
});
