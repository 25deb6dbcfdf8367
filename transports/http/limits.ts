/**
 * Every limit of the HTTP server transports in one place, with its default. The request handlers read the
 * session and body limits; `applyHttpLimits` / `createMcpHttpServer` give the `node:http` server the
 * connection and timeout limits. A hub config and `switchboard serve` set the same keys. Node-free, so a
 * hub config (on the root entry) can check its keys.
 */
import { DEFAULT_MAX_DEPTH } from '../../lib/jsonrpc/codec';

export interface HttpLimits {
  /** Sessions open at once (per handler). When full, the least recently used idle session is evicted. */
  readonly maxSessions: number;
  /** Sessions one client (see `clientKey`) may hold; one more evicts that client's oldest idle one, or gets 429. */
  readonly maxSessionsPerClient: number;
  /**
   * `subscriptions/listen` streams one client (see `clientKey`) may hold open at once over Streamable HTTP; one
   * more gets 429 with a JSON-RPC error, so no client can take all of the server's `maxListenStreams`. Each
   * stream holds a connection: keep it below `maxConnectionsPerClient`, so a client at this limit is told so
   * (rather than having its socket closed) and still has connections for its other requests.
   */
  readonly maxListenStreamsPerClient: number;
  /** A session with no open request or stream for this long is closed (ms; `Infinity`: never). */
  readonly sessionIdleTimeoutMs: number;
  /** Largest POST body accepted; larger ones get 413 and the connection is closed. */
  readonly maxBodyBytes: number;
  /** Deepest nesting accepted in a request body (400 with -32600 beyond it). */
  readonly maxDepth: number;
  /** A request body must arrive whole within this many ms of the handler starting to read it (408 otherwise). */
  readonly bodyTimeoutMs: number;
  /** A server-to-client message with no related request waits this long for the client's GET stream (ms). */
  readonly standaloneStreamWaitMs: number;
  /** Messages waiting for the client's GET stream, per session; beyond it they fail (requests) or are dropped. */
  readonly maxStandaloneBacklog: number;
  /** Open TCP connections per server; more are closed at once. Keep it below the descriptor limit. */
  readonly maxConnections: number;
  /** Open TCP connections per remote address. */
  readonly maxConnectionsPerClient: number;
  /** The request line and headers must arrive within this many ms (Node's `headersTimeout`). */
  readonly headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this many ms (Node's `keepAliveTimeout`). */
  readonly keepAliveTimeoutMs: number;
}

export const DEFAULT_HTTP_LIMITS: HttpLimits = Object.freeze({
  maxSessions: 10_000,
  maxSessionsPerClient: 256,
  maxListenStreamsPerClient: 32,
  sessionIdleTimeoutMs: 10 * 60_000,
  maxBodyBytes: 4 * 1024 * 1024,
  maxDepth: DEFAULT_MAX_DEPTH,
  bodyTimeoutMs: 30_000,
  standaloneStreamWaitMs: 10_000,
  maxStandaloneBacklog: 1_000,
  maxConnections: 900,
  maxConnectionsPerClient: 64,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
});

/** The names of `HttpLimits`, for validating configs and copying options. */
export const HTTP_LIMIT_NAMES = Object.freeze(Object.keys(DEFAULT_HTTP_LIMITS)) as readonly (keyof HttpLimits)[];

/** `partial` completed with the defaults. */
export function httpLimits(partial: Partial<HttpLimits> = {}): HttpLimits {
  const limits: Record<string, number> = { ...DEFAULT_HTTP_LIMITS };
  for (const name of HTTP_LIMIT_NAMES) {
    const value = partial[name];
    if (value === undefined) continue;
    if (typeof value !== 'number' || Number.isNaN(value) || value <= 0) {
      throw new RangeError(`The HTTP limit ${name} must be a positive number of ${unitOf(name)}, got ${String(value)}`);
    }
    limits[name] = value;
  }
  return limits as unknown as HttpLimits;
}

function unitOf(name: keyof HttpLimits): string {
  if (name.endsWith('Ms')) return 'milliseconds';
  if (name === 'maxDepth') return 'levels';
  return name.endsWith('Bytes') ? 'bytes' : 'items';
}
