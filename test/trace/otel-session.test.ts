/**
 * Session and network attributes and the session-duration metrics of the OpenTelemetry MCP conventions
 * (lib/trace/otel-semconv.ts names the version), filled from what the transports say: `mcp.session.id` (the
 * handshake era's `Mcp-Session-Id`), `network.*`, `server.address`/`server.port` seen from a client and
 * `client.address`/`client.port` seen from a server (real sockets), `network.transport: pipe` over stdio, and
 * `mcp.{client,server}.session.duration` once per session, with `error.type` when it ended on a failure.
 */
import { PassThrough } from 'node:stream';
import path from 'node:path';
import { SpanKind } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { beforeEach, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { Runtime } from '../../lib/core/runtime';
import { Server } from '../../lib/server/server';
import { openTelemetry } from '../../lib/trace/otel';
import { createMcpHttpHandler } from '../../transports/http/endpoint';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { StdioClientTransport, StdioServerTransport } from '../../transports/stdio';
import {
  createWebSocketServer,
  WebSocketClientTransport,
  type WebSocketServerTransport,
} from '../../transports/websocket';
import { serverWith, tool } from '../helpers/fixtures';
import { cleanups, eventually, listenHttp } from '../helpers/http';
import { recordingMeter } from './otel-recording-meter';
import { recordingTracer } from './otel-recording-tracer';

const { exporter, tracer } = recordingTracer('session');
beforeEach(() => exporter.reset());

const ROOT = path.resolve(__dirname, '../..');
const ECHO = serverWith([tool('echo')]);
const INFO = { name: 'session-client', version: '1.0.0' };

/** A runtime whose spans go to `exporter` and whose metrics to a fresh recording meter. */
function instrumented() {
  const meter = recordingMeter();
  const runtime = new Runtime({ instrumentation: openTelemetry({ tracer, meter }) });
  const sessions = (side: 'client' | 'server') => meter.histograms.get(`mcp.${side}.session.duration`)!.values;
  return { runtime, sessions };
}

const spanOf = (kind: SpanKind, name = 'tools/call echo'): ReadableSpan => {
  const span = exporter.getFinishedSpans().find((each) => each.kind === kind && each.name === name);
  if (!span) throw new Error(`No ${SpanKind[kind]} span ${name}`);
  return span;
};

/** A client and a server on the stdio transport over two in-process pipes, as a child's stdin and stdout are. */
function stdioPair(runtime: Runtime, era: 'handshake' | 'modern' = 'handshake') {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const serverSide = new StdioServerTransport({ input: toServer, output: toClient });
  const connection = new Server(ECHO, { runtime }).connect(serverSide);
  const client = new Client(INFO, { runtime, era, eraCache: false, listChanges: 'off' });
  return { client, connection, clientSide: new StdioServerTransport({ input: toClient, output: toServer }), toServer };
}

describe('over Streamable HTTP in the handshake era', () => {
  async function httpSession() {
    const { runtime, sessions } = instrumented();
    const handler = createMcpHttpHandler(new Server(ECHO, { runtime }));
    cleanups.push(() => handler.close());
    const { server, origin } = await listenHttp(handler);
    const clientPorts: number[] = [];
    server.on('connection', (socket) => clientPorts.push(socket.remotePort!));
    const transport = new StreamableHttpClientTransport(`${origin}/mcp`);
    const client = new Client(INFO, { runtime, era: 'handshake', eraCache: false, listChanges: 'off' });
    await client.connect(transport);
    cleanups.push(() => client.close());
    return { client, transport, port: Number(new URL(origin).port), clientPorts, sessions };
  }

  it('puts the Mcp-Session-Id and the real peers on both sides of a call', async () => {
    const { client, transport, port, clientPorts } = await httpSession();
    await client.callTool('echo', {});
    const sessionId = transport.sessionId!;
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const network = { 'network.transport': 'tcp', 'network.protocol.name': 'http', 'network.protocol.version': '1.1' };
    expect(spanOf(SpanKind.CLIENT).attributes).toMatchObject({
      'mcp.session.id': sessionId,
      ...network,
      'server.address': '127.0.0.1',
      'server.port': port,
    });
    const served = spanOf(SpanKind.SERVER).attributes;
    // The session's client is the socket its `initialize` came on: the first the server accepted.
    expect(served).toMatchObject({
      'mcp.session.id': sessionId,
      ...network,
      'client.address': '127.0.0.1',
      'client.port': clientPorts[0],
    });
    expect(served['server.address']).toBeUndefined();
  });

  it('records each side of the session once when the client closes it, without error.type', async () => {
    const { client, port, sessions } = await httpSession();
    await client.callTool('echo', {});
    expect([sessions('client'), sessions('server')]).toEqual([[], []]);
    await client.close();
    await eventually(() => sessions('server').length > 0, 'the server session to end on DELETE');
    const common = {
      'mcp.protocol.version': '2025-11-25',
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      'network.protocol.version': '1.1',
    };
    expect(sessions('client')).toEqual([
      { value: expect.any(Number), attributes: { ...common, 'server.address': '127.0.0.1', 'server.port': port } },
    ]);
    // No client address or port on a metric: every connection would be a series of its own.
    expect(sessions('server')).toEqual([{ value: expect.any(Number), attributes: common }]);
  });

  it('leaves the session id out of the metrics, and the client address out of the server operation metric', async () => {
    const meter = recordingMeter();
    const runtime = new Runtime({ instrumentation: openTelemetry({ tracer, meter }) });
    const handler = createMcpHttpHandler(new Server(ECHO, { runtime }));
    cleanups.push(() => handler.close());
    const { origin } = await listenHttp(handler);
    const client = new Client(INFO, { runtime, era: 'handshake', eraCache: false, listChanges: 'off' });
    await client.connect(new StreamableHttpClientTransport(`${origin}/mcp`));
    cleanups.push(() => client.close());
    await client.callTool('echo', {});
    const served = meter.histograms.get('mcp.server.operation.duration')!.values;
    const call = served.find((entry) => entry.attributes['mcp.method.name'] === 'tools/call')!;
    expect(call.attributes).toMatchObject({ 'network.transport': 'tcp', 'gen_ai.tool.name': 'echo' });
    expect(Object.keys(call.attributes).filter((key) => key.startsWith('client.') || key === 'mcp.session.id')).toEqual(
      [],
    );
  });
});

describe('over HTTP in the stateless revision', () => {
  it('names no session on its spans, and times the client connection from discovery to close', async () => {
    const { runtime, sessions } = instrumented();
    const handler = createMcpHttpHandler(new Server(ECHO, { runtime }));
    cleanups.push(() => handler.close());
    const { origin } = await listenHttp(handler);
    const client = new Client(INFO, { runtime, era: 'modern', eraCache: false, listChanges: 'off' });
    await client.connect(new StreamableHttpClientTransport(`${origin}/mcp`));
    await client.callTool('echo', {});
    const called = spanOf(SpanKind.CLIENT).attributes;
    expect(called).toMatchObject({ 'network.transport': 'tcp', 'server.port': Number(new URL(origin).port) });
    expect(called['mcp.session.id']).toBeUndefined();
    await client.close();
    expect(sessions('client')).toEqual([
      { value: expect.any(Number), attributes: expect.objectContaining({ 'mcp.protocol.version': '2026-07-28' }) },
    ]);
    // Each stateless POST is served on its own, with no connection: no server session to time.
    expect(sessions('server')).toEqual([]);
  });

  it("gives each stateless request a SERVER span under the client's, the real client as its peer", async () => {
    const { runtime } = instrumented();
    const handler = createMcpHttpHandler(new Server(ECHO, { runtime }));
    cleanups.push(() => handler.close());
    const { server, origin } = await listenHttp(handler);
    const clientPorts: number[] = [];
    server.on('connection', (socket) => clientPorts.push(socket.remotePort!));
    const client = new Client(INFO, { runtime, era: 'modern', eraCache: false, listChanges: 'off' });
    await client.connect(new StreamableHttpClientTransport(`${origin}/mcp`));
    cleanups.push(() => client.close());
    await client.callTool('echo', {});
    await expect(client.callTool('missing', {})).rejects.toThrow();
    const served = spanOf(SpanKind.SERVER);
    expect(served.parentSpanContext?.spanId).toBe(spanOf(SpanKind.CLIENT).spanContext().spanId);
    expect(served.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'mcp.protocol.version': '2026-07-28',
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      'client.address': '127.0.0.1',
    });
    expect(clientPorts).toContain(served.attributes['client.port']);
    expect(served.attributes['mcp.session.id']).toBeUndefined();
    const refused = spanOf(SpanKind.SERVER, 'tools/call missing');
    expect(refused.attributes['error.type']).toBe('-32602');
  });
});

describe.each(['handshake', 'modern'] as const)('over stdio in the %s era', (era) => {
  it('says pipe on both sides, names no session, and records each side once on close', async () => {
    const { runtime, sessions } = instrumented();
    const { client, connection, clientSide } = stdioPair(runtime, era);
    await client.connect(clientSide);
    await client.callTool('echo', {});
    for (const kind of [SpanKind.CLIENT, SpanKind.SERVER]) {
      const attributes = spanOf(kind).attributes;
      expect(attributes['network.transport']).toBe('pipe');
      expect(Object.keys(attributes).filter((key) => /^(mcp\.session|server\.|client\.)/.test(key))).toEqual([]);
    }
    await client.close();
    await connection.closed;
    const version = era === 'handshake' ? '2025-11-25' : '2026-07-28';
    expect(sessions('client')).toEqual([
      { value: expect.any(Number), attributes: { 'mcp.protocol.version': version, 'network.transport': 'pipe' } },
    ]);
    // A stateless server connection has no revision of its own: each request names its own.
    const served = era === 'handshake' ? { 'mcp.protocol.version': version } : {};
    expect(sessions('server')).toEqual([
      { value: expect.any(Number), attributes: { ...served, 'network.transport': 'pipe' } },
    ]);
  });

  it("records error.type when the server's input fails", async () => {
    const { runtime, sessions } = instrumented();
    const { client, connection, clientSide, toServer } = stdioPair(runtime, era);
    await client.connect(clientSide);
    cleanups.push(() => client.close());
    // A stateless server connection's session begins with its first request past the era probe.
    await client.callTool('echo', {});
    toServer.destroy(new Error('the pipe broke'));
    expect((await connection.closed).kind).toBe('transport-error');
    expect(sessions('server')).toEqual([
      { value: expect.any(Number), attributes: expect.objectContaining({ 'error.type': 'TransportError' }) },
    ]);
  });
});

describe('a stdio child', () => {
  const child = () =>
    new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', path.join(ROOT, 'test/fixtures/stdio-server.ts')],
      cwd: ROOT,
    });

  it('is a pipe to its client, and a child killed ends the session with error.type', async () => {
    const { runtime, sessions } = instrumented();
    const client = new Client(INFO, { runtime, era: 'handshake', eraCache: false, listChanges: 'off' });
    await client.connect(child());
    cleanups.push(() => client.close());
    await client.callTool('echo', {});
    expect(spanOf(SpanKind.CLIENT).attributes['network.transport']).toBe('pipe');
    expect(StdioClientTransport.killRunningChildren()).toHaveLength(1);
    expect((await client.closed).kind).toBe('transport-error');
    expect(sessions('client')).toEqual([
      {
        value: expect.any(Number),
        attributes: {
          'mcp.protocol.version': '2025-11-25',
          'network.transport': 'pipe',
          'error.type': 'TransportError',
        },
      },
    ]);
  });
});

describe('without an instrumentation', () => {
  it('never reads what the transport says of its network or session', async () => {
    const runtime = new Runtime();
    const { client, clientSide, connection } = stdioPair(runtime);
    let reads = 0;
    Object.defineProperty(clientSide, 'network', { get: () => (reads++, { transport: 'pipe' }) });
    Object.defineProperty(clientSide, 'sessionId', { get: () => (reads++, undefined) });
    await client.connect(clientSide);
    await client.callTool('echo', {});
    await client.close();
    await connection.closed;
    expect(reads).toBe(0);
  });

  it('reads them once per span and session with one (the control)', async () => {
    const { runtime } = instrumented();
    const { client, clientSide, connection } = stdioPair(runtime);
    let reads = 0;
    Object.defineProperty(clientSide, 'network', { get: () => (reads++, { transport: 'pipe' }) });
    await client.connect(clientSide);
    const afterConnect = reads;
    await client.callTool('echo', {});
    expect(reads).toBe(afterConnect + 1);
    await client.close();
    await connection.closed;
  });
});

describe('over a WebSocket, and through a reconnecting client', () => {
  it('says websocket, with the real peer on each side', async () => {
    const { runtime } = instrumented();
    let onAccept: (transport: WebSocketServerTransport) => void = () => undefined;
    const accepted = new Promise<WebSocketServerTransport>((resolve) => (onAccept = resolve));
    const server = await createWebSocketServer({ port: 0, onConnection: (transport) => onAccept(transport) });
    cleanups.push(() => server.close());
    const url = `ws://127.0.0.1:${server.port}/`;
    const client = new Client(INFO, { runtime, era: 'handshake', eraCache: false, listChanges: 'off' });
    const connecting = client.connect(await WebSocketClientTransport.connect(url));
    new Server(ECHO, { runtime }).connect(await accepted);
    await connecting;
    cleanups.push(() => client.close());
    await client.callTool('echo', {});
    expect(spanOf(SpanKind.CLIENT).attributes).toMatchObject({
      'network.transport': 'tcp',
      'network.protocol.name': 'websocket',
      'server.address': '127.0.0.1',
      'server.port': server.port,
    });
    const served = spanOf(SpanKind.SERVER).attributes;
    expect(served).toMatchObject({ 'network.protocol.name': 'websocket', 'client.address': '127.0.0.1' });
    expect(served['client.port']).toEqual(expect.any(Number));
    expect(served['client.port']).not.toBe(server.port);
  });

  it('names the network of the transport a reconnecting client is on', async () => {
    const { runtime } = instrumented();
    const handler = createMcpHttpHandler(new Server(ECHO, { runtime }));
    cleanups.push(() => handler.close());
    const { origin } = await listenHttp(handler);
    const open = () => new StreamableHttpClientTransport(`${origin}/mcp`);
    const client = new Client(INFO, {
      runtime,
      era: 'handshake',
      eraCache: false,
      listChanges: 'off',
      reconnect: { transport: open },
    });
    await client.connect(open());
    cleanups.push(() => client.close());
    await client.callTool('echo', {});
    expect(spanOf(SpanKind.CLIENT).attributes).toMatchObject({
      'network.protocol.name': 'http',
      'server.port': Number(new URL(origin).port),
    });
  });
});
