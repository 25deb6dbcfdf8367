/**
 * The client side over Streamable HTTP: our `Client` with `StreamableHttpClientTransport` in front of a fake
 * server (`node:http` on 127.0.0.1, port 0) that answers each POSTed request with the scripted raw lines of
 * test/fuzz/scripted-peer.ts as the events of an SSE stream. Every call settles as its reply says (as over
 * stdio and in process); a POST stream that ends without the call's response fails that call at once with
 * a `TransportError` rather than a timeout. The client lives on with nothing pending, and nothing
 * reaches the process as an uncaught exception or unhandled rejection. Also run by `npm run fuzz`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { McpError, RequestTimeoutError, SwitchboardError, TransportError } from '../../lib/jsonrpc/errors';
import { StreamableHttpClientTransport } from '../../transports/http/streamable-client';
import { deepJsonrpcLine } from './arbitraries';
import { pingAnsweredAfter, scriptedCall, type ScriptedCall } from './client-arbitraries';
import { fuzzCases, fuzzParameters, fuzzTimeout } from './config';
import { watchProcessFaults } from './process-faults';
import { SCRIPT_TOOL, scriptedPeer } from './scripted-peer';

const SESSION = 'fuzz-session';

/** The fake server: a POSTed request is answered with the peer's lines as SSE events; the rest gets 202. */
function fakeServer(): http.Server {
  // One peer for the whole session (it holds the queued replies); it writes into the lines of the POST at hand.
  let lines: Buffer[] = [];
  const respond = scriptedPeer((line) => void lines.push(line));
  return http.createServer((request, response) => {
    if (request.method === 'DELETE') return void response.writeHead(204).end();
    if (request.method !== 'POST') return void response.writeHead(405).end();
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      let message: any;
      try {
        message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        return void response.writeHead(400).end();
      }
      if (typeof message?.method !== 'string' || message.id === undefined) return void response.writeHead(202).end();
      lines = [];
      respond(message);
      response.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': SESSION });
      for (const line of lines)
        response.write(Buffer.concat([Buffer.from('event: message\ndata: '), line, Buffer.from('\n\n')]));
      response.end();
    });
  });
}

function call(client: Client, method: ScriptedCall['method'], timeout: number): Promise<unknown> {
  if (method === 'ping') return client.ping({ timeout });
  if (method === 'tools/list') return client.listToolsPage(undefined, { timeout });
  return client.callTool('t', {}, { timeout });
}

function checkFate(scripted: ScriptedCall, settled: { resolved?: unknown; rejected?: unknown }): void {
  const error = settled.rejected;
  const what = `${scripted.method} (${scripted.fate.kind}): got ${error instanceof Error ? `${error.name}: ${error.message.slice(0, 200)}` : 'a result'}`;
  const typedAtOnce = error instanceof SwitchboardError && !(error instanceof RequestTimeoutError);
  const fate = scripted.fate;
  if (fate.kind === 'resolves') expect(error, what).toBeUndefined();
  else if (fate.kind === 'mcp-error') expect(error instanceof McpError && error.code === fate.code, what).toBe(true);
  else if (fate.kind === 'refused') expect(typedAtOnce, what).toBe(true);
  else if (fate.kind === 'resolves-or-refused') expect(error === undefined || typedAtOnce, what).toBe(true);
  else if (fate.kind === 'fails') expect(error instanceof SwitchboardError, what).toBe(true);
  // Nothing answered it: over HTTP its POST stream ended without the response, which fails it at once.
  else expect(error instanceof TransportError, what).toBe(true);
}

async function runCase(client: Client, calls: readonly ScriptedCall[], timeout: number): Promise<void> {
  await client.callTool(
    SCRIPT_TOOL,
    { replies: calls.map((scripted) => scripted.reply) as never },
    { timeout: 10_000 },
  );
  // One at a time: the fake server hands out replies in the order requests arrive, and HTTP does not keep order.
  for (const scripted of calls) {
    const settled = await call(client, scripted.method, timeout).then(
      (resolved) => ({ resolved }),
      (rejected) => ({ rejected }),
    );
    checkFate(scripted, settled);
  }
  await client.ping({ timeout: 10_000 });
  expect(client.state).toBe('ready');
  expect(client.pendingRequestCount).toBe(0);
}

describe('fuzz: a client over Streamable HTTP', () => {
  const CASES = 80;
  const TIMEOUT = 5_000;
  const faults = watchProcessFaults();
  const server = fakeServer();
  let client: Client;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    client = new Client({ name: 'fuzz', version: '0' }, { logger: { debug() {}, info() {}, warn() {}, error() {} } });
    await client.connect(new StreamableHttpClientTransport(url, { fallback: false }), { timeout: 10_000 });
  });
  afterAll(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    faults.stop();
  });

  it('survives an event whose "jsonrpc" member nests objects 5,000 deep, and still gets its answer', async () => {
    await runCase(client, pingAnsweredAfter(deepJsonrpcLine(5_000, '"srv"')), TIMEOUT);
    expect(faults.seen.splice(0)).toEqual([]);
  });

  it('answers a call whose SSE reply starts with a `null` event or a `[null]` batch', async () => {
    for (const noise of ['null', '[null]', '[1,"x",{}]']) {
      await runCase(client, pingAnsweredAfter(noise), TIMEOUT);
    }
    expect(faults.seen.splice(0)).toEqual([]);
  });

  it(
    `settles every call of ${fuzzCases(CASES)} cases as its SSE reply says, and the client lives on with nothing pending`,
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(scriptedCall, { minLength: 1, maxLength: 3 }), (calls) =>
          runCase(client, calls, TIMEOUT),
        ),
        fuzzParameters('client http', CASES),
      );
      expect(faults.seen.splice(0)).toEqual([]);
    },
    fuzzTimeout(40_000, CASES),
  );
});
