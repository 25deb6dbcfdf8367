/**
 * Hostile and broken peers against the message core, with real processes where it matters: a child
 * running our server (`fixtures/hostile-server.ts`) fed raw lines, and our client against a child that
 * answers with deep or broken responses (`fixtures/hostile-peer.mjs`). Each time: the process survives,
 * the answer is small, and the other requests and connections carry on.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { Runtime } from '../../lib/core/runtime';
import type { Logger } from '../../lib/core/logger';
import { ProtocolViolationError } from '../../lib/jsonrpc/errors';
import { Server } from '../../lib/server/server';
import type { TraceEvent } from '../../lib/trace/types';
import { createMemoryPair } from '../../transports/memory';
import { StdioClientTransport } from '../../transports/stdio';
import { serverWith, tool } from '../helpers/fixtures';
import { RawPeer } from '../helpers/raw-peer';
import { json } from '../helpers/content';

const SERVER_FIXTURE = ['--import', 'tsx', 'test/fixtures/hostile-server.ts'];
const PEER_FIXTURE = ['test/fixtures/hostile-peer.mjs'];
/** Far more than any refusal of ours needs: the limit a bounded answer is held to. */
const SMALL_ANSWER = 400;

/** `{"a":{"a":...1...}}`, `depth` levels. */
const nested = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

const children: ChildProcessWithoutNullStreams[] = [];
const clients: Client[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
  }
});

/** A child process spoken to line by line: what a hostile client does to a stdio server. */
class LineChild {
  readonly lines: string[] = [];
  readonly stderr: string[] = [];
  private read = 0;
  private wake: (() => void) | undefined;

  constructor(readonly child: ChildProcessWithoutNullStreams) {
    children.push(child);
    createInterface({ input: child.stdout }).on('line', (line) => {
      this.lines.push(line);
      this.wake?.();
    });
    createInterface({ input: child.stderr }).on('line', (line) => this.stderr.push(line));
  }

  static spawn(env: Record<string, string> = {}): LineChild {
    return new LineChild(spawn(process.execPath, SERVER_FIXTURE, { env: { ...process.env, ...env } }));
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  send(line: string): void {
    this.child.stdin.write(line + '\n');
  }

  /** The next line the child writes, raw (bounded wait: 10 s, a tsx start-up included). */
  async nextLine(): Promise<string> {
    const deadline = Date.now() + 10_000;
    while (this.read >= this.lines.length) {
      if (!this.alive) throw new Error(`The child exited (${this.child.exitCode ?? this.child.signalCode})`);
      if (Date.now() > deadline) throw new Error('No line within 10 s');
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 50);
      });
    }
    return this.lines[this.read++]!;
  }

  /** The next message whose id is `id` (others are skipped, notifications included). */
  async answerTo(id: unknown): Promise<{ line: string; message: any }> {
    for (;;) {
      const line = await this.nextLine();
      const message = JSON.parse(line);
      if (message.id === id && message.method === undefined) return { line, message };
    }
  }

  async initialize(): Promise<void> {
    this.send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 'init',
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'hostile', version: '0' } },
      }),
    );
    expect((await this.answerTo('init')).message.result.protocolVersion).toBe('2025-11-25');
    this.send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  }

  /** Starts the era: the handshake (`initialize`), or nothing for the stateless one (each call carries its envelope). */
  async begin(era: Era): Promise<void> {
    this.era = era;
    if (era === 'handshake') await this.initialize();
  }

  async call(id: string, name: string, args: object = {}): Promise<any> {
    const params = { name, arguments: args, ...(this.era === 'stateless' && { _meta: STATELESS_ENVELOPE }) };
    this.send(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }));
    return (await this.answerTo(id)).message;
  }

  private era: Era = 'handshake';
}

type Era = 'handshake' | 'stateless';

/** The `_meta` envelope every 2026-07-28 request carries. */
const STATELESS_ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'hostile', version: '0' },
};

describe('a stdio server fed hostile lines (a real child process)', () => {
  it('answers a 5,000-deep and a 2,000-deep "jsonrpc" member with a small -32600, and goes on', async () => {
    const server = LineChild.spawn();
    await server.initialize();
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 'slow', method: 'tools/call', params: { name: 'slow' } }));
    for (const [id, depth] of [
      [1, 5000],
      [2, 2000],
    ] as const) {
      const line = `{"jsonrpc":${nested(depth)},"id":${id},"method":"ping"}`;
      expect(line.length).toBeGreaterThan(6 * depth);
      server.send(line);
      const answer = await server.answerTo(id);
      expect(answer.message.error.code).toBe(-32600);
      expect(answer.message.error.message).toBe('Invalid Request: the message nests deeper than 128 levels');
      expect(answer.line.length).toBeLessThan(SMALL_ANSWER);
    }
    expect((await server.call('after', 'echo', { ok: 1 })).result.content[0].text).toBe('{"ok":1}');
    expect((await server.answerTo('slow')).message.result.content[0].text).toBe('slow done');
    expect(server.alive).toBe(true);
  });

  it('refuses deep params, arguments and notifications, and deep but valid-envelope lines, with small answers', async () => {
    const server = LineChild.spawn();
    await server.initialize();
    server.send(
      `{"jsonrpc":"2.0","id":"args","method":"tools/call","params":{"name":"echo","arguments":${nested(5000)}}}`,
    );
    const args = await server.answerTo('args');
    expect(args.message.error.code).toBe(-32600);
    expect(args.line.length).toBeLessThan(SMALL_ANSWER);
    server.send(`{"jsonrpc":"2.0","method":"notifications/progress","params":${nested(3000)}}`);
    const notification = JSON.parse(await server.nextLine());
    expect(notification).toEqual({
      jsonrpc: '2.0',
      error: { code: -32600, message: 'Invalid Request: the message nests deeper than 128 levels' },
    });
    // Just under the limit: served (the envelope, params and arguments take 3 of the 128 levels).
    const deepest = await server.call('ok-deep', 'echo', JSON.parse(nested(124)));
    expect(deepest.result.content[0].text).toBe(nested(124));
    expect(server.alive).toBe(true);
  });

  it('quotes a bounded excerpt of huge methods and ids', async () => {
    const server = LineChild.spawn();
    await server.initialize();
    const method = 'm'.repeat(1_000_000);
    server.send(JSON.stringify({ jsonrpc: '2.0', id: 'huge-method', method }));
    const unknown = await server.answerTo('huge-method');
    expect(unknown.message.error.code).toBe(-32601);
    expect(unknown.line.length).toBeLessThan(SMALL_ANSWER);
    expect(unknown.message.error.message).toMatch(/^Method not found: m+…$/);

    const id = 'i'.repeat(200_000);
    const slow = JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'slow' } });
    server.send(slow);
    server.send(slow); // the same id while the first is in flight
    const reused = await server.answerTo(id);
    expect(reused.message.error.code).toBe(-32600);
    expect(reused.message.error.message).toMatch(/^Request id "i+… is already in use/);
    expect(reused.message.error.message.length).toBeLessThan(SMALL_ANSWER);
    expect((await server.answerTo(id)).message.result.content[0].text).toBe('slow done');
    expect(server.alive).toBe(true);
  });

  it.each<Era>(['handshake', 'stateless'])(
    'fails a call whose result cannot be serialized (a cycle, 10,000 levels) with -32603, and goes on (%s era)',
    async (era) => {
      const server = LineChild.spawn();
      await server.begin(era);
      const cyclic = await server.call('cyclic', 'cyclic');
      expect(cyclic.error.code).toBe(-32603);
      expect(cyclic.error.message).toMatch(/^Internal error: the result could not be sent: .*circular/);
      const deep = await server.call('deep', 'deep', { depth: 10_000 });
      expect(deep.error.code).toBe(-32603);
      expect(deep.error.message).toMatch(/^Internal error: the result could not be sent: .*call stack/);
      expect((await server.call('after', 'echo', { ok: 2 })).result.content[0].text).toBe('{"ok":2}');
      expect(server.alive).toBe(true);
    },
  );

  it('serves on while its trace redactor and trace sink throw', async () => {
    const server = LineChild.spawn({ HOSTILE_TRACE: 'throw' });
    await server.initialize();
    expect((await server.call('one', 'echo', { n: 1 })).result.content[0].text).toBe('{"n":1}');
    server.send(`{"jsonrpc":${nested(2000)},"id":"deep","method":"ping"}`);
    expect((await server.answerTo('deep')).message.error.code).toBe(-32600);
    expect((await server.call('two', 'echo', { n: 2 })).result.content[0].text).toBe('{"n":2}');
    expect(server.alive).toBe(true);
    expect(server.stderr.some((line) => line.includes('The trace redactor threw'))).toBe(true);
  });
});

describe('our client against a server answering with hostile responses (a real child process)', () => {
  function connect(logger?: Logger): Promise<Client> {
    const client = new Client({ name: 'victim', version: '0' }, { defaultTimeout: 30_000, ...(logger && { logger }) });
    clients.push(client);
    return client.connect(new StdioClientTransport({ command: process.execPath, args: PEER_FIXTURE }));
  }

  it('fails a call answered with a 5,000- or 2,000-deep "jsonrpc" member at once; the rest carries on', async () => {
    const client = await connect();
    const bystander = await connect();
    for (const depth of [5000, 2000]) {
      const started = Date.now();
      const error = await client.callTool('deep-jsonrpc', { depth }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ProtocolViolationError);
      expect((error as Error).message).toBe(
        "tools/call failed: the peer's response is broken: Invalid Request: the message nests deeper than 128 levels",
      );
      expect(Date.now() - started).toBeLessThan(10_000); // not the 30 s timeout
    }
    expect((await client.callTool('ok')).content).toEqual([{ type: 'text', text: 'ok' }]);
    expect((await bystander.callTool('ok')).content).toEqual([{ type: 'text', text: 'ok' }]);
    expect(client.state).toBe('ready');
  });

  it.each([
    ['old-envelope', 'Invalid response: "jsonrpc" must be "2.0", got "1.0"'],
    ['both', 'Invalid response: a response carries either "result" or "error", not both'],
    ['bad-error', 'Invalid response: "error" must be an object with a numeric "code" and a string "message"'],
  ])('fails a call answered with a broken envelope (%s) at once, naming what was wrong', async (name, why) => {
    const client = await connect();
    const error = await client.callTool(name).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProtocolViolationError);
    expect((error as Error).message).toBe(`tools/call failed: the peer's response is broken: ${why}`);
    expect((await client.callTool('ok')).content).toEqual([{ type: 'text', text: 'ok' }]);
  });

  it('logs a broken response without a usable id, and sends nothing back', async () => {
    const warnings: string[] = [];
    const logger: Logger = { debug() {}, info() {}, warn: (line) => void warnings.push(line), error() {} };
    const client = await connect(logger);
    expect((await client.callTool('no-id-garbage')).content).toEqual([{ type: 'text', text: 'after garbage' }]);
    expect(warnings).toEqual([
      expect.stringMatching(
        /^Connection c\d+: ignored a broken response without a usable id: Invalid response: a result response needs a string or number "id"$/,
      ),
    ]);
  });

  it('answers a 5,000-deep request from the server with a small -32600 carrying its id', async () => {
    const client = await connect();
    const result = await client.callTool('deep-request', { depth: 5000 });
    const answer = (result.content[0] as { text: string }).text;
    expect(JSON.parse(answer)).toEqual({
      jsonrpc: '2.0',
      id: expect.stringMatching(/^hostile-/),
      error: { code: -32600, message: 'Invalid Request: the message nests deeper than 128 levels' },
    });
    expect(answer.length).toBeLessThan(SMALL_ANSWER);
    expect((await client.callTool('ok')).content).toEqual([{ type: 'text', text: 'ok' }]);
  });

  it('answers a request with a 100,000-character method with a bounded -32601', async () => {
    const client = await connect();
    const result = await client.callTool('huge-method');
    const answer = JSON.parse((result.content[0] as { text: string }).text);
    expect(answer.error.code).toBe(-32601);
    expect(answer.error.message.length).toBeLessThan(SMALL_ANSWER);
  });
});

describe('one connection of many', () => {
  const definition = serverWith([tool('echo', json)]);

  async function rawPeer(server: Server): Promise<RawPeer> {
    const [peerSide, serverSide] = createMemoryPair({ codec: 'json' });
    server.connect(serverSide);
    const peer = new RawPeer(peerSide);
    await peer.initialize();
    return peer;
  }

  it('a deep line on one connection costs that connection one small error; the others are untouched', async () => {
    const server = new Server(definition);
    const [hostile, bystander] = [await rawPeer(server), await rawPeer(server)];
    await hostile.sendRaw(`{"jsonrpc":${nested(5000)},"id":9,"method":"ping"}`);
    const refusal = await hostile.next();
    expect(refusal).toEqual({
      jsonrpc: '2.0',
      id: 9,
      error: { code: -32600, message: 'Invalid Request: the message nests deeper than 128 levels' },
    });
    expect(await hostile.request('ping', undefined, 'h')).toEqual({ jsonrpc: '2.0', id: 'h', result: {} });
    expect(await bystander.request('ping', undefined, 'b')).toEqual({ jsonrpc: '2.0', id: 'b', result: {} });
    await server.close();
  });

  it("a throw inside one connection's inbound pipeline closes that connection only, with a trace event and a log line", async () => {
    const errors: string[] = [];
    // A logger with a bug that only a broken response triggers: it throws while that response is routed.
    const logger: Logger = {
      debug() {},
      info() {},
      warn: () => {
        throw new Error('logger bug');
      },
      error: (line) => void errors.push(line),
    };
    const runtime = new Runtime();
    const server = new Server(definition, { runtime, logger });
    const [hostile, bystander] = [await rawPeer(server), await rawPeer(server)];
    const trace: TraceEvent[] = [];
    runtime.trace$.subscribe((event) => trace.push(event));
    await hostile.send({ jsonrpc: '2.0', id: 'nobody', result: {}, error: { code: 1, message: 'both' } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/Closed after an internal error while handling the peer's input: logger bug$/);
    const closing = trace.find((event) => event.kind === 'lifecycle' && event.to === 'closing');
    expect(closing).toMatchObject({ quitKind: 'internal-error' });
    expect(server.connectionCount).toBe(1);
    expect(await bystander.request('ping', undefined, 'b')).toEqual({ jsonrpc: '2.0', id: 'b', result: {} });
    await server.close();
  });
});
