/**
 * Where a hub's upstream lives, and how to open one transport to it: an in-process server (over the
 * memory transport, by reference), a child process over stdio, a remote server over Streamable HTTP,
 * HTTP+SSE or WebSocket, another switchboard over the framed msgpack transport, or any transport the
 * caller opens. Node-only transports are imported when first used, so the hub itself stays runtime-neutral.
 */
import type { Transport } from '../../transports/transport';
import { createMemoryPair } from '../../transports/memory';
import type { ShutdownPolicy } from '../../machines/child-process';
import type { ConnectionOptions } from '../core/connection';
import type { Runtime } from '../core/runtime';
import { TransportError } from '../jsonrpc/errors';
import type { ServerDefinition } from '../server/definition';
import { Server } from '../server/server';
import type { TokenStore } from '../auth/token-store';
import {
  checkUpstreamAuth,
  UpstreamCredentials,
  type AuthorizedTransportOptions,
  type UpstreamAuth,
} from './upstream-auth';

export interface InProcessSource {
  readonly kind: 'in-process';
  /** A server (its `update()` reaches the hub as `list_changed`) or a definition (served by a server of its own). */
  readonly server: Server | ServerDefinition;
  /**
   * Requests go straight into the server's definition with the downstream request's context (default
   * true): no second hop, and the handler's progress, logging, cancellation, sampling, elicitation and
   * roots reach exactly the downstream client that called. `false` sends them over the memory connection
   * like any other upstream. The memory connection carries the catalog, `list_changed`, subscriptions and
   * logging either way. With `direct`, a handler's `ctx.connection` is the hub's downstream connection.
   */
  readonly direct?: boolean;
}

export interface StdioSource {
  readonly kind: 'stdio';
  readonly command: string;
  readonly args?: readonly string[];
  /** Added to the hub's environment. */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly shutdown?: Partial<ShutdownPolicy>;
}

/**
 * A remote server over Streamable HTTP (falling back to HTTP+SSE when the server answers `initialize` with
 * 400, 404 or 405), or over the legacy HTTP+SSE transport of 2024-11-05 only (`transport: 'sse'`, `url`
 * being the SSE endpoint). A session the server forgets (404) ends the upstream's session: the hub
 * reconnects with a fresh handshake, so its catalog and subscriptions are renewed too.
 */
export interface HttpSource {
  readonly kind: 'http';
  readonly url: string;
  /** Sent with every request; an `Authorization` among them and `auth` together are refused. */
  readonly headers?: Readonly<Record<string, string>>;
  /** How the hub authorizes itself to the server (see upstream-auth.ts); never with a downstream client's token. */
  readonly auth?: UpstreamAuth;
  /** `streamable` (default) or `sse`. */
  readonly transport?: 'streamable' | 'sse';
}

export interface WebSocketSource {
  readonly kind: 'websocket';
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Another switchboard over length-prefixed msgpack: a unix socket `path`, or TCP `host` and `port`. */
export type FramedSource =
  | { readonly kind: 'framed'; readonly path: string }
  | { readonly kind: 'framed'; readonly host?: string; readonly port: number };

/** Anything else: `open` returns a fresh transport for every session (the hub closes it). */
export interface TransportSource {
  readonly kind: 'transport';
  readonly open: () => Transport | Promise<Transport>;
}

export type UpstreamSource =
  InProcessSource | StdioSource | HttpSource | WebSocketSource | FramedSource | TransportSource;

/** One opened link to an upstream. */
export interface OpenedTransport {
  readonly transport: Transport;
  /** The in-process server, when requests may go straight into its definition. */
  readonly direct?: Server;
  /** The child's pid, for stdio. */
  readonly pid?: number;
  /** The child's last stderr lines, for stdio (read when it fails). */
  readonly recentStderr?: () => readonly string[];
}

export interface SourceContext {
  /** Each line a child writes to stderr. */
  readonly onStderr?: (line: string) => void;
  /** Options of the server built for an in-process definition; their runtime is also a stdio child's. */
  readonly connectionOptions?: ConnectionOptions;
  /** Where an HTTP upstream's OAuth tokens live (default: in memory, for this opener only). */
  readonly tokenStore?: TokenStore;
}

/** Opens transports to one source. An in-process definition gets one `Server`, kept for every session. */
export class SourceOpener {
  private inProcess: Server | undefined;
  /** An HTTP upstream's credentials, kept across its sessions. */
  private readonly credentials: UpstreamCredentials | undefined;

  constructor(
    readonly source: UpstreamSource,
    private readonly context: SourceContext = {},
  ) {
    if (source.kind === 'http' && source.auth) {
      checkUpstreamAuth(context.connectionOptions?.upstream ?? source.url, source.auth, source.headers);
      this.credentials = new UpstreamCredentials(source.auth, source.url, context.tokenStore);
    }
  }

  /** A short description for status and errors (`stdio: node server.js`, `ws://…`). */
  describe(): string {
    const source = this.source;
    switch (source.kind) {
      case 'in-process':
        return 'in-process';
      case 'stdio':
        return `stdio: ${[source.command, ...(source.args ?? [])].join(' ')}`;
      case 'http':
        return source.transport === 'sse' ? `${source.url} (HTTP+SSE)` : source.url;
      case 'websocket':
        return source.url;
      case 'framed':
        return 'path' in source ? `framed: ${source.path}` : `framed: ${source.host ?? '127.0.0.1'}:${source.port}`;
      case 'transport':
        return 'custom transport';
    }
  }

  async open(): Promise<OpenedTransport> {
    const source = this.source;
    switch (source.kind) {
      case 'in-process': {
        const server = (this.inProcess ??= isServer(source.server)
          ? source.server
          : new Server(source.server, this.context.connectionOptions));
        const [clientSide, serverSide] = createMemoryPair();
        server.connect(serverSide);
        return source.direct === false ? { transport: clientSide } : { transport: clientSide, direct: server };
      }
      case 'stdio': {
        const { StdioClientTransport } = await import('../../transports/stdio');
        const transport = new StdioClientTransport({
          command: source.command,
          ...(source.args && { args: source.args }),
          ...(source.env && { env: source.env }),
          ...(source.cwd !== undefined && { cwd: source.cwd }),
          ...(source.shutdown && { shutdown: source.shutdown }),
          // The child's lifecycle actor joins the hub's runtime, beside the upstream's supervision actor.
          ...(this.context.connectionOptions?.runtime && { runtime: this.context.connectionOptions.runtime }),
        });
        const onStderr = this.context.onStderr;
        if (onStderr) transport.stderr$.subscribe(onStderr);
        return {
          transport,
          // Read when asked: a transport that spawns in `start` has no pid before it.
          get pid() {
            return transport.pid;
          },
          recentStderr: () => transport.recentStderr,
        };
      }
      case 'http':
        return {
          transport: await openHttp(
            source,
            (await this.credentials?.transportOptions(source.headers)) ??
              (source.headers ? { headers: source.headers } : {}),
            this.context.connectionOptions?.runtime,
          ),
        };
      case 'websocket': {
        const { WebSocketClientTransport } = await import('../../transports/websocket');
        return {
          transport: await WebSocketClientTransport.connect(
            source.url,
            source.headers ? { headers: source.headers } : {},
          ),
        };
      }
      case 'framed':
        return { transport: await openFramed(source) };
      case 'transport':
        return { transport: await source.open() };
    }
  }

  /** Closes what `open` built for an in-process definition. */
  async dispose(): Promise<void> {
    if (this.inProcess && this.source.kind === 'in-process' && !isServer(this.source.server)) {
      await this.inProcess.close();
    }
  }
}

/**
 * A server is told from a definition by shape, not `instanceof`: a module may hold classes of another copy
 * of this package (the built one while the hub runs from source, or the reverse).
 */
function isServer(value: Server | ServerDefinition): value is Server {
  const candidate = value as Partial<Server>;
  return typeof candidate.connect === 'function' && typeof candidate.update === 'function';
}

async function openHttp(
  source: HttpSource,
  options: AuthorizedTransportOptions,
  runtime: Runtime | undefined,
): Promise<Transport> {
  if (source.transport === 'sse') {
    const { LegacySseClientTransport } = await import('../../transports/http/legacy-sse-client');
    const transport = new LegacySseClientTransport(source.url, options);
    // Opening the event stream first turns an unreachable server into a clear error here.
    await transport.connect().catch(async (error: unknown) => {
      await transport.close();
      throw error;
    });
    return transport;
  }
  const { StreamableHttpClientTransport } = await import('../../transports/http/streamable-client');
  // The session's lifecycle actor joins the hub's runtime, beside the upstream's supervision actor.
  return new StreamableHttpClientTransport(source.url, {
    ...options,
    renewSession: false,
    ...(runtime && { runtime }),
  });
}

async function openFramed(source: FramedSource): Promise<Transport> {
  const [{ connect }, { FramedTransport }] = await Promise.all([import('node:net'), import('../../transports/framed')]);
  const socket = 'path' in source ? connect(source.path) : connect(source.port, source.host ?? '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => {
      socket.destroy();
      reject(new TransportError(`Cannot connect to ${'path' in source ? source.path : source.port}: ${error.message}`));
    };
    socket.once('error', onError);
    socket.once('connect', () => {
      socket.off('error', onError);
      resolve();
    });
  });
  return new FramedTransport(socket);
}
