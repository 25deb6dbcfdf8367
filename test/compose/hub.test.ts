/**
 * The hub's behaviour with in-process upstreams (fast and deterministic): lazy start, idle stop, the crash
 * loop, filters, collision policies over time, prompts, completion and resources routed by URI and
 * template, server-to-client requests routed (or refused when ambiguous), logs, an upstream that lists
 * invalid entries (the official SDK's low-level server), and a hub of hubs over the framed transport.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server as SdkServer } from '@modelcontextprotocol/sdk/server/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  McpError as SdkMcpError,
} from '@modelcontextprotocol/sdk/types.js';
import { firstValueFrom, filter } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { CatalogConflictError, Hub, type HubOptions } from '../../lib/compose/hub';
import type { UpstreamOptions } from '../../lib/compose/upstream';
import { McpError } from '../../lib/jsonrpc/errors';
import { defineServer, type ServerDefinition } from '../../lib/server/definition';
import { Server, type ServerConnection } from '../../lib/server/server';
import { FramedTransport } from '../../transports/framed';
import { createLegacySseHandler } from '../../transports/http/legacy-sse-server';
import { createStreamableHttpHandler } from '../../transports/http/streamable-server';
import { createMemoryPair } from '../../transports/memory';
import { fromSdkTransport } from '../../transports/sdk-adapter';
import type { Transport } from '../../transports/transport';
import { TransportError } from '../../lib/jsonrpc/errors';
import { firstText, text } from '../helpers/content';
import { deferred, recordingLogger, tool } from '../helpers/fixtures';
import { eventually } from '../helpers/wait';
import { cleanups, listenHttp } from '../helpers/http';
import { isAlive } from '../helpers/processes';
import { connectToHub } from '../helpers/hub';
import { validateEmitted } from '../helpers/pair';
import { fixturePath } from '../helpers/paths';

async function startHub(upstreams: UpstreamOptions[], options: Partial<HubOptions> = {}) {
  const logger = recordingLogger();
  const hub = new Hub({
    upstreams,
    logger,
    listChangedDebounceMs: 1,
    onUpstreamClient: (_name, client) => validateEmitted(client),
    ...options,
  });
  cleanups.push(() => hub.close());
  return { hub, logger, started: hub.start() };
}

const inProcess = (name: string, server: Server | ServerDefinition, extra: Partial<UpstreamOptions> = {}) =>
  ({ name, source: { kind: 'in-process', server }, ...extra }) as UpstreamOptions;
const names = async (client: Client) => (await client.listTools()).map((listed) => listed.name).sort();

describe('starting and stopping upstreams', () => {
  it('starts a lazy upstream on the first downstream listing and announces its tools', async () => {
    const { hub, started } = await startHub([
      inProcess('eager', defineServer({ name: 'e', version: '1', tools: [tool('now')] })),
      inProcess('lazy', defineServer({ name: 'l', version: '1', tools: [tool('later')] }), { lazy: true }),
    ]);
    await started;
    expect(hub.upstream('lazy')!.status.state).toBe('idle');
    const client = await connectToHub(hub);
    const changed = firstValueFrom(client.toolList.changes$.pipe(filter((tools) => tools.length === 2)));
    expect(await names(client)).toEqual(['now']);
    await changed;
    expect(await names(client)).toEqual(['later', 'now']);
    expect(hub.upstream('lazy')!.status.state).toBe('ready');
  });

  it('stops an idle upstream but keeps its tools listed; a call starts it again', async () => {
    let calls = 0;
    const { hub, started } = await startHub([
      inProcess(
        'sleepy',
        defineServer({ name: 's', version: '1', tools: [tool('nap', () => text(`call ${++calls}`))] }),
        {
          idleTimeoutMs: 20,
        },
      ),
    ]);
    await started;
    const client = await connectToHub(hub);
    const sleepy = hub.upstream('sleepy')!;
    await firstValueFrom(sleepy.status$.pipe(filter((status) => status.state === 'stopped')));
    expect(sleepy.status).toMatchObject({ stopReason: 'idle', serving: true });
    expect(await names(client)).toEqual(['nap']);
    expect(firstText(await client.callTool('nap'))).toBe('call 1');
    expect(sleepy.status.state).toBe('ready');
    // A requested stop withdraws the tools.
    await sleepy.stop();
    await eventually(async () => (await names(client)).length === 0, 'the tools are withdrawn');
    expect(
      firstText(await client.callTool('nap').catch((error: McpError) => ({ content: [{ text: error.message }] }))),
    ).toMatch(/Unknown tool: nap/);
  });

  it('gives up after the crash-loop limit, withdrawing nothing it never had, and starts again on request', async () => {
    let attempts = 0;
    let working = false;
    const target = new Server(defineServer({ name: 't', version: '1', tools: [tool('finally')] }));
    const { hub, started, logger } = await startHub([
      {
        name: 'flaky',
        source: {
          kind: 'transport',
          open: () => {
            attempts++;
            if (!working) throw new TransportError('connection refused');
            const [clientSide, serverSide] = createMemoryPair();
            target.connect(serverSide);
            return clientSide;
          },
        },
        supervision: { maxRestarts: 2, initialDelayMs: 1, maxDelayMs: 2 },
      },
    ]);
    await started;
    const flaky = hub.upstream('flaky')!;
    await firstValueFrom(flaky.status$.pipe(filter((status) => status.state === 'failed')));
    expect(attempts).toBe(3);
    expect(flaky.status).toMatchObject({ failures: 3, lastError: 'connection refused', serving: false });
    expect(logger.lines.filter((line) => line.includes('Could not start'))).toHaveLength(3);
    working = true;
    flaky.start();
    await firstValueFrom(flaky.status$.pipe(filter((status) => status.state === 'ready')));
    const client = await connectToHub(hub);
    expect(await names(client)).toEqual(['finally']);
    await target.close();
  });

  it('marks an upstream that stops answering pings degraded, then reconnects it after a second strike', async () => {
    const target = new Server(defineServer({ name: 't', version: '1', tools: [tool('x')] }));
    let mute = false;
    const { hub, started } = await startHub([
      {
        name: 'quiet',
        pingIntervalMs: 50,
        supervision: { initialDelayMs: 1 },
        source: {
          kind: 'transport',
          open: () => {
            const [clientSide, serverSide] = createMemoryPair();
            target.connect(serverSide);
            // Pings vanish on the way while muted: the server never sees them.
            return {
              messages: clientSide.messages,
              send: (message) =>
                mute && (message as { method?: string }).method === 'ping'
                  ? Promise.resolve()
                  : clientSide.send(message),
              close: () => clientSide.close(),
            };
          },
        },
      },
    ]);
    cleanups.push(() => target.close());
    await started;
    const quiet = hub.upstream('quiet')!;
    const next = (state: string) => firstValueFrom(quiet.status$.pipe(filter((status) => status.state === state)));
    mute = true;
    expect(await next('degraded')).toMatchObject({ serving: true }); // one strike: still served
    mute = false;
    expect(await next('ready')).toMatchObject({ serving: true });
    mute = true;
    const reconnecting = await next('reconnecting'); // two strikes in a row: the session is dropped
    // Its entries stay listed while it reconnects (calls wait for it).
    expect(reconnecting).toMatchObject({ serving: true, lastError: expect.stringMatching(/timed out|timeout/i) });
    expect(reconnecting.nextAttemptAt).toBeGreaterThanOrEqual(reconnecting.since);
    mute = false;
    expect(await next('ready')).toMatchObject({ serving: true, tools: 1 });
  });

  it('stops a child that is still starting when the hub closes, leaving no process behind', async () => {
    const sleeper = fixturePath('stdio-sleeper.mjs');
    const { hub, logger, started } = await startHub([
      {
        name: 'sleeper',
        source: {
          kind: 'stdio',
          command: process.execPath,
          args: [sleeper],
          shutdown: { stdinGraceMs: 50, terminateGraceMs: 50 },
        },
      },
    ]);
    // It never answers initialize: the hub is still starting it when it closes.
    const said = () => logger.lines.find((line) => line.startsWith('debug: [sleeper] sleeper '));
    await eventually(() => said() !== undefined, 'the child runs');
    const pid = Number(said()!.split(' ').at(-1));
    expect(hub.upstream('sleeper')!.status.state).toBe('connecting');
    await hub.close();
    await started;
    expect(isAlive(pid)).toBe(false);
    expect(hub.upstream('sleeper')!.status.state).toBe('disposed');
  });

  it('reports every status change on status$, and closes everything with the hub', async () => {
    const upstreamServer = new Server(defineServer({ name: 'u', version: '1', tools: [tool('x')] }));
    const { hub, started } = await startHub([inProcess('u', upstreamServer)]);
    const seen: string[] = [];
    hub.status$.subscribe({ next: ({ state }) => void seen.push(state), complete: () => void seen.push('complete') });
    await started;
    expect(hub.status()).toEqual([
      expect.objectContaining({
        name: 'u',
        state: 'ready',
        source: 'in-process',
        tools: 1,
        serverInfo: { name: 'u', version: '1' },
      }),
    ]);
    const client = await connectToHub(hub);
    await hub.close();
    expect(seen).toEqual(['connecting', 'ready', 'disposed', 'complete']);
    expect(await client.closed).toMatchObject({ kind: 'transport-closed' });
    expect(upstreamServer.connectionCount).toBe(0);
    expect(hub.server.connectionCount).toBe(0);
  });
});

describe('the catalog', () => {
  const search = (from: string) => tool('search', () => text(from));

  it('re-lists once for a burst of list_changed, and tells downstream clients once', async () => {
    const upstream = new Server(defineServer({ name: 'u', version: '1', tools: [tool('v0')] }));
    const { hub, started } = await startHub([inProcess('u', upstream)], { listChangedDebounceMs: 250 });
    await started;
    const client = await connectToHub(hub);
    let changes = 0;
    client.notifications$.subscribe({
      next: ({ method }) => void (method === 'notifications/tools/list_changed' && changes++),
      error: () => undefined,
    });
    const listings: string[] = [];
    hub.upstream('u')!.client!.trace$.subscribe((event) => {
      if (event.direction === 'out' && event.kind === 'request') listings.push(event.method!);
    });
    for (const version of ['v1', 'v2', 'v3']) {
      upstream.update((definition) => definition.withTools(tool(version)));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await eventually(() => changes > 0, 'the downstream client heard of the change');
    expect(await names(client)).toEqual(['v0', 'v1', 'v2', 'v3']);
    expect(listings).toEqual(['tools/list']);
    expect(changes).toBe(1);
  });

  it('takes only what the filters allow, matched against the upstream names before any prefix', async () => {
    const { hub, started } = await startHub([
      inProcess(
        'fs',
        defineServer({ name: 'fs', version: '1', tools: [tool('read_file'), tool('write_file'), tool('delete')] }),
        {
          naming: { prefix: 'fs' },
          tools: { allow: ['*_file', 'delete'], deny: ['write_*'] },
        },
      ),
    ]);
    await started;
    const client = await connectToHub(hub);
    expect(await names(client)).toEqual(['fs__delete', 'fs__read_file']);
    await expect(client.callTool('fs__write_file')).rejects.toMatchObject({ code: -32602 });
  });

  it("refuses to start with a collision under 'error', and serves the first upstream's tool", async () => {
    const { hub, started } = await startHub([
      inProcess('a', defineServer({ name: 'a', version: '1', tools: [search('a')] })),
      inProcess('b', defineServer({ name: 'b', version: '1', tools: [search('b'), tool('other')] })),
    ]);
    const failure = await started.catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CatalogConflictError);
    expect((failure as CatalogConflictError).message).toMatch(
      /Tool "search" of b would be named search, which a already uses/,
    );
    const client = await connectToHub(hub);
    expect(await names(client)).toEqual(['other', 'search']);
    expect(firstText(await client.callTool('search'))).toBe('a');
  });

  it("under 'first-wins', hands a name over while the first upstream is stopped, and back", async () => {
    const { hub, started } = await startHub([
      inProcess('a', defineServer({ name: 'a', version: '1', tools: [search('a')] })),
      inProcess('b', defineServer({ name: 'b', version: '1', tools: [search('b')] }), {
        naming: { collision: 'first-wins' },
      }),
    ]);
    await started;
    const client = await connectToHub(hub);
    expect(firstText(await client.callTool('search'))).toBe('a');
    await hub.upstream('a')!.stop();
    await eventually(async () => firstText(await client.callTool('search')) === 'b', 'b took over');
    hub.upstream('a')!.start();
    await eventually(async () => firstText(await client.callTool('search')) === 'a', 'a is back');
  });

  it('routes prompts (renamed), completion, and resources by URI and by template', async () => {
    const definition = defineServer({
      name: 'notes',
      version: '1',
      prompts: [
        {
          name: 'summarize',
          arguments: [{ name: 'id', required: true }],
          get: ({ id }) => [{ role: 'user', content: { type: 'text', text: `Summarize ${id}` } }],
          complete: { id: (typed) => ['alpha', 'beta'].filter((id) => id.startsWith(typed)) },
        },
      ],
      resources: [{ uri: 'notes://index', name: 'index', read: () => 'the index' }],
      resourceTemplates: [
        {
          uriTemplate: 'notes://{id}',
          name: 'note',
          read: ({ id }) => `note ${id}`,
          complete: { id: (typed) => ['n1', 'n2'].filter((id) => id.startsWith(typed)) },
        },
      ],
    });
    for (const direct of [true, false]) {
      const { hub, started } = await startHub([
        { name: 'notes', source: { kind: 'in-process', server: definition, direct }, naming: { prefix: 'notes' } },
      ]);
      await started;
      const client = await connectToHub(hub);
      expect((await client.listPrompts()).map((prompt) => prompt.name)).toEqual(['notes__summarize']);
      expect(await client.getPrompt('notes__summarize', { id: 'x' })).toEqual({
        messages: [{ role: 'user', content: { type: 'text', text: 'Summarize x' } }],
      });
      expect(client.serverCapabilities?.completions).toEqual({});
      expect(
        await client.complete({
          ref: { type: 'ref/prompt', name: 'notes__summarize' },
          argument: { name: 'id', value: 'a' },
        }),
      ).toEqual({
        values: ['alpha'],
      });
      expect(
        await client.complete({
          ref: { type: 'ref/resource', uri: 'notes://{id}' },
          argument: { name: 'id', value: 'n' },
        }),
      ).toEqual({
        values: ['n1', 'n2'],
      });
      expect((await client.listResources()).map((resource) => resource.uri)).toEqual(['notes://index']);
      expect((await client.listResourceTemplates()).map((template) => template.uriTemplate)).toEqual(['notes://{id}']);
      expect(await client.readResource('notes://index')).toEqual({
        contents: [{ uri: 'notes://index', text: 'the index' }],
      });
      expect(await client.readResource('notes://42')).toEqual({ contents: [{ uri: 'notes://42', text: 'note 42' }] });
      await expect(client.readResource('other://x')).rejects.toMatchObject({
        code: -32002,
        data: { uri: 'other://x' },
      });
      await hub.close();
    }
  });

  it('leaves out invalid entries of an upstream (here the official SDK low-level server) and says why', async () => {
    const sdkServer = new SdkServer({ name: 'sloppy', version: '1' }, { capabilities: { tools: {} } });
    sdkServer.setRequestHandler(
      ListToolsRequestSchema,
      () =>
        ({
          tools: [
            { name: 'good', inputSchema: { type: 'object' } },
            { name: 'bad schema', inputSchema: { type: 'string' } },
          ],
        }) as never,
    );
    sdkServer.setRequestHandler(CallToolRequestSchema, (request) => text(`sdk ran ${request.params.name}`));
    const { hub, started } = await startHub([
      {
        name: 'sdk',
        source: {
          kind: 'transport',
          open: async () => {
            const [ours, theirs] = InMemoryTransport.createLinkedPair();
            await sdkServer.connect(theirs);
            return fromSdkTransport(ours);
          },
        },
      },
    ]);
    cleanups.push(() => sdkServer.close());
    await started;
    const client = await connectToHub(hub);
    expect(await names(client)).toEqual(['good']);
    expect(firstText(await client.callTool('good', { a: 1 }))).toBe('sdk ran good');
    expect(hub.problems).toEqual([
      expect.objectContaining({ severity: 'warning', upstream: 'sdk', kind: 'tool', original: 'bad schema' }),
    ]);
  });
});

describe('what flows back from upstreams', () => {
  it("relays an upstream's error response to tools/call unchanged; the hub's own failures stay tool results", async () => {
    const sdkServer = new SdkServer({ name: 'strict', version: '1' }, { capabilities: { tools: {} } });
    sdkServer.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [{ name: 'strict', inputSchema: { type: 'object' as const } }],
    }));
    sdkServer.setRequestHandler(CallToolRequestSchema, () => {
      throw new SdkMcpError(-32602, 'the strict tool wants a "mode" argument', { missing: ['mode'] });
    });
    const remote = (open: () => Promise<Transport>) => ({ kind: 'transport' as const, open });
    const flaky = new Server(defineServer({ name: 'flaky', version: '1', tools: [tool('fine')] }));
    let flakyOpens = 0;
    const { hub, started } = await startHub([
      {
        name: 'sdk',
        source: remote(async () => {
          const [ours, theirs] = InMemoryTransport.createLinkedPair();
          await sdkServer.connect(theirs);
          return fromSdkTransport(ours);
        }),
      },
      {
        name: 'flaky',
        idleTimeoutMs: 20,
        unavailableWaitMs: 50,
        // Opens once; once stopped for being idle, it cannot come back.
        source: remote(async () => {
          if (flakyOpens++ > 0) throw new Error('the flaky server is gone');
          const [clientSide, serverSide] = createMemoryPair();
          flaky.connect(serverSide);
          return clientSide;
        }),
      },
    ]);
    cleanups.push(
      () => sdkServer.close(),
      () => flaky.close(),
    );
    await started;
    const client = await connectToHub(hub);

    const failure = await client.callTool('strict', {}).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(McpError);
    expect(failure).toMatchObject({
      code: -32602,
      message: expect.stringContaining('the strict tool wants a "mode" argument'),
      data: { missing: ['mode'] },
    });

    // The hub itself failing (its upstream cannot be reached) is the tool's failure, readable by the model.
    await firstValueFrom(hub.upstream('flaky')!.status$.pipe(filter((status) => status.state === 'stopped')));
    const result = await client.callTool('fine');
    expect(result.isError).toBe(true);
    expect(firstText(result)).toMatch(
      /^Upstream flaky is down \((connecting|reconnecting) since .*\), so tools\/call cannot reach it \(waited 50 ms\)\. Last error: the flaky server is gone/,
    );
  });

  it('routes an in-process handler’s elicitation straight to the calling client', async () => {
    const upstream = defineServer({
      name: 'asker',
      version: '1',
      tools: [
        tool('confirm', async (_args, ctx) => {
          const answer = await ctx.elicit({
            message: 'Sure?',
            requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } } },
          });
          return text(`${answer.action}:${JSON.stringify(answer.content)}`);
        }),
      ],
    });
    const { hub, started } = await startHub([inProcess('asker', upstream)]);
    await started;
    const client = await connectToHub(hub, {
      elicitation: { form: () => ({ action: 'accept', content: { ok: true } }) },
    });
    expect(firstText(await client.callTool('confirm'))).toBe('accept:{"ok":true}');
  });

  it('refuses a sampling request it cannot attribute to one downstream client, and routes it when it can', async () => {
    const gate = deferred();
    let waiting = 0;
    const upstream = defineServer({
      name: 'sampler',
      version: '1',
      tools: [
        tool('ask', async (_args, ctx) => {
          waiting++;
          await gate.promise;
          const answer = await ctx.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }],
            maxTokens: 5,
          });
          return text(`model: ${(answer.content as { text: string }).text}`);
        }),
      ],
    });
    // Over the memory connection like a remote upstream: the request carries no trace of its cause.
    const { hub, started } = await startHub([
      { name: 'sampler', source: { kind: 'in-process', server: upstream, direct: false } },
    ]);
    await started;
    const sampling = (answer: string) => ({
      sampling: () => ({ role: 'assistant' as const, content: { type: 'text' as const, text: answer }, model: 'm' }),
    });
    const [first, second] = [await connectToHub(hub, sampling('one')), await connectToHub(hub, sampling('two'))];
    const calls = [first.callTool('ask'), second.callTool('ask')];
    await eventually(() => waiting === 2, 'both calls are in flight upstream');
    gate.resolve();
    const results = await Promise.all(calls);
    for (const result of results) {
      expect(result.isError).toBe(true);
      expect(firstText(result)).toMatch(
        /cannot tell which downstream client sampling\/createMessage from sampler is for/,
      );
    }
    // One call in flight: no doubt where it goes.
    expect(firstText(await second.callTool('ask'))).toBe('model: two');
  });

  it('sends a request no call caused to the only downstream client, and log messages to every client', async () => {
    let upstreamConnection: ServerConnection | undefined;
    const target = new Server(defineServer({ name: 'pusher', version: '1', tools: [tool('noop')] }));
    const { hub, started } = await startHub([
      {
        name: 'pusher',
        source: {
          kind: 'transport',
          open: () => {
            const [clientSide, serverSide] = createMemoryPair();
            upstreamConnection = target.connect(serverSide);
            return clientSide;
          },
        },
      },
    ]);
    await started;
    cleanups.push(() => target.close());
    const client = await connectToHub(hub, {
      sampling: () => ({ role: 'assistant', content: { type: 'text', text: 'unprompted' }, model: 'm' }),
    });
    const logs: unknown[] = [];
    client.logs$.subscribe({ next: (log) => logs.push(log), error: () => undefined });
    await eventually(() => hub.server.connectionCount === 1 && upstreamConnection?.state === 'ready', 'ready');
    const answer = await upstreamConnection!.request('sampling/createMessage', {
      messages: [{ role: 'user', content: { type: 'text', text: 'ping' } }],
      maxTokens: 3,
    });
    expect(answer).toMatchObject({ content: { type: 'text', text: 'unprompted' } });
    await upstreamConnection!.log('warning', { disk: 'low' }, 'monitor');
    await eventually(() => logs.length === 1, 'the log arrived');
    expect(logs).toEqual([{ level: 'warning', logger: 'pusher/monitor', data: { disk: 'low' } }]);
  });
});

describe('cancellation', () => {
  it('cancels the upstream request when the downstream client cancels, or goes away', async () => {
    const reasons: unknown[] = [];
    const started = deferred();
    const upstream = defineServer({
      name: 'waiter',
      version: '1',
      tools: [
        tool('wait', async (_args, ctx) => {
          started.resolve();
          await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
          reasons.push((ctx.signal.reason as Error).constructor.name);
          return text('stopped');
        }),
      ],
    });
    const { hub, started: hubStarted } = await startHub([
      { name: 'waiter', source: { kind: 'in-process', server: upstream, direct: false } },
    ]);
    await hubStarted;
    const canceller = await connectToHub(hub);
    const controller = new AbortController();
    const cancelled = canceller.callTool('wait', {}, { signal: controller.signal }).catch((error: Error) => error);
    await started.promise;
    controller.abort();
    expect(await cancelled).toMatchObject({ code: 'REQUEST_CANCELLED' });
    await eventually(() => reasons.length === 1, 'the upstream handler was cancelled');

    const leaver = await connectToHub(hub);
    const pending = leaver.callTool('wait').catch((error: Error) => error);
    await eventually(() => hub.upstream('waiter')!.client!.pendingRequestCount === 1, 'the call reached upstream');
    await leaver.close();
    expect(await pending).toMatchObject({ code: 'CONNECTION_CLOSED' });
    await eventually(() => reasons.length === 2, 'the upstream handler was cancelled again');
    expect(reasons).toEqual(['RequestCancelledError', 'RequestCancelledError']);
    expect(hub.upstream('waiter')!.client!.pendingRequestCount).toBe(0);
  });
});

describe('serving the hub', () => {
  it('serves downstream clients over Streamable HTTP (the official SDK client)', async () => {
    const { hub, started } = await startHub([
      inProcess(
        'local',
        defineServer({ name: 'l', version: '1', tools: [tool('hello', () => text('hello over http'))] }),
      ),
    ]);
    await started;
    const handler = createStreamableHttpHandler(hub.server);
    const { origin } = await listenHttp(handler);
    cleanups.push(() => handler.close());
    const sdk = new SdkClient({ name: 'sdk', version: '1' });
    cleanups.push(() => sdk.close());
    await sdk.connect(new StreamableHTTPClientTransport(new URL(`${origin}/mcp`)));
    expect(await sdk.callTool({ name: 'hello', arguments: {} })).toEqual(text('hello over http'));
    expect(hub.server.connectionCount).toBe(1);
  });
});

describe('remote upstreams', () => {
  it('reaches a server over the legacy HTTP+SSE transport', async () => {
    const legacy = new Server(
      defineServer({ name: 'old', version: '1', tools: [tool('vintage', () => text('2024'))] }),
    );
    const handler = createLegacySseHandler(legacy);
    const { origin } = await listenHttp(handler);
    cleanups.push(() => handler.close());
    const url = `${origin}/sse`;
    const { hub, started } = await startHub([{ name: 'old', source: { kind: 'http', url, transport: 'sse' } }]);
    await started;
    const client = await connectToHub(hub);
    expect(firstText(await client.callTool('vintage'))).toBe('2024');
    expect(hub.status()[0]).toMatchObject({
      state: 'ready',
      source: `${url} (HTTP+SSE)`,
      protocolVersion: '2025-11-25',
    });
  });

  it('retries an unreachable server with backoff and reports why', async () => {
    const { hub, started } = await startHub([
      {
        name: 'nowhere',
        source: { kind: 'http', url: 'http://127.0.0.1:9/mcp' },
        supervision: { maxRestarts: 1, initialDelayMs: 1 },
      },
    ]);
    await started;
    const nowhere = hub.upstream('nowhere')!;
    await firstValueFrom(nowhere.status$.pipe(filter((status) => status.state === 'failed')));
    expect(nowhere.status.lastError).toMatch(/ECONNREFUSED|127\.0\.0\.1:9/);
  });
});

describe('a hub of hubs', () => {
  it('serves a hub to another hub over the framed transport on a unix socket', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'hub-'));
    const path = join(directory, 'inner.sock');
    const inner = new Hub({
      name: 'inner',
      upstreams: [
        inProcess('deep', defineServer({ name: 'd', version: '1', tools: [tool('deep', () => text('from deep'))] })),
      ],
    });
    await inner.start();
    const listener: NetServer = createServer((socket) => void inner.connect(new FramedTransport(socket)));
    await new Promise<void>((resolve) => listener.listen(path, resolve));
    cleanups.push(
      () => rmSync(directory, { recursive: true, force: true }),
      () => new Promise((resolve) => listener.close(resolve)),
      () => inner.close(),
    );
    const { hub, started } = await startHub([
      { name: 'inner', source: { kind: 'framed', path }, naming: { prefix: 'in' } },
    ]);
    await started;
    const client = await connectToHub(hub);
    expect(await names(client)).toEqual(['in__deep']);
    expect(firstText(await client.callTool('in__deep'))).toBe('from deep');
    expect(hub.status()[0]).toMatchObject({ state: 'ready', source: `framed: ${path}`, serverInfo: { name: 'inner' } });
  });
});

describe('bad options', () => {
  it('refuses upstreams without a name, twice the same name, or a bad naming policy', () => {
    const definition = defineServer({ name: 'x', version: '1' });
    expect(() => new Hub({ upstreams: [inProcess('', definition)] })).toThrow(
      'Hub: upstreams[0] needs a non-empty name',
    );
    expect(() => new Hub({ upstreams: [inProcess('a', definition), inProcess('a', definition)] })).toThrow(
      'Hub: two upstreams are named a',
    );
    expect(() => new Hub({ upstreams: [inProcess('a', definition, { naming: { maxLength: 3 } })] })).toThrow(
      /maxLength/,
    );
    expect(() => new Hub({ upstreams: 'nope' as never })).toThrow('Hub: upstreams must be a list');
  });
});
