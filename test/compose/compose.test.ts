/**
 * The hub over three upstreams — one in process, one stdio child (test/fixtures/compose/stdio-upstream.ts),
 * one over Streamable HTTP (our handler on 127.0.0.1) — driven by the official SDK client: names resolved
 * by the collision policy, `list_changed` passed on, a killed child restarted with its tools withdrawn and
 * restored, progress and cancellation across the hub, sampling answered by the right downstream client,
 * one upstream subscription for many downstream subscribers, and the logging level forwarded.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  CreateMessageRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import { Subject, type Observable } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../../lib/client/client';
import { Hub } from '../../lib/compose/hub';
import type { TraceEvent } from '../../lib/trace/types';
import type { UpstreamState } from '../../machines/upstream';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { createStreamableHttpHandler } from '../../transports/http/streamable-server';
import { text } from '../helpers/content';
import { recordingLogger, tool } from '../helpers/fixtures';
import { recordEmitted } from '../helpers/schema';
import { cleanups, serveOverSdkTransport } from '../helpers/sdk';
import { eventually, nextEvent, within } from '../helpers/wait';
import { fixturePath } from '../helpers/paths';

const childScript = fixturePath('compose/stdio-upstream.ts');

const counterChanges = new Subject<void>();
const local = new Server(
  defineServer({
    name: 'local',
    version: '1.0.0',
    tools: [
      tool('echo', (args) => text(`local:${JSON.stringify(args)}`)),
      tool('steps', async (_args, ctx) => {
        await ctx.progress(1, 2, 'half way');
        await ctx.progress(2, 2, 'done');
        return text('stepped');
      }),
    ],
    resources: [{ uri: 'mem://counter', name: 'counter', read: () => 'the counter', updates: counterChanges }],
  }),
);
const remote = new Server(
  defineServer({ name: 'remote', version: '1.0.0', tools: [tool('echo', () => text('remote'))] }),
);

const logger = recordingLogger();
let hub: Hub;
let httpServer: http.Server;
let httpHandler: ReturnType<typeof createStreamableHttpHandler>;
const upstreamClients = new Map<string, Client[]>();
const recorders: { assertValid(): void }[] = [];
const states: { name: string; state: UpstreamState }[] = [];

beforeAll(async () => {
  httpHandler = createStreamableHttpHandler(remote);
  httpServer = http.createServer(httpHandler);
  await new Promise<void>((resolve) => httpServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpServer.address() as AddressInfo;
  const url = new URL(`http://127.0.0.1:${port}/mcp`);

  hub = new Hub({
    name: 'test-hub',
    logger,
    listChangedDebounceMs: 5,
    upstreams: [
      { name: 'local', source: { kind: 'in-process', server: local } },
      {
        name: 'child',
        source: { kind: 'stdio', command: process.execPath, args: ['--import', 'tsx', childScript] },
        naming: { collision: 'rename' },
        supervision: { initialDelayMs: 20, maxDelayMs: 100 },
        // A shared upstream is offered no client's roots unless its config says so.
        forward: { roots: true },
        // This file follows the handshake era's forwarding (logging/setLevel, roots/list_changed) through
        // the child; test/compose/hub-modern.test.ts follows the same features to 2026-07-28 upstreams.
        era: 'handshake',
      },
      {
        name: 'remote',
        source: { kind: 'http', url: url.href },
        naming: { prefix: 'remote' },
      },
    ],
    onUpstreamClient: (name, client) => {
      upstreamClients.set(name, [...(upstreamClients.get(name) ?? []), client]);
      recorders.push(recordEmitted(client));
    },
  });
  hub.status$.subscribe(({ name, state }) => {
    const last = states.filter((entry) => entry.name === name).at(-1);
    if (last?.state !== state) states.push({ name, state });
  });
  await hub.start();
}, 20_000);

afterEach(() => {
  for (const recorder of recorders) recorder.assertValid();
});

afterAll(async () => {
  await hub?.close();
  await httpHandler?.close();
  httpServer?.closeAllConnections();
  await new Promise((resolve) => httpServer?.close(resolve));
});

interface Downstream {
  readonly sdk: SdkClient;
  readonly logs: LoggingMessageNotification['params'][];
  /** Each log message, as it arrives. */
  readonly logged: Observable<LoggingMessageNotification['params']>;
  readonly toolListChanges: { count: number };
  /** Each tools/list_changed, as it arrives. */
  readonly toolListChanged: Observable<number>;
  readonly sampled: string[];
  /** Each resources/updated URI, as it arrives. */
  readonly updated: Observable<string>;
}

/**
 * An official SDK client connected to the hub in memory (what the hub sends it is schema-checked), closed
 * after the test (or by the caller, with `closedAfterTest: false`).
 */
async function downstream(
  samplingAnswer = 'the model says hi',
  roots: { uri: string }[] = [],
  closedAfterTest = true,
): Promise<Downstream> {
  const [sdkSide, ourSide] = InMemoryTransport.createLinkedPair();
  serveOverSdkTransport(hub.server, ourSide);
  const sdk = new SdkClient(
    { name: 'sdk-client', version: '1.0.0' },
    { capabilities: { sampling: {}, roots: { listChanged: true } } },
  );
  const logged = new Subject<LoggingMessageNotification['params']>();
  const toolListChanged = new Subject<number>();
  const updated = new Subject<string>();
  const client: Downstream = {
    sdk,
    logs: [],
    logged,
    toolListChanges: { count: 0 },
    toolListChanged,
    sampled: [],
    updated,
  };
  sdk.setRequestHandler(CreateMessageRequestSchema, (request) => {
    const asked = request.params.messages[0]!.content as { type: string; text?: string };
    client.sampled.push(asked.text ?? asked.type);
    return { role: 'assistant', content: { type: 'text', text: samplingAnswer }, model: 'test-model' };
  });
  sdk.setRequestHandler(ListRootsRequestSchema, () => ({ roots }));
  sdk.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
    client.logs.push(params);
    logged.next(params);
  });
  sdk.setNotificationHandler(ToolListChangedNotificationSchema, () =>
    toolListChanged.next(++client.toolListChanges.count),
  );
  sdk.setNotificationHandler(ResourceUpdatedNotificationSchema, ({ params }) => updated.next(params.uri));
  if (closedAfterTest) cleanups.push(() => sdk.close());
  await sdk.connect(sdkSide);
  return client;
}

const toolNames = async (sdk: SdkClient) => (await sdk.listTools()).tools.map((listed) => listed.name).sort();
const callText = async (sdk: SdkClient, name: string, args: Record<string, unknown> = {}) => {
  const result = await sdk.callTool({ name, arguments: args });
  return (result.content as { text: string }[])[0]!.text;
};
const childStats = async (sdk: SdkClient) =>
  JSON.parse(await callText(sdk, 'stats')) as { cancellations: number; logLevel: string | null };

/** The hub's next trace event on the side of upstream `name` for `method`, of `kind` going `direction`. */
const upstreamEvent = (name: string, method: string, kind: TraceEvent['kind'], direction: TraceEvent['direction']) =>
  nextEvent(
    hub.trace$,
    (event) =>
      event.upstream === name && event.method === method && event.kind === kind && event.direction === direction,
    `${direction === 'out' ? 'sending' : 'receiving'} ${method} (${kind}) on the side of ${name}`,
  );

describe('a hub over an in-process, a stdio and a Streamable HTTP upstream', () => {
  it('names itself and carries the instructions of its upstreams', async () => {
    const { sdk } = await downstream();
    expect(sdk.getServerVersion()).toMatchObject({ name: 'test-hub' });
    expect(sdk.getInstructions()).toBe('## child\n\nThe child fixture.');
  });

  it('serves one catalog, each collision resolved by the policy of the upstream that comes later', async () => {
    const { sdk } = await downstream();
    expect(await toolNames(sdk)).toEqual([
      'ask',
      'chatter',
      'child__echo',
      'echo',
      'pid',
      'remote__echo',
      'roots',
      'slow',
      'stats',
      'steps',
    ]);
    // The child's echo clashed with the in-process one, listed first: `rename` put the child's name in front.
    expect(hub.problems.map((problem) => [problem.severity, problem.upstream, problem.original])).toEqual([
      ['info', 'child', 'echo'],
    ]);
  });

  it('routes each tool name to the upstream it came from', async () => {
    const { sdk } = await downstream();
    expect(await callText(sdk, 'echo', { n: 1 })).toBe('local:{"n":1}');
    expect(await callText(sdk, 'child__echo', { n: 2 })).toBe('child:{"n":2}');
    expect(await callText(sdk, 'remote__echo')).toBe('remote');
  });

  it('serves the prompts of its upstreams', async () => {
    const { sdk } = await downstream();
    expect((await sdk.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['greet']);
    expect(await sdk.getPrompt({ name: 'greet', arguments: { who: 'Ada' } })).toEqual({
      messages: [{ role: 'user', content: { type: 'text', text: 'Hello, Ada' } }],
    });
  });

  it('reports every upstream ready and serving', () => {
    expect(hub.status().map(({ name, state, serving }) => ({ name, state, serving }))).toEqual([
      { name: 'local', state: 'ready', serving: true },
      { name: 'child', state: 'ready', serving: true },
      { name: 'remote', state: 'ready', serving: true },
    ]);
  });

  it("passes an in-process upstream's list_changed downstream once the new list is in the catalog", async () => {
    const { sdk, toolListChanged } = await downstream();
    const changed = nextEvent(toolListChanged, () => true, 'the downstream client heard list_changed');
    local.update((definition) => definition.withTools(tool('added', () => text('new'))));
    await changed;
    expect(await toolNames(sdk)).toContain('added');
    expect(await callText(sdk, 'added')).toBe('new');
  });

  it("passes an HTTP upstream's list_changed downstream once the new list is in the catalog", async () => {
    const { sdk, toolListChanged } = await downstream();
    const changed = nextEvent(toolListChanged, () => true, 'the remote change reached the downstream client');
    remote.update((definition) => definition.withTools(tool('second', () => text('remote two'))));
    await changed;
    expect(await callText(sdk, 'remote__second')).toBe('remote two');
  });

  describe('a child killed with SIGKILL', () => {
    let client: Downstream;
    let firstPid: number;
    let changesBefore: number;
    let servedWhileDown: boolean | undefined;

    beforeAll(async () => {
      client = await downstream('hi', [], false);
      const child = hub.upstream('child')!;
      firstPid = child.status.pid!;
      expect(await callText(client.sdk, 'pid')).toBe(String(firstPid));
      const watching = child.status$.subscribe(({ state }) => {
        // Reconnecting -> connecting happens after the backoff: a withdrawal would be in the catalog by then.
        if (state === 'connecting') servedWhileDown ??= hub.server.definition.tools!.has('child__echo');
      });
      changesBefore = client.toolListChanges.count;
      const back = nextEvent(
        child.status$,
        (status) => status.state === 'ready' && status.pid !== firstPid,
        'the child is back',
        10_000,
      );
      process.kill(firstPid, 'SIGKILL');
      await back;
      watching.unsubscribe();
    }, 20_000);

    afterAll(() => client.sdk.close());

    it('is restarted as a new process', () => {
      expect(hub.upstream('child')!.status.pid).not.toBe(firstPid);
    });

    it('goes through reconnecting and connecting back to ready', () => {
      const childStates = states.filter((entry) => entry.name === 'child').map((entry) => entry.state);
      expect(childStates.slice(-4)).toEqual(['ready', 'reconnecting', 'connecting', 'ready']);
    });

    it('counts the failure and names its cause', () => {
      const child = hub.upstream('child')!;
      expect(child.status.failures).toBe(1);
      expect(child.status.lastError).toMatch(/killed by SIGKILL/);
      expect(logger.lines).toContainEqual(expect.stringMatching(/^(warn|error): \[child\] Lost: .*killed by SIGKILL/));
    });

    it('keeps its tools listed while it is down', () => {
      expect(servedWhileDown).toBe(true);
    });

    it('announces no list change: the catalog never changed', async () => {
      expect(await toolNames(client.sdk)).toContain('child__echo');
      expect(client.toolListChanges.count).toBe(changesBefore);
    });

    it('serves its tools from the new process after a new handshake', async () => {
      expect(await callText(client.sdk, 'pid')).toBe(String(hub.upstream('child')!.status.pid));
    });
  });

  /** Calls the child's `slow` tool, cancelling it after two progress reports. */
  async function cancelAfterTwoSteps(sdk: SdkClient) {
    const controller = new AbortController();
    const progress: { progress: number; message?: string }[] = [];
    const failure = await sdk
      .callTool({ name: 'slow', arguments: {} }, undefined, {
        signal: controller.signal,
        onprogress: ({ progress: value, message }) => {
          progress.push({ progress: value, ...(message !== undefined && { message }) });
          if (progress.length === 2) controller.abort('enough');
        },
      })
      .catch((error: unknown) => error);
    return { failure, progress };
  }

  it("carries a stdio upstream's progress downstream", async () => {
    const { sdk } = await downstream();
    const { failure, progress } = await cancelAfterTwoSteps(sdk);
    expect(failure).toMatchObject({ message: expect.stringMatching(/enough/) });
    expect(progress).toEqual([
      { progress: 1, message: 'step 1' },
      { progress: 2, message: 'step 2' },
    ]);
  });

  it('passes a downstream cancel to the upstream', async () => {
    const { sdk } = await downstream();
    const before = (await childStats(sdk)).cancellations;
    await cancelAfterTwoSteps(sdk);
    // The child counts the cancel when its handler next looks at its signal: only its own counter shows it.
    await eventually(async () => (await childStats(sdk)).cancellations === before + 1, 'the child saw the cancel');
  });

  it("carries an in-process handler's progress, reported on the downstream request itself", async () => {
    const { sdk } = await downstream();
    const steps: number[] = [];
    await sdk.callTool({ name: 'steps', arguments: {} }, undefined, {
      onprogress: ({ progress: p }) => void steps.push(p),
    });
    expect(steps).toEqual([1, 2]);
  });

  it('sends a sampling request of an upstream to the downstream client whose call caused it', async () => {
    const first = await downstream('from the first client');
    const second = await downstream('from the second client');
    expect(await callText(second.sdk, 'ask', { question: 'who are you?' })).toBe('answered: from the second client');
    expect(second.sampled).toEqual(['who are you?']);
    expect(first.sampled).toEqual([]);
    expect(await callText(first.sdk, 'ask', { question: 'and you?' })).toBe('answered: from the first client');
  });

  describe('one resource, two downstream subscribers', () => {
    /** The requests the hub sent the in-process upstream while `during` ran. */
    async function upstreamRequests(during: () => Promise<void>): Promise<string[]> {
      const sent: string[] = [];
      const tracing = upstreamClients
        .get('local')!
        .at(-1)!
        .trace$.subscribe((event) => {
          if (event.direction === 'out' && event.kind === 'request') sent.push(event.method!);
        });
      await during();
      tracing.unsubscribe();
      return sent;
    }

    it('makes one upstream subscription however many downstream clients subscribe', async () => {
      const clients = await Promise.all([downstream(), downstream()]);
      const sent = await upstreamRequests(async () => {
        const subscribed = upstreamEvent('local', 'resources/subscribe', 'result', 'in');
        for (const { sdk } of clients) await sdk.subscribeResource({ uri: 'mem://counter' });
        await subscribed;
      });
      expect(sent.filter((method) => method.startsWith('resources/'))).toEqual(['resources/subscribe']);
    });

    it('passes an upstream update to every downstream subscriber', async () => {
      const clients = await Promise.all([downstream(), downstream()]);
      const subscribed = upstreamEvent('local', 'resources/subscribe', 'result', 'in');
      for (const { sdk } of clients) await sdk.subscribeResource({ uri: 'mem://counter' });
      await subscribed;
      const heard = clients.map(({ updated }) =>
        nextEvent(updated, () => true, 'a downstream client heard the update'),
      );
      counterChanges.next();
      expect(await Promise.all(heard)).toEqual(['mem://counter', 'mem://counter']);
    });

    /** Two downstream clients that subscribed to mem://counter, then unsubscribed; what the hub sent upstream meanwhile. */
    async function subscribeThenLeave() {
      const clients = await Promise.all([downstream(), downstream()]);
      for (const { sdk } of clients) await sdk.subscribeResource({ uri: 'mem://counter' });
      const sent = await upstreamRequests(async () => {
        const unsubscribed = upstreamEvent('local', 'resources/unsubscribe', 'result', 'in');
        for (const { sdk } of clients) await sdk.unsubscribeResource({ uri: 'mem://counter' });
        await unsubscribed;
      });
      return { clients, sent };
    }

    it('unsubscribes upstream once the last downstream subscriber has left', async () => {
      const { sent } = await subscribeThenLeave();
      expect(sent.filter((method) => method.startsWith('resources/'))).toEqual(['resources/unsubscribe']);
    });

    it('still reads the resource once nobody subscribes', async () => {
      const { clients } = await subscribeThenLeave();
      expect(await clients[0]!.sdk.readResource({ uri: 'mem://counter' })).toEqual({
        contents: [{ uri: 'mem://counter', text: 'the counter' }],
      });
    });
  });

  it("forwards a downstream client's logging level to the upstream", async () => {
    const { sdk } = await downstream();
    const answered = upstreamEvent('child', 'logging/setLevel', 'result', 'in');
    await sdk.setLoggingLevel('warning');
    await answered;
    expect((await childStats(sdk)).logLevel).toBe('warning');
  });

  it("passes the upstream's log messages at the level asked for downstream", async () => {
    const { sdk, logged, logs } = await downstream();
    const answered = upstreamEvent('child', 'logging/setLevel', 'result', 'in');
    await sdk.setLoggingLevel('warning');
    await answered;
    const first = nextEvent(logged, () => true, 'the error line');
    expect(await callText(sdk, 'chatter')).toBe('logged');
    await first;
    expect(logs).toEqual([{ level: 'error', logger: 'child', data: 'an error line' }]);
  });

  it("offers the downstream clients' roots to an upstream whose forward.roots is on", async () => {
    const announced = upstreamEvent('child', 'notifications/roots/list_changed', 'notification', 'out');
    const { sdk } = await downstream('hi', [{ uri: 'file:///work/project' }]);
    await within(announced, 'the roots announced to the child');
    expect(await callText(sdk, 'roots')).toBe('["file:///work/project"]');
  });
});
