/**
 * WebSocket transport (a custom MCP transport: no spec revision defines one). Wire format as in the official
 * TypeScript SDK: subprotocol `mcp`, one JSON-RPC message (or batch) per text frame.
 *
 * - Binary frames arrive as `UnreadableFrame` values; the connection stays open.
 * - Frame limit: `maxMessageBytes` is both ws's `maxPayload` and our decode check. ws enforces it first: a
 *   frame over the limit makes the receiver close with 1009 and its `messages` error with a `TransportError`
 *   (the sender's `messages` error too, on the 1009 close).
 * - The peer closing with 1000, 1001 or 1005 (no status) completes `messages`; any other close (1006 when
 *   the peer vanished, 1009, 1011, …) errors it with a `TransportError`.
 * - Keep-alive: every interval we ping; a peer that has not answered the previous ping by the next tick is
 *   terminated and `messages` errors with a `TransportError` ('keep-alive timeout').
 */
import type { IncomingMessage } from 'node:http';
import { createServer, type Server as HttpServer } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Observable } from 'rxjs';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { InboundQueue } from './inbound-queue';
import { decodeFrame, DEFAULT_MAX_DEPTH, DEFAULT_MAX_MESSAGE_BYTES, encodeFrame } from '../lib/jsonrpc/codec';
import { ErrorCode, TransportError } from '../lib/jsonrpc/errors';
import { UnreadableFrame, type InboundFrame, type JsonRpcBatch, type JsonRpcMessage } from '../lib/jsonrpc/types';
import type { Transport } from './transport';
import type { TracedNetwork } from '../lib/trace/instrumentation';
import { socketPeer, urlPeer } from './http/network';

// The port and message types its public signatures name, so this subpath stands alone.
export type * from './port-types';

export const MCP_SUBPROTOCOL = 'mcp';

export interface WebSocketTransportOptions {
  /** Largest inbound message in bytes (ws `maxPayload` and our decode check). Default 4 MiB. */
  readonly maxMessageBytes?: number;
  /** Deepest nesting of objects and arrays accepted in a message; deeper ones get -32600. Default 128. */
  readonly maxDepth?: number;
  /** Ping interval; a peer that misses a pong until the next tick is terminated. Default 30 s; 0 disables. */
  readonly keepAliveIntervalMs?: number;
  /** `send()` waits while ws's `bufferedAmount` is above this many bytes. Default 1 MiB. */
  readonly sendHighWaterMark?: number;
  /** How long `close()` waits for the closing handshake before terminating the socket. Default 5 s. */
  readonly closeTimeoutMs?: number;
}

export interface WebSocketClientOptions extends WebSocketTransportOptions {
  /** Opening handshake timeout. Default 10 s. */
  readonly connectTimeoutMs?: number;
  /** Extra headers for the upgrade request (e.g. `Authorization`). */
  readonly headers?: Record<string, string>;
}

const DEFAULT_KEEP_ALIVE_MS = 30_000;
const DEFAULT_HIGH_WATER_MARK = 1024 * 1024;
const DEFAULT_CLOSE_TIMEOUT_MS = 5_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
/** Fallback re-check while buffered bytes are not ours to wait on (no send callback pending). */
const DRAIN_POLL_MS = 10;
const NORMAL_CLOSE_CODES = new Set([1000, 1001, 1005]);

const noop = () => undefined;
const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Pings on an interval and reports a peer that did not answer the previous ping. */
class KeepAlive {
  private readonly timer: NodeJS.Timeout | undefined;
  private awaitingPong = false;
  private readonly onPong = () => {
    this.awaitingPong = false;
  };

  constructor(
    private readonly socket: WebSocket,
    intervalMs: number,
    onTimeout: () => void,
  ) {
    if (intervalMs <= 0) return;
    socket.on('pong', this.onPong);
    this.timer = setInterval(() => {
      if (this.awaitingPong) return onTimeout();
      if (socket.readyState !== WebSocket.OPEN) return;
      this.awaitingPong = true;
      socket.ping(undefined, undefined, noop);
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.socket.off('pong', this.onPong);
  }
}

function rawDataToText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

function describeSocketError(error: Error & { code?: string }, maxMessageBytes: number): TransportError {
  if (error.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') {
    return new TransportError(`Inbound message too large: the limit is ${maxMessageBytes} bytes (closed with 1009)`, {
      cause: error,
    });
  }
  return new TransportError(`WebSocket error: ${error.message}`, { cause: error });
}

/**
 * One open `ws` socket as a `Transport`. Use `WebSocketClientTransport.connect()` or
 * `createWebSocketServer()` rather than constructing one.
 */
export abstract class WebSocketTransport implements Transport {
  readonly messages: Observable<InboundFrame>;
  private readonly maxMessageBytes: number;
  private readonly maxDepth: number;
  private readonly highWaterMark: number;
  private readonly closeTimeoutMs: number;
  private readonly keepAlive: KeepAlive;
  private readonly inbound = new InboundQueue('WebSocket');
  private closing: Promise<void> | undefined;
  /** Serializes sends so one waiting for the buffer to drain is not overtaken. */
  private sendQueue: Promise<void> = Promise.resolve();
  private readonly writesInFlight = new Set<Promise<unknown>>();

  protected constructor(
    private readonly socket: WebSocket,
    options: WebSocketTransportOptions,
    /** What it runs over, for spans and session metrics: `tcp`, `websocket`, the peer. */
    readonly network?: TracedNetwork,
  ) {
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
    this.highWaterMark = options.sendHighWaterMark ?? DEFAULT_HIGH_WATER_MARK;
    this.closeTimeoutMs = options.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS;
    this.messages = this.inbound.messages;
    socket.on('message', (data, isBinary) => this.receive(data, isBinary));
    socket.on('error', (error) => this.endInbound(describeSocketError(error, this.maxMessageBytes)));
    socket.on('close', (code, reason) => this.onSocketClose(code, reason.toString('utf8')));
    this.keepAlive = new KeepAlive(socket, options.keepAliveIntervalMs ?? DEFAULT_KEEP_ALIVE_MS, () => {
      this.endInbound(new TransportError('keep-alive timeout: the peer did not answer a ping'));
      socket.terminate();
    });
  }

  send(message: JsonRpcMessage | JsonRpcBatch): Promise<void> {
    if (!this.isOpen()) return Promise.reject(new TransportError('Transport closed'));
    let text: string;
    try {
      text = encodeFrame(message);
    } catch (error) {
      return Promise.reject(new TransportError('Cannot encode the message as JSON', { cause: error }));
    }
    const turn = this.sendQueue.then(() => this.waitForDrain());
    this.sendQueue = turn;
    return turn.then(() => this.write(text));
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private isOpen(): boolean {
    return this.closing === undefined && this.socket.readyState === WebSocket.OPEN;
  }

  private async waitForDrain(): Promise<void> {
    while (this.isOpen() && this.socket.bufferedAmount > this.highWaterMark) {
      await (this.writesInFlight.size > 0 ? Promise.race(this.writesInFlight) : delay(DRAIN_POLL_MS));
    }
  }

  /** Resolves in ws's send callback, i.e. once the frame is handed to the socket. */
  private write(text: string): Promise<void> {
    if (!this.isOpen()) return Promise.reject(new TransportError('Transport closed'));
    const written = new Promise<void>((resolve, reject) => {
      this.socket.send(text, (error) =>
        error ? reject(new TransportError(`WebSocket send failed: ${error.message}`, { cause: error })) : resolve(),
      );
    });
    const settled = written.then(noop, noop);
    this.writesInFlight.add(settled);
    void settled.then(() => this.writesInFlight.delete(settled));
    return written;
  }

  private shutdown(): Promise<void> {
    this.keepAlive.stop();
    this.endInbound(null);
    const socket = this.socket;
    if (socket.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => socket.terminate(), this.closeTimeoutMs);
      timer.unref();
      socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      if (socket.readyState === WebSocket.OPEN) socket.close(1000);
    });
  }

  private receive(data: RawData, isBinary: boolean): void {
    if (this.inbound.ended) return;
    this.inbound.push(
      isBinary
        ? new UnreadableFrame(ErrorCode.InvalidRequest, 'Binary frames are not accepted: send JSON-RPC as text frames')
        : decodeFrame(rawDataToText(data), this.maxMessageBytes, this.maxDepth),
    );
  }

  private onSocketClose(code: number, reason: string): void {
    this.keepAlive.stop();
    this.closing ??= Promise.resolve();
    if (NORMAL_CLOSE_CODES.has(code)) this.endInbound(null);
    else this.endInbound(new TransportError(`WebSocket closed with code ${code}${reason ? `: ${reason}` : ''}`));
  }

  /** The first ending wins; frames already received are still delivered before it. */
  private endInbound(ending: TransportError | null): void {
    if (ending) this.inbound.fail(ending);
    else this.inbound.complete();
  }
}

/** The server side of one accepted connection. */
export class WebSocketServerTransport extends WebSocketTransport {
  /** Wraps an accepted, open socket (its subprotocol already negotiated); `request` is its upgrade request. */
  constructor(socket: WebSocket, options: WebSocketTransportOptions = {}, request?: IncomingMessage) {
    super(socket, options, request && { transport: 'tcp', protocolName: 'websocket', ...socketPeer(request) });
  }
}

/** The client side: `await WebSocketClientTransport.connect('ws://host:port/path')`. */
export class WebSocketClientTransport extends WebSocketTransport {
  private constructor(socket: WebSocket, options: WebSocketTransportOptions, url: URL) {
    super(socket, options, { transport: 'tcp', protocolName: 'websocket', ...urlPeer(url) });
  }

  /**
   * Opens a connection with subprotocol `mcp`. Resolves once open; rejects with a `TransportError` when the
   * server is unreachable, refuses the upgrade, or does not accept subprotocol `mcp`.
   */
  static connect(url: string | URL, options: WebSocketClientOptions = {}): Promise<WebSocketClientTransport> {
    const target = String(url);
    return new Promise((resolve, reject) => {
      let socket: WebSocket;
      try {
        socket = new WebSocket(url, MCP_SUBPROTOCOL, {
          maxPayload: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
          handshakeTimeout: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
          ...(options.headers ? { headers: options.headers } : {}),
        });
      } catch (error) {
        reject(new TransportError(`Cannot connect to ${target}: ${(error as Error).message}`, { cause: error }));
        return;
      }
      let refusal: TransportError | undefined;
      const onUnexpectedResponse = (_request: unknown, response: IncomingMessage) => {
        refusal = new TransportError(
          `${target} refused the WebSocket upgrade: HTTP ${response.statusCode} ${response.statusMessage ?? ''}`.trim(),
        );
        socket.terminate(); // ends the handshake: ws then emits 'error', handled below
      };
      const onError = (error: Error) => {
        // Stays attached: ws may emit more than one error while tearing a failed handshake down.
        reject(refusal ?? describeConnectError(target, error));
      };
      const onOpen = () => {
        socket.off('error', onError);
        socket.off('unexpected-response', onUnexpectedResponse);
        resolve(new WebSocketClientTransport(socket, options, new URL(target)));
      };
      socket.on('unexpected-response', onUnexpectedResponse);
      socket.on('error', onError);
      socket.once('open', onOpen);
    });
  }
}

function describeConnectError(target: string, error: Error): TransportError {
  // ws itself refuses a server that answers without (or with another) subprotocol.
  if (/subprotocol/i.test(error.message)) {
    return new TransportError(
      `${target} did not accept WebSocket subprotocol '${MCP_SUBPROTOCOL}' (${error.message})`,
      {
        cause: error,
      },
    );
  }
  return new TransportError(`Cannot connect to ${target}: ${error.message}`, { cause: error });
}

export interface WebSocketServerOptions extends WebSocketTransportOptions {
  /** 0 picks a free port (read it from `McpWebSocketServer.port`). */
  readonly port: number;
  /** Default `127.0.0.1`. */
  readonly host?: string;
  /** Only upgrades to this path are accepted (others get 404); any path when omitted. */
  readonly path?: string;
  /** Receives each accepted connection, typically `(transport) => server.connect(transport)`. */
  onConnection(transport: WebSocketServerTransport, request: IncomingMessage): unknown;
  /** Told about `onConnection` failures (that connection is then closed) and HTTP server errors. */
  onError?(error: unknown): void;
}

export interface McpWebSocketServer {
  readonly port: number;
  /** `ws://host:port/path` */
  readonly url: string;
  /** Stops accepting, closes every live connection (1000) and the listening socket. Idempotent. */
  close(): Promise<void>;
}

/** Accepts MCP over WebSocket: only upgrades offering subprotocol `mcp` (others get HTTP 400). */
export function createWebSocketServer(options: WebSocketServerOptions): Promise<McpWebSocketServer> {
  const host = options.host ?? '127.0.0.1';
  const onError = options.onError ?? noop;
  const live = new Set<WebSocketServerTransport>();
  const wss = new WebSocketServer({
    noServer: true,
    clientTracking: false,
    maxPayload: options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
    handleProtocols: (offered) => (offered.has(MCP_SUBPROTOCOL) ? MCP_SUBPROTOCOL : false),
  });
  const http = createServer((_request, response) => {
    response.writeHead(426, { Connection: 'Upgrade', Upgrade: 'websocket' }).end('WebSocket upgrade required\n');
  });

  const accept = (socket: WebSocket, request: IncomingMessage) => {
    const transport = new WebSocketServerTransport(socket, options, request);
    live.add(transport);
    socket.once('close', () => live.delete(transport));
    const refuse = (error: unknown) => {
      onError(error);
      void transport.close();
    };
    try {
      const outcome = options.onConnection(transport, request);
      if (outcome instanceof Promise) outcome.catch(refuse);
    } catch (error) {
      refuse(error);
    }
  };

  http.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', noop);
    if (options.path !== undefined && pathOf(request) !== options.path) return rejectUpgrade(socket, 404, 'Not Found');
    if (!offeredSubprotocols(request).includes(MCP_SUBPROTOCOL)) {
      return rejectUpgrade(socket, 400, `Subprotocol ${MCP_SUBPROTOCOL} required`);
    }
    wss.handleUpgrade(request, socket, head, (ws) => accept(ws, request));
  });

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await Promise.all([...live].map((transport) => transport.close()));
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
      wss.close();
    })());

  return listen(http, options.port, host).then((port) => {
    http.on('error', onError);
    return { port, url: `ws://${formatHost(host)}:${port}${options.path ?? ''}`, close };
  });
}

function listen(http: HttpServer, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const onListenError = (error: Error) =>
      reject(new TransportError(`Cannot listen on ${host}:${port}: ${error.message}`, { cause: error }));
    http.once('error', onListenError);
    http.listen(port, host, () => {
      http.off('error', onListenError);
      const address = http.address();
      resolve(typeof address === 'object' && address ? address.port : port);
    });
  });
}

function pathOf(request: IncomingMessage): string {
  return new URL(request.url ?? '/', 'ws://localhost').pathname;
}

function offeredSubprotocols(request: IncomingMessage): string[] {
  const header = request.headers['sec-websocket-protocol'];
  return header ? header.split(',').map((token) => token.trim()) : [];
}

function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

function rejectUpgrade(socket: Duplex, status: number, reason: string): void {
  const body = `${reason}\n`;
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: text/plain\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
