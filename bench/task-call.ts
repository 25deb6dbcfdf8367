/**
 * What a task costs (issue 26): a plain `tools/call` of a tool that answers at once against the same tool called
 * as a task and followed to its end, in process (memory pair), our `Client` + `Server` in both eras:
 * - `taskCall` (2025-11-25): `tools/call` with `task` → `tasks/result`, on the memory and the LMDB store; our
 *   `TaskHandle` (`callToolAsTask` → `result`, which hears the status notification, then asks `tasks/result`);
 *   SDK v1 1.x side by side (`McpServer` with its `InMemoryTaskStore`, `registerToolTask`, the same two requests);
 * - `taskCallModern` (2026-07-28 extension): `tools/call` declaring the extension → `tasks/get` until completed,
 *   polled at once and then after the shortest timer, never at the task's `pollIntervalMs`;
 * - `taskCallHeap`: heap per finished task with 10,000 of them held in the memory store, ours and SDK v1's.
 *
 * Standalone: `node --expose-gc --import tsx bench/task-call.ts [--quick]`; in `npm run bench`: `--only taskCall`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTaskStore as SdkTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { InMemoryTransport as SdkMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer as SdkServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client } from '../lib/client/client';
import type { JsonObject } from '../lib/jsonrpc/types';
import { META } from '../lib/protocol/modern';
import { defineServer } from '../lib/server/definition';
import { Server } from '../lib/server/server';
import type { ToolDefinition } from '../lib/server/tools';
import { LmdbTaskStore } from '../lib/tasks/lmdb-task-store';
import { MemoryTaskStore } from '../lib/tasks/memory-task-store';
import type { TaskStore } from '../lib/tasks/task-store';
import { TASKS_EXTENSION_ID } from '../lib/tasks/task-wire';
import { createMemoryPair } from '../transports/memory';
import { entrantRow, type Comparison, type ComparisonTable, type SeriesListing } from './comparisons';
import type { BenchSettings } from './config';
import { measureHeapPerItem, measureThroughput, type Operation, type TimedWindow } from './harness';
import type { Figures, Scenario } from './scenarios';
import { runWhenMain } from './standalone';

const INFO = { name: 'bench-tasks', version: '1.0.0' };
const TOOL = 'work';
const TEXT = 'done';
/** Both sides keep every task an hour (what our server gives a task whose client asks for no time to live). */
const TTL_MS = 3_600_000;
/** Far above what a run makes: the stores' default bound (1,000 per owner) would refuse tasks mid-window. */
const MAX_TASKS_PER_OWNER = 10_000_000;
/** The most `tasks/get` a 2026-07-28 task may need before the bench gives up on it. */
const MAX_POLLS = 1_000;
const HEAP_TASKS = 10_000;
/** Tasks run at once while filling the store for the heap figure. */
const HEAP_BATCH = 100;
/** What the client's own task requests pass (lib/client/tasks): a task's answers are checked by the follower. */
const RAW = { validateResult: false } as const;

/** Defined once (see bench/ours.ts on functions created in object literals under tsx). */
const answerAtOnce = () => ({ content: [{ type: 'text' as const, text: TEXT }] });

function workTool(): ToolDefinition {
  return {
    name: TOOL,
    inputSchema: { type: 'object' },
    execution: { taskSupport: 'optional' },
    handler: answerAtOnce,
  };
}

function expectDone(result: unknown): void {
  const content = (result as { content?: { text?: string }[] } | undefined)?.content;
  if (content?.[0]?.text !== TEXT) throw new Error(`expected the text ${TEXT}, got ${JSON.stringify(result)}`);
}

/** A connected pair: one call followed to its end, the `tasks/get` it sent so far (2026-07-28), the way out. */
interface CallPair {
  readonly call: Operation;
  readonly polls?: () => { readonly tasks: number; readonly polls: number };
  close(): Promise<void>;
}

type OpenPair = () => Promise<CallPair>;

/** A task store the bench made, and how to be rid of it (the server does not close a store it is given). */
interface BenchStore {
  readonly store: TaskStore;
  dispose(): Promise<void>;
}

function memoryStore(): BenchStore {
  const store = new MemoryTaskStore({ maxTasksPerOwner: MAX_TASKS_PER_OWNER });
  return { store, dispose: () => store.close() };
}

/** LMDB on a fresh temporary folder, removed after. */
function lmdbStore(): BenchStore {
  const folder = mkdtempSync(join(tmpdir(), 'bench-task-call-'));
  const store = new LmdbTaskStore({ path: folder, maxTasksPerOwner: MAX_TASKS_PER_OWNER });
  return {
    store,
    dispose: async () => {
      await store.close();
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

type Era = 'handshake' | 'modern';
type Follow = (client: Client) => CallPair['call'];

/** Our `Client` in `era` on an unfrozen memory pair to a new `Server` serving `work` with tasks on `makeStore()`. */
function ours(era: Era, makeStore: () => BenchStore, follow: Follow, polls?: PollCount): OpenPair {
  return async () => {
    const { store, dispose } = makeStore();
    const server = new Server(defineServer({ ...INFO, tools: [workTool()] }), { tasks: { store } });
    const [clientSide, serverSide] = createMemoryPair({ freeze: false });
    server.connect(serverSide);
    const client = await new Client(INFO, { era, listChanges: 'off' }).connect(clientSide);
    const call = follow(client);
    await call();
    return {
      call,
      ...(polls && { polls: () => ({ ...polls }) }),
      close: async () => {
        await client.close();
        await server.close();
        await dispose();
      },
    };
  };
}

const plain: Follow = (client) => async () => expectDone(await client.callTool(TOOL, {}));

const TASK_CALL: JsonObject = { name: TOOL, arguments: {}, task: { ttl: TTL_MS } };

/** 2025-11-25: the task made, then `tasks/result` (the server answers it at the task's end). */
const taskThenResult: Follow = (client) => async () => {
  const created = await client.request('tools/call', TASK_CALL, RAW);
  const taskId = (created.task as JsonObject | undefined)?.taskId;
  if (typeof taskId !== 'string') throw new Error(`expected a task, got ${JSON.stringify(created)}`);
  expectDone(await client.request('tasks/result', { taskId }, RAW));
};

/** 2025-11-25 through our handle: `callToolAsTask`, then its `result`. */
const handle: Follow = (client) => async () => {
  const task = await client.callToolAsTask(TOOL, {}, { ttlMs: TTL_MS });
  if (!task.isTask) throw new Error('expected the call to make a task');
  expectDone(await task.result);
};

interface PollCount {
  tasks: number;
  polls: number;
}

const DECLARED = { [META.clientCapabilities]: { extensions: { [TASKS_EXTENSION_ID]: {} } } };
const MODERN_TASK_CALL: JsonObject = { name: TOOL, arguments: {}, _meta: DECLARED };

/** The shortest wait a timer gives: the turn after the server's own `setTimeout(0)` that starts the task's work. */
const nextTimer = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * 2026-07-28: the task made, then `tasks/get` at once and, while it reads `working`, again after the shortest
 * timer (a poll loop that never waits lets no timer run in process, and the task's work starts on one).
 */
function taskThenPolls(count: PollCount): Follow {
  return (client) => async () => {
    const created = await client.request('tools/call', MODERN_TASK_CALL, RAW);
    const taskId = created.taskId;
    if (created.resultType !== 'task' || typeof taskId !== 'string') {
      throw new Error(`expected a task, got ${JSON.stringify(created)}`);
    }
    count.tasks++;
    const get = { taskId, _meta: DECLARED };
    for (let poll = 1; poll <= MAX_POLLS; poll++) {
      count.polls++;
      const task = await client.request('tasks/get', get, RAW);
      if (task.status === 'completed') return expectDone(task.result);
      if (task.status !== 'working') throw new Error(`expected the task to complete, got ${JSON.stringify(task)}`);
      await nextTimer();
    }
    throw new Error(`The task ${taskId} was still working after ${MAX_POLLS} polls`);
  };
}

function modernTask(makeStore: () => BenchStore): OpenPair {
  const count: PollCount = { tasks: 0, polls: 0 };
  return ours('modern', makeStore, taskThenPolls(count), count);
}

/** The work of SDK v1's task tool: the task made, its result stored at once (its examples' out-of-band work). */
const sdkTaskHandler = {
  async createTask(extra: {
    taskStore: SdkRequestTaskStore;
    taskRequestedTtl?: number | null;
  }): Promise<{ task: { taskId: string } }> {
    const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl });
    void extra.taskStore.storeTaskResult(task.taskId, 'completed', answerAtOnce());
    return { task };
  },
  getTask: (extra: { taskId: string; taskStore: SdkRequestTaskStore }) => extra.taskStore.getTask(extra.taskId),
  getTaskResult: (extra: { taskId: string; taskStore: SdkRequestTaskStore }) =>
    extra.taskStore.getTaskResult(extra.taskId),
};

interface SdkRequestTaskStore {
  createTask(params: { ttl?: number | null }): Promise<{ taskId: string }>;
  storeTaskResult(taskId: string, status: 'completed', result: object): Promise<void>;
  getTask(taskId: string): Promise<unknown>;
  getTaskResult(taskId: string): Promise<unknown>;
}

const SDK_TASK_TOOL = 'work-task';

/**
 * SDK v1: `Client` + a new `McpServer` with tasks (`InMemoryTaskStore`), `work` registered plainly and
 * `work-task` with `registerToolTask` (its task tool called without a task polls its own store on a timer, so the
 * plain row calls the plain tool).
 */
function sdk(asTask: boolean): OpenPair {
  return async () => {
    const server = new SdkServer(INFO, {
      capabilities: { tasks: { requests: { tools: { call: {} } } } },
      taskStore: new SdkTaskStore(),
    });
    server.registerTool(TOOL, {}, answerAtOnce);
    server.experimental.tasks.registerToolTask(
      SDK_TASK_TOOL,
      { execution: { taskSupport: 'optional' } },
      sdkTaskHandler as never,
    );
    const [clientSide, serverSide] = SdkMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new SdkClient(INFO);
    await client.connect(clientSide);
    const call = asTask ? sdkTaskThenResult(client) : async () => expectDone(await client.callTool({ name: TOOL }));
    await call();
    return {
      call,
      close: async () => {
        await client.close();
        await server.close();
      },
    };
  };
}

/** The same two requests as ours: `tools/call` with `task`, then `tasks/result`. */
function sdkTaskThenResult(client: SdkClient): Operation {
  const request = { method: 'tools/call' as const, params: { name: SDK_TASK_TOOL, arguments: {} } };
  const options = { task: { ttl: TTL_MS } };
  return async () => {
    const { task } = await client.request(request, CreateTaskResultSchema, options);
    expectDone(await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema));
  };
}

/** Calls per second (wall time) with `inFlight` calls at a time, and the process's CPU time per call (every thread). */
async function timedCalls(call: Operation, inFlight: number, window: TimedWindow) {
  await measureThroughput(call, inFlight, { warmupMs: 0, durationMs: window.warmupMs });
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const perSecond = await measureThroughput(call, inFlight, { warmupMs: 0, durationMs: window.durationMs });
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  return { perSecond, cpuUsPerCall: (cpu.user + cpu.system) / (perSecond * seconds) };
}

/** One call at a time, then `settings.concurrency` in flight, on one pair. */
async function callFigures(open: OpenPair, settings: BenchSettings): Promise<Figures> {
  const pair = await open();
  try {
    const one = await timedCalls(pair.call, 1, settings.ioWindow);
    const many = await timedCalls(pair.call, settings.concurrency, settings.ioWindow);
    const count = pair.polls?.();
    return {
      perSecond: one.perSecond,
      cpuUsPerCall: one.cpuUsPerCall,
      concurrentPerSecond: many.perSecond,
      concurrentCpuUsPerCall: many.cpuUsPerCall,
      ...(count && { pollsPerTask: count.polls / count.tasks }),
    };
  } finally {
    await pair.close();
  }
}

/** Heap per finished task: `HEAP_TASKS` tasks run to their end, `HEAP_BATCH` at a time, all kept by the server. */
async function heapPerTask(open: OpenPair): Promise<Figures> {
  const pair = await open();
  try {
    const batch = () => Promise.all(Array.from({ length: HEAP_BATCH }, pair.call));
    const { bytesPerItem } = await measureHeapPerItem(batch, HEAP_TASKS / HEAP_BATCH, async () => {});
    return { bytesPerTask: bytesPerItem / HEAP_BATCH };
  } finally {
    await pair.close();
  }
}

function scenario(id: string, pairs: Readonly<Record<string, OpenPair>>, measure: typeof callFigures): Scenario {
  return {
    id,
    entrants: Object.entries(pairs).map(([name, open]) => ({ name, measure: (settings) => measure(open, settings) })),
  };
}

export const TASK_CALL_SCENARIOS: readonly Scenario[] = [
  scenario(
    'taskCall',
    {
      plain: ours('handshake', memoryStore, plain),
      'task-memory': ours('handshake', memoryStore, taskThenResult),
      'task-lmdb': ours('handshake', lmdbStore, taskThenResult),
      'handle-memory': ours('handshake', memoryStore, handle),
      'sdk-plain': sdk(false),
      'sdk-task': sdk(true),
    },
    callFigures,
  ),
  scenario(
    'taskCallModern',
    {
      plain: ours('modern', memoryStore, plain),
      'task-memory': modernTask(memoryStore),
      'task-lmdb': modernTask(lmdbStore),
    },
    callFigures,
  ),
  scenario('taskCallHeap', { ours: ours('handshake', memoryStore, taskThenResult), sdk: sdk(true) }, (open) =>
    heapPerTask(open),
  ),
];

const COST_NOTE = `In process, one pair per entrant, a new server and store each: our Client + Server on an unfrozen memory pair; the tool answers { content: [text] } at once and supports tasks (execution.taskSupport 'optional'); plain = tools/call of that tool. 2025-11-25: task = tools/call with task { ttl: 1 h } -> tasks/result (which the server answers at the task's end); handle = callToolAsTask -> handle.result (notifications/tasks/status, then tasks/result). 2026-07-28: tools/call declaring io.modelcontextprotocol/tasks -> tasks/get at once and, while working, again after setTimeout(0) (not at the task's pollIntervalMs). memory = MemoryTaskStore, lmdb = LmdbTaskStore on a temporary folder (commits flushed), both bounded at 10M tasks per owner and keeping every task an hour. 1 in flight then 256 in flight (settings.concurrency) on one pair, each after its own warm-up (the ioWindow); calls/s = calls / wall time; CPU = process.cpuUsage (user + system, every thread) / calls.`;

/** Task ÷ plain on one era's scenario: calls/s one at a time and many, CPU per call at both. */
function costRows(scenarioId: string, era: string, task: string, baseline: string, note?: string): Comparison[] {
  const row = (figure: string, label: string, unit: string, better: 'higher' | 'lower', extra = {}) =>
    entrantRow(scenarioId, figure, `${era}, ${label}, ${task}`, unit, better, task, baseline, extra);
  return [
    row('perSecond', '1 in flight', 'calls/s', 'higher', note === undefined ? {} : { note }),
    row('cpuUsPerCall', 'CPU per call, 1 in flight', 'us', 'lower'),
    row('concurrentPerSecond', '256 in flight', 'calls/s', 'higher'),
    row('concurrentCpuUsPerCall', 'CPU per call, 256 in flight', 'us', 'lower'),
  ];
}

export const TASK_CALL_COST: ComparisonTable = {
  title:
    'A task-augmented call vs a plain call of the same tool, in process (task / plain: what following a task costs)',
  subjectName: 'task',
  baselineName: 'plain',
  comparisons: [
    ...costRows('taskCall', '2025-11-25', 'task-memory', 'plain', COST_NOTE),
    ...costRows('taskCall', '2025-11-25', 'task-lmdb', 'plain'),
    ...costRows('taskCall', '2025-11-25', 'handle-memory', 'plain'),
    ...costRows('taskCallModern', '2026-07-28', 'task-memory', 'plain'),
    ...costRows('taskCallModern', '2026-07-28', 'task-lmdb', 'plain'),
    ...costRows('taskCall', 'SDK v1', 'sdk-task', 'sdk-plain'),
  ],
};

const SDK_NOTE =
  "SDK v1 (@modelcontextprotocol/sdk 1.x): Client + a new McpServer with capabilities.tasks.requests.tools.call and its InMemoryTaskStore; plain = registerTool('work'), task = registerToolTask('work-task', taskSupport 'optional') whose createTask makes the task and stores its result at once (its examples' out-of-band work, not awaited); the same two requests as ours: client.request(tools/call, CreateTaskResultSchema, { task: { ttl: 1 h } }) -> experimental.tasks.getTaskResult. Ours: the 2025-11-25 memory-store rows above.";
const HEAP_NOTE = `Heap used (after two full GCs) with ${HEAP_TASKS.toLocaleString('en-US')} finished tasks held, minus before, per task: ${HEAP_BATCH} task calls at a time followed to their end on one pair (2025-11-25, tools/call with task then tasks/result), every task kept an hour; ours = our Server on the MemoryTaskStore, SDK = McpServer on its InMemoryTaskStore (a cleanup timer per task with a ttl).`;

const sdkRow = (figure: string, label: string, unit: string, better: 'higher' | 'lower') =>
  entrantRow('taskCall', figure, label, unit, better, 'task-memory', 'sdk-task');

export const TASK_CALL_VS_SDK: ComparisonTable = {
  title:
    'Task-augmented calls (2025-11-25) in process: mcp-switchboard vs @modelcontextprotocol/sdk v1 experimental tasks',
  subjectName: 'ours',
  baselineName: 'SDK',
  comparisons: [
    { ...sdkRow('perSecond', 'task call to its end, 1 in flight', 'calls/s', 'higher'), note: SDK_NOTE },
    sdkRow('cpuUsPerCall', 'CPU per task call, 1 in flight', 'us', 'lower'),
    sdkRow('concurrentPerSecond', 'task call to its end, 256 in flight', 'calls/s', 'higher'),
    sdkRow('concurrentCpuUsPerCall', 'CPU per task call, 256 in flight', 'us', 'lower'),
    entrantRow('taskCall', 'perSecond', 'plain call, 1 in flight', 'calls/s', 'higher', 'plain', 'sdk-plain'),
    entrantRow('taskCall', 'cpuUsPerCall', 'CPU per plain call, 1 in flight', 'us', 'lower', 'plain', 'sdk-plain'),
    entrantRow('taskCallHeap', 'bytesPerTask', 'heap per finished task held', 'bytes', 'lower', 'ours', 'sdk', {
      note: HEAP_NOTE,
    }),
  ],
};

export const TASK_CALL_POLLS: SeriesListing = {
  title: 'tasks/get per 2026-07-28 task call (polled at once, then after setTimeout(0) while working)',
  unit: 'polls/task',
  series: ['task-memory', 'task-lmdb'].map((entrant) => ({
    label: entrant,
    ref: { scenario: 'taskCallModern', entrant, figure: 'pollsPerTask' },
  })),
};

runWhenMain(import.meta.url, TASK_CALL_SCENARIOS, [TASK_CALL_COST, TASK_CALL_VS_SDK]);
