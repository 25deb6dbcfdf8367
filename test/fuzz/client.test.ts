/**
 * The client side under a hostile server: our `Client` in front of a fake server that answers each request
 * with scripted raw lines (test/fuzz/scripted-peer.ts), in process (a memory pair copying through JSON text)
 * and as a real stdio child (test/fixtures/fuzz-peer.ts). For every call: it settles — resolves for a valid
 * result, rejects with the `McpError` of a valid error, rejects at once with a typed local error for a broken
 * envelope or a result that breaks the method's schema, and times out only when nothing answered it; garbage,
 * server requests and duplicates around the reply change nothing. After every case the client still pings,
 * holds no pending request, and nothing reached the process as an uncaught exception or unhandled rejection.
 * Also run by `npm run fuzz -- --cases N --seed S`.
 */
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { McpError, RequestTimeoutError, SwitchboardError } from '../../lib/jsonrpc/errors';
import { createMemoryPair } from '../../transports/memory';
import { StdioClientTransport } from '../../transports/stdio';
import type { Transport } from '../../transports/transport';
import { deepJsonrpcLine } from './arbitraries';
import { pingAnsweredAfter, scriptedCall, type ScriptedCall } from './client-arbitraries';
import { fuzzCases, fuzzParameters, fuzzTimeout } from './config';
import { watchProcessFaults, type ProcessFaults } from './process-faults';
import { encodeLine, SCRIPT_TOOL, scriptedPeer } from './scripted-peer';
import { fixturePath } from '../helpers/paths';

const silentLogger = { debug() {}, info() {}, warn() {}, error() {} };

function memoryServer(): Transport {
  const [clientSide, peerSide] = createMemoryPair({ codec: 'json' });
  const respond = scriptedPeer((line) => void peerSide.sendRaw(line.toString('utf8')).catch(() => undefined));
  peerSide.messages.subscribe({ next: respond, error: () => undefined });
  return clientSide;
}

const peerScript = fixturePath('fuzz-peer.ts');

function stdioServer(): Transport {
  return new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', peerScript],
    shutdown: { stdinGraceMs: 500, terminateGraceMs: 500 },
  });
}

function call(client: Client, method: ScriptedCall['method'], timeout: number): Promise<unknown> {
  switch (method) {
    case 'ping':
      return client.ping({ timeout });
    case 'tools/list':
      return client.listToolsPage(undefined, { timeout });
    case 'tools/call':
      return client.callTool('t', {}, { timeout });
  }
}

/** What a settled call came to, for the checks and a readable counterexample. */
type Settled = { resolved: unknown } | { rejected: unknown };

function checkFate(scripted: ScriptedCall, settled: Settled): void {
  const what = `${scripted.method} (${scripted.fate.kind})`;
  const error = 'rejected' in settled ? settled.rejected : undefined;
  const describe = error instanceof Error ? `${error.name}: ${error.message.slice(0, 200)}` : 'resolved';
  const typedAtOnce = error instanceof SwitchboardError && !(error instanceof RequestTimeoutError);
  switch (scripted.fate.kind) {
    case 'resolves':
      expect('resolved' in settled, `${what} resolves, got ${describe}`).toBe(true);
      break;
    case 'mcp-error':
      expect(error instanceof McpError && error.code === scripted.fate.code, `${what}: got ${describe}`).toBe(true);
      break;
    case 'refused':
      expect(typedAtOnce, `${what} is refused at once with a typed error, got ${describe}`).toBe(true);
      break;
    case 'resolves-or-refused':
      expect('resolved' in settled || typedAtOnce, `${what}: got ${describe}`).toBe(true);
      break;
    case 'times-out':
      expect(error instanceof RequestTimeoutError, `${what} times out, got ${describe}`).toBe(true);
      break;
    case 'fails':
      expect(error instanceof SwitchboardError, `${what} fails with a typed error, got ${describe}`).toBe(true);
      break;
  }
}

/** One case: the replies are queued, the calls made at once, each settles as its reply says; the client lives on. */
async function runClientCase(client: Client, calls: readonly ScriptedCall[], timeout: number): Promise<void> {
  await client.callTool(
    SCRIPT_TOOL,
    { replies: calls.map((scripted) => scripted.reply) as never },
    { timeout: 10_000 },
  );
  const settled = await Promise.all(
    calls.map((scripted) =>
      call(client, scripted.method, timeout).then(
        (resolved): Settled => ({ resolved }),
        (rejected): Settled => ({ rejected }),
      ),
    ),
  );
  calls.forEach((scripted, index) => checkFate(scripted, settled[index]!));
  await client.ping({ timeout: 10_000 });
  expect(client.state).toBe('ready');
  expect(client.pendingRequestCount).toBe(0);
}

let faults: ProcessFaults;
beforeAll(() => void (faults = watchProcessFaults()));
afterAll(() => faults.stop());
afterEach(() => expect(faults.seen.splice(0), 'nothing escaped to the process').toEqual([]));

describe.each([
  // Call timeouts: generous for a busy machine; only calls nothing answers wait them out.
  { transport: 'in process (memory pair, JSON text)', open: memoryServer, cases: 100, timeout: 150 },
  { transport: 'in a child process over stdio', open: stdioServer, cases: 25, timeout: 750 },
])('fuzz: a client $transport', ({ transport, open, cases, timeout }) => {
  let client: Client;
  beforeAll(async () => {
    client = new Client({ name: 'fuzz', version: '0' }, { logger: silentLogger });
    await client.connect(open(), { timeout: 15_000 });
  }, 20_000);
  afterAll(() => client.close());

  it('is refused at once, never waiting its timeout, for a response whose id is readable and whose envelope is broken', async () => {
    await runClientCase(
      client,
      [
        {
          method: 'ping',
          fate: { kind: 'refused' },
          reply: [encodeLine([Buffer.from('{"jsonrpc":"1.0","id":'), null, Buffer.from(',"result":{}}')])],
        },
      ],
      5_000,
    );
  });

  it('refuses a tools/call result whose content is not a list ({"content":{}})', async () => {
    await runClientCase(
      client,
      [
        {
          method: 'tools/call',
          fate: { kind: 'refused' },
          reply: [encodeLine([Buffer.from('{"jsonrpc":"2.0","id":'), null, Buffer.from(',"result":{"content":{}}}')])],
        },
      ],
      timeout,
    );
  });

  it('survives a line whose "jsonrpc" member nests objects 5,000 deep, and still gets its answer', async () => {
    await runClientCase(client, pingAnsweredAfter(deepJsonrpcLine(5_000, '"srv"')), timeout);
  });

  it('answers a call whose reply follows a `null` line, a `[null]` batch and a `{"id":…}` with no method', async () => {
    for (const noise of ['null', '[null]', '[1,"x",{}]', '{"id":0}', '{"id":null,"result":{}}']) {
      await runClientCase(client, pingAnsweredAfter(noise), timeout);
    }
  });

  it(
    `settles every call of ${fuzzCases(cases)} cases as its reply says, and the client lives on with nothing pending`,
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(scriptedCall, { minLength: 1, maxLength: 4 }), (calls) =>
          runClientCase(client, calls, timeout),
        ),
        fuzzParameters(`client ${transport}`, cases),
      );
    },
    fuzzTimeout(40_000, cases),
  );
});
