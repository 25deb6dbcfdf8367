/**
 * The HTTP transports against hostile peers, over real sockets on 127.0.0.1 (and 127.0.0.2, which Linux
 * routes to lo, as a second client address): an `initialize` flood from one address, a flood of idle
 * sockets from a child process, slow headers and bodies, oversized and deeply nested bodies, a reused
 * request id, foreign Host and Origin headers on a non-loopback bind, and the `serve` options that set
 * the limits.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { parseCommandLine, type ServeCommand } from '../../../lib/cli/args';
import { httpHandlerOptions, listenHttp as listenCli } from '../../../lib/cli/http-listener';
import { Server } from '../../../lib/server/server';
import { connectionCounts, createMcpHttpServer } from '../../../transports/http/http-server';
import type { HttpLimits } from '../../../transports/http/limits';
import { createStreamableHttpHandler, type StreamableHttpOptions } from '../../../transports/http/streamable-server';
import { deferred, serverWith, tool } from '../../helpers/fixtures';
import { cleanups, within } from '../../helpers/http';
import { fixturePath } from '../../helpers/paths';

const LATEST = '2025-11-25';
const SECOND_CLIENT = '127.0.0.2';

/** Our handler on a server with `limits` (`createMcpHttpServer`), listening on `host`; closed after the test. */
async function start(options: StreamableHttpOptions & Partial<HttpLimits> = {}, host = '127.0.0.1') {
  const release = deferred();
  const server = new Server(
    serverWith([
      tool('echo'),
      tool('slow', async () => {
        await release.promise;
        return { content: [{ type: 'text', text: 'finally' }] };
      }),
    ]),
  );
  const handler = createStreamableHttpHandler(server, options);
  const site = createMcpHttpServer(handler, options);
  await new Promise<void>((resolve) => site.listen(0, host, resolve));
  cleanups.push(
    () => handler.close(),
    () => new Promise((resolve) => site.close(resolve)),
    () => site.closeAllConnections(),
  );
  const port = (site.address() as AddressInfo).port;
  return { server, handler, site, port, host, release: release.resolve };
}

interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** One request with `node:http` (no keep-alive), from `localAddress`; resolves with the whole answer. */
function send(
  port: number,
  options: { method?: string; headers?: Record<string, string>; body?: string; localAddress?: string; host?: string },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: options.host ?? '127.0.0.1',
        port,
        path: '/mcp',
        method: options.method ?? 'POST',
        localAddress: options.localAddress,
        agent: false,
        headers: {
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          ...options.headers,
        },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 0,
  method: 'initialize',
  params: { protocolVersion: LATEST, capabilities: {}, clientInfo: { name: 'hostile', version: '1' } },
});

/** Opens a session (initialize + initialized) from `localAddress`; the headers later requests need. */
async function openSession(port: number, localAddress?: string, host?: string) {
  const answer = await send(port, { body: initialize, localAddress, host });
  expect(answer.status).toBe(200);
  const headers = { 'mcp-session-id': String(answer.headers['mcp-session-id']), 'mcp-protocol-version': LATEST };
  const initialized = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });
  expect((await send(port, { body: initialized, headers, localAddress, host })).status).toBe(202);
  return headers;
}

/** Writes `head` on a raw socket and resolves when the server closes it (or fails after `ms`). */
async function rawSocket(port: number, head: string) {
  const socket = net.connect({ host: '127.0.0.1', port });
  cleanups.push(() => void socket.destroy());
  await once(socket, 'connect');
  let received = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (received += chunk));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write(head);
  return {
    socket,
    closed,
    get received() {
      return received;
    },
  };
}

/** Writes one byte every `everyMs` until the socket closes. */
function trickle(socket: net.Socket, byte: string, everyMs: number): void {
  const timer = setInterval(() => {
    if (socket.destroyed || !socket.writable) clearInterval(timer);
    else socket.write(byte);
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
  cleanups.push(() => clearInterval(timer));
}

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('sessions under a flood', () => {
  it('600 initialize POSTs from one address do not lock a second address out', async () => {
    const { port, handler } = await start({ maxSessions: 300, maxSessionsPerClient: 100 });
    for (let sent = 0; sent < 600; sent += 20) {
      const batch = Array.from({ length: 20 }, () => send(port, { body: initialize }));
      for (const answer of await Promise.all(batch)) expect(answer.status).toBe(200);
    }
    // The flood cost the flooder its own oldest sessions, never the table.
    expect(handler.sessionCount).toBeLessThanOrEqual(100);
    await openSession(port, SECOND_CLIENT);
    expect(handler.sessionCount).toBeLessThanOrEqual(101);
  });

  it('a full table lets a newcomer in by evicting the biggest client’s least recently used idle session', async () => {
    const { port, handler } = await start({ maxSessions: 3, maxSessionsPerClient: 3 });
    const first = await openSession(port);
    const second = await openSession(port);
    const third = await openSession(port);
    expect(
      (await send(port, { body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }), headers: first })).status,
    ).toBe(200);
    const newcomer = await openSession(port, SECOND_CLIENT);
    expect(handler.sessionCount).toBe(3);
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' });
    // `second` had been idle longest: it is gone (404, the client renews); the others live on.
    const statuses = await Promise.all(
      [first, second, third, newcomer].map(
        async (headers, index) =>
          (await send(port, { body: ping, headers, localAddress: index === 3 ? SECOND_CLIENT : undefined })).status,
      ),
    );
    expect(statuses).toEqual([200, 404, 200, 200]);
  });
});

describe('connections', () => {
  it('1,100 idle sockets from one address (another process) do not lock out a second address', async () => {
    const { port, site } = await start();
    const flood = spawn(process.execPath, [
      fixturePath('http-socket-flood.mjs'),
      '127.0.0.1',
      String(port),
      '1100',
      '127.0.0.1',
    ]);
    cleanups.push(async () => {
      flood.stdin.end();
      if (flood.exitCode === null) await once(flood, 'exit');
    });
    const [line] = (await within(once(flood.stdout, 'data'), 'the flood to settle', 20_000)) as [Buffer];
    const report = JSON.parse(line.toString()) as { connected: number; stillOpen: number };
    expect(report.stillOpen).toBeLessThanOrEqual(64);
    expect(connectionCounts(site)!.of('127.0.0.1')).toBeLessThanOrEqual(64);
    await within(openSession(port, SECOND_CLIENT), 'the second client to get a session');
    flood.stdin.end();
    await within(once(flood, 'exit'), 'the flood to end');
  }, 30_000);

  it('cuts a slowloris header trickle within the header timeout', async () => {
    const { port } = await start({ headersTimeoutMs: 1_000 });
    const peer = await rawSocket(port, 'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    trickle(peer.socket, 'x', 100);
    const started = Date.now();
    await within(peer.closed, 'the server to cut the trickle', 8_000);
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
  });

  it('cuts a body that trickles: 408, then the connection closes', async () => {
    const { port } = await start({ bodyTimeoutMs: 1_000 });
    const peer = await rawSocket(
      port,
      'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\n' +
        'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{',
    );
    trickle(peer.socket, ' ', 100);
    await within(peer.closed, 'the server to cut the body', 8_000);
    expect(peer.received).toMatch(/^HTTP\/1\.1 408/);
  });

  it('answers an oversized body 413 and closes the socket', async () => {
    const { port } = await start({ maxBodyBytes: 1024 });
    const peer = await rawSocket(
      port,
      'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json, text/event-stream\r\n' +
        'Content-Type: application/json\r\nContent-Length: 10000000\r\n\r\n{"jsonrpc":"2.0"',
    );
    await within(peer.closed, 'the server to close the socket');
    expect(peer.received).toMatch(/^HTTP\/1\.1 413/);
    expect(peer.received.toLowerCase()).toContain('connection: close');
  });
});

describe('bodies', () => {
  it.each([5_000, 2_000])(
    'a body nested %i deep gets 4xx with a JSON-RPC error, and the server stays up',
    async (depth) => {
      const { port } = await start();
      // The envelope itself nested: the body can only be refused.
      const deepEnvelope = await send(port, {
        body: `{"jsonrpc":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)},"id":1,"method":"initialize"}`,
      });
      expect(deepEnvelope.status).toBeGreaterThanOrEqual(400);
      expect(deepEnvelope.status).toBeLessThan(500);
      expect(JSON.parse(deepEnvelope.body).error.code).toBe(-32600);
      // Nested params: refused by the codec's depth limit, or answered with an error; never a 5xx.
      const deepParams = await send(port, {
        body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":${nested(depth)}}`,
      });
      expect(deepParams.status).toBeLessThan(500);
      expect(deepParams.body).toMatch(/"error":\{"code":-32(700|600|602)/);
      await openSession(port);
    },
  );

  it('refuses a body nested deeper than maxDepth with 400 and -32600, and takes one within it', async () => {
    const { port } = await start({ maxDepth: 6 });
    const tooDeep = await send(port, {
      body: `{"jsonrpc":"2.0","id":1,"method":"initialize","params":${nested(8)}}`,
    });
    expect(tooDeep.status).toBe(400);
    expect(JSON.parse(tooDeep.body).error).toMatchObject({ code: -32600, message: expect.stringMatching(/6 levels/) });
    // The initialize of `openSession` nests 3 levels: well within the limit.
    await openSession(port);
  });

  it('an unparsable body gets 400 with -32700', async () => {
    const { port } = await start();
    const answer = await send(port, { body: '{"jsonrpc":' });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).error.code).toBe(-32700);
  });
});

describe('request ids', () => {
  it('an id reused while the first is in flight is refused; the first keeps its result and its stream', async () => {
    const { port, release } = await start({ responseMode: 'sse' });
    const headers = await openSession(port);
    const call = (id: number, name: string) =>
      JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } });
    const first = send(port, { body: call(5, 'slow'), headers });
    // Give the first POST time to reach the session before the second names the same id.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const reused = await send(port, { body: call(5, 'echo'), headers });
    expect(reused.status).toBe(400);
    const refusal = JSON.parse(reused.body);
    expect(refusal).toMatchObject({ id: 5, error: { code: -32600 } });
    expect(refusal.error.message).toContain('5');
    release();
    const answer = await within(first, 'the first call to end');
    expect(answer.body).toContain('finally');
  });
});

describe('Origin and Host on another address than 127.0.0.1', () => {
  it('accepts the bind address and listed names; refuses others with 403 saying what to configure', async () => {
    const { port } = await start(
      { allowedHosts: [`mcp.example:1`], allowedOrigins: ['https://app.example'] },
      SECOND_CLIENT,
    );
    await openSession(port, SECOND_CLIENT, SECOND_CLIENT);
    const at = (headers: Record<string, string>) =>
      send(port, { body: initialize, host: SECOND_CLIENT, localAddress: SECOND_CLIENT, headers });
    const foreignHost = await at({ host: 'evil.example' });
    expect(foreignHost.status).toBe(403);
    expect(JSON.parse(foreignHost.body).error.message).toMatch(/allowedHosts.*--allowed-host evil\.example/);
    expect((await at({ host: 'mcp.example:1' })).status).toBe(200);
    const foreignOrigin = await at({ origin: 'https://evil.example' });
    expect(foreignOrigin.status).toBe(403);
    expect(JSON.parse(foreignOrigin.body).error.message).toMatch(
      /allowedOrigins.*--allowed-origin https:\/\/evil\.example/,
    );
    expect((await at({ origin: 'https://app.example' })).status).toBe(200);
    expect((await at({ origin: `http://${SECOND_CLIENT}:${port}` })).status).toBe(200);
  });
});

describe('switchboard serve options', () => {
  it('reach the handler and the server', async () => {
    const command = parseCommandLine([
      'serve',
      'a.js',
      '--http',
      '0',
      '--max-connections-per-client',
      '2',
      '--max-sessions-per-client',
      '1',
      '--allowed-host',
      'mcp.example:8080',
    ]) as ServeCommand;
    expect(command.http!.limits).toEqual({ maxConnectionsPerClient: 2, maxSessionsPerClient: 1 });
    const options = httpHandlerOptions(command.http!);
    expect(options).toMatchObject({ allowedHosts: ['mcp.example:8080'], maxSessionsPerClient: 1 });
    const server = new Server(serverWith([tool('echo')]));
    const handler = createStreamableHttpHandler(server, options);
    const listener = await listenCli(handler, 0, '127.0.0.1', command.http!.limits);
    cleanups.push(
      () => handler.close(),
      () => listener.close(),
    );
    const port = Number(new URL(listener.origin).port);
    const sockets = await Promise.all(
      [0, 1, 2].map(async () => {
        const peer = await rawSocket(port, '');
        return peer;
      }),
    );
    // The third socket from the same address is closed at once.
    await within(Promise.race(sockets.map((peer) => peer.closed)), 'a socket over the per-client share to be closed');
    for (const peer of sockets) peer.socket.destroy();
    expect(() => parseCommandLine(['serve', 'a.js', '--max-sessions', '5'])).toThrow(/only applies with --http/);
    expect(() => parseCommandLine(['serve', 'a.js', '--http', '0', '--body-timeout', 'soon'])).toThrow(
      /--body-timeout needs milliseconds/,
    );
  });
});
