/**
 * The client's era probe (MCP 2026-07-28, `basic/versioning` and the stdio/HTTP back-compat rules): before
 * any handshake the client sends `server/discover` with the modern envelope, and what comes back decides
 * whether the connection speaks the stateless revision or falls back to `initialize`.
 *
 * Two parts: `classifyProbe`, a pure function from a normalized outcome to a verdict, and `probeOnce`, the
 * one exchange over a bare transport (before the connection attaches it, so the probe leaves nothing in the
 * connection's lifecycle or correlation table; given the connection's tracer, its request and answer, or
 * why none came, are trace events of the connection). The verdict rules (as the TS SDK v2's
 * `probeClassifier`):
 * - a `DiscoverResult` naming a revision we speak: modern; naming none of ours: handshake;
 * - `-32022` (UnsupportedProtocolVersion) whose `data.supported` names a revision we speak: one corrective
 *   probe with it; naming none: handshake;
 * - any other JSON-RPC error, whatever its code (handshake-era servers answer -32601, -32602, -32600...):
 *   handshake;
 * - HTTP 401/403: an error (authorization is needed, not another era); 5xx: an error; other 4xx without a
 *   JSON-RPC body: handshake (a 2024-11-05 server answers the POST 404 or 405);
 * - no answer in time: handshake over stdio (handshake-era servers may ignore requests before `initialize`),
 *   an error over HTTP; the transport ending: an error over stdio that names `era: 'handshake'`, an error
 *   elsewhere.
 */
import { isPlainObject } from '../jsonrpc/classify';
import type { Observer, Subscription } from 'rxjs';
import type { Transport } from '../core/transport';
import type { Clock } from '../core/clock';
import type { ConnectionTrace } from '../core/connection-trace';
import { ErrorCode, ProtocolViolationError, TransportError } from '../jsonrpc/errors';
import type { InboundFrame, JsonObject, JsonRpcRequest } from '../jsonrpc/types';

/** How a transport reaches its server, read from the start of its `eraKey` (`stdio:`, `http:`). */
export type ProbeChannel = 'stdio' | 'http' | 'other';

export function channelOf(eraKey: string | undefined): ProbeChannel {
  if (eraKey?.startsWith('stdio:')) return 'stdio';
  if (eraKey?.startsWith('http:') || eraKey?.startsWith('https:')) return 'http';
  return 'other';
}

/** What one probe exchange came to, normalized over transports. */
export type ProbeOutcome =
  | { readonly kind: 'result'; readonly result: unknown }
  | { readonly kind: 'rpc-error'; readonly code: number; readonly message: string; readonly data?: unknown }
  /** The HTTP transport failed the request with this status and no JSON-RPC body. */
  | { readonly kind: 'http-error'; readonly status: number; readonly error: Error }
  /** The request could not be sent or its exchange failed (network, refused connection). */
  | { readonly kind: 'failed'; readonly error: Error }
  | { readonly kind: 'timeout'; readonly afterMs: number }
  /** The transport ended (a stdio child exited) before the answer. */
  | { readonly kind: 'closed'; readonly error?: Error };

export type ProbeVerdict =
  | { readonly kind: 'modern'; readonly version: string; readonly discover: DiscoverInfo }
  | { readonly kind: 'corrective'; readonly version: string }
  | { readonly kind: 'handshake'; readonly reason: string }
  | { readonly kind: 'error'; readonly error: Error };

/** What a `DiscoverResult` tells the client, checked. */
export interface DiscoverInfo {
  readonly supportedVersions: readonly string[];
  readonly capabilities: Readonly<Record<string, unknown>>;
  readonly serverInfo: Readonly<Record<string, unknown>>;
  readonly instructions?: string;
}

/** The first of our revisions (newest first) that `theirs` lists too. */
export function mutualVersion(ours: readonly string[], theirs: unknown): string | undefined {
  if (!Array.isArray(theirs)) return undefined;
  return ours.find((version) => theirs.includes(version));
}

/** The verdict of one probe outcome; `ours` are the modern revisions we speak, newest first. */
export function classifyProbe(outcome: ProbeOutcome, ours: readonly string[], channel: ProbeChannel): ProbeVerdict {
  switch (outcome.kind) {
    case 'result':
      return classifyResult(outcome.result, ours);
    case 'rpc-error': {
      if (outcome.code !== ErrorCode.UnsupportedProtocolVersion)
        return handshake(`server/discover was answered with error ${outcome.code} (${outcome.message})`);
      const supported = isPlainObject(outcome.data) ? outcome.data.supported : undefined;
      const version = mutualVersion(ours, supported);
      return version === undefined
        ? handshake(`the server supports none of our stateless revisions (${JSON.stringify(supported)})`)
        : { kind: 'corrective', version };
    }
    case 'http-error':
      if (outcome.status === 401 || outcome.status === 403 || outcome.status >= 500)
        return { kind: 'error', error: outcome.error };
      return handshake(`server/discover got HTTP ${outcome.status} without a JSON-RPC answer`);
    case 'failed':
      return { kind: 'error', error: channel === 'stdio' ? closedDuringProbe(channel, outcome.error) : outcome.error };
    case 'timeout':
      return channel === 'stdio'
        ? handshake(`server/discover got no answer within ${outcome.afterMs} ms`)
        : {
            kind: 'error',
            error: new TransportError(
              `The server did not answer server/discover within ${outcome.afterMs} ms (the era probe); connect with era: 'handshake' to skip it`,
            ),
          };
    case 'closed':
      return { kind: 'error', error: closedDuringProbe(channel, outcome.error) };
  }
}

function classifyResult(result: unknown, ours: readonly string[]): ProbeVerdict {
  const discover = discoverInfoOf(result);
  if (!discover) return handshake('the answer to server/discover is not a DiscoverResult');
  const version = mutualVersion(ours, discover.supportedVersions);
  return version === undefined
    ? handshake(`the server's revisions (${discover.supportedVersions.join(', ')}) include none of ours`)
    : { kind: 'modern', version, discover };
}

/** The checked content of a `DiscoverResult`, or undefined when `result` is not one. */
export function discoverInfoOf(result: unknown): DiscoverInfo | undefined {
  if (!isPlainObject(result)) return undefined;
  const { supportedVersions, capabilities, instructions, _meta } = result;
  if (!Array.isArray(supportedVersions) || !supportedVersions.every((item) => typeof item === 'string'))
    return undefined;
  if (!isPlainObject(capabilities)) return undefined;
  const serverInfo = isPlainObject(_meta) ? _meta['io.modelcontextprotocol/serverInfo'] : undefined;
  return {
    supportedVersions,
    capabilities,
    serverInfo: isPlainObject(serverInfo) ? serverInfo : {},
    ...(typeof instructions === 'string' && { instructions }),
  };
}

function handshake(reason: string): ProbeVerdict {
  return { kind: 'handshake', reason };
}

function closedDuringProbe(channel: ProbeChannel, cause: Error | undefined): Error {
  const why = cause ? `: ${cause.message}` : '';
  const advice =
    channel === 'stdio'
      ? "; a handshake-era server that exits on requests it does not know needs era: 'handshake' (no probe)"
      : '';
  return new TransportError(`The transport ended during the era probe (server/discover)${why}${advice}`, { cause });
}

/** The error a forced modern connection fails with when the server turned out not to speak it. */
export function notModernError(reason: string): Error {
  return new ProtocolViolationError(
    `The server does not speak the stateless revision (era: 'modern' was asked for): ${reason}`,
  );
}

let probeCount = 0;

/** The `server/discover` request of a probe, under an id of the probe's own (never the connection's). */
export function discoverRequest(meta: JsonObject): JsonRpcRequest {
  return {
    jsonrpc: '2.0',
    id: `switchboard-era-probe-${++probeCount}`,
    method: 'server/discover',
    params: { _meta: meta },
  };
}

/** The name of the probe's part lifecycle on its connection's trace (`TraceEvent.actor`). */
export const ERA_PROBE_ACTOR = 'era-probe';

/** The probe's verdict (or a reconnection's) as a lifecycle event of the `era-probe` part, when someone traces. */
export function traceProbeVerdict(trace: ConnectionTrace | undefined, from: string, to: string, reason: string): void {
  if (trace?.on) trace.partLifecycle(ERA_PROBE_ACTOR, from, to, reason);
}

/**
 * Sends `request` over a transport nobody consumes yet and waits for its answer, at most `timeoutMs`. The
 * transport is started (idempotently: `Connection.attach` starts it again) and its `messages` are released
 * at the end, so the connection can subscribe next. Other frames that arrive meanwhile are dropped: a
 * server sends nothing before it is addressed. With `trace` (the connection's tracer), the request and its
 * answer are traced as the connection's, and an exchange that got no answer ends with an `error` event
 * without a message whose `reason` says why.
 */
export function probeOnce(
  transport: Transport,
  request: JsonRpcRequest,
  timeoutMs: number,
  clock: Clock,
  trace?: ConnectionTrace,
): Promise<ProbeOutcome> {
  return new Promise<ProbeOutcome>(
    (resolve) => new ProbeExchange(transport, request, timeoutMs, clock, resolve, trace?.on ? trace : undefined),
  );
}

/**
 * One probe in flight: the observer of the transport's frames (its own methods rather than closures: every
 * connection in the stateless revision makes one), its timer and its send.
 */
class ProbeExchange implements Observer<InboundFrame> {
  private settled = false;
  /** Undefined while `subscribe` runs (a transport that already ended completes at once). */
  private readonly subscription: Subscription | undefined;
  private readonly timer: unknown;
  /** When the request was traced as sent (tracing only). */
  private readonly sentAt: number = 0;

  constructor(
    transport: Transport,
    private readonly request: JsonRpcRequest,
    timeoutMs: number,
    private readonly clock: Clock,
    private readonly resolve: (outcome: ProbeOutcome) => void,
    /** The connection's tracer, when someone traced as the probe started. */
    private readonly trace: ConnectionTrace | undefined,
  ) {
    if (trace) {
      this.sentAt = clock.now();
      trace.message('request', 'out', request, request.method, request.id);
    }
    this.timer = clock.setTimeout(() => this.finish({ kind: 'timeout', afterMs: timeoutMs }), timeoutMs);
    const subscription = (this.subscription = transport.messages.subscribe(this));
    if (this.settled) {
      subscription.unsubscribe();
      return;
    }
    const started = transport.start ? transport.start() : Promise.resolve();
    started.then(() => transport.send(request)).then(undefined, (error: unknown) => this.finish(failureOutcome(error)));
  }

  next(frame: InboundFrame): void {
    const outcome = answerIn(frame, this.request.id);
    if (outcome) this.finish(outcome, frame);
  }

  error(error: unknown): void {
    this.finish({ kind: 'closed', error: asError(error) });
  }

  complete(): void {
    this.finish({ kind: 'closed' });
  }

  private finish(outcome: ProbeOutcome, frame?: InboundFrame): void {
    if (this.settled) return;
    this.settled = true;
    this.clock.clearTimeout(this.timer);
    // At once: later frames wait in the transport for the connection.
    this.subscription?.unsubscribe();
    if (this.trace) this.traceOutcome(this.trace, outcome, frame);
    this.resolve(outcome);
  }

  /** The answer in, or (no JSON-RPC answer came) an `error` event without a message that says why. */
  private traceOutcome(trace: ConnectionTrace, outcome: ProbeOutcome, frame: InboundFrame | undefined): void {
    const { method, id } = this.request;
    const latencyMs = this.clock.now() - this.sentAt;
    if (outcome.kind === 'result' || outcome.kind === 'rpc-error') {
      trace.message(outcome.kind === 'result' ? 'result' : 'error', 'in', frame, method, id, undefined, latencyMs);
    } else {
      trace.message('error', 'in', undefined, method, id, `no JSON-RPC answer: ${noAnswer(outcome)}`, latencyMs);
    }
  }
}

/** Why an exchange got no JSON-RPC answer, in words. */
function noAnswer(outcome: Exclude<ProbeOutcome, { kind: 'result' | 'rpc-error' }>): string {
  switch (outcome.kind) {
    case 'http-error':
      return `HTTP ${outcome.status} without a JSON-RPC body`;
    case 'failed':
      return `the request failed (${outcome.error.message})`;
    case 'timeout':
      return `none within ${outcome.afterMs} ms`;
    case 'closed':
      return outcome.error ? `the transport ended (${outcome.error.message})` : 'the transport ended';
  }
}

/** The probe's answer in `frame`, if it is there. */
function answerIn(frame: InboundFrame, id: JsonRpcRequest['id']): ProbeOutcome | undefined {
  if (Array.isArray(frame) || !isPlainObject(frame) || frame.id !== id) return undefined;
  if ('result' in frame) return { kind: 'result', result: frame.result };
  const error = frame.error;
  if (!isPlainObject(error)) return undefined;
  return {
    kind: 'rpc-error',
    code: typeof error.code === 'number' ? error.code : Number.NaN,
    message: typeof error.message === 'string' ? error.message : '',
    data: error.data,
  };
}

/** A failed send: an HTTP status when the transport says which (`httpStatus`), else a plain failure. */
function failureOutcome(error: unknown): ProbeOutcome {
  const failure = asError(error);
  const status = (failure as { httpStatus?: unknown }).httpStatus;
  return typeof status === 'number'
    ? { kind: 'http-error', status, error: failure }
    : { kind: 'failed', error: failure };
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
