import { describe, expect, it, vi } from 'vitest';
import { firstValueFrom, filter, toArray, take } from 'rxjs';
import { Client } from '../../lib/client/client';
import {
  CapabilityNotSupportedError,
  ConnectionClosedError,
  LimitExceededError,
  McpError,
  NotReadyError,
  PeerError,
  RelayedError,
  RequestCancelledError,
  RequestTimeoutError,
  UnsupportedProtocolVersionError,
} from '../../lib/jsonrpc/errors';
import type { JsonRpcMessage } from '../../lib/jsonrpc/types';
import { defineServer, type ServerDefinition } from '../../lib/server/definition';
import type { Logger } from '../../lib/core/logger';
import { Server } from '../../lib/server/server';
import type { TraceEvent } from '../../lib/trace/types';
import { createMemoryPair } from '../../transports/memory';
import type { Transport, TransportSendOptions } from '../../transports/transport';
import { connectPair, serveRaw as serveRawWith, validateEmitted } from '../helpers/pair';

import { deferred, serverWith, tool } from '../helpers/fixtures';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../../lib/protocol/versions';

const echo = {
  name: 'echo',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  handler: ({ text }: { text?: unknown }) => ({ content: [{ type: 'text' as const, text: String(text) }] }),
};

const serveRaw = (definition = serverWith([echo])) => serveRawWith(definition);

describe('initialization', () => {
  for (const version of SUPPORTED_PROTOCOL_VERSIONS) {
    it(`negotiates ${version} when the client asks for it`, async () => {
      const { client, serverConnection } = await connectPair(serverWith([echo]), { protocolVersion: version });
      expect(client.protocolVersion).toBe(version);
      expect(serverConnection.protocolVersion).toBe(version);
      expect(serverConnection.clientInfo).toEqual({ name: 'test-client', version: '1.0.0' });
      expect(client.serverInfo).toEqual({ name: 's', version: '1' });
      expect(await client.callTool('echo', { text: 'v' })).toEqual({ content: [{ type: 'text', text: 'v' }] });
    });
  }

  it('answers an unknown version with its newest', async () => {
    const { peer } = serveRaw();
    const response = await peer.initialize('2099-01-01');
    expect(response.result.protocolVersion).toBe('2025-11-25');
  });

  describe('a client that cannot use the version the server answers with', () => {
    /** An old client connecting to a server that only speaks 2025-11-25. */
    async function connectTooOldClient() {
      const definition = defineServer({ name: 's', version: '1', protocolVersions: ['2025-11-25'] });
      const [clientSide, serverSide] = createMemoryPair();
      new Server(definition).connect(serverSide);
      const client = new Client({ name: 'old', version: '1' }, { protocolVersions: ['2024-11-05'] });
      validateEmitted(client);
      const failure = await client.connect(clientSide).catch((error) => error);
      return { client, failure };
    }

    it('fails to connect with an UnsupportedProtocolVersionError naming the offered version', async () => {
      const { failure } = await connectTooOldClient();
      expect(failure).toBeInstanceOf(UnsupportedProtocolVersionError);
      expect(failure.message).toContain('"2025-11-25"');
    });

    it('ends closed, with a handshake-failed reason', async () => {
      const { client } = await connectTooOldClient();
      expect(client.state).toBe('closed');
      expect(await client.closed).toMatchObject({ kind: 'handshake-failed' });
    });
  });

  it('refuses requests before initialize', async () => {
    const { peer } = serveRaw();
    expect(await peer.request('tools/list', undefined, 1)).toMatchObject({
      id: 1,
      error: { code: -32600, message: 'tools/list received before initialization completed: send initialize first' },
    });
  });

  it('serves ping before initialize', async () => {
    const { peer } = serveRaw();
    expect(await peer.request('ping', undefined, 2)).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
  });

  describe('a second initialize', () => {
    /** A raw peer that completed the handshake, and the answer to its second initialize. */
    async function initializeTwice() {
      const { peer } = serveRaw();
      await peer.initialize();
      const again = await peer.request(
        'initialize',
        { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
        3,
      );
      return { peer, again };
    }

    it('is refused', async () => {
      const { again } = await initializeTwice();
      expect(again.error).toMatchObject({ code: -32600, message: expect.stringContaining('already received') });
    });

    it('leaves the connection ready', async () => {
      const { peer } = await initializeTwice();
      expect(await peer.request('tools/list', undefined, 4)).toMatchObject({
        id: 4,
        result: { tools: [{ name: 'echo' }] },
      });
    });
  });

  it('tells both transports the negotiated revision', async () => {
    const [clientSide, serverSide] = createMemoryPair();
    const told: string[] = [];
    const watched = (side: Transport, who: string): Transport => ({
      messages: side.messages,
      send: (message) => side.send(message),
      close: () => side.close(),
      setProtocolVersion: (version) => told.push(`${who} ${version}`),
    });
    validateEmitted(new Server(serverWith([])).connect(watched(serverSide, 'server')));
    const client = new Client({ name: 'c', version: '1' }, { protocolVersion: '2025-06-18' });
    validateEmitted(client);
    await client.connect(watched(clientSide, 'client'));
    expect(told.sort()).toEqual(['client 2025-06-18', 'server 2025-06-18']);
  });

  it('checks initialize params', async () => {
    const { peer } = serveRaw();
    const response = await peer.request('initialize', {
      protocolVersion: 5,
      capabilities: {},
      clientInfo: { name: 'x', version: '1' },
    });
    expect(response.error).toMatchObject({ code: -32602, message: expect.stringContaining('protocolVersion') });
    // The failed initialize left the server uninitialized, so a correct one still works.
    expect((await peer.initialize()).result.serverInfo).toEqual({ name: 's', version: '1' });
  });

  it('serves a first request that races notifications/initialized', async () => {
    const { peer } = serveRaw();
    await peer.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'r', version: '1' } },
    });
    await peer.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    await peer.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect((await peer.next()).id).toBe(1);
    expect(await peer.next()).toMatchObject({ id: 2, result: { tools: [{ name: 'echo' }] } });
  });

  it('fails requests made before connect with NotReadyError', async () => {
    const client = new Client({ name: 'c', version: '1' });
    await expect(client.request('ping')).rejects.toBeInstanceOf(NotReadyError);
  });

  it('refuses a second transport for a connected client', async () => {
    const { client: connected } = await connectPair(defineServer({ name: 's', version: '1' }));
    expect(() => (connected as unknown as { attach(t: Transport): void }).attach(createMemoryPair()[0])).toThrow(
      /already has a transport/,
    );
  });
});

describe('capability gating', () => {
  it('fails locally, without sending, when the server did not declare what the client calls', async () => {
    const { client, serverConnection } = await connectPair(defineServer({ name: 'no-tools', version: '1' }));
    const inbound: string[] = [];
    serverConnection.trace$
      .pipe(filter((e) => e.direction === 'in'))
      .subscribe((e) => inbound.push(e.method ?? e.kind));
    const failure = await client.listTools().catch((error) => error);
    expect(failure).toBeInstanceOf(CapabilityNotSupportedError);
    expect(failure.message).toBe('The server did not declare the tools capability, so tools/list cannot be used');
    await client.ping();
    expect(inbound).toEqual(['ping']);
  });

  it('answers -32601 for a method the server did not declare, or that only clients serve', async () => {
    const { peer } = serveRaw(defineServer({ name: 'no-tools', version: '1' }));
    await peer.initialize();
    expect((await peer.request('tools/call', { name: 'x' })).error).toEqual({
      code: -32601,
      message: 'Method not found: tools/call (this server did not declare the tools capability)',
    });
    expect((await peer.request('sampling/createMessage', {})).error).toMatchObject({ code: -32601 });
    expect((await peer.request('no/such/method')).error).toEqual({
      code: -32601,
      message: 'Method not found: no/such/method',
    });
  });

  describe('refuses to send', () => {
    const bareServerPair = () => connectPair(defineServer({ name: 's', version: '1' }));

    it('a request the role may not send', async () => {
      const { client } = await bareServerPair();
      await expect(client.request('sampling/createMessage', {})).rejects.toThrow(
        'A client cannot send sampling/createMessage',
      );
    });

    it('a request for a capability the peer did not declare', async () => {
      const { serverConnection } = await bareServerPair();
      await expect(serverConnection.request('roots/list')).rejects.toThrow(
        'The client did not declare the roots capability, so roots/list cannot be used',
      );
    });

    it('a notification for a capability the sender did not declare', async () => {
      const { serverConnection } = await bareServerPair();
      await expect(serverConnection.notify('notifications/prompts/list_changed')).rejects.toThrow(
        'Cannot send notifications/prompts/list_changed: this server did not declare the prompts.listChanged capability',
      );
    });

    it('a request method as a notification', async () => {
      const { client } = await bareServerPair();
      await expect(client.notify('tools/list')).rejects.toThrow('tools/list is a request, not a notification');
    });
  });

  it('refuses methods newer than the negotiated revision', async () => {
    const { serverConnection } = await connectPair(defineServer({ name: 's', version: '1' }), {
      protocolVersion: '2025-03-26',
      elicitation: { form: () => ({ action: 'decline' }) },
    });
    await expect(
      serverConnection.request('elicitation/create', {
        message: 'x',
        requestedSchema: { type: 'object', properties: {} },
      }),
    ).rejects.toThrow('elicitation/create needs protocol version 2025-06-18 or later; 2025-03-26 was negotiated');
  });

  it('gives the same inbound verdict every time a method is used once ready', async () => {
    const { peer } = serveRaw(defineServer({ name: 'no-tools', version: '1' }));
    await peer.initialize();
    for (let round = 0; round < 3; round++) {
      expect((await peer.request('tools/call', { name: 'x' })).error).toMatchObject({ code: -32601 });
      expect((await peer.request(`made/up/${round}`)).error).toMatchObject({ code: -32601 });
      expect((await peer.request('ping')).result).toEqual({});
      expect((await peer.request('initialize', {})).error).toMatchObject({ code: -32600 });
      expect((await peer.request('ping', 'not params' as never)).error).toMatchObject({ code: -32602 });
    }
  });

  it('gives the same outbound verdict every time a method is used once ready', async () => {
    const { client } = await connectPair(serverWith([echo]));
    for (let round = 0; round < 3; round++) {
      expect((await client.callTool('echo', { text: `${round}` })).content).toEqual([
        { type: 'text', text: `${round}` },
      ]);
      // Allowed as a request is not allowed as a notification: each kind has its own verdict.
      await expect(client.notify('tools/call')).rejects.toThrow('tools/call is a request, not a notification');
      await expect(client.listResources()).rejects.toBeInstanceOf(CapabilityNotSupportedError);
    }
  });

  it('lets a server ping the client', async () => {
    const { serverConnection } = await connectPair(defineServer({ name: 's', version: '1' }));
    expect(await serverConnection.request('ping')).toEqual({});
  });
});

describe('handlers and their context', () => {
  describe('the context a handler gets', () => {
    /** What a handler saw of its context, called with `_meta` under 2025-06-18 by a client with roots. */
    async function contextSeenByHandler() {
      const seen = deferred<Record<string, unknown>>();
      const definition = serverWith([
        tool('inspect', (_args, ctx) => {
          seen.resolve({
            version: ctx.protocolVersion,
            caps: ctx.peerCapabilities,
            meta: ctx._meta,
            id: ctx.id,
            method: ctx.method,
          });
          return { content: [] };
        }),
      ]);
      const { client } = await connectPair(definition, { protocolVersion: '2025-06-18', roots: [] });
      await client.request('tools/call', { name: 'inspect', _meta: { 'com.example/trace': 'abc' } });
      return seen.promise;
    }

    it.each([
      ['the negotiated version', 'version', '2025-06-18'],
      ["the peer's capabilities", 'caps', { roots: { listChanged: true } }],
      ['the _meta of the request', 'meta', { 'com.example/trace': 'abc' }],
      ['the method', 'method', 'tools/call'],
      ['the request id', 'id', expect.anything()],
    ])('holds %s', async (_what, field, expected) => {
      expect((await contextSeenByHandler())[field]).toEqual(expected);
    });
  });

  describe('progress that does not increase', () => {
    /** A call whose handler reports 1, 2.5, then 2.5 again and 2, to a server logging warnings. */
    async function callWithNonIncreasingProgress() {
      const definition = serverWith([
        tool('work', async (_args, ctx) => {
          await ctx.progress(1, 3, 'one');
          await ctx.progress(2.5, 3);
          await ctx.progress(2.5, 3, 'repeated');
          await ctx.progress(2, 3, 'decreasing');
          return { content: [{ type: 'text', text: 'done' }] };
        }),
      ]);
      const warnings: string[] = [];
      const logger = { debug() {}, info() {}, warn: (line: string) => void warnings.push(line), error() {} };
      const client = await connectWithServerLogger(definition, logger);
      const progress: unknown[] = [];
      const result = await client.callTool(
        'work',
        {},
        { onProgress: ({ progress: p, total, message }) => progress.push({ p, total, message }) },
      );
      return { result, progress, warnings };
    }

    it('delivers only the increasing values to onProgress', async () => {
      const { progress } = await callWithNonIncreasingProgress();
      expect(progress).toEqual([
        { p: 1, total: 3, message: 'one' },
        { p: 2.5, total: 3, message: undefined },
      ]);
    });

    it('is dropped with a warning', async () => {
      const { warnings } = await callWithNonIncreasingProgress();
      expect(warnings).toEqual([
        'tools/call: progress 2.5 dropped: progress must increase (the last sent was 2.5)',
        'tools/call: progress 2 dropped: progress must increase (the last sent was 2.5)',
      ]);
    });

    it('does not fail the call', async () => {
      const { result } = await callWithNonIncreasingProgress();
      expect(result.content).toEqual([{ type: 'text', text: 'done' }]);
    });
  });

  describe('progress when the client sent no progress token', () => {
    /** A call without a progress token whose handler reports progress twice, to a server logging debug lines. */
    async function callWithoutProgressToken() {
      const definition = serverWith([
        tool('work', async (_args, ctx) => {
          await ctx.progress(1, 2);
          await ctx.progress(1, 2); // no token: not even the monotonic rule applies
          return { content: [{ type: 'text', text: 'done' }] };
        }),
      ]);
      const debug: string[] = [];
      const logger = { debug: (line: string) => void debug.push(line), info() {}, warn() {}, error() {} };
      const client = await connectWithServerLogger(definition, logger);
      const result = await client.callTool('work', {});
      return { result, debug };
    }

    it('is dropped with a debug line', async () => {
      const { debug } = await callWithoutProgressToken();
      expect(debug.filter((line) => line.includes('progress dropped'))).toEqual([
        'tools/call: progress dropped: the requester sent no progress token',
        'tools/call: progress dropped: the requester sent no progress token',
      ]);
    });

    it('does not fail the call', async () => {
      const { result } = await callWithoutProgressToken();
      expect(result.content).toEqual([{ type: 'text', text: 'done' }]);
    });
  });

  it('drops the progress message for 2024-11-05, which has no such field', async () => {
    const definition = serverWith([
      tool('work', async (_a, ctx) => (await ctx.progress(1, 2, 'hidden'), { content: [] })),
    ]);
    const { client } = await connectPair(definition, { protocolVersion: '2024-11-05' });
    const progress: unknown[] = [];
    await client.callTool('work', {}, { onProgress: (p) => progress.push(p) });
    expect(progress).toEqual([{ progressToken: expect.anything(), progress: 1, total: 2 }]);
  });

  describe('a call the client cancels', () => {
    /**
     * A call cancelled while its handler runs (the handler answers once aborted), followed by a ping: the
     * response to the cancelled call would have come before the ping's.
     */
    async function cancelRunningCall() {
      const started = deferred();
      const aborted = deferred<unknown>();
      const definition = serverWith([
        tool(
          'slow',
          (_args, ctx) =>
            new Promise((resolve) => {
              ctx.signal.addEventListener('abort', () => {
                aborted.resolve(ctx.signal.reason);
                resolve({ content: [{ type: 'text', text: 'too late' }] });
              });
              started.resolve();
            }),
        ),
      ]);
      const { client, serverConnection } = await connectPair(definition);
      const serverTrace: TraceEvent[] = [];
      serverConnection.trace$.subscribe((event) => serverTrace.push(event));
      const controller = new AbortController();
      const call = client.callTool('slow', {}, { signal: controller.signal });
      const outcome = call.catch((error: unknown) => error);
      await started.promise;
      controller.abort();
      const reason = await aborted.promise;
      await outcome;
      await client.ping();
      return { call, reason, serverTrace, serverConnection };
    }

    it('rejects with RequestCancelledError', async () => {
      const { call } = await cancelRunningCall();
      await expect(call).rejects.toBeInstanceOf(RequestCancelledError);
    });

    it('aborts the handler with a RequestCancelledError', async () => {
      const { reason } = await cancelRunningCall();
      expect(reason).toBeInstanceOf(RequestCancelledError);
      expect((reason as Error).message).toBe('tools/call was cancelled');
    });

    it("sends no response, tracing the handler's answer as ignored", async () => {
      const { serverTrace } = await cancelRunningCall();
      expect(serverTrace.filter((e) => e.direction === 'out' && e.kind === 'result').map((e) => e.method)).toEqual([
        'ping',
      ]);
      expect(serverTrace.some((e) => e.kind === 'ignored' && e.reason?.includes('cancelled'))).toBe(true);
    });

    it('leaves no active handler', async () => {
      const { serverConnection } = await cancelRunningCall();
      expect(serverConnection.activeHandlerCount).toBe(0);
    });
  });

  describe('a call that times out', () => {
    /** A call with a 30 ms timeout to a handler that never answers; `aborted` settles when the handler is aborted. */
    async function callHangingTool() {
      const aborted = deferred();
      const definition = serverWith([
        tool('hang', (_a, ctx) => new Promise(() => ctx.signal.addEventListener('abort', () => aborted.resolve()))),
      ]);
      const { client } = await connectPair(definition);
      const call = client.callTool('hang', {}, { timeout: 30 });
      return { call, aborted: aborted.promise };
    }

    it('rejects with RequestTimeoutError', async () => {
      const { call } = await callHangingTool();
      await expect(call).rejects.toBeInstanceOf(RequestTimeoutError);
    });

    it('aborts the server handler', async () => {
      const { call, aborted } = await callHangingTool();
      call.catch(() => undefined);
      await aborted;
    });
  });

  it('sends server-to-client requests made in a handler with the relatedRequestId of that request', async () => {
    const sent: { message: JsonRpcMessage; options?: TransportSendOptions }[] = [];
    const [clientSide, serverSide] = createMemoryPair();
    const spy: Transport = {
      messages: serverSide.messages,
      send: (message, options) => {
        sent.push({ message: message as JsonRpcMessage, options });
        return serverSide.send(message);
      },
      close: () => serverSide.close(),
    };
    const definition = serverWith([
      tool('ask', async (_a, ctx) => (await ctx.request('ping'), await ctx.log('info', 'asked'), { content: [] })),
    ]);
    const connection = new Server(definition).connect(spy);
    validateEmitted(connection);
    const client = new Client({ name: 'c', version: '1' });
    await client.connect(clientSide);
    await client.callTool('ask', {});
    const call = sent.find(
      (entry) => 'result' in entry.message && 'content' in (entry.message as { result: object }).result,
    );
    const related = call!.options!.relatedRequestId;
    expect(
      sent
        .filter((entry) => entry.options?.relatedRequestId === related)
        .map((entry) => (entry.message as { method?: string }).method ?? 'response'),
    ).toEqual(['ping', 'notifications/message', 'response']);
  });
});

describe('logging', () => {
  it('sends notifications/message at or above the level the client set', async () => {
    const definition = serverWith([
      tool('chatty', async (_a, ctx) => {
        for (const level of ['debug', 'info', 'warning', 'error'] as const) await ctx.log(level, { level }, 'chatty');
        return { content: [] };
      }),
    ]);
    const { client } = await connectPair(definition);
    const levels: unknown[] = [];
    client.notifications$
      .pipe(filter((n) => n.method === 'notifications/message'))
      .subscribe((n) => levels.push(n.params?.level));
    await client.callTool('chatty', {});
    await client.request('logging/setLevel', { level: 'warning' });
    await client.callTool('chatty', {});
    expect(levels).toEqual(['debug', 'info', 'warning', 'error', 'warning', 'error']);
  });

  it('refuses an unknown level', async () => {
    const { peer } = serveRaw();
    await peer.initialize();
    expect((await peer.request('logging/setLevel', { level: 'loud' })).error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('one of debug, info, notice'),
    });
  });
});

describe('closing', () => {
  describe('a client closed while two calls run', () => {
    /** Two calls to a handler that never answers, then the client closes. */
    async function closeWhileCallsRun() {
      const running = deferred();
      const aborted = deferred<unknown>();
      const definition = serverWith([
        tool(
          'hang',
          (_a, ctx) => (
            running.resolve(),
            new Promise(() => ctx.signal.addEventListener('abort', () => aborted.resolve(ctx.signal.reason)))
          ),
        ),
      ]);
      const { client, server, serverConnection } = await connectPair(definition);
      const calls = [client.callTool('hang', {}), client.callTool('hang', {})];
      for (const call of calls) call.catch(() => undefined);
      await running.promise;
      const pendingBefore = client.pendingRequestCount;
      const closeReason = await client.close();
      return { client, server, serverConnection, calls, pendingBefore, closeReason, abortReason: aborted.promise };
    }

    it('resolves close() with a local-close reason', async () => {
      const { closeReason } = await closeWhileCallsRun();
      expect(closeReason).toEqual({ kind: 'local-close', message: 'Closed by the client' });
    });

    it('rejects the pending requests with ConnectionClosedError', async () => {
      const { client, calls, pendingBefore } = await closeWhileCallsRun();
      expect(pendingBefore).toBe(2);
      for (const call of calls) await expect(call).rejects.toBeInstanceOf(ConnectionClosedError);
      expect(client.pendingRequestCount).toBe(0);
    });

    it('closes the server side as transport-closed', async () => {
      const { serverConnection } = await closeWhileCallsRun();
      expect(await serverConnection.closed).toEqual({ kind: 'transport-closed', message: 'The transport closed' });
    });

    it('aborts the running handlers with ConnectionClosedError', async () => {
      const { serverConnection, abortReason } = await closeWhileCallsRun();
      expect(await abortReason).toBeInstanceOf(ConnectionClosedError);
      await serverConnection.closed;
      expect(serverConnection.activeHandlerCount).toBe(0);
    });

    it('is forgotten by the server', async () => {
      const { server, serverConnection } = await closeWhileCallsRun();
      await serverConnection.closed;
      expect(server.connectionCount).toBe(0);
    });

    it('refuses requests afterwards with ConnectionClosedError', async () => {
      const { client } = await closeWhileCallsRun();
      await expect(client.ping()).rejects.toBeInstanceOf(ConnectionClosedError);
    });

    it('answers a second close() with the same reason kind', async () => {
      const { client } = await closeWhileCallsRun();
      expect(await client.close()).toMatchObject({ kind: 'local-close' });
    });
  });

  it('reports a transport failure as the quit reason', async () => {
    const [clientSide, serverSide] = createMemoryPair();
    new Server(defineServer({ name: 's', version: '1' })).connect(serverSide);
    const cut = deferred();
    let connected = false;
    const failing: Transport = {
      messages: new (await import('rxjs')).Observable((subscriber) => {
        const inner = clientSide.messages.subscribe(subscriber);
        void cut.promise.then(() => subscriber.error(new Error('cable cut')));
        return inner;
      }),
      // Once connected, nothing gets through any more: the ping below stays pending.
      send: (message) => (connected ? Promise.resolve() : clientSide.send(message)),
      close: () => clientSide.close(),
    };
    const client = new Client({ name: 'c', version: '1' });
    await client.connect(failing);
    connected = true;
    const pending = client.request('ping', undefined, { timeout: 0 });
    cut.resolve();
    expect(await client.closed).toMatchObject({ kind: 'transport-error', message: 'The transport failed: cable cut' });
    await expect(pending).rejects.toBeInstanceOf(ConnectionClosedError);
  });

  it('tells close listeners even when one of them throws', async () => {
    const { client } = await connectPair(defineServer({ name: 's', version: '1' }));
    const heard: string[] = [];
    client.events.on('close', () => {
      throw new Error('bad listener');
    });
    client.events.on('close', (reason) => heard.push(reason.kind));
    const logged: string[] = [];
    (client as unknown as { logger: { error(message: string): void } }).logger.error = (message: string) =>
      logged.push(message);
    await client.close();
    expect(heard).toEqual(['local-close']);
    expect(logged).toEqual(['A listener for "close" threw']);
  });
});

describe('tracing', () => {
  /** Every trace event of a client that connects, calls echo once and closes. */
  async function traceOfOneCall() {
    const [clientSide, serverSide] = createMemoryPair();
    new Server(serverWith([echo])).connect(serverSide);
    const client = new Client({ name: 'c', version: '1' });
    const events = firstValueFrom(client.trace$.pipe(toArray()));
    await client.connect(clientSide);
    await client.callTool('echo', { text: 'x' });
    await client.close();
    return { client, events: await events };
  }

  it('reports lifecycle changes and every message in and out', async () => {
    const { events } = await traceOfOneCall();
    const summary = events.map((e) =>
      e.kind === 'lifecycle' ? `${e.from}->${e.to}` : `${e.direction} ${e.kind} ${e.method ?? ''}`.trim(),
    );
    expect(summary).toEqual([
      'uninitialized->initializing',
      'out request initialize',
      'in result initialize',
      'initializing->ready',
      'out notification notifications/initialized',
      'out request tools/call',
      'in result tools/call',
      'ready->closing',
      'closing->closed',
    ]);
  });

  it("gives a response's event its latency and the connection id", async () => {
    const { client, events } = await traceOfOneCall();
    const result = events.find((e) => e.kind === 'result' && e.method === 'tools/call')!;
    expect(result.latencyMs).toBeGreaterThanOrEqual(0);
    expect(result.connection).toBe(client.id);
  });

  it('traces a late response as ignored instead of throwing', async () => {
    const release = deferred();
    const definition = serverWith([tool('late', async () => (await release.promise, { content: [] }))]);
    const [clientSide, serverSide] = createMemoryPair();
    new Server(definition).connect(serverSide);
    // Keep the server from hearing the cancel so its late response really comes back.
    const withoutCancel: Transport = {
      messages: clientSide.messages,
      send: (message) =>
        (message as { method?: string }).method === 'notifications/cancelled'
          ? Promise.resolve()
          : clientSide.send(message),
      close: () => clientSide.close(),
    };
    const client = await new Client({ name: 'c', version: '1' }).connect(withoutCancel);
    const ignored = firstValueFrom(
      client.trace$.pipe(
        filter((e) => e.kind === 'ignored'),
        take(1),
      ),
    );
    await expect(client.callTool('late', {}, { timeout: 10 })).rejects.toBeInstanceOf(RequestTimeoutError);
    release.resolve();
    expect(await ignored).toMatchObject({ direction: 'in', reason: expect.stringContaining('late or duplicate') });
    await client.ping();
  });
});

describe('requests from the peer', () => {
  it('refuses a request id that is still in flight', async () => {
    const release = deferred();
    const definition = serverWith([tool('wait', async () => (await release.promise, { content: [] }))]);
    const { peer } = serveRaw(definition);
    await peer.initialize();
    await peer.send({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'wait' } });
    const duplicate = await peer.request('ping', undefined, 9);
    expect(duplicate.error).toEqual({ code: -32600, message: 'Request id 9 is already in use by a request in flight' });
    release.resolve();
    expect(await peer.next()).toMatchObject({ id: 9, result: { content: [] } });
  });

  it('answers a batch with a batch under 2025-03-26', async () => {
    const { peer } = serveRaw();
    await peer.initialize('2025-03-26');
    await peer.send([
      { jsonrpc: '2.0', id: 1, method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'x', progress: 1 } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'b' } } },
      { jsonrpc: '2.0', id: 3, method: 'nope' },
      { jsonrpc: '1.0', id: 4, method: 'ping' },
    ]);
    const reply = await peer.next();
    expect(Array.isArray(reply)).toBe(true);
    const byId = Object.fromEntries(reply.map((response: { id: number }) => [response.id, response]));
    expect(Object.keys(byId).sort()).toEqual(['1', '2', '3', '4']);
    expect(byId[2].result).toEqual({ content: [{ type: 'text', text: 'b' }] });
    expect(byId[3].error.code).toBe(-32601);
    expect(byId[4].error.code).toBe(-32600);
  });

  it('refuses a batch under a later revision', async () => {
    const modern = serveRaw();
    await modern.peer.initialize('2025-11-25');
    await modern.peer.send([{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
    expect(await modern.peer.next()).toEqual({
      jsonrpc: '2.0',
      error: {
        code: -32600,
        message: 'Invalid Request: JSON-RPC batches are only allowed with protocol version 2025-03-26',
      },
    });
  });

  it('sends nothing back for a batch of notifications', async () => {
    const { peer } = serveRaw();
    await peer.initialize('2025-03-26');
    await peer.send([{ jsonrpc: '2.0', method: 'notifications/initialized' }]);
    // The ping's answer is the next message: nothing came back for the batch before it.
    expect(await peer.request('ping', undefined, 7)).toEqual({ jsonrpc: '2.0', id: 7, result: {} });
    expect(await peer.drain()).toEqual([]);
  });

  it('refuses an empty batch', async () => {
    const { peer } = serveRaw();
    await peer.initialize('2025-03-26');
    await peer.send([]);
    expect(await peer.next()).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Invalid Request: an empty batch' },
    });
  });
});

describe('errors from handlers', () => {
  /** A raw peer, past the handshake, of a server whose tools throw: gone (McpError), denied (PeerError), relay. */
  async function peerOfThrowingTools() {
    const { peer } = serveRaw(
      serverWith([
        tool('gone', () => {
          throw new McpError(-32042, 'needs a browser', { elicitations: [] });
        }),
        tool('denied', () => {
          throw new PeerError(-32603, 'the client refused to sample');
        }),
        tool('relay', async () => {
          throw RelayedError.of(new McpError(-32602, 'upstream says: bad params', { field: 'x' }));
        }),
      ]),
    );
    await peer.initialize();
    return peer;
  }

  it('passes an McpError a handler throws (-32042 included) through as a JSON-RPC error', async () => {
    const peer = await peerOfThrowingTools();
    expect((await peer.request('tools/call', { name: 'gone' })).error).toEqual({
      code: -32042,
      message: 'needs a browser',
      data: { elicitations: [] },
    });
  });

  it('passes a RelayedError a handler throws through as the JSON-RPC error it relays', async () => {
    const peer = await peerOfThrowingTools();
    expect((await peer.request('tools/call', { name: 'relay' })).error).toEqual({
      code: -32602,
      message: 'upstream says: bad params',
      data: { field: 'x' },
    });
  });

  it('answers a PeerError a handler let escape as a tool error', async () => {
    const peer = await peerOfThrowingTools();
    expect((await peer.request('tools/call', { name: 'denied' })).result).toEqual({
      content: [{ type: 'text', text: 'the client refused to sample' }],
      isError: true,
    });
  });
});

describe('limits', () => {
  it('refuses requests beyond the pending limit with a LimitExceededError', async () => {
    const [clientSide, serverSide] = createMemoryPair();
    new Server(serverWith([tool('hang', () => new Promise(() => {}))])).connect(serverSide);
    const client = new Client({ name: 'c', version: '1' }, { maxPendingRequests: 2 });
    validateEmitted(client);
    await client.connect(clientSide);
    const hanging = [client.callTool('hang'), client.callTool('hang')];
    await expect(client.callTool('hang')).rejects.toBeInstanceOf(LimitExceededError);
    await client.close();
    for (const call of hanging) await expect(call).rejects.toBeInstanceOf(ConnectionClosedError);
  });

  it('counts as closed when the transport never finishes closing', async () => {
    vi.useFakeTimers();
    try {
      const [clientSide, serverSide] = createMemoryPair();
      new Server(serverWith([])).connect(serverSide);
      const stuck: Transport = {
        messages: clientSide.messages,
        send: (m) => clientSide.send(m),
        close: () => new Promise(() => {}),
      };
      const client = new Client({ name: 'c', version: '1' });
      const connected = client.connect(stuck);
      await vi.advanceTimersByTimeAsync(0);
      await connected;
      const closed = client.close();
      await vi.advanceTimersByTimeAsync(4_999);
      expect(client.state).toBe('closing');
      await vi.advanceTimersByTimeAsync(1);
      expect(await closed).toMatchObject({ kind: 'local-close' });
    } finally {
      vi.useRealTimers();
    }
  });
});

/** A client connected in memory to a server for `definition` whose connections log to `logger`. */
async function connectWithServerLogger(definition: ServerDefinition, logger: Logger): Promise<Client> {
  const [clientSide, serverSide] = createMemoryPair();
  validateEmitted(new Server(definition, { logger }).connect(serverSide));
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  validateEmitted(client);
  return client.connect(clientSide);
}

describe('server connection events', () => {
  it('emits logLevelChanged once the level asked for is in effect', async () => {
    const { client, serverConnection } = await connectPair(serverWith([]));
    const seen: string[] = [];
    serverConnection.events.on('logLevelChanged', (level) => seen.push(`${level}/${serverConnection.logLevel}`));
    await client.setLoggingLevel('warning');
    expect(seen).toEqual(['warning/warning']);
    await client.close();
  });

  it('emits listed for each list a client reads', async () => {
    const { client, serverConnection } = await connectPair(serverWith([tool('a')]));
    const lists: string[] = [];
    serverConnection.events.on('listed', (list) => lists.push(list));
    await client.listTools();
    expect(lists).toEqual(['tools']);
    await client.close();
  });

  it('emits rootsChanged when the client says its roots changed', async () => {
    const { client, serverConnection } = await connectPair(serverWith([]), { roots: [] });
    const changed = new Promise<void>((resolve) => serverConnection.events.once('rootsChanged', resolve));
    await client.notify('notifications/roots/list_changed');
    await changed;
    await client.close();
  });
});
