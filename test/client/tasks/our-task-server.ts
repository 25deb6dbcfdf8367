/**
 * Our own server with the conformance suite's task tools (test/fixtures/tasks/task-tools.ts), and our clients
 * connected to it in one of four setups: either era, in process (a memory pair) or over Streamable HTTP on
 * 127.0.0.1. `slow_compute` is the suite's, wrapped only to tell when its handler run starts and ends (and how),
 * so a test can see a cancelled task's handler stop. Everything the clients emit is checked against their era's
 * schema, and in the stateless revision what the server answers them too.
 */
import { Client, type ClientOptions } from '../../../lib/client/client';
import { META } from '../../../lib/protocol/modern';
import { defineServer } from '../../../lib/server/definition';
import { Server } from '../../../lib/server/server';
import type { ToolSpec } from '../../../lib/server/tools';
import { TASKS_EXTENSION_ID } from '../../../lib/tasks/task-wire';
import { createMcpHttpHandler } from '../../../transports/http/endpoint';
import { StreamableHttpClientTransport } from '../../../transports/http/streamable-client';
import { createMemoryPair } from '../../../transports/memory';
import { TASK_TOOLS } from '../../fixtures/tasks/task-tools';
import { cleanups, listenHttp, type SeenRequest } from '../../helpers/http';
import { recordEmitted } from '../../helpers/schema';
import { modernProblemsOf } from '../../helpers/schema-modern';
import { validateEveryModernExchange } from '../../helpers/modern-wire';
import { within } from '../../helpers/wait';

export type Era = 'handshake' | 'modern';
export type Over = 'memory' | 'HTTP';

export interface Setup {
  readonly era: Era;
  readonly over: Over;
}

/** Every setup, named for `describe.each` (`$name`). */
export const SETUPS = (['handshake', 'modern'] as const).flatMap((era) =>
  (['memory', 'HTTP'] as const).map((over) => ({ era, over, name: `${era} over ${over}` })),
);

export const SERVER_NAME = 'our-task-server';
/** The fastest poll a client accepts (`MIN_POLL_MS`): the tests wait as little as they can. */
const POLL_MS = 50;

const wireChecks: { assertValid(): void }[] = [];

/** Checks what the clients of the test sent, and what the server answered them (call it in `afterEach`). */
export function assertWireValid(): void {
  for (const record of wireChecks.splice(0)) record.assertValid();
}

/**
 * Records what `client` emits: checked against the schema of its era, except the tasks extension's requests of
 * the stateless revision, which the core 2026-07-28 schema does not hold: those are checked as JSON-RPC requests
 * that carry the envelope, declare the extension and name a task.
 */
function recordClient(client: Client, era: Era): void {
  if (era === 'handshake') return void wireChecks.push(recordEmitted(client));
  const failures: string[] = [];
  client.trace$.subscribe((event) => {
    if (event.direction !== 'out' || event.message === undefined || event.kind === 'ignored') return;
    const message = event.message as Record<string, any>;
    const extension = typeof message.method === 'string' && message.method.startsWith('tasks/');
    const problems = modernProblemsOf(message).filter((problem) => !extension || !problem.startsWith('ClientRequest'));
    if (extension) problems.push(...taskRequestProblems(message));
    if (problems.length > 0) failures.push(`${JSON.stringify(message).slice(0, 300)}\n  ${problems.join('\n  ')}`);
  });
  wireChecks.push({
    assertValid() {
      if (failures.length > 0) throw new Error(`Emitted messages failed validation:\n${failures.join('\n')}`);
    },
  });
}

function taskRequestProblems(message: Record<string, any>): string[] {
  const params = message.params ?? {};
  const meta = params._meta ?? {};
  const problems: string[] = [];
  if (meta[META.protocolVersion] !== '2026-07-28') problems.push('no protocol version in _meta');
  if (meta[META.clientCapabilities]?.extensions?.[TASKS_EXTENSION_ID] === undefined) {
    problems.push('the tasks extension is not declared');
  }
  if (typeof params.taskId !== 'string') problems.push('no taskId');
  const update = message.method === 'tasks/update';
  if (update !== (params.inputResponses !== undefined)) problems.push('inputResponses belong to tasks/update only');
  if (update && (typeof params.inputResponses !== 'object' || Array.isArray(params.inputResponses))) {
    problems.push('inputResponses is not an object');
  }
  return problems;
}

export interface TaskWorld {
  readonly server: Server;
  /** `http://127.0.0.1:<port>/mcp` over HTTP; undefined in memory. */
  readonly url: string | undefined;
  /** A new client connected to the server in the world's setup (over HTTP: at `url`, or the URL given). */
  connect(options?: ClientOptions, url?: string): Promise<Client>;
  /** Over HTTP: the same server served at another URL. */
  anotherUrl(): Promise<string>;
  /** Over HTTP: the requests the server received at `url`, with their headers (none in memory). */
  readonly seen: readonly SeenRequest[];
  /** Resolves once a `slow_compute` run labelled `label` started. */
  slowComputeStarted(label: string): Promise<void>;
  /** Settles once the `slow_compute` run labelled `label` ended: with its result, or the reason it threw. */
  slowComputeEnded(label: string): Promise<RunEnd>;
}

type RunEnd = { returned: unknown } | { threw: unknown };

/** One `slow_compute` run, as a test sees it. */
class Run {
  readonly started: Promise<void>;
  readonly ended: Promise<RunEnd>;
  start!: () => void;
  end!: (end: RunEnd) => void;

  constructor() {
    this.started = new Promise((resolve) => (this.start = resolve));
    this.ended = new Promise((resolve) => (this.end = resolve));
  }
}

/** A server named `name` serving the task tools, reached in `setup`; closed after the test. */
export async function taskWorld(setup: Setup, name = SERVER_NAME): Promise<TaskWorld> {
  const runs = new Map<string, Run>();
  const runOf = (label: string) => {
    let run = runs.get(label);
    if (!run) runs.set(label, (run = new Run()));
    return run;
  };
  const tools = TASK_TOOLS.map((tool): ToolSpec<any, any> => {
    if (tool.name !== 'slow_compute') return tool;
    return {
      ...tool,
      handler: async (args: { label?: string }, ctx: never) => {
        const run = runOf(args.label ?? 'job');
        run.start();
        try {
          const returned = await tool.handler(args, ctx);
          run.end({ returned });
          return returned;
        } catch (threw) {
          run.end({ threw });
          throw threw;
        }
      },
    };
  });
  const server = new Server(defineServer({ name, version: '1.0.0', tools }), { tasks: { pollIntervalMs: POLL_MS } });
  cleanups.push(() => server.close());
  if (setup.era === 'modern') {
    const problems = validateEveryModernExchange(server);
    wireChecks.push({
      assertValid() {
        if (problems.length > 0) throw new Error(`The server's answers failed validation:\n${problems.join('\n')}`);
      },
    });
  }
  const serve = async () => {
    const handler = createMcpHttpHandler(server);
    cleanups.push(() => handler.close());
    return listenHttp(handler);
  };
  const served = setup.over === 'HTTP' ? await serve() : undefined;
  const url = served && `${served.origin}/mcp`;
  return {
    server,
    url,
    anotherUrl: async () => `${(await serve()).origin}/mcp`,
    seen: served?.seen ?? [],
    async connect(options = {}, at = url) {
      const client = new Client(
        { name: 'task-client', version: '1.0.0' },
        { era: setup.era, eraCache: false, ...options },
      );
      recordClient(client, setup.era);
      cleanups.push(() => client.close());
      if (at !== undefined) return client.connect(new StreamableHttpClientTransport(at));
      const [clientSide, serverSide] = createMemoryPair();
      server.connect(serverSide);
      return client.connect(clientSide);
    },
    slowComputeStarted: (label) => within(runOf(label).started, `the start of slow_compute ${label}`),
    slowComputeEnded: (label) => within(runOf(label).ended, `the end of slow_compute ${label}`),
  };
}
