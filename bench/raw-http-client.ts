/**
 * A load generator for JSON POSTs over one keep-alive HTTP/1.1 connection, as wrk or autocannon drive a server:
 * the request head is written by hand and the answer read by a minimal parser (status, `content-length` or
 * chunked body, the few headers the rows check), so the client's own cost per call stays small next to the
 * servers it compares. node:http's `ClientRequest` costs about as much per call as our server does, and a
 * client that heavy flattens every ratio between servers towards 1.
 *
 * One request at a time per connection (no pipelining); `post` queues a caller until the connection is free,
 * and a pool of connections serves callers in parallel.
 */
import net from 'node:net';

export interface RawAnswer {
  readonly status: number;
  readonly contentType: string | undefined;
  readonly sessionId: string | undefined;
  readonly body: string;
}

type Headers = Readonly<Record<string, string>>;

const HEADER_END = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');

interface Pending {
  readonly head: string;
  readonly body: Buffer;
  resolve(answer: RawAnswer): void;
  reject(error: Error): void;
}

/** The answer being read: its head once parsed, then its body as it arrives. */
interface Reading {
  status: number;
  headers: Map<string, string>;
  contentLength: number | undefined;
  chunks: Buffer[];
}

function parseHead(head: string): Reading {
  const lines = head.split('\r\n');
  const status = Number(lines[0]!.split(' ')[1]);
  const headers = new Map<string, string>();
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const length = headers.get('content-length');
  if (length === undefined && headers.get('transfer-encoding') !== 'chunked') {
    throw new Error(`an answer with neither content-length nor chunked encoding (status ${status})`);
  }
  return { status, headers, contentLength: length === undefined ? undefined : Number(length), chunks: [] };
}

/** One keep-alive connection: one request in flight, the next written when its answer is complete. */
class RawConnection {
  private readonly socket: net.Socket;
  private readonly queue: Pending[] = [];
  private buffered: Buffer = Buffer.alloc(0);
  private reading: Reading | undefined;

  constructor(port: number, host: string) {
    this.socket = net.connect({ port, host, noDelay: true });
    this.socket.on('data', (data: Buffer) => this.receive(data));
    this.socket.on('error', (error) => this.failAll(error));
    this.socket.on('close', () => this.failAll(new Error('the connection closed')));
  }

  send(pending: Pending): void {
    this.queue.push(pending);
    if (this.queue.length === 1) this.write(pending);
  }

  close(): void {
    this.socket.destroy();
  }

  private write(pending: Pending): void {
    this.socket.write(pending.head);
    this.socket.write(pending.body);
  }

  private receive(data: Buffer): void {
    this.buffered = this.buffered.length === 0 ? data : Buffer.concat([this.buffered, data]);
    try {
      while (this.readSome()) {
        /* keep reading while whole parts are buffered */
      }
    } catch (error) {
      this.failAll(error as Error);
      this.socket.destroy();
    }
  }

  /** Consumes one part (a head, a body, a chunk) of the buffered bytes; false when more bytes are needed. */
  private readSome(): boolean {
    if (this.reading === undefined) {
      const end = this.buffered.indexOf(HEADER_END);
      if (end < 0) return false;
      this.reading = parseHead(this.buffered.toString('latin1', 0, end));
      this.buffered = this.buffered.subarray(end + HEADER_END.length);
      return true;
    }
    const reading = this.reading;
    if (reading.contentLength !== undefined) {
      if (this.buffered.length < reading.contentLength) return false;
      reading.chunks.push(this.buffered.subarray(0, reading.contentLength));
      this.buffered = this.buffered.subarray(reading.contentLength);
      this.complete(reading);
      return true;
    }
    const sizeEnd = this.buffered.indexOf(CRLF);
    if (sizeEnd < 0) return false;
    const size = parseInt(this.buffered.toString('latin1', 0, sizeEnd), 16);
    const chunkEnd = sizeEnd + CRLF.length + size + CRLF.length;
    if (this.buffered.length < chunkEnd) return false;
    if (size > 0) reading.chunks.push(this.buffered.subarray(sizeEnd + CRLF.length, chunkEnd - CRLF.length));
    this.buffered = this.buffered.subarray(chunkEnd);
    if (size === 0) this.complete(reading);
    return true;
  }

  private complete(reading: Reading): void {
    this.reading = undefined;
    const pending = this.queue.shift()!;
    const next = this.queue[0];
    if (next) this.write(next);
    pending.resolve({
      status: reading.status,
      contentType: reading.headers.get('content-type'),
      sessionId: reading.headers.get('mcp-session-id'),
      body: Buffer.concat(reading.chunks).toString('utf8'),
    });
  }

  private failAll(error: Error): void {
    for (const pending of this.queue.splice(0)) pending.reject(error);
  }
}

/** Posts to one URL over a growing pool of keep-alive connections, one request in flight on each. */
export class RawHttpClient {
  private readonly idle: RawConnection[] = [];
  private readonly all: RawConnection[] = [];
  private readonly host: string;
  private readonly port: number;
  private readonly headPrefix: string;

  constructor(url: string) {
    const { hostname, port, pathname } = new URL(url);
    this.host = hostname;
    this.port = Number(port);
    this.headPrefix = `POST ${pathname} HTTP/1.1\r\nhost: ${hostname}:${port}\r\nconnection: keep-alive\r\n`;
  }

  async post(body: string, headers: Headers): Promise<RawAnswer> {
    const connection = this.idle.pop() ?? this.open();
    try {
      return await new Promise<RawAnswer>((resolve, reject) => {
        const bytes = Buffer.from(body, 'utf8');
        let head = this.headPrefix;
        for (const name in headers) head += `${name}: ${headers[name]}\r\n`;
        head += `content-length: ${bytes.length}\r\n\r\n`;
        connection.send({ head, body: bytes, resolve, reject });
      });
    } finally {
      this.idle.push(connection);
    }
  }

  /** Connections opened so far. */
  get connections(): number {
    return this.all.length;
  }

  close(): void {
    for (const connection of this.all) connection.close();
  }

  private open(): RawConnection {
    const connection = new RawConnection(this.port, this.host);
    this.all.push(connection);
    return connection;
  }
}
