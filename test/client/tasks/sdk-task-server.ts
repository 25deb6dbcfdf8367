/**
 * An SDK v1 McpServer with experimental tasks (2025-11-25): its own in-memory task store and message queue
 * (so a task's input requests travel only on `tasks/result`, as the spec asks), shared by every server this
 * fixture makes, as a restarted client would find them. Tools (all task-capable unless said):
 * - `echo {text}`: completes with `echo: <text>` once the test releases it (`release`);
 * - `fail`: fails (the SDK stores a tool error as the failed task's result);
 * - `hold`: runs until cancelled;
 * - `confirm {file}`: asks the client (`elicitation/create`, related to the task) and completes with the answer;
 * - `plain`: no task support (runs at once).
 */
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  InMemoryTaskMessageQueue,
  InMemoryTaskStore,
  type CreateTaskRequestHandlerExtra,
} from '@modelcontextprotocol/sdk/experimental/tasks';
import { ElicitResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { Client, type ClientOptions } from '../../../lib/client/client';
import { fromSdkTransport, type SdkTransportLike } from '../../../transports/sdk-adapter';
import { cleanups } from '../../helpers/cleanups';
import { deferred } from '../../helpers/fixtures';

export const SDK_SERVER_NAME = 'sdk-task-server';

export interface SdkTaskWorld {
  readonly store: InMemoryTaskStore;
  readonly queue: InMemoryTaskMessageQueue;
  /** Lets the `echo` tasks finish. */
  release(): void;
  /** A new client connected (handshake era) to a new SDK server on the shared store. */
  connect(options?: ClientOptions, serverName?: string): Promise<Client>;
  /** Closes the SDK server of the latest `connect`, as a server that goes away. */
  closeServer(): Promise<void>;
}

type Extra = CreateTaskRequestHandlerExtra;

/** An input schema for a tool of no arguments (the SDK calls a task tool without one with `extra` alone). */
const NO_ARGS = { note: z.string().optional() };

/** Starts a task and runs `work` in the background: its result completes the task, its error fails it. */
async function startTask(
  extra: Extra,
  work: (taskId: string) => Promise<{ content: { type: 'text'; text: string }[] }>,
) {
  const task = await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? 60_000, pollInterval: 50 });
  // The result is stored before the status notification, which fails once the test closed the server.
  void work(task.taskId)
    .then(
      (result) => extra.taskStore.storeTaskResult(task.taskId, 'completed', result),
      (error: Error) =>
        extra.taskStore.storeTaskResult(task.taskId, 'failed', {
          content: [{ type: 'text', text: error.message }],
          isError: true,
        }),
    )
    .catch(() => undefined);
  return { task };
}

const taskHandlers = (work: (args: any, extra: Extra, taskId: string) => Promise<any>) => ({
  createTask: (args: any, extra: Extra) => startTask(extra, (taskId) => work(args, extra, taskId)),
  getTask: (_args: any, extra: any) => extra.taskStore.getTask(extra.taskId),
  getTaskResult: (_args: any, extra: any) => extra.taskStore.getTaskResult(extra.taskId),
});

export function sdkTaskWorld(): SdkTaskWorld {
  const store = new InMemoryTaskStore();
  const queue = new InMemoryTaskMessageQueue();
  const released = deferred();
  let latest: McpServer | undefined;
  cleanups.push(() => store.cleanup());

  const server = (name: string) => {
    const mcp = new McpServer(
      { name, version: '1.0.0' },
      {
        capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
        taskStore: store,
        taskMessageQueue: queue,
      },
    );
    const tasks = mcp.experimental.tasks;
    const optional = { taskSupport: 'optional' as const };
    tasks.registerToolTask(
      'echo',
      { inputSchema: { text: z.string() }, execution: optional },
      taskHandlers(async ({ text }) => {
        await released.promise;
        return { content: [{ type: 'text', text: `echo: ${text}` }] };
      }),
    );
    tasks.registerToolTask(
      'fail',
      { inputSchema: NO_ARGS, execution: optional },
      taskHandlers(async () => {
        throw new Error('the job broke');
      }),
    );
    tasks.registerToolTask(
      'hold',
      { inputSchema: NO_ARGS, execution: optional },
      taskHandlers(() => new Promise(() => undefined)),
    );
    tasks.registerToolTask(
      'confirm',
      { inputSchema: { file: z.string() }, execution: { taskSupport: 'required' } },
      taskHandlers(async ({ file }, extra, taskId) => {
        const answer = await extra.sendRequest(
          {
            method: 'elicitation/create',
            params: {
              mode: 'form',
              message: `Delete ${file}?`,
              requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
            },
          },
          ElicitResultSchema,
          // The SDK's types leave `relatedTask` out of a handler's options; its runtime honours it, and nothing
          // else relates a request of the task to it (the task was made by this very call).
          { relatedTask: { taskId } } as never,
        );
        return { content: [{ type: 'text', text: `${answer.action}: ${JSON.stringify(answer.content)}` }] };
      }),
    );
    mcp.registerTool('plain', { description: 'no task support' }, async () => ({
      content: [{ type: 'text', text: 'plain' }],
    }));
    return mcp;
  };

  return {
    store,
    queue,
    release: () => released.resolve(),
    closeServer: () => latest!.close(),
    async connect(options = {}, serverName = SDK_SERVER_NAME) {
      const mcp = (latest = server(serverName));
      const [ourSide, sdkSide] = InMemoryTransport.createLinkedPair();
      await mcp.connect(sdkSide);
      const client = new Client({ name: 'task-client', version: '1.0.0' }, options);
      cleanups.push(
        () => mcp.close(),
        () => client.close(),
      );
      await client.connect(fromSdkTransport(ourSide as unknown as SdkTransportLike));
      return client;
    },
  };
}
