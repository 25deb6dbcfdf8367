import { CapabilityNotSupportedError } from '../jsonrpc/errors';
import { hasCapability } from '../protocol/capabilities';
import { isAtLeast, type ProtocolVersion } from '../protocol/versions';
import type {
  CreateMessageParams,
  CreateMessageResult,
  ElicitParams,
  ElicitResult,
  Root,
} from '../protocol/client-features';
import { isRequestId } from '../jsonrpc/classify';
import type { JsonObject, RequestId } from '../jsonrpc/types';
import type { RequestOptions } from './correlation';
import type { LoggingLevel, Meta } from '../protocol/types';
import type { BatchReply } from './batch';
import type { Clock } from './clock';
import type { Logger } from './logger';
import type { RequestSpan } from '../trace/instrumentation';
import type { TransportSendOptions } from './transport';
import type { AnswerShape } from './answer-shape';

/**
 * Options of a request for input from the client (`elicit`, `createMessage`, `listRoots`). On a modern
 * (2026-07-28) request an input becomes an entry of an `input_required` result, named by `key`: the retried
 * request's `inputResponses` answer it under the same key. The default key is the kind and its rank in the
 * handler's run (`elicitation-1`, `sampling-1`, `roots-1`), stable as long as the handler asks in the same
 * order each time it runs. A handshake-era session ignores the key: the input is a request to the client.
 */
export interface InputRequestOptions extends RequestOptions {
  readonly key?: string;
}

/**
 * Who sent a request, as the transport that authenticated it established (an OAuth access token on HTTP;
 * lib/auth/server makes it). Transports without authentication (stdio, in-memory) have none.
 */
export interface Principal {
  /** Stable for one caller: what sessions and sealed `requestState` are bound to (issuer and subject, or client id). */
  readonly id: string;
  readonly subject?: string;
  readonly clientId?: string;
  readonly issuer?: string;
  /** The scopes the token grants. */
  readonly scopes: readonly string[];
  /** When the token stops being valid, in epoch milliseconds. */
  readonly expiresAt?: number;
  /** The token's claims (or the introspection answer's members). */
  readonly claims: Readonly<Record<string, unknown>>;
  /** The raw access token, only when the resource server was told to expose it (`exposeToken`). */
  readonly token?: string;
}

/**
 * The principal of each authenticated request, keyed by the request's `params` object: the transport that
 * checked the request's token attaches it, and the request's context reads it, with no member added on every
 * layer between (connection, router, exchange). Weak, so a request's entry goes with its params.
 */
const principals = new WeakMap<object, Principal>();

/** @internal A transport authenticated the request whose params are `params` as `principal`. */
export function attachPrincipal(params: object, principal: Principal): void {
  principals.set(params, principal);
}

/** @internal The principal a transport attached to these request params, if any. */
export function principalOf(params: unknown): Principal | undefined {
  return typeof params === 'object' && params !== null ? principals.get(params) : undefined;
}

/** Which protocol era a request came in: a handshake-era session (`handshake`) or the stateless revision (`modern`). */
export type Era = 'handshake' | 'modern';

/** What a `RequestContext` uses of the connection it serves a request on (a connection implements it). */
export interface RequestHost {
  /** `modern` for the stateless revision's requests; absent on connections of the handshake era. */
  readonly era?: Era;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly protocolVersion: string | undefined;
  readonly peerCapabilities: Readonly<Record<string, unknown>> | undefined;
  /** Whether `notifications/progress` may carry `message` (since 2025-03-26). */
  readonly supportsProgressMessage: boolean;
  request(method: string, params?: JsonObject, options?: RequestOptions & TransportSendOptions): Promise<JsonObject>;
  notify(method: string, params?: JsonObject, options?: TransportSendOptions): Promise<void>;
  log(level: LoggingLevel, data: unknown, logger?: string, relatedRequestId?: RequestId): Promise<void>;
  /** How a handler ends the stream carrying request `id`, when the transport can (`Transport.closeStream`). */
  streamCloser(id: RequestId): (() => Promise<boolean>) | undefined;
  /** @internal How this era writes answers (lib/core/handler-run.ts); the handshake era's when absent. */
  readonly answers?: AnswerShape;
}

type CancelHook = (reason: Error) => void;

const RUNNING = 0;
const FINISHED = 1;
const CANCELLED = 2;

/**
 * What a request handler gets besides its params: cancellation, progress, logging, requests back to the
 * peer tied to this request, and what was negotiated. One object per inbound request; it is also the
 * record of that request while it is in flight (so `notifications/cancelled` can find it).
 */
export class RequestContext<H extends RequestHost = RequestHost> {
  /** @internal The last progress notification's send, once this request sent one: the reply waits for it. */
  progressSent: Promise<void> | undefined = undefined;
  private phase: typeof RUNNING | typeof FINISHED | typeof CANCELLED = RUNNING;
  private controller: AbortController | undefined;
  /** `onCancel` callbacks: none, one, or a list (most requests have none). */
  private cancelHooks: CancelHook | CancelHook[] | undefined;
  private whyCancelled: Error | undefined;
  private lastProgress = -Infinity;

  /** @internal Made by the connection's inbound requests (inbound-requests.ts) or a stateless request; ended by its run (handler-run.ts). */
  constructor(
    readonly connection: H,
    readonly id: RequestId,
    readonly method: string,
    readonly params: JsonObject | undefined,
    /** @internal When the request arrived (0 unless traced): its response's latency is measured from it. */
    readonly startedAt: number,
    /** @internal The batch this request arrived in, if any: its response joins the batch reply. */
    readonly batch: BatchReply | undefined,
    /** @internal This request's span, when the runtime has an instrumentation. */
    readonly traceSpan: RequestSpan | undefined,
  ) {}

  /** Whether the peer cancelled the request (or the connection closed first): its response will not be sent. */
  get cancelled(): boolean {
    return this.phase === CANCELLED;
  }

  /** @internal Why the request was cancelled, once it was. */
  get cancelReason(): Error | undefined {
    return this.whyCancelled;
  }

  /** Whether the request has ended: its handler finished, or it was cancelled. */
  get done(): boolean {
    return this.phase !== RUNNING;
  }

  /** Aborted when the peer cancels the request or the connection closes. Created on first use. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.phase === CANCELLED) this.controller.abort(this.whyCancelled);
    }
    return this.controller.signal;
  }

  /**
   * Calls `hook` once when the peer cancels this request or the connection closes before it ends (at once
   * when that already happened; never once the request has ended otherwise). Costs no `AbortController`.
   * Returns a function that removes the hook.
   */
  onCancel(hook: (reason: Error) => void): () => void {
    if (this.phase === CANCELLED) {
      this.runCancelHook(hook, this.whyCancelled!);
      return noop;
    }
    if (this.phase === FINISHED) return noop;
    const hooks = this.cancelHooks;
    this.cancelHooks = hooks === undefined ? hook : Array.isArray(hooks) ? (hooks.push(hook), hooks) : [hooks, hook];
    return () => this.removeCancelHook(hook);
  }

  get _meta(): Meta | undefined {
    return this.params?._meta as Meta | undefined;
  }

  get progressToken(): RequestId | undefined {
    const token = this._meta?.progressToken;
    return isRequestId(token) ? token : undefined;
  }

  get protocolVersion(): string | undefined {
    return this.connection.protocolVersion;
  }

  /**
   * The era this request came in. A handler written with `elicit`, `createMessage` and `listRoots` works
   * in both (see `InputRequestOptions`); it need read this only to behave differently on purpose.
   */
  get era(): Era {
    return this.connection.era ?? 'handshake';
  }

  /**
   * Who sent the request, when its transport authenticated it (HTTP with the `auth` option): the token's
   * subject, client, scopes and claims. Undefined on transports without authentication.
   */
  get auth(): Principal | undefined {
    return principalOf(this.params);
  }

  /** What the peer declared at initialization. */
  get peerCapabilities(): Readonly<Record<string, unknown>> | undefined {
    return this.connection.peerCapabilities;
  }

  /**
   * Reports progress to the requester. Never fails the request: a report that may not be sent is dropped
   * and the returned promise resolves, with a log line when the requester sent no progress token (debug: a
   * handler need not know whether it was asked) or when `progress` does not increase on the last value sent
   * (warn: the protocol requires it to increase), silently once the request has finished. Every notification
   * sent reaches the requester before the request's response, even an SDK v1 client, which drops progress
   * read together with its result (see `ConnectionOptions.progressReplyDelayMs`). The promise rejects only
   * when the connection fails to send the notification.
   */
  progress(progress: number, total?: number, message?: string): Promise<void> {
    const progressToken = this.progressToken;
    if (progressToken === undefined) {
      this.connection.logger.debug(`${this.method}: progress dropped: the requester sent no progress token`);
      return Promise.resolve();
    }
    if (this.done) return Promise.resolve();
    if (!(progress > this.lastProgress)) {
      this.connection.logger.warn(
        `${this.method}: progress ${progress} dropped: progress must increase (the last sent was ${this.lastProgress})`,
      );
      return Promise.resolve();
    }
    this.lastProgress = progress;
    this.traceSpan?.progress({ progress, total, message }, this.connection.clock.now());
    const sent = this.connection.notify(
      'notifications/progress',
      {
        progressToken,
        progress,
        ...(total !== undefined && { total }),
        ...(message !== undefined && this.connection.supportsProgressMessage && { message }),
      },
      { relatedRequestId: this.id },
    );
    this.progressSent = sent;
    return sent;
  }

  /**
   * Ends the HTTP response carrying this request's messages while the request goes on (SSE polling): the
   * client reconnects (GET + Last-Event-ID) and gets what follows, the response included, there. Present
   * only when the transport has such streams; resolves false when this request's cannot be resumed (a
   * JSON response, or a client older than 2025-11-25).
   */
  get closeStream(): (() => Promise<boolean>) | undefined {
    return this.connection.streamCloser(this.id);
  }

  /** Logs to the peer (a server's `notifications/message`, filtered by the client's level) or locally. */
  log(level: LoggingLevel, data: unknown, logger?: string): Promise<void> {
    return this.connection.log(level, data, logger, this.id);
  }

  /**
   * Sends a request to the peer as part of this request (a server's sampling, elicitation or roots call):
   * it travels with this request (`relatedRequestId`) and is cancelled when this request is.
   */
  request(method: string, params?: JsonObject, options?: InputRequestOptions): Promise<JsonObject> {
    // A modern request's asks become an input_required round: nothing is sent that a signal could cancel.
    if (this.connection.era === 'modern') return this.connection.request(method, params, options);
    return this.connection.request(method, params, {
      ...options,
      signal: options?.signal ?? this.signal,
      relatedRequestId: this.id,
    });
  }

  /**
   * Asks the client's model for a completion (`sampling/createMessage`), as part of this request. Fails
   * fast when the client did not declare sampling, or `sampling.tools` for a request that offers tools.
   */
  createMessage(params: CreateMessageParams, options?: InputRequestOptions): Promise<CreateMessageResult> {
    const offersTools = params.tools !== undefined || params.toolChoice !== undefined;
    if (offersTools && !this.negotiatedAtLeast('2025-11-25')) {
      return refuse(
        'sampling/createMessage',
        `Tools in sampling need protocol version 2025-11-25; ${this.protocolVersion} was negotiated`,
      );
    }
    if (offersTools && !hasCapability(this.peerCapabilities, ['sampling', 'tools'])) {
      return refuse(
        'sampling/createMessage',
        'The client did not declare sampling.tools, so tools cannot be offered to its model',
      );
    }
    return this.request(
      'sampling/createMessage',
      params as unknown as JsonObject,
      options,
    ) as Promise<unknown> as Promise<CreateMessageResult>;
  }

  /**
   * Asks the user through the client (`elicitation/create`), as part of this request. Fails fast when the
   * client did not declare elicitation, or the mode asked for (`elicitation: {}` means form only).
   */
  elicit(params: ElicitParams, options?: InputRequestOptions): Promise<ElicitResult> {
    const elicitation = this.peerCapabilities?.elicitation as { form?: object; url?: object } | undefined;
    const url = params.mode === 'url';
    if (url && !this.negotiatedAtLeast('2025-11-25')) {
      return refuse(
        'elicitation/create',
        `URL-mode elicitation needs protocol version 2025-11-25; ${this.protocolVersion} was negotiated`,
      );
    }
    const declared = url ? !!elicitation?.url : !!elicitation && (!!elicitation.form || !elicitation.url);
    if (elicitation && !declared) {
      return refuse('elicitation/create', `The client did not declare elicitation.${url ? 'url' : 'form'}`);
    }
    return this.request(
      'elicitation/create',
      params as unknown as JsonObject,
      options,
    ) as Promise<unknown> as Promise<ElicitResult>;
  }

  /** The client's roots (`roots/list`), as part of this request. */
  listRoots(options?: InputRequestOptions): Promise<readonly Root[]> {
    return this.request('roots/list', undefined, options).then(
      (result) => (result as { roots: readonly Root[] }).roots,
    );
  }

  notify(method: string, params?: JsonObject): Promise<void> {
    return this.connection.notify(method, params, { relatedRequestId: this.id });
  }

  private negotiatedAtLeast(version: ProtocolVersion): boolean {
    const negotiated = this.protocolVersion;
    return negotiated !== undefined && isAtLeast(negotiated, version);
  }

  /** @internal The handler finished: false when it was cancelled first (its answer must not be sent). */
  finish(): boolean {
    if (this.phase === CANCELLED) return false;
    this.phase = FINISHED;
    this.cancelHooks = undefined;
    return true;
  }

  /** @internal The peer cancelled, or the connection closed, before the handler finished. */
  cancel(reason: Error): void {
    if (this.phase !== RUNNING) return;
    this.phase = CANCELLED;
    this.whyCancelled = reason;
    this.traceSpan?.end({ kind: 'error', error: reason }, this.connection.clock.now());
    this.controller?.abort(reason);
    const hooks = this.cancelHooks;
    if (hooks === undefined) return;
    this.cancelHooks = undefined;
    if (Array.isArray(hooks)) for (const hook of hooks) this.runCancelHook(hook, reason);
    else this.runCancelHook(hooks, reason);
  }

  private runCancelHook(hook: CancelHook, reason: Error): void {
    try {
      hook(reason);
    } catch (error) {
      this.connection.logger.error(`${this.method}: an onCancel callback threw`, error);
    }
  }

  private removeCancelHook(hook: CancelHook): void {
    const hooks = this.cancelHooks;
    if (hooks === hook) this.cancelHooks = undefined;
    else if (Array.isArray(hooks)) {
      const index = hooks.indexOf(hook);
      if (index >= 0) hooks.splice(index, 1);
    }
  }
}

function noop(): void {}

function refuse(method: string, message: string): Promise<never> {
  return Promise.reject(new CapabilityNotSupportedError(method, message));
}
