/**
 * The interop suite, part 1: the handshake, ping, cancellation, timeouts and closing, for both directions
 * (see `runInteropSuite` in ./interop.ts).
 */
import { expect } from 'vitest';
import { SimulatedClock } from 'xstate';
import { ConnectionClosedError, McpError, RequestCancelledError, RequestTimeoutError } from '../../lib/jsonrpc/errors';
import { deferred } from './fixtures';
import { watchedSdkToolsServer } from '../fixtures/interop-sdk-server';
import { sdkV2ToolsServer } from '../fixtures/interop-sdk-v2-server';
import {
  ourClientAgainst,
  ourClientAgainstSdkPrimitives,
  ourClientAgainstSdkServer,
  sdkClientAgainstOurPrimitives,
  sdkClientAgainstOurServer,
  BOTH_ERAS,
  HANDSHAKE_ERA,
  type InteropCase,
  type InteropRun,
} from './interop';

/** The SDK client calls our `slow` tool and aborts the call once its handler runs. */
async function sdkCallCancelledMidway(run: InteropRun) {
  const setup = await sdkClientAgainstOurServer(run);
  const controller = new AbortController();
  const failure = setup.sdkClient
    .callTool({ name: 'slow', arguments: {} }, { signal: controller.signal })
    .catch((error: unknown) => error);
  const requestId = await setup.hooks.slowStarted.promise;
  controller.abort('the user gave up');
  return { ...setup, failure, requestId };
}

/** Our client calls the SDK server's `slow` tool and aborts the call once its handler runs. */
async function ourCallCancelledMidway(run: InteropRun) {
  const setup = await ourClientAgainstSdkServer(run);
  const controller = new AbortController();
  const failure = setup.client.callTool('slow', {}, { signal: controller.signal }).catch((error: unknown) => error);
  await setup.hooks.slowStarted.promise;
  controller.abort('changed my mind');
  return { ...setup, failure };
}

/** One macrotask: every microtask chain already started (a handler finishing, a reply) has run by then. */
export const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export const LIFECYCLE_CASES: InteropCase[] = [
  {
    title: 'settles on the revision asked for',
    eras: HANDSHAKE_ERA,
    server: async (run) => {
      const { connection, negotiated, sdkErrors } = await sdkClientAgainstOurServer(run);
      expect(connection.state).toBe('ready');
      expect(connection.protocolVersion).toBe(run.version);
      expect(negotiated()).toBe(run.version);
      expect(sdkErrors).toEqual([]);
    },
    client: async (run) => {
      const { client, sdkErrors } = await ourClientAgainstSdkServer(run);
      expect(client.state).toBe('ready');
      expect(client.protocolVersion).toBe(run.version);
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: "connects through fromSdkTransport over the SDK's in-memory pair",
    eras: BOTH_ERAS,
    client: async (run) => {
      // SDK v1 is always reached this way; SDK v2 otherwise over pipes (see SdkV2Link).
      const { hooks, mcp } = watchedSdkToolsServer();
      const builders = { v1: () => mcp, v2: () => sdkV2ToolsServer(hooks) };
      const { client, sdkErrors } = await ourClientAgainst(run, builders, {}, 'sdk-memory');
      expect(client.state).toBe(run.era === 'handshake' ? 'ready' : 'modern');
      expect(await client.callTool('echo', { text: 'hi' })).toEqual({ content: [{ type: 'text', text: 'hi' }] });
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: "learns the peer's name and version",
    eras: HANDSHAKE_ERA,
    server: async (run) => {
      const { sdkClient, connection } = await sdkClientAgainstOurServer(run);
      expect(connection.clientInfo).toEqual({ name: 'sdk-client', version: '9.9.9' });
      expect(sdkClient.getServerVersion()).toEqual({ name: 'switchboard-server', version: '1.2.3' });
    },
    client: async (run) => {
      const { client, mcp } = await ourClientAgainstSdkServer(run);
      expect(client.serverInfo).toEqual({ name: 'sdk-server', version: '2.0.0' });
      expect(mcp.server.getClientVersion()).toEqual({ name: 'switchboard-client', version: '1.0.0' });
    },
  },
  {
    title: 'declares the tools and logging capabilities of the server',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurServer(run);
      expect(sdkClient.getServerCapabilities()).toEqual({ logging: {}, tools: { listChanged: true } });
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkServer(run);
      expect(client.serverCapabilities).toMatchObject({ logging: {}, tools: { listChanged: true } });
    },
  },
  {
    title: 'declares every primitive of the server (resources with subscribe, prompts, completions)',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient, sdkErrors } = await sdkClientAgainstOurPrimitives(run);
      expect(sdkClient.getServerCapabilities()).toEqual({
        logging: {},
        completions: {},
        prompts: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        tools: { listChanged: true },
      });
      expect(sdkErrors).toEqual([]);
    },
    client: async (run) => {
      const { client, sdkErrors } = await ourClientAgainstSdkPrimitives(run);
      expect(client.serverCapabilities).toEqual({
        logging: {},
        resources: { subscribe: true, listChanged: true },
        completions: {},
        prompts: { listChanged: true },
        tools: { listChanged: true },
      });
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: "declares the client's features (sampling, elicitation, roots)",
    eras: HANDSHAKE_ERA,
    server: async (run) => {
      const { connection } = await sdkClientAgainstOurPrimitives(run);
      expect(connection.clientCapabilities).toEqual({
        sampling: {},
        elicitation: { form: {}, url: {} },
        roots: { listChanged: true },
      });
    },
    client: async (run) => {
      const { mcp } = await ourClientAgainstSdkPrimitives(run);
      expect(mcp.server.getClientCapabilities()).toMatchObject({ sampling: {}, roots: { listChanged: true } });
      if (run.version === '2025-11-25') {
        expect(mcp.server.getClientCapabilities()?.elicitation).toEqual({ form: {}, url: {} });
      }
    },
  },
  {
    title: "passes the server's instructions",
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurServer(run);
      expect(sdkClient.getInstructions()).toBe('Use the tools.');
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkServer(run);
      expect(client.instructions).toBe('SDK instructions');
    },
  },
  {
    title: "answers the client's ping",
    eras: HANDSHAKE_ERA,
    server: async (run) => {
      const { sdkClient } = await sdkClientAgainstOurServer(run);
      expect(await sdkClient.ping()).toEqual({});
    },
    client: async (run) => {
      const { client } = await ourClientAgainstSdkServer(run);
      await expect(client.ping()).resolves.toBeUndefined();
    },
  },
  {
    title: "answers the server's ping",
    eras: HANDSHAKE_ERA,
    server: async (run) => {
      const { connection } = await sdkClientAgainstOurServer(run);
      expect(await connection.request('ping')).toEqual({});
    },
    client: async (run) => {
      const { mcp } = await ourClientAgainstSdkServer(run);
      expect(await mcp.server.ping()).toEqual({});
    },
  },
  {
    title: "aborts the running handler's signal when the client cancels",
    eras: BOTH_ERAS,
    server: async (run) => {
      const { hooks } = await sdkCallCancelledMidway(run);
      const reason = await hooks.slowAborted.promise;
      expect(reason).toBeInstanceOf(RequestCancelledError);
      expect(reason).toMatchObject({ method: 'tools/call', reason: 'the user gave up' });
    },
    client: async (run) => {
      const { hooks, sdkErrors } = await ourCallCancelledMidway(run);
      // The SDK aborts its handler with the reason from notifications/cancelled.
      expect(await hooks.slowAborted.promise).toBe('The request was cancelled by the requester');
      await settle();
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: 'rejects the cancelled call with the reason given',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { failure } = await sdkCallCancelledMidway(run);
      // The SDK rejects its own call at once with the abort reason (v1: an McpError -32001, "RequestTimeout").
      expect(((await failure) as Error).message).toMatch(/the user gave up/);
    },
    client: async (run) => {
      const { failure } = await ourCallCancelledMidway(run);
      const error = await failure;
      expect(error).toBeInstanceOf(RequestCancelledError);
      expect(error).toMatchObject({ method: 'tools/call', reason: 'changed my mind' });
    },
  },
  {
    title: 'sends no response to a cancelled request',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { hooks, sdkErrors, sent, requestId } = await sdkCallCancelledMidway(run);
      await hooks.slowFinished.promise;
      await settle();
      expect(sent.filter((message) => message.id === requestId && !('method' in message))).toEqual([]);
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: 'forgets the cancelled call',
    eras: BOTH_ERAS,
    client: async (run) => {
      const { client, failure } = await ourCallCancelledMidway(run);
      await failure;
      await settle();
      expect(client.pendingRequestCount).toBe(0);
    },
  },
  {
    title: 'stays usable after a cancel',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { failure, sdkClient } = await sdkCallCancelledMidway(run);
      await failure;
      expect(await sdkClient.callTool({ name: 'echo', arguments: { text: 'still here' } })).toEqual({
        content: [{ type: 'text', text: 'still here' }],
      });
    },
    client: async (run) => {
      const { client, failure } = await ourCallCancelledMidway(run);
      await failure;
      expect(await client.callTool('echo', { text: 'again' })).toEqual({ content: [{ type: 'text', text: 'again' }] });
    },
  },
  {
    title: 'times out a call the server never answers, once its budget has passed',
    eras: BOTH_ERAS,
    client: async (run) => {
      const clock = new SimulatedClock();
      const { client, hooks } = await ourClientAgainstSdkServer(run, { clock });
      let settled = false;
      const error = client
        .callTool('never', {}, { timeout: 50 })
        .catch((failure: unknown) => failure)
        .finally(() => (settled = true));
      await hooks.neverStarted.promise;
      clock.increment(49);
      await settle();
      expect(settled).toBe(false);
      clock.increment(1);
      expect(await error).toBeInstanceOf(RequestTimeoutError);
      expect(await error).not.toBeInstanceOf(McpError);
      expect(await error).toMatchObject({ method: 'tools/call', limit: 'idle', budgetMs: 50 });
    },
  },
  {
    title: 'tells the server when a call timed out',
    eras: BOTH_ERAS,
    client: async (run) => {
      const clock = new SimulatedClock();
      const { client, hooks, sdkErrors } = await ourClientAgainstSdkServer(run, { clock });
      const call = client.callTool('never', {}, { timeout: 50 }).catch(() => undefined);
      await hooks.neverStarted.promise;
      clock.increment(50);
      await call;
      expect(await hooks.neverAborted.promise).toBe('The request timed out');
      await settle();
      expect(sdkErrors).toEqual([]);
    },
  },
  {
    title: 'enforces maxTotalTimeout even with resetTimeoutOnProgress',
    eras: BOTH_ERAS,
    client: async (run) => {
      const clock = new SimulatedClock();
      const { client, hooks } = await ourClientAgainstSdkServer(run, { clock });
      const error = client
        .callTool('never', {}, { timeout: 5_000, resetTimeoutOnProgress: true, maxTotalTimeout: 40 })
        .catch((failure: unknown) => failure);
      await hooks.neverStarted.promise;
      clock.increment(40);
      expect(await error).toBeInstanceOf(RequestTimeoutError);
      expect(await error).toMatchObject({ limit: 'total', budgetMs: 40 });
      expect(await hooks.neverAborted.promise).toBe('The request timed out');
    },
  },
  {
    title: 'rejects a pending call when the client closes',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient, hooks } = await sdkClientAgainstOurServer(run);
      const call = sdkClient.callTool({ name: 'slow', arguments: {} }).catch((error: unknown) => error);
      await hooks.slowStarted.promise;
      await sdkClient.close();
      expect(((await call) as Error).message).toMatch(/Connection closed/);
    },
    client: async (run) => {
      const { client, hooks } = await ourClientAgainstSdkServer(run);
      const call = client.callTool('slow', {}).catch((error: unknown) => error);
      await hooks.slowStarted.promise;
      await client.close();
      expect(await call).toBeInstanceOf(ConnectionClosedError);
    },
  },
  {
    title: "aborts a running handler's signal when the client goes away",
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient, connection, hooks } = await sdkClientAgainstOurServer(run);
      void sdkClient.callTool({ name: 'slow', arguments: {} }).catch(() => undefined);
      await hooks.slowStarted.promise;
      await sdkClient.close();
      expect(await hooks.slowAborted.promise).toBeInstanceOf(ConnectionClosedError);
      expect(await connection.closed).toMatchObject({ kind: 'transport-closed' });
    },
    client: async (run) => {
      const { client, hooks } = await ourClientAgainstSdkServer(run);
      void client.callTool('slow', {}).catch(() => undefined);
      await hooks.slowStarted.promise;
      await client.close();
      await hooks.slowAborted.promise; // the SDK aborts every running handler when its transport closes
    },
  },
  {
    title: 'closes the server side when the client closes',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient, connection } = await sdkClientAgainstOurServer(run);
      await sdkClient.close();
      expect(await connection.closed).toMatchObject({ kind: 'transport-closed' });
    },
    client: async (run) => {
      const { client, mcp } = await ourClientAgainstSdkServer(run);
      const sdkClosed = deferred();
      mcp.server.onclose = () => sdkClosed.resolve();
      expect(await client.close()).toMatchObject({ kind: 'local-close' });
      await sdkClosed.promise;
      expect(mcp.isConnected()).toBe(false);
      expect(client.state).toBe('closed');
    },
  },
  {
    title: 'closes the client side when the server closes',
    eras: BOTH_ERAS,
    server: async (run) => {
      const { sdkClient, connection } = await sdkClientAgainstOurServer(run);
      const sdkClosed = deferred();
      sdkClient.onClose(() => sdkClosed.resolve());
      expect(await connection.close()).toMatchObject({ kind: 'local-close' });
      await sdkClosed.promise;
      await expect(sdkClient.listTools()).rejects.toThrow(/Not connected/);
    },
    client: async (run) => {
      const { client, mcp } = await ourClientAgainstSdkServer(run);
      await mcp.close();
      expect(await client.closed).toMatchObject({ kind: 'transport-closed' });
      expect(client.state).toBe('closed');
    },
  },
];
