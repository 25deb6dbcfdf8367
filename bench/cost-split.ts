/**
 * `npm run bench:split`: where the time of a 2026-07-28 request goes, in one process and with no kernel in
 * the way, for the footnotes of the README's stateless-revision table.
 *
 * 1. The Streamable HTTP path over an in-memory socket pair (node:http's own parser and writer, fed by a
 *    `Duplex` pair instead of a socket), 16 callers, CPU time per call, best of several rounds:
 *    - bare: a node:http listener that parses the body and answers `{ jsonrpc, id, result }`;
 *    - transport: our endpoint (`createMcpHttpHandler`) in front of a stub that answers each modern request
 *      at once: the HTTP layer and the era classifier, without the MCP work;
 *    - server: our endpoint in front of our `Server` (`echo`).
 * 2. What a round's sealed `requestState` costs: sealing, opening, and one SHA-256 through `crypto.hash`.
 */
import crypto, { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { Duplex } from 'node:stream';
import type { ExchangeReply, ModernServer } from '../lib/core/exchange';
import type { ModernRequestVerdict } from '../lib/protocol/era';
import { createKeyRing, open, seal } from '../lib/server/request-state';
import { Server } from '../lib/server/server';
import { createMcpHttpHandler } from '../transports/http/endpoint';
import type { SessionServer } from '../transports/http/session-server';
import { bareEchoListener } from './bare-echo';
import { ENVELOPE } from './modern';
import { dualEraDefinition } from './modern-servers';

const CALLERS = 16;
const CALLS = 40_000;
const ROUNDS = 7;

/** One end of an in-memory socket pair: what is written to it comes out of its peer. */
class MemorySocket extends Duplex {
  peer: MemorySocket | undefined;
  readonly remoteAddress = '127.0.0.1';

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.peer!.push(chunk);
    done();
  }

  override _writev(chunks: { chunk: Buffer }[], done: () => void): void {
    for (const { chunk } of chunks) this.peer!.push(chunk);
    done();
  }

  // What node:http calls on a net.Socket.
  setTimeout(): this {
    return this;
  }

  setNoDelay(): this {
    return this;
  }

  setKeepAlive(): this {
    return this;
  }
}

/** A client end connected to `server` through a new in-memory socket pair. */
function connectInMemory(server: http.Server): MemorySocket {
  const client = new MemorySocket();
  const served = new MemorySocket();
  client.peer = served;
  served.peer = client;
  server.emit('connection', served);
  return client;
}

/** Our server's era policy and sessions, with every modern request answered at once by the stub. */
function stubbedServer(server: Server): SessionServer & ModernServer {
  return {
    connect: (transport, options) => server.connect(transport, options),
    get definition() {
      return server.definition;
    },
    eraPolicy: server.eraPolicy,
    serveModern(verdict: ModernRequestVerdict, reply: ExchangeReply) {
      const text = (verdict.request.params?.arguments as { text: string }).text;
      void reply.answer({ jsonrpc: '2.0', id: verdict.request.id, result: { content: [{ type: 'text', text }] } });
    },
  };
}

const REQUEST_TAIL = `,"method":"tools/call","params":${JSON.stringify({ name: 'echo', arguments: { text: 'hi' }, _meta: ENVELOPE })}}`;
const HEAD =
  'POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n' +
  'accept: application/json, text/event-stream\r\nmcp-protocol-version: 2026-07-28\r\n' +
  'mcp-method: tools/call\r\nmcp-name: echo\r\ncontent-length: ';

/** CPU µs per call of `calls` echo calls from `CALLERS` callers, each waiting for its answer before the next. */
async function cpuPerCall(listener: http.RequestListener, calls: number): Promise<number> {
  const server = http.createServer(listener);
  let nextId = 0;
  let answered = 0;
  const started = process.cpuUsage();
  await Promise.all(
    Array.from({ length: CALLERS }, () => {
      const socket = connectInMemory(server);
      const send = () => {
        const body = `{"jsonrpc":"2.0","id":${nextId++}${REQUEST_TAIL}`;
        socket.write(`${HEAD}${Buffer.byteLength(body)}\r\n\r\n${body}`);
      };
      return new Promise<void>((resolve, reject) => {
        socket.on('data', (chunk: Buffer) => {
          if (!chunk.includes('"text":"hi"')) return reject(new Error(`unexpected answer: ${chunk}`));
          if (++answered >= calls) return resolve();
          send();
        });
        send();
      });
    }),
  );
  const used = process.cpuUsage(started);
  server.close();
  return (used.user + used.system) / answered;
}

/** Best ns per call of `run` over `rounds` rounds of `calls` (after one untimed round). */
async function nsPerCall(run: () => unknown, calls: number, rounds = 5): Promise<number> {
  let best = Infinity;
  for (let round = 0; round <= rounds; round++) {
    const started = process.hrtime.bigint();
    for (let index = 0; index < calls; index++) await run();
    const ns = Number(process.hrtime.bigint() - started) / calls;
    if (round > 0) best = Math.min(best, ns);
  }
  return best;
}

async function httpSplit(): Promise<void> {
  const server = new Server(dualEraDefinition());
  const listeners: Record<string, http.RequestListener> = {
    bare: bareEchoListener,
    transport: createMcpHttpHandler(stubbedServer(server), { responseMode: 'json' }),
    server: createMcpHttpHandler(server, { responseMode: 'json' }),
  };
  const best: Record<string, number> = {};
  for (const listener of Object.values(listeners)) await cpuPerCall(listener, CALLS / 2);
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, listener] of Object.entries(listeners)) {
      best[name] = Math.min(best[name] ?? Infinity, await cpuPerCall(listener, CALLS));
    }
  }
  console.log(`HTTP over an in-memory socket pair, ${CALLERS} callers, CPU per call (best of ${ROUNDS} x ${CALLS}):`);
  for (const [name, us] of Object.entries(best)) {
    console.log(`  ${name.padEnd(10)} ${us.toFixed(2).padStart(6)} µs  (+${(us - best.bare!).toFixed(2)} over bare)`);
  }
}

async function requestStateCosts(): Promise<void> {
  const ring = createKeyRing({ keys: [{ id: 'bench', secret: randomBytes(32) }] });
  const binding = { method: 'tools/call', target: 'ask_name', arguments: {} };
  const state = { answers: {}, round: 1 };
  const token = await seal(ring, { state, binding });
  const signed = `${token.slice(0, token.lastIndexOf('.'))}\n{"arguments":{},"method":"tools/call","target":"ask_name"}`;
  const figures = {
    seal: await nsPerCall(() => seal(ring, { state, binding }), 50_000),
    open: await nsPerCall(() => open(ring, token, binding), 50_000),
    'one SHA-256 (crypto.hash)': await nsPerCall(() => hashOnce(signed), 100_000),
    'one SHA-256 (createHash)': await nsPerCall(() => createHash('sha256').update(signed).digest(), 100_000),
  };
  console.log("A round's requestState, hot, best of 5 rounds:");
  for (const [name, ns] of Object.entries(figures)) console.log(`  ${name.padEnd(26)} ${ns.toFixed(0).padStart(6)} ns`);
}

/** `crypto.hash` (Node 20.12+), which the request-state MAC uses where it exists. */
const oneShotHash = (crypto as unknown as { hash?: (algorithm: string, data: string) => unknown }).hash;

function hashOnce(text: string): unknown {
  return oneShotHash ? oneShotHash('sha256', text) : createHash('sha256').update(text).digest();
}

await httpSplit();
await requestStateCosts();
