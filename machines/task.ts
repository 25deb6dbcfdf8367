/**
 * The lifecycle of one task (MCP tasks, both wire forms): working ⇄ input_required, then completed, failed or
 * cancelled, or gone once its time to live runs out. One actor per live task in the runtime's system, so tasks
 * show in the inspector and in tracing. The moves are one table (`TASK_MOVES`), which the stores obey too:
 * an event the table does not allow from a status is refused (the actor stays, its host hears `refused`).
 */
import { setup } from 'xstate';

/** Where a task stands. `completed`, `failed` and `cancelled` are final. */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export type TaskEvent =
  /** The handler reports (a status message): the task stays where it is. */
  | { readonly type: 'report'; readonly message?: string }
  /** The handler asks for input (elicitation, sampling, roots) inside the task. */
  | { readonly type: 'input.needed' }
  /** Every open input request was answered (`tasks/update`, or the answered server→client request). */
  | { readonly type: 'input.answered' }
  /** The handler returned a result (a tool error included). */
  | { readonly type: 'complete' }
  /** The handler failed with a protocol error, or the process that ran it died. */
  | { readonly type: 'fail' }
  /** `tasks/cancel`. */
  | { readonly type: 'cancel' }
  /**
   * The runner is done with the actor (the task is final and stored, or its runner closes): the actor ends
   * without a status of its own. Not a move of the task: the table does not list it.
   */
  | { readonly type: 'dispose' };

/** The events that move a task. */
export type TaskMove = Exclude<TaskEvent['type'], 'dispose'>;

/** The status each event leads to from each live status; absent: refused. Final statuses take no event. */
export const TASK_MOVES: Readonly<Record<TaskStatus, Partial<Record<TaskMove, TaskStatus>>>> = {
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

/** Where `event` takes a task in `status`, or undefined when the table refuses it. */
export function nextTaskStatus(status: TaskStatus, event: TaskMove): TaskStatus | undefined {
  return TASK_MOVES[status][event];
}

/** Whether a task may go from `from` to `to` by some event (a store's compare-and-set checks this). */
export function canMoveTask(from: TaskStatus, to: TaskStatus): boolean {
  return Object.values(TASK_MOVES[from]).includes(to);
}

export function isFinalTaskStatus(status: TaskStatus): boolean {
  return Object.keys(TASK_MOVES[status]).length === 0;
}

/** What the machine tells its host (the task runner): each status entered, each refusal, the expiry. */
export interface TaskHost {
  entered(status: TaskStatus, event: TaskEvent): void;
  refused(status: TaskStatus, event: TaskEvent): void;
  expired(): void;
}

export interface TaskMachineInput {
  readonly host: TaskHost;
  /** From the task's creation to its expiry; null: never. */
  readonly ttlMs: number | null;
  /** Where the task starts (a task read back from a store after a restart may be past `working`). */
  readonly status?: TaskStatus;
}

interface TaskContext {
  readonly host: TaskHost;
  readonly ttlMs: number | null;
  readonly startsIn: TaskStatus;
}

const EVENT_TYPES: readonly TaskMove[] = ['report', 'input.needed', 'input.answered', 'complete', 'fail', 'cancel'];

const STATUSES: readonly TaskStatus[] = ['working', 'input_required', 'completed', 'failed', 'cancelled'];

/** A status's state: entering it tells the host; each event the table allows moves (a stay re-enters), any other is refused. */
function statusState(status: TaskStatus) {
  const on: Record<string, unknown> = {};
  for (const type of EVENT_TYPES) {
    const target = TASK_MOVES[status][type];
    on[type] =
      target === undefined
        ? { actions: { type: 'refuse' as const, params: { status } } }
        : { target, reenter: target === status };
  }
  return { entry: { type: 'entered' as const, params: { status } }, on };
}

export const taskMachine = setup({
  types: {
    context: {} as TaskContext,
    events: {} as TaskEvent,
    input: {} as TaskMachineInput,
  },
  actions: {
    entered: ({ context, event }, { status }: { status: TaskStatus }) => context.host.entered(status, event),
    refuse: ({ context, event }, { status }: { status: TaskStatus }) => context.host.refused(status, event),
    expire: ({ context }) => context.host.expired(),
  },
  delays: {
    ttl: ({ context }) => context.ttlMs ?? 0,
  },
  guards: {
    hasTtl: ({ context }) => context.ttlMs !== null,
    startsIn: ({ context }, { status }: { status: TaskStatus }) => context.startsIn === status,
  },
}).createMachine({
  id: 'task',
  context: ({ input }) => ({ host: input.host, ttlMs: input.ttlMs, startsIn: input.status ?? 'working' }),
  initial: 'start',
  // The time to live runs from the task's creation whatever it is doing: then the task is gone.
  after: { ttl: { guard: 'hasTtl', target: '.expired' } },
  on: { dispose: '.disposed' },
  states: {
    start: {
      always: STATUSES.map((status) => ({ guard: { type: 'startsIn', params: { status } }, target: status })),
    },
    working: statusState('working'),
    input_required: statusState('input_required'),
    completed: statusState('completed'),
    failed: statusState('failed'),
    cancelled: statusState('cancelled'),
    expired: { type: 'final', entry: 'expire' },
    disposed: { type: 'final' },
  },
});
