import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { isAlive } from '../helpers/processes';
import { filter, firstValueFrom, take, timeout, toArray } from 'rxjs';
import { Client } from '../../lib/client/client';
import { TransportError } from '../../lib/jsonrpc/errors';
import { UnreadableFrame, type InboundFrame } from '../../lib/jsonrpc/types';
import type { ChildExit } from '../../machines/child-process';
import { LineReader } from '../../transports/line-reader';
import { StdioClientTransport, StdioServerTransport } from '../../transports/stdio';
import { runTransportSuite } from '../helpers/transport-suite';
import { eventually } from '../helpers/wait';
import { fixturePath } from '../helpers/paths';

const FAST_SHUTDOWN = { stdinGraceMs: 300, terminateGraceMs: 300 };

describe('LineReader', () => {
  const read = (chunks: (string | Uint8Array)[], max = 1024, end = false) => {
    const frames: InboundFrame[] = [];
    const reader = new LineReader((frame) => frames.push(frame), max);
    for (const chunk of chunks) reader.push(chunk);
    if (end) reader.end();
    return frames;
  };

  it('splits lines wherever the chunks are cut', () => {
    const text = '{"a":1}\n{"b":2}\n{"c":3}\n';
    const bytes = Buffer.from(text);
    for (let cut = 0; cut <= bytes.length; cut++) {
      expect(read([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }]);
    }
    expect(read([...bytes].map((byte) => Uint8Array.of(byte)))).toEqual([{ a: 1 }, { b: 2 }, { c: 3 }]);
  });

  it('decodes multi-byte characters split across chunks', () => {
    const bytes = Buffer.from('{"t":"é€😀"}\n');
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(read([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual([{ t: 'é€😀' }]);
    }
  });

  it('skips an oversized line with one UnreadableFrame and parses the next line', () => {
    const big = `{"x":"${'x'.repeat(100)}"}`;
    const chunks = [big.slice(0, 30), big.slice(30, 60), big.slice(60), '\n{"ok":true}\n'];
    const frames = read(chunks, 50);
    expect(frames).toHaveLength(2);
    expect(frames[0]).toEqual(new UnreadableFrame(-32600, 'Message too large: the limit is 50 bytes'));
    expect(frames[1]).toEqual({ ok: true });
  });

  it('accepts a line of exactly the limit, CRLF included', () => {
    const line = `{"x":"${'x'.repeat(42)}"}`; // 50 bytes
    expect(read([line + '\r\n'], 50)).toEqual([{ x: 'x'.repeat(42) }]);
    expect(read([line + 'y\n'], 50)[0]).toBeInstanceOf(UnreadableFrame);
  });

  /** A CRLF line, blank lines, a line that is not JSON, and a last line split over two chunks without a newline. */
  const untidy = () => read(['{"a":1}\r\n\r\n\nnot json\n{"b":', '2}'], 1024, true);

  it('tolerates CRLF and blank lines', () => {
    const frames = untidy();
    expect(frames[0]).toEqual({ a: 1 });
    expect(frames).toHaveLength(3);
  });

  it('reports a line that is not JSON as a parse error', () => {
    const frames = untidy();
    expect(frames[1]).toBeInstanceOf(UnreadableFrame);
    expect((frames[1] as UnreadableFrame).code).toBe(-32700);
  });

  it('reads a last line without a newline', () => {
    expect(untidy()[2]).toEqual({ b: 2 });
  });

  it('keeps a long line linear: many small chunks are joined once', () => {
    const concat = vi.spyOn(Buffer, 'concat');
    const payload = `{"p":"${'z'.repeat(200_000)}"}\n`;
    const chunks = payload.match(/[^]{1,100}/g)!;
    expect(read(chunks, 1_000_000)).toHaveLength(1);
    expect(concat).toHaveBeenCalledTimes(1);
    concat.mockRestore();
  });
});

runTransportSuite('stdio (crossed streams)', {
  maxMessageBytes: 2 * 1024 * 1024,
  oversize: 'frame-error',
  async connect() {
    const toRight = new PassThrough();
    const toLeft = new PassThrough();
    const options = { maxMessageBytes: 2 * 1024 * 1024 };
    return {
      left: new StdioServerTransport({ ...options, input: toLeft, output: toRight }),
      right: new StdioServerTransport({ ...options, input: toRight, output: toLeft }),
    };
  },
});

describe('StdioServerTransport', () => {
  it('completes messages when the input ends', async () => {
    const input = new PassThrough();
    const transport = new StdioServerTransport({ input, output: new PassThrough() });
    const all = firstValueFrom(transport.messages.pipe(toArray()));
    input.end('{"jsonrpc":"2.0","method":"a"}\n');
    expect(await all).toEqual([{ jsonrpc: '2.0', method: 'a' }]);
  });

  it('refuses a line nested deeper than maxDepth with -32600 and reads on', async () => {
    const input = new PassThrough();
    const transport = new StdioServerTransport({ input, output: new PassThrough(), maxDepth: 4 });
    const all = firstValueFrom(transport.messages.pipe(toArray()));
    input.write('{"jsonrpc":"2.0","id":1,"method":"a","params":{"b":{"c":{"d":{}}}}}\n');
    input.end('{"jsonrpc":"2.0","id":2,"method":"a","params":{"b":{}}}\n');
    const [deep, shallow] = await all;
    expect(deep).toBeInstanceOf(UnreadableFrame);
    expect((deep as UnreadableFrame).code).toBe(-32600);
    expect((deep as UnreadableFrame).message).toMatch(/deeper than 4 levels/);
    expect(shallow).toEqual({ jsonrpc: '2.0', id: 2, method: 'a', params: { b: {} } });
  });

  it('delivers lines that decode to null, numbers or bare arrays while a response is awaited', async () => {
    const input = new PassThrough();
    const transport = new StdioServerTransport({ input, output: new PassThrough() });
    const all = firstValueFrom(transport.messages.pipe(toArray()));
    await transport.send({ jsonrpc: '2.0', id: 7, method: 'ping' }); // now a response is awaited
    input.end('null\n[null,1]\n3\n{"jsonrpc":"2.0","id":7,"result":{}}\n');
    expect(await all).toEqual([null, [null, 1], 3, { jsonrpc: '2.0', id: 7, result: {} }]);
  });

  it('waits for drain when the output is full', async () => {
    const output = new PassThrough({ highWaterMark: 16 });
    const transport = new StdioServerTransport({ input: new PassThrough(), output });
    let sent = false;
    const sending = transport.send({ jsonrpc: '2.0', method: 'x'.repeat(100) }).then(() => (sent = true));
    // The output is in memory: a send that did not wait for drain would have settled within one turn.
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toBe(false);
    output.read();
    await sending;
    expect(sent).toBe(true);
    await transport.close();
  });

  it('writes the first message of a turn at once and coalesces the rest, in order', async () => {
    const writes: string[][] = [];
    const output = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        writes.push([chunk.toString()]);
        callback();
      },
      writev(chunks, callback) {
        writes.push(chunks.map(({ chunk }) => (chunk as Buffer).toString()));
        callback();
      },
    });
    const transport = new StdioServerTransport({ input: new PassThrough(), output });
    const message = (index: number) => ({ jsonrpc: '2.0' as const, method: 'n', params: { index } });
    const sends = [transport.send(message(0))];
    expect(writes).toEqual([[JSON.stringify(message(0)) + '\n']]); // before send() returned
    for (let i = 1; i < 40; i++) sends.push(transport.send(message(i)));
    await Promise.all(sends);
    await new Promise((resolve) => setImmediate(resolve));
    expect(writes.flat()).toEqual(Array.from({ length: 40 }, (_, i) => JSON.stringify(message(i)) + '\n'));
    expect(writes.length).toBeLessThan(10);
    expect(Math.max(...writes.map((batch) => batch.length))).toBeLessThanOrEqual(16);
    await transport.close();
  });

  const circular: Record<string, unknown> = {};
  circular.self = circular;

  it('rejects a message that is not JSON-serializable', async () => {
    const transport = new StdioServerTransport({ input: new PassThrough(), output: new PassThrough() });
    await expect(transport.send({ jsonrpc: '2.0', method: 'x', params: circular })).rejects.toBeInstanceOf(
      TransportError,
    );
    await transport.close();
  });

  it('keeps working after a message that is not JSON-serializable', async () => {
    const output = new PassThrough();
    const transport = new StdioServerTransport({ input: new PassThrough(), output });
    await transport.send({ jsonrpc: '2.0', method: 'x', params: circular }).catch(() => undefined);
    await transport.send({ jsonrpc: '2.0', method: 'ok' });
    expect(output.read().toString()).toBe('{"jsonrpc":"2.0","method":"ok"}\n');
    await transport.close();
  });

  it('reads only while someone listens, keeping decoded frames for the next subscriber', async () => {
    const input = new PassThrough();
    const transport = new StdioServerTransport({ input, output: new PassThrough() });
    expect(input.isPaused()).toBe(true);
    input.write('{"jsonrpc":"2.0","method":"a"}\n{"jsonrpc":"2.0","method":"b"}\n');
    expect(await firstValueFrom(transport.messages)).toEqual({ jsonrpc: '2.0', method: 'a' });
    expect(input.isPaused()).toBe(true);
    expect(await firstValueFrom(transport.messages)).toEqual({ jsonrpc: '2.0', method: 'b' });
    const third = firstValueFrom(transport.messages);
    input.write('{"jsonrpc":"2.0","method":"c"}\n');
    expect(await third).toEqual({ jsonrpc: '2.0', method: 'c' });
    await transport.close();
  });

  it('reports an input failure that happens before anyone subscribes to the first subscriber', async () => {
    const input = new PassThrough();
    const transport = new StdioServerTransport({ input, output: new PassThrough() });
    input.destroy(new Error('boom'));
    await new Promise((resolve) => setImmediate(resolve));
    const outcome = await new Promise((resolve) => transport.messages.subscribe({ error: resolve }));
    expect(outcome).toBeInstanceOf(TransportError);
    expect((outcome as Error).message).toBe('Reading failed: boom');
  });

  describe('with redirectConsole', () => {
    let stderr: MockInstance<typeof process.stderr.write>;
    let original: typeof console.log;
    let transport: StdioServerTransport;
    let written: string[];
    beforeEach(() => {
      const output = new PassThrough();
      written = [];
      output.on('data', (chunk: Buffer) => written.push(chunk.toString()));
      stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
      original = console.log;
      transport = new StdioServerTransport({ input: new PassThrough(), output, redirectConsole: true });
    });
    afterEach(async () => {
      await transport.close();
      stderr.mockRestore();
    });

    /** Console output, then one message, while the transport is open. */
    async function logAndSend() {
      console.log('noise', { n: 1 });
      console.info('more');
      await transport.send({ jsonrpc: '2.0', method: 'm' });
    }

    it('sends console.log and console.info to stderr while open', async () => {
      await logAndSend();
      expect(stderr).toHaveBeenCalledWith('noise { n: 1 }\n');
      expect(stderr).toHaveBeenCalledWith('more\n');
    });

    it('keeps console output off the output, which carries only messages', async () => {
      await logAndSend();
      await transport.close();
      expect(written.join('')).toBe('{"jsonrpc":"2.0","method":"m"}\n');
    });

    it('restores console.log on close', async () => {
      await transport.close();
      expect(console.log).toBe(original);
    });
  });
});

describe('StdioClientTransport with real child processes', () => {
  const transports: StdioClientTransport[] = [];
  const pids: number[] = [];
  const start = (options: ConstructorParameters<typeof StdioClientTransport>[0]) => {
    const transport = new StdioClientTransport({ shutdown: FAST_SHUTDOWN, ...options });
    transports.push(transport);
    // What a Connection does on attach; a spawn failure also ends `messages`, which the tests read.
    transport.start().catch(() => undefined);
    return transport;
  };
  const startServer = () =>
    start({ command: process.execPath, args: ['--import', 'tsx', fixturePath('stdio-server.ts')] });

  afterEach(async () => {
    for (const pid of pids.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await Promise.all(transports.splice(0).map((transport) => transport.close()));
  });

  describe('an MCP session against a real server', () => {
    let session: Awaited<ReturnType<typeof runSession>>;
    /** One echo call to the fixture server over stdio, then the client closes; one child for the whole block. */
    async function runSession() {
      const transport = startServer();
      const client = new Client({ name: 'stdio-test', version: '1' });
      await client.connect(transport);
      const logged = firstValueFrom(
        transport.stderr$.pipe(
          filter((line) => line.startsWith('echo called')),
          timeout(5000),
        ),
      );
      const result = await client.callTool('echo', { n: 1 });
      const loggedLine = await logged;
      const recentStderr = [...transport.recentStderr];
      await client.close();
      return { result, loggedLine, recentStderr, exit: await transport.exited };
    }
    beforeAll(async () => {
      session = await runSession();
    });

    it('answers a tool call', () => {
      expect(session.result).toEqual({ content: [{ type: 'text', text: '{"n":1}' }] });
    });

    it("streams the server's stderr lines as they come", () => {
      expect(session.loggedLine).toBe('echo called with {"n":1}');
    });

    it("keeps the server's recent stderr lines", () => {
      expect(session.recentStderr).toContain('stdio fixture server ready');
    });

    it('ends the server by ending its stdin: it exits with code 0, well before SIGTERM', () => {
      expect(session.exit).toMatchObject({ kind: 'stopped', code: 0, signal: null });
    });
  });

  it('never sees anything but messages on the server stdout, though the server calls console.log', async () => {
    const transport = startServer();
    const frames: InboundFrame[] = [];
    const answered = new Promise<void>((resolve, reject) =>
      transport.messages.subscribe({
        next: (frame) => {
          frames.push(frame);
          if ((frame as { id?: unknown }).id === 2) resolve();
        },
        error: reject,
      }),
    );
    const clientInfo = { name: 'raw', version: '1' };
    await transport.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo },
    });
    await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await transport.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: {} } });
    await answered;
    expect(frames.map((frame) => (frame as { id?: unknown }).id)).toEqual([1, 2]);
    expect(frames.some((frame) => frame instanceof UnreadableFrame)).toBe(false);
    await eventually(() => transport.recentStderr.includes('echo called with {}'), 'the line on stderr'); // kept, not announced
  });

  it('SIGKILLs a child that ignores the end of stdin and SIGTERM', async () => {
    const transport = start({ command: process.execPath, args: [fixturePath('stdio-sleeper.mjs'), '--ignore-term'] });
    await firstValueFrom(transport.stderr$.pipe(take(1), timeout(5000)));
    const began = Date.now();
    await transport.close();
    expect(await transport.exited).toMatchObject({ kind: 'stopped', signal: 'SIGKILL' });
    expect(Date.now() - began).toBeGreaterThanOrEqual(550);
    expect(isAlive(transport.pid!)).toBe(false);
  });

  it('reports a crash as a TransportError carrying the exit code', async () => {
    const transport = start({
      command: process.execPath,
      args: ['-e', 'process.stderr.write("boom\\n"); process.exit(3)'],
    });
    const outcome = await new Promise<unknown>((resolve) =>
      transport.messages.subscribe({ error: resolve, complete: () => resolve('complete') }),
    );
    expect(outcome).toBeInstanceOf(TransportError);
    expect((outcome as Error).message).toContain('exited with code 3');
    expect(((outcome as Error).cause as ChildExit).code).toBe(3);
    expect(transport.recentStderr).toEqual(['boom']);
    await expect(transport.send({ jsonrpc: '2.0', method: 'x' })).rejects.toBeInstanceOf(TransportError);
  });

  it('gives the client a transport-error quit reason when the server crashes', async () => {
    const transport = start({ command: process.execPath, args: ['-e', 'setTimeout(() => process.exit(7), 50)'] });
    const client = new Client({ name: 'stdio-test', version: '1' });
    await expect(client.connect(transport)).rejects.toThrow();
    const reason = await client.closed;
    expect(['transport-error', 'handshake-failed']).toContain(reason.kind);
    expect(reason.message + String(reason.error?.message)).toContain('code 7');
  });

  it('fails clearly when the command does not exist', async () => {
    const transport = start({ command: 'definitely-not-a-command-7f3a' });
    const outcome = await new Promise<unknown>((resolve) =>
      transport.messages.subscribe({ error: resolve, complete: () => resolve('complete') }),
    );
    expect(outcome).toBeInstanceOf(TransportError);
    expect((outcome as Error).message).toMatch(/Could not start "definitely-not-a-command-7f3a".*ENOENT/);
    expect(await transport.exited).toMatchObject({ kind: 'spawn-failed' });
  });

  it('rejects a send with the spawn error when the command does not exist', async () => {
    const transport = start({ command: 'definitely-not-a-command-7f3a' });
    const sendFailure = await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' }).catch((e) => e);
    expect(sendFailure).toBeInstanceOf(TransportError);
    expect(sendFailure.message).toMatch(/^Could not start "definitely-not-a-command-7f3a": spawn .*ENOENT/);
  });

  it('rejects Client.connect with the spawn error when the command does not exist', async () => {
    const connectFailure = await new Client({ name: 'c', version: '1' })
      .connect(start({ command: 'definitely-not-a-command-7f3a' }))
      .catch((e) => e);
    // Whichever comes first, the failed send or the failed stream, the spawn error is what it says.
    expect(connectFailure.message).toMatch(/Could not start "definitely-not-a-command-7f3a": spawn .*ENOENT/);
    expect(connectFailure.message).not.toContain('output stream closed');
  });

  it('kills the whole process group: a grandchild behind `sh -c` is gone after close', async () => {
    const sleeper = fixturePath('stdio-sleeper.mjs');
    const transport = start({
      command: 'sh',
      args: ['-c', `"${process.execPath}" "${sleeper}" --ignore-term & wait`],
    });
    const line = await firstValueFrom(transport.stderr$.pipe(take(1), timeout(5000)));
    const grandchild = Number(/sleeper (\d+)/.exec(line)![1]);
    pids.push(grandchild);
    expect(grandchild).not.toBe(transport.pid);
    expect(isAlive(grandchild)).toBe(true);
    await transport.close();
    await eventually(() => !isAlive(grandchild), 'the grandchild to end'); // a pid's end announces itself to its parent only
  });

  it('reaps a grandchild left behind by a child that exits on its own at stdin EOF', async () => {
    const transport = start({ command: process.execPath, args: [fixturePath('stdio-spawner.mjs')] });
    const line = await firstValueFrom(transport.stderr$.pipe(take(1), timeout(5000)));
    const grandchild = Number(/sleeper (\d+)/.exec(line)![1]);
    pids.push(grandchild);
    await transport.close();
    expect(await transport.exited).toMatchObject({ kind: 'stopped', code: 0 });
    await eventually(() => !isAlive(grandchild), 'the grandchild to end'); // a pid's end announces itself to its parent only
  });
});
