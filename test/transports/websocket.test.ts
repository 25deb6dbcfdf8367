/**
 * The WebSocket transport over real sockets on 127.0.0.1: the shared suite, subprotocol negotiation,
 * keep-alive, binary frames, backpressure, an MCP session, and the official SDK's WebSocket client.
 */
import { Client as SdkClient } from '@modelcontextprotocol/sdk/client/index.js';
import { WebSocketClientTransport as SdkWebSocketClientTransport } from '@modelcontextprotocol/sdk/client/websocket.js';
import { firstValueFrom, toArray } from 'rxjs';
import { describe, expect, it, vi } from 'vitest';
import { WebSocket, WebSocketServer } from 'ws';
import { Client } from '../../lib/client/client';
import { TransportError } from '../../lib/jsonrpc/errors';
import { UnreadableFrame, type InboundFrame, type JsonRpcMessage } from '../../lib/jsonrpc/types';
import { Server } from '../../lib/server/server';
import {
  createWebSocketServer,
  WebSocketClientTransport,
  WebSocketServerTransport,
  type McpWebSocketServer,
  type WebSocketServerOptions,
} from '../../transports/websocket';
import { cleanups } from '../helpers/cleanups';
import { deferred, serverWith, tool } from '../helpers/fixtures';
import { within } from '../helpers/wait';
import { runTransportSuite } from '../helpers/transport-suite';
import { json } from '../helpers/content';

const MAX_MESSAGE_BYTES = 2 * 1024 * 1024;

type ServerOptions = Omit<WebSocketServerOptions, 'port' | 'onConnection'>;

/** A server on a free port whose connections arrive through `next()`; closed after the test. */
async function startServer(options: ServerOptions = {}) {
  const waiting: ((transport: WebSocketServerTransport) => void)[] = [];
  const arrived: WebSocketServerTransport[] = [];
  const server = await createWebSocketServer({
    port: 0,
    ...options,
    onConnection: (transport) => {
      cleanups.push(() => transport.close());
      const waiter = waiting.shift();
      if (waiter) waiter(transport);
      else arrived.push(transport);
    },
  });
  cleanups.push(() => server.close());
  const next = () =>
    new Promise<WebSocketServerTransport>((resolve) => {
      const ready = arrived.shift();
      if (ready) resolve(ready);
      else waiting.push(resolve);
    });
  return { server, next };
}

async function connectClient(server: McpWebSocketServer, options = {}): Promise<WebSocketClientTransport> {
  const client = await WebSocketClientTransport.connect(server.url, options);
  cleanups.push(() => client.close());
  return client;
}

/** A server transport and the bare `ws` socket at the other end of it, open. */
async function acceptedRawSocket(options: ServerOptions = {}) {
  const { server, next } = await startServer(options);
  const accepted = next();
  const socket = rawSocket(server.url, 'mcp');
  await opened(socket);
  return { socket, transport: await accepted };
}

/** A bare `ws` socket (no transport of ours), closed after the test. */
function rawSocket(url: string, protocols?: string | string[], options: WebSocket.ClientOptions = {}): WebSocket {
  const socket = new WebSocket(url, protocols, options);
  socket.on('error', () => undefined);
  cleanups.push(() => socket.terminate());
  return socket;
}

const opened = (socket: WebSocket) =>
  new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });

/** How the stream ended: 'complete' or the error it failed with. */
const ending = (messages: { subscribe: WebSocketServerTransport['messages']['subscribe'] }) =>
  new Promise<unknown>((resolve) => messages.subscribe({ error: resolve, complete: () => resolve('complete') }));

const ping = (id: number): JsonRpcMessage => ({ jsonrpc: '2.0', id, method: 'ping' });

runTransportSuite('websocket', {
  connect: async () => {
    const { server, next } = await startServer({ maxMessageBytes: MAX_MESSAGE_BYTES });
    const accepted = next();
    const left = await WebSocketClientTransport.connect(server.url, { maxMessageBytes: MAX_MESSAGE_BYTES });
    return { left, right: await accepted, dispose: () => server.close() };
  },
  maxMessageBytes: MAX_MESSAGE_BYTES,
  // ws enforces maxPayload by closing with 1009: the receiver's stream errors with a TransportError.
  oversize: 'close',
});

describe('WebSocket transport', () => {
  describe('subprotocol negotiation', () => {
    it('refuses a client that does not offer subprotocol mcp (HTTP 400)', async () => {
      const { server } = await startServer();
      for (const protocols of [undefined, 'other', ['other', 'json']]) {
        const socket = rawSocket(server.url, protocols);
        const status = await new Promise<number | undefined>((resolve) => {
          socket.once('unexpected-response', (_request, response) => resolve(response.statusCode));
          socket.once('open', () => resolve(undefined));
        });
        expect(status).toBe(400);
      }
    });

    it('accepts a client offering mcp among others and selects mcp', async () => {
      const { server, next } = await startServer();
      const accepted = next();
      const socket = rawSocket(server.url, ['other', 'mcp']);
      await opened(socket);
      expect(socket.protocol).toBe('mcp');
      await accepted;
    });

    it('our client refuses a server that does not select subprotocol mcp', async () => {
      const plain = new WebSocketServer({ host: '127.0.0.1', port: 0, handleProtocols: () => false });
      cleanups.push(() => new Promise((resolve) => plain.close(resolve)));
      await new Promise((resolve) => plain.once('listening', resolve));
      const url = `ws://127.0.0.1:${(plain.address() as { port: number }).port}`;
      const failure = await WebSocketClientTransport.connect(url).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(TransportError);
      expect((failure as Error).message).toMatch(/did not accept WebSocket subprotocol 'mcp'/);
    });

    it('our client reports a refused upgrade as a TransportError', async () => {
      const { server } = await startServer({ path: '/mcp' });
      const wrongPath = await WebSocketClientTransport.connect(`${server.url}/elsewhere`).catch((e: unknown) => e);
      expect(wrongPath).toBeInstanceOf(TransportError);
      expect((wrongPath as Error).message).toContain('HTTP 404');
    });

    it('our client reports an unreachable server as a TransportError', async () => {
      const { server } = await startServer();
      const port = server.port;
      await server.close();
      const unreachable = await WebSocketClientTransport.connect(`ws://127.0.0.1:${port}`).catch((e: unknown) => e);
      expect(unreachable).toBeInstanceOf(TransportError);
      expect((unreachable as Error).message).toContain('Cannot connect');
    });

    it('answers a plain HTTP request with 426 Upgrade Required', async () => {
      const { server } = await startServer();
      const response = await fetch(`http://127.0.0.1:${server.port}/`);
      expect(response.status).toBe(426);
      await response.text();
    });
  });

  describe('keep-alive', () => {
    it('terminates a peer that stops answering pings', async () => {
      const { server, next } = await startServer({ keepAliveIntervalMs: 40 });
      const accepted = next();
      const socket = rawSocket(server.url, 'mcp', { autoPong: false });
      const peerClosed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
      const outcome = await ending((await accepted).messages);
      expect(outcome).toBeInstanceOf(TransportError);
      expect((outcome as Error).message).toContain('keep-alive timeout');
      expect(await peerClosed).toBe(1006); // terminated, no closing handshake
    });

    it('keeps a peer that answers pings alive across many intervals', async () => {
      const { server, next } = await startServer({ keepAliveIntervalMs: 20 });
      const accepted = next();
      // Both sides ping every interval: ten pings sent means several intervals went by, each answered.
      const tenPings = deferred();
      let pings = 0;
      const sendPing = WebSocket.prototype.ping;
      const pinging = vi.spyOn(WebSocket.prototype, 'ping').mockImplementation(function (this: WebSocket, ...args) {
        if (++pings === 10) tenPings.resolve();
        return sendPing.apply(this, args);
      });
      cleanups.push(() => pinging.mockRestore());
      const client = await connectClient(server, { keepAliveIntervalMs: 20 });
      const transport = await accepted;
      await within(tenPings.promise, 'ten keep-alive pings');
      const got = firstValueFrom(transport.messages);
      await client.send(ping(1));
      expect(await got).toEqual(ping(1));
    });

    it('our client terminates a server that stops answering pings', async () => {
      const silent = new WebSocketServer({ host: '127.0.0.1', port: 0, autoPong: false });
      cleanups.push(() => new Promise((resolve) => silent.close(resolve)));
      silent.on('connection', (socket) => {
        socket.on('error', () => undefined);
        cleanups.push(() => socket.terminate());
      });
      await new Promise((resolve) => silent.once('listening', resolve));
      const port = (silent.address() as { port: number }).port;
      const client = await WebSocketClientTransport.connect(`ws://127.0.0.1:${port}`, { keepAliveIntervalMs: 40 });
      cleanups.push(() => client.close());
      const outcome = await ending(client.messages);
      expect(outcome).toBeInstanceOf(TransportError);
      expect((outcome as Error).message).toContain('keep-alive timeout');
    });
  });

  describe('framing and closing', () => {
    /** A binary frame, a malformed text frame and a ping sent to the server; what it received, and an answer. */
    async function oddFrames() {
      const { socket, transport } = await acceptedRawSocket();
      const frames = firstValueFrom(transport.messages.pipe(toArray<InboundFrame>()));
      socket.send(Buffer.from(JSON.stringify(ping(1))), { binary: true });
      socket.send('{not json');
      socket.send(JSON.stringify(ping(2)));
      const reply = new Promise<string>((resolve) => socket.once('message', (data) => resolve(String(data))));
      await transport.send({ jsonrpc: '2.0', id: 2, result: {} });
      const answer = JSON.parse(await reply);
      socket.close(1000);
      return { frames: await frames, answer };
    }

    it('reports a binary frame as an UnreadableFrame', async () => {
      const [binary] = (await oddFrames()).frames;
      expect(binary).toBeInstanceOf(UnreadableFrame);
      expect((binary as UnreadableFrame).message).toContain('Binary frames');
    });

    it('reports a text frame that is not JSON as an UnreadableFrame', async () => {
      const [, malformed] = (await oddFrames()).frames;
      expect(malformed).toBeInstanceOf(UnreadableFrame);
    });

    it('keeps the connection after unreadable frames: later messages arrive, answers get out', async () => {
      const { frames, answer } = await oddFrames();
      expect(frames[2]).toEqual(ping(2));
      expect(answer).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    });

    /** A message nested 5000 deep, then a ping, sent to a server allowing depth 16: what it received. */
    async function deepThenPing() {
      const { socket, transport } = await acceptedRawSocket({ maxDepth: 16 });
      const frames = firstValueFrom(transport.messages.pipe(toArray<InboundFrame>()));
      socket.send(`{"jsonrpc":"2.0","id":1,"method":"ping","params":${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}}`);
      socket.send(JSON.stringify(ping(2)));
      socket.close(1000);
      return frames;
    }

    it('refuses a message nested deeper than maxDepth as a -32600 UnreadableFrame', async () => {
      const [deep] = await deepThenPing();
      expect(deep).toEqual(
        new UnreadableFrame(-32600, 'Invalid Request: the message nests deeper than 16 levels', 1, false),
      );
    });

    it('keeps the connection after a message nested too deep', async () => {
      const [, message] = await deepThenPing();
      expect(message).toEqual(ping(2));
    });

    /** A server transport whose peer closed with code 4000, and how its messages ended. */
    async function abnormallyClosed() {
      const { socket, transport } = await acceptedRawSocket();
      cleanups.push(() => transport.close());
      const outcome = ending(transport.messages);
      socket.close(4000, 'gone fishing');
      return { transport, outcome: await outcome };
    }

    it('fails the stream with the code and reason when the peer closes abnormally', async () => {
      const { outcome } = await abnormallyClosed();
      expect(outcome).toBeInstanceOf(TransportError);
      expect((outcome as Error).message).toContain('4000: gone fishing');
    });

    it('rejects sends after the peer closed abnormally', async () => {
      const { transport } = await abnormallyClosed();
      await expect(transport.send(ping(1))).rejects.toBeInstanceOf(TransportError);
    });

    it('closes with a normal close frame (1000)', async () => {
      const { server, next } = await startServer();
      const accepted = next();
      const socket = rawSocket(server.url, 'mcp');
      await opened(socket);
      const transport = await accepted;
      const code = new Promise<number>((resolve) => socket.once('close', (closeCode) => resolve(closeCode)));
      await Promise.all([transport.close(), transport.close()]);
      expect(await code).toBe(1000);
    });

    /** 64 sends of 256 KiB to a peer that does not read, above a 64 KiB high-water mark. */
    async function stalledSends() {
      const { socket, transport } = await acceptedRawSocket({ sendHighWaterMark: 64 * 1024 });
      socket.pause();
      const handed = vi.spyOn(WebSocket.prototype, 'send');
      cleanups.push(() => handed.mockRestore());
      const padding = 'z'.repeat(256 * 1024);
      let resolved = 0;
      const sends = Array.from({ length: 64 }, (_, index) =>
        transport.send({ jsonrpc: '2.0', method: 'notifications/test', params: { index, padding } }).then(() => {
          resolved++;
        }),
      );
      // A test that leaves the peer paused ends with these sends refused by the closing transport.
      for (const send of sends) send.catch(() => undefined);
      return { socket, handed, sends, resolved: () => resolved };
    }

    it('waits while the peer does not read (backpressure), holding sends in the transport', async () => {
      const { socket, handed, resolved } = await stalledSends();
      cleanups.push(() => socket.terminate()); // first: a peer that never reads would hold up a graceful close
      // Proving an absence (sends that do not complete): no event marks it, so a bounded window.
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(resolved()).toBeLessThan(64); // 16 MiB cannot all be handed over while nobody reads
      // Above the high-water mark the rest wait in the transport instead of piling up inside ws.
      expect(handed.mock.calls.length - resolved()).toBeLessThanOrEqual(2);
    });

    it('delivers everything in order once the peer reads', async () => {
      const { socket, sends } = await stalledSends();
      const indexes: number[] = [];
      const all = new Promise<void>((resolve) =>
        socket.on('message', (data) => {
          indexes.push((JSON.parse(String(data)) as { params: { index: number } }).params.index);
          if (indexes.length === 64) resolve();
        }),
      );
      socket.resume();
      await Promise.all(sends);
      await all;
      expect(indexes).toEqual(Array.from({ length: 64 }, (_, i) => i));
    });

    /** A server with one live client, closed twice over. */
    async function closedServer() {
      const { server, next } = await startServer();
      const accepted = next();
      const client = await connectClient(server);
      await accepted;
      const clientEnd = ending(client.messages);
      await server.close();
      await server.close();
      return { server, clientEnd };
    }

    it('server close() closes live connections', async () => {
      expect(await (await closedServer()).clientEnd).toBe('complete');
    });

    it('server close() closes the listener', async () => {
      const { server } = await closedServer();
      await expect(WebSocketClientTransport.connect(server.url)).rejects.toBeInstanceOf(TransportError);
    });
  });

  describe('MCP sessions', () => {
    const definition = serverWith([tool('echo', json)]);

    it('carries our Client and Server end to end', async () => {
      const mcp = new Server(definition);
      const connected = deferred<ReturnType<Server['connect']>>();
      const server = await createWebSocketServer({
        port: 0,
        path: '/mcp',
        onConnection: (transport) => connected.resolve(mcp.connect(transport)),
      });
      cleanups.push(() => server.close());
      const client = new Client({ name: 'ws-client', version: '1' });
      cleanups.push(() => client.close());
      await client.connect(await WebSocketClientTransport.connect(server.url));
      expect(await client.callTool('echo', { via: 'ws' })).toEqual({
        content: [{ type: 'text', text: '{"via":"ws"}' }],
      });
      await client.close();
      expect((await (await connected.promise).closed).kind).toBe('transport-closed');
    });

    it("connects the official SDK's WebSocketClientTransport to our server", async () => {
      // Node 20 has no global WebSocket: the SDK client needs one, so lend it ws's for this test only.
      const previous = Object.getOwnPropertyDescriptor(globalThis, 'WebSocket');
      Object.defineProperty(globalThis, 'WebSocket', { value: WebSocket, configurable: true, writable: true });
      cleanups.push(() => {
        if (previous) Object.defineProperty(globalThis, 'WebSocket', previous);
        else delete (globalThis as { WebSocket?: unknown }).WebSocket;
      });
      const mcp = new Server(definition);
      const connected = deferred<ReturnType<Server['connect']>>();
      const server = await createWebSocketServer({
        port: 0,
        onConnection: (transport) => connected.resolve(mcp.connect(transport)),
      });
      cleanups.push(() => server.close());
      const sdkClient = new SdkClient({ name: 'sdk-ws-client', version: '1' });
      cleanups.push(() => sdkClient.close());
      await sdkClient.connect(new SdkWebSocketClientTransport(new URL(server.url)));
      expect(sdkClient.getServerVersion()).toMatchObject({ name: 's', version: '1' });
      expect((await sdkClient.listTools()).tools.map((t) => t.name)).toEqual(['echo']);
      expect(await sdkClient.callTool({ name: 'echo', arguments: { from: 'sdk' } })).toEqual({
        content: [{ type: 'text', text: '{"from":"sdk"}' }],
      });
      await sdkClient.close();
      expect((await (await connected.promise).closed).kind).toBe('transport-closed');
    });
  });
});
