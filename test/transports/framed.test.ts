import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { MessageChannel, Worker } from 'node:worker_threads';
import { Packr } from 'msgpackr';
import { firstValueFrom, take, toArray, type Observable } from 'rxjs';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { Client } from '../../lib/client/client';
import { ErrorCode, TransportError } from '../../lib/jsonrpc/errors';
import { UnreadableFrame, type InboundFrame, type JsonRpcMessage } from '../../lib/jsonrpc/types';
import { Server } from '../../lib/server/server';
import { createDuplexPair } from '../../transports/duplex-pair';
import { createFramedPair, FramedTransport, type FramedTransportOptions } from '../../transports/framed';
import { encodeLengthPrefixed, LengthPrefixReader } from '../../transports/length-prefix';
import { MessagePortTransport } from '../../transports/message-port';
import { cleanups } from '../helpers/cleanups';
import { serverWith, tool } from '../helpers/fixtures';
import { runTransportSuite, type TransportPair } from '../helpers/transport-suite';
import { json } from '../helpers/content';

const packr = new Packr({ useRecords: false });
const SUITE_LIMIT = 256 * 1024;

const notification = (index: number): JsonRpcMessage => ({
  jsonrpc: '2.0',
  method: 'notifications/test',
  params: { index },
});
const frameOf = (message: unknown): Buffer => encodeLengthPrefixed(packr.pack(message));
const header = (length: number): Buffer => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(length, 0);
  return bytes;
};

interface SocketPair {
  readonly client: net.Socket;
  readonly accepted: net.Socket;
  release(): Promise<void>;
}

/** Listens with `server`, dials it with `dial`, and returns both ends; `release` closes everything. */
async function acceptedPair(
  server: net.Server,
  listen: () => void,
  dial: () => net.Socket,
  cleanup: () => Promise<unknown> = async () => undefined,
): Promise<SocketPair> {
  listen();
  await once(server, 'listening');
  const connection = once(server, 'connection') as Promise<[net.Socket]>;
  const client = dial();
  await once(client, 'connect');
  const [accepted] = await connection;
  const release = async () => {
    client.destroy();
    accepted.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await cleanup();
  };
  return { client, accepted, release };
}

/** A connected pair of sockets on a unix socket in a fresh temp dir. */
async function unixSockets(): Promise<SocketPair> {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-framed-'));
  const path = join(dir, 'link.sock');
  const server = net.createServer();
  return acceptedPair(
    server,
    () => server.listen(path),
    () => net.connect(path),
    () => rm(dir, { recursive: true, force: true }),
  );
}

/** A loopback TCP connection (127.0.0.1, an ephemeral port). */
async function tcpSockets(): Promise<SocketPair> {
  const server = net.createServer();
  return acceptedPair(
    server,
    () => server.listen(0, '127.0.0.1'),
    () => net.connect((server.address() as net.AddressInfo).port, '127.0.0.1'),
  );
}

async function unixPair(options: FramedTransportOptions): Promise<TransportPair> {
  const sockets = await unixSockets();
  return {
    left: new FramedTransport(sockets.client, options),
    right: new FramedTransport(sockets.accepted, options),
    dispose: sockets.release,
  };
}

/** Everything `transport` receives until its stream ends, and how it ended. */
function drain(transport: { messages: Observable<InboundFrame> }) {
  const frames: InboundFrame[] = [];
  const ended = new Promise<{ error?: unknown }>((resolve) =>
    transport.messages.subscribe({
      next: (frame) => frames.push(frame),
      error: (error: unknown) => resolve({ error }),
      complete: () => resolve({}),
    }),
  );
  return { frames, ended };
}

runTransportSuite('framed msgpack over a unix socket', {
  connect: () => unixPair({ maxMessageBytes: SUITE_LIMIT }),
  maxMessageBytes: SUITE_LIMIT,
  oversize: 'close',
  largeMessageBytes: 200 * 1024,
});

runTransportSuite('framed msgpack over an in-process pipe', {
  connect: async () => {
    const [left, right] = createFramedPair({ maxMessageBytes: SUITE_LIMIT });
    return { left, right };
  },
  maxMessageBytes: SUITE_LIMIT,
  oversize: 'close',
  largeMessageBytes: 200 * 1024,
});

runTransportSuite('MessagePort', {
  connect: async () => {
    const { port1, port2 } = new MessageChannel();
    return {
      left: new MessagePortTransport(port1),
      right: new MessagePortTransport(port2),
      dispose: async () => {
        port1.close();
        port2.close();
      },
    };
  },
});

describe('framed transport: bad frames', () => {
  /** A framed transport on the accepted end of a unix socket, and the raw client socket feeding it. */
  async function rawPeer() {
    const sockets = await unixSockets();
    cleanups.push(sockets.release);
    const transport = new FramedTransport(sockets.accepted, { maxMessageBytes: 1024 });
    cleanups.push(() => transport.close());
    const raw = sockets.client;
    const rawErrors: unknown[] = [];
    raw.on('error', (error) => rawErrors.push(error)); // a reset from the side that gave up is expected
    const rawClosed = once(raw, 'close');
    return { transport, raw, rawClosed, received: drain(transport) };
  }

  /** A good frame, then a header announcing 4 GiB, written to a transport allowing 1 KiB. */
  async function oversizedHeader() {
    const peer = await rawPeer();
    peer.raw.write(Buffer.concat([frameOf(notification(1)), header(0xffff_ffff), Buffer.alloc(64)]));
    return { ...peer, ended: await peer.received.ended };
  }

  it('fails on a length over the limit, before reading the payload', async () => {
    const { error } = (await oversizedHeader()).ended;
    expect(error).toBeInstanceOf(TransportError);
    expect((error as Error).message).toBe('Bad frame: length 4294967295 exceeds the limit of 1024 bytes');
  });

  it('delivers the frames before a length over the limit', async () => {
    const { received } = await oversizedHeader();
    expect(received.frames).toEqual([notification(1)]);
  });

  it('closes the connection on a length over the limit, and refuses sends', async () => {
    const { transport, rawClosed } = await oversizedHeader();
    await rawClosed;
    await expect(transport.send(notification(2))).rejects.toBeInstanceOf(TransportError);
  });

  /** Frames 10 and 7 levels deep, one that overflows msgpackr's decoder, then a notification; maxDepth 8. */
  async function deepFrames() {
    const sockets = await unixSockets();
    cleanups.push(sockets.release);
    const transport = new FramedTransport(sockets.accepted, { maxDepth: 8 });
    cleanups.push(() => transport.close());
    const received = drain(transport);
    let deep: unknown = 1;
    for (let i = 0; i < 8; i++) deep = { a: deep };
    // Deep enough to overflow msgpackr's recursive decoder: still one refused frame, not a dead stream.
    const overflowing = Buffer.concat([Buffer.alloc(100_000, 0x91), Buffer.from([0x01])]);
    sockets.client.write(
      Buffer.concat([
        frameOf({ jsonrpc: '2.0', id: 1, method: 'ping', params: deep }), // 10 levels
        frameOf({ jsonrpc: '2.0', id: 2, method: 'ping', params: { a: { b: { c: { d: { e: { f: 1 } } } } } } }), // 7
        encodeLengthPrefixed(overflowing),
        frameOf(notification(3)),
      ]),
    );
    sockets.client.end();
    await received.ended;
    return received.frames;
  }

  it('refuses a message nested deeper than maxDepth as a -32600 UnreadableFrame with its id', async () => {
    const [tooDeep] = await deepFrames();
    expect(tooDeep).toEqual(
      new UnreadableFrame(
        ErrorCode.InvalidRequest,
        'Invalid Request: the message nests deeper than 8 levels',
        1,
        false,
      ),
    );
  });

  it("refuses a frame that overflows the decoder's recursion as a -32600 UnreadableFrame", async () => {
    const [, , overflow] = await deepFrames();
    expect(overflow).toMatchObject({ code: ErrorCode.InvalidRequest });
  });

  it('goes on after frames nested too deep: the frames within the limit arrive', async () => {
    const [, fine, , last] = await deepFrames();
    expect(fine).toMatchObject({ id: 2 });
    expect(last).toEqual(notification(3));
  });

  it('fails on a payload msgpack cannot decode', async () => {
    const { raw, rawClosed, received } = await rawPeer();
    raw.write(Buffer.concat([header(2), Buffer.from([0x92, 0x01])])); // an array of two holding one item
    const { error } = await received.ended;
    expect(error).toBeInstanceOf(TransportError);
    expect((error as Error).message).toMatch(/^Bad frame: could not decode msgpack: /);
    await rawClosed;
  });

  it('fails on trailing bytes after the value inside a frame', async () => {
    const { received, raw } = await rawPeer();
    raw.write(Buffer.concat([header(2), Buffer.from([0x01, 0x02])]));
    const { error } = await received.ended;
    expect((error as Error).message).toMatch(/^Bad frame: could not decode msgpack: /);
  });

  it('fails on a stream that ends mid-frame', async () => {
    const { raw, rawClosed, received } = await rawPeer();
    raw.end(Buffer.concat([header(100), Buffer.alloc(10)]));
    const { error } = await received.ended;
    expect(error).toBeInstanceOf(TransportError);
    expect((error as Error).message).toBe('Bad frame: the stream ended after 10 of 100 payload bytes');
    await rawClosed;
  });

  it('fails on a stream that ends inside a length header', async () => {
    const { raw, received } = await rawPeer();
    raw.end(Buffer.from([0, 0]));
    const { error } = await received.ended;
    expect((error as Error).message).toBe('Bad frame: the stream ended inside a length header (2 bytes)');
  });

  it('completes when the peer ends cleanly between frames', async () => {
    const { raw, received } = await rawPeer();
    raw.end(frameOf(notification(7)));
    expect(await received.ended).toEqual({});
    expect(received.frames).toEqual([notification(7)]);
  });
});

describe('framed transport: chunking', () => {
  function rawPipe(): { raw: Duplex; transport: FramedTransport } {
    const [raw, end] = createDuplexPair();
    const transport = new FramedTransport(end);
    cleanups.push(() => {
      raw.destroy();
      return transport.close();
    });
    return { raw, transport };
  }

  it('reassembles frames split across one-byte chunks', async () => {
    const { raw, transport } = rawPipe();
    const big = { jsonrpc: '2.0', method: 'notifications/test', params: { text: 'z'.repeat(5000) } };
    const bytes = Buffer.concat([frameOf(notification(1)), frameOf(big), frameOf(notification(2))]);
    const received = drain(transport);
    for (let i = 0; i < bytes.length; i++) raw.write(bytes.subarray(i, i + 1));
    raw.end();
    expect(await received.ended).toEqual({});
    expect(received.frames).toEqual([notification(1), big, notification(2)]);
  });

  it('delivers many frames arriving in one chunk, in order', async () => {
    const { raw, transport } = rawPipe();
    const messages = Array.from({ length: 300 }, (_, i) => notification(i));
    const received = drain(transport);
    raw.end(Buffer.concat(messages.map(frameOf)));
    expect(await received.ended).toEqual({});
    expect(received.frames).toEqual(messages);
  });

  it('the reader copies nothing when a frame lies inside one chunk', () => {
    const reader = new LengthPrefixReader(1 << 20);
    const chunk = Buffer.concat([header(3), Buffer.from('abc')]);
    const payloads: Buffer[] = [];
    reader.push(chunk, (payload) => payloads.push(payload));
    expect(payloads[0]!.buffer).toBe(chunk.buffer);
  });

  describe('the reader fed a frame one byte at a time', () => {
    const PAYLOAD_BYTES = 20_000;
    let copiedBytes: number;
    let payloads: Buffer[];
    let reader: LengthPrefixReader;
    /**
     * Feeds the frame in one-byte chunks, counting the bytes copied meanwhile: what `Buffer.prototype.copy`
     * reports, what `Buffer.concat` produces and what `Uint8Array.prototype.set` is given (a reader that
     * re-joined its buffer on each chunk would show up in one of them). Counting bytes, not time, keeps
     * the check exact on any machine.
     */
    beforeEach(() => {
      reader = new LengthPrefixReader(1 << 20);
      payloads = [];
      const frame = Buffer.concat([header(PAYLOAD_BYTES), Buffer.alloc(PAYLOAD_BYTES, 7)]);
      const chunks = Array.from({ length: frame.length }, (_, i) => frame.subarray(i, i + 1));
      copiedBytes = 0;
      const copy = vi.spyOn(Buffer.prototype, 'copy');
      const concat = vi.spyOn(Buffer, 'concat');
      const set = vi.spyOn(Uint8Array.prototype, 'set');
      try {
        for (const chunk of chunks) reader.push(chunk, (payload) => payloads.push(payload));
      } finally {
        for (const result of copy.mock.results) if (result.type === 'return') copiedBytes += result.value as number;
        for (const result of concat.mock.results)
          if (result.type === 'return') copiedBytes += (result.value as Buffer).length;
        for (const [source] of set.mock.calls) copiedBytes += (source as ArrayLike<number>).length;
        copy.mockRestore();
        concat.mockRestore();
        set.mockRestore();
      }
    });

    it('joins the chunks into the frame', () => {
      expect(payloads).toHaveLength(1);
      expect(payloads[0]!.equals(Buffer.alloc(PAYLOAD_BYTES, 7))).toBe(true);
      expect(() => reader.end()).not.toThrow();
    });

    it('copies in proportion to the frame, not the whole buffer on every chunk', () => {
      // Linear: the header and the payload are copied once each. Re-copying per chunk: about PAYLOAD_BYTES² / 2.
      expect(copiedBytes).toBeLessThanOrEqual(2 * (PAYLOAD_BYTES + 4));
    });
  });
});

describe('framed transport: flow control', () => {
  /** 3000 sends of 1 KiB into an in-process pipe whose right side nobody reads. */
  function unreadSends() {
    const [left, right] = createFramedPair();
    cleanups.push(async () => {
      await left.close();
      await right.close();
    });
    const padding = 'p'.repeat(1024);
    let sent = 0;
    const sends = Array.from({ length: 3000 }, (_, index) =>
      left.send({ jsonrpc: '2.0', method: 'notifications/test', params: { index, padding } }).then(() => sent++),
    );
    for (const send of sends) send.catch(() => undefined); // refused by the close if never read
    return { right, sends, sent: () => sent };
  }

  it('stops reading while frames pile up unconsumed, so sends wait', async () => {
    const { sent } = unreadSends();
    // Proving an absence (sends that do not complete): no event marks it, so a bounded window.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sent()).toBeLessThan(3000);
  });

  it('delivers all the waiting sends in order once read', async () => {
    const { right, sends } = unreadSends();
    const frames = await firstValueFrom(right.messages.pipe(take(3000), toArray()));
    await Promise.all(sends);
    expect(frames.map((frame) => (frame as unknown as { params: { index: number } }).params.index)).toEqual(
      Array.from({ length: 3000 }, (_, i) => i),
    );
  });
});

describe('framed transport: MCP over TCP', () => {
  it('carries a Client+Server session over a loopback TCP socket', async () => {
    const sockets = await tcpSockets();
    cleanups.push(sockets.release);
    const definition = serverWith([tool('echo', json)]);
    const connection = new Server(definition).connect(new FramedTransport(sockets.accepted));
    const client = await new Client({ name: 'tcp', version: '1' }).connect(new FramedTransport(sockets.client));
    const results = await Promise.all(Array.from({ length: 50 }, (_, n) => client.callTool('echo', { n })));
    expect(results[49]).toEqual({ content: [{ type: 'text', text: '{"n":49}' }] });
    const closed = once(sockets.accepted, 'close');
    await client.close();
    expect((await connection.closed).kind).toBe('transport-closed');
    await closed;
  });
});

describe('MessagePort transport: a server in a worker thread', () => {
  // One worker for both tests: the second closes the client the first used.
  let worker: Worker;
  let exited: Promise<unknown[]>;
  let client: Client;
  beforeAll(async () => {
    const { port1, port2 } = new MessageChannel();
    // The worker loads TypeScript through tsx's API (an `--import tsx` execArgv is not honoured under vitest).
    const entry = new URL('../helpers/message-port-worker.ts', import.meta.url).href;
    const bootstrap = `import('tsx/esm/api').then((tsx) => tsx.tsImport(${JSON.stringify(entry)}, ${JSON.stringify(import.meta.url)}))`;
    worker = new Worker(bootstrap, { eval: true, workerData: { port: port2 }, transferList: [port2] });
    exited = once(worker, 'exit');
    client = await new Client({ name: 'worker', version: '1' }).connect(new MessagePortTransport(port1));
  });
  afterAll(() => worker.terminate());

  it('serves tools from a worker', async () => {
    expect(await client.callTool('echo', { from: 'main' })).toEqual({
      content: [{ type: 'text', text: '{"from":"main"}' }],
    });
  });

  it('lets the worker exit when the client closes', async () => {
    await client.close();
    const [code] = await exited; // nothing keeps the worker alive once its port is closed
    expect(code).toBe(0);
  });
});
