/**
 * The hub over three upstreams — one in process, one stdio child (test/fixtures/compose/stdio-upstream.ts),
 * one over Streamable HTTP (our handler on 127.0.0.1) — driven by the official SDK client: names resolved
 * by the collision policy, `list_changed` passed on, a killed child restarted with its tools withdrawn and
 * restored, progress and cancellation across the hub, sampling answered by the right downstream client,
 * one upstream subscription for many downstream subscribers, and the logging level forwarded.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
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
import { Subject } from 'rxjs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '../lib/client/client';
import { Hub } from '../lib/compose/hub';
import type { Logger } from '../lib/core/logger';
import type { UpstreamState } from '../machines/upstream';
import { defineServer } from '../lib/server/definition';
import { Server } from '../lib/server/server';
import { createStreamableHttpHandler } from '../transports/http/streamable-server';
import { tool } from './helpers/fixtures';
import { recordEmitted } from './helpers/schema';
import { cleanups, serveOverSdkTransport } from './helpers/sdk';

const childScript = fileURLToPath(new URL('./fixtures/compose/stdio-upstream.ts', import.meta.url));
const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });

/** Polls until `check` holds (no timing is asserted: only that it eventually holds). */
async function eventually(check: () => boolean | Promise<boolean>, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

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

const warnings: string[] = [];
const logger: Logger = {
  debug: () => {},
  info: () => {},
  warn: (line) => void warnings.push(line),
  error: (line) => void warnings.push(line),
};
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
  readonly toolListChanges: { count: number };
  readonly sampled: string[];
}

/** An official SDK client connected to the hub in memory (what the hub sends it is schema-checked). */
async function downstream(samplingAnswer = 'the model says hi', roots: { uri: string }[] = []): Promise<Downstream> {
  const [sdkSide, ourSide] = InMemoryTransport.createLinkedPair();
  serveOverSdkTransport(hub.server, ourSide);
  const sdk = new SdkClient(
    { name: 'sdk-client', version: '1.0.0' },
    { capabilities: { sampling: {}, roots: { listChanged: true } } },
  );
  const client: Downstream = { sdk, logs: [], toolListChanges: { count: 0 }, sampled: [] };
  sdk.setRequestHandler(CreateMessageRequestSchema, (request) => {
    const asked = request.params.messages[0]!.content as { type: string; text?: string };
    client.sampled.push(asked.text ?? asked.type);
    return { role: 'assistant', content: { type: 'text', text: samplingAnswer }, model: 'test-model' };
  });
  sdk.setRequestHandler(ListRootsRequestSchema, () => ({ roots }));
  sdk.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => void client.logs.push(params));
  sdk.setNotificationHandler(ToolListChangedNotificationSchema, () => void client.toolListChanges.count++);
  cleanups.push(() => sdk.close());
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

describe('a hub over an in-process, a stdio and a Streamable HTTP upstream', () => {
  it('serves one catalog, each collision resolved by the policy of the upstream that comes later', async () => {
    const { sdk } = await downstream();
    expect(sdk.getServerVersion()).toMatchObject({ name: 'test-hub' });
    expect(sdk.getInstructions()).toBe('## child\n\nThe child fixture.');
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
    expect(await callText(sdk, 'echo', { n: 1 })).toBe('local:{"n":1}');
    expect(await callText(sdk, 'child__echo', { n: 2 })).toBe('child:{"n":2}');
    expect(await callText(sdk, 'remote__echo')).toBe('remote');
    expect(hub.problems.map((problem) => [problem.severity, problem.upstream, problem.original])).toEqual([
      ['info', 'child', 'echo'],
    ]);
    expect((await sdk.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(['greet']);
    expect(await sdk.getPrompt({ name: 'greet', arguments: { who: 'Ada' } })).toEqual({
      messages: [{ role: 'user', content: { type: 'text', text: 'Hello, Ada' } }],
    });
    expect(hub.status().map(({ name, state, serving }) => ({ name, state, serving }))).toEqual([
      { name: 'local', state: 'ready', serving: true },
      { name: 'child', state: 'ready', serving: true },
      { name: 'remote', state: 'ready', serving: true },
    ]);
  });

  it("passes an upstream's list_changed downstream once the new list is in the catalog", async () => {
    const { sdk, toolListChanges } = await downstream();
    local.update((definition) => definition.withTools(tool('added', () => text('new'))));
    await eventually(() => toolListChanges.count > 0, 'the downstream client heard list_changed');
    expect(await toolNames(sdk)).toContain('added');
    expect(await callText(sdk, 'added')).toBe('new');

    remote.update((definition) => definition.withTools(tool('second', () => text('remote two'))));
    await eventually(() => toolListChanges.count > 1, 'the remote change reached the downstream client');
    expect(await callText(sdk, 'remote__second')).toBe('remote two');
  });

  it('restarts a killed child, keeping its tools listed while it is down (no list change) and serving them after a new handshake', async () => {
    const { sdk, toolListChanges } = await downstream();
    const child = hub.upstream('child')!;
    const firstPid = child.status.pid!;
    expect(await callText(sdk, 'pid')).toBe(String(firstPid));
    let servedWhileDown: boolean | undefined;
    const watching = child.status$.subscribe(({ state }) => {
      // Reconnecting -> connecting happens after the backoff: a withdrawal would be in the catalog by then.
      if (state === 'connecting') servedWhileDown ??= hub.server.definition.tools!.has('child__echo');
    });
    const changesBefore = toolListChanges.count;
    process.kill(firstPid, 'SIGKILL');
    await eventually(() => child.status.state === 'ready' && child.status.pid !== firstPid, 'the child is back');
    watching.unsubscribe();
    expect(servedWhileDown).toBe(true);
    const childStates = states.filter((entry) => entry.name === 'child').map((entry) => entry.state);
    expect(childStates.slice(-4)).toEqual(['ready', 'reconnecting', 'connecting', 'ready']);
    expect(child.status.failures).toBe(1);
    expect(child.status.lastError).toMatch(/killed by SIGKILL/);
    expect(warnings).toContainEqual(expect.stringMatching(/^\[child\] Lost: .*killed by SIGKILL/));
    // The same tools after the restart: the catalog never changed, so no list change was announced.
    expect(await toolNames(sdk)).toContain('child__echo');
    expect(toolListChanges.count).toBe(changesBefore);
    expect(await callText(sdk, 'pid')).toBe(String(child.status.pid));
  });

  it('carries progress across the hub, and a downstream cancel reaches the upstream', async () => {
    const { sdk } = await downstream();
    const before = (await childStats(sdk)).cancellations;
    const controller = new AbortController();
    const progress: { progress: number; message?: string }[] = [];
    const call = sdk
      .callTool({ name: 'slow', arguments: {} }, undefined, {
        signal: controller.signal,
        onprogress: ({ progress: value, message }) => {
          progress.push({ progress: value, ...(message !== undefined && { message }) });
          if (progress.length === 2) controller.abort('enough');
        },
      })
      .catch((error: unknown) => error);
    expect(await call).toMatchObject({ message: expect.stringMatching(/enough/) });
    expect(progress).toEqual([
      { progress: 1, message: 'step 1' },
      { progress: 2, message: 'step 2' },
    ]);
    await eventually(async () => (await childStats(sdk)).cancellations === before + 1, 'the child saw the cancel');

    // In process, the handler reports on the downstream request itself.
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

  it('keeps one upstream subscription however many downstream clients subscribe', async () => {
    const clients = await Promise.all([downstream(), downstream()]);
    const updates = clients.map(() => [] as string[]);
    clients.forEach(({ sdk }, index) =>
      sdk.setNotificationHandler(
        ResourceUpdatedNotificationSchema,
        ({ params }) => void updates[index]!.push(params.uri),
      ),
    );
    const localClient = upstreamClients.get('local')!.at(-1)!;
    const sent: string[] = [];
    const tracing = localClient.trace$.subscribe((event) => {
      if (event.direction === 'out' && event.kind === 'request') sent.push(event.method!);
    });
    for (const { sdk } of clients) await sdk.subscribeResource({ uri: 'mem://counter' });
    await eventually(() => sent.includes('resources/subscribe'), 'the hub subscribed upstream');
    counterChanges.next();
    await eventually(() => updates.every((seen) => seen.length === 1), 'both clients heard the update');
    expect(updates).toEqual([['mem://counter'], ['mem://counter']]);

    for (const { sdk } of clients) await sdk.unsubscribeResource({ uri: 'mem://counter' });
    await eventually(() => sent.includes('resources/unsubscribe'), 'the hub unsubscribed upstream');
    tracing.unsubscribe();
    expect(sent.filter((method) => method.startsWith('resources/'))).toEqual([
      'resources/subscribe',
      'resources/unsubscribe',
    ]);
    expect(await clients[0]!.sdk.readResource({ uri: 'mem://counter' })).toEqual({
      contents: [{ uri: 'mem://counter', text: 'the counter' }],
    });
  });

  it("forwards a downstream client's logging level and the upstream's log messages", async () => {
    const { sdk, logs } = await downstream();
    await sdk.setLoggingLevel('warning');
    await eventually(async () => (await childStats(sdk)).logLevel === 'warning', 'the child was told the level');
    expect(await callText(sdk, 'chatter')).toBe('logged');
    await eventually(() => logs.length > 0, 'the error line arrived');
    expect(logs).toEqual([{ level: 'error', logger: 'child', data: 'an error line' }]);
  });

  it("offers the downstream clients' roots to an upstream whose forward.roots is on", async () => {
    const { sdk } = await downstream('hi', [{ uri: 'file:///work/project' }]);
    await eventually(
      async () => (await callText(sdk, 'roots')) === '["file:///work/project"]',
      'the child sees the root',
    );
  });
});
