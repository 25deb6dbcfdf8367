/**
 * The transport a client with a reconnect policy attaches (lib/client/reconnect-policy.ts): one link that
 * outlives the transports behind it, so the connection (which takes one transport, once) and everything
 * built on it (its lifecycle, correlation table, `notifications$`, subscriptions) carry on across
 * reconnections.
 *
 * Until `arm()` (the first connect succeeded) it only passes frames through: a first connect fails as
 * without a policy. Once armed, when the transport behind it ends the link does not end: the requests in
 * flight fail with a `ReconnectingError` (they are not sent again: the server may have run them), and it
 * backs off, makes a new transport, has the client redo the handshake or the probe over it, and carries on
 * with it, sending what was held meanwhile. After `maxAttempts` failures in a row it ends with a
 * `TransportError` saying so, which closes the connection. `close()` stops it at once, mid back-off too.
 */
import { Observable, type Subscriber, type Subscription } from 'rxjs';
import type { Clock } from '../core/clock';
import type { Transport, TransportSendOptions } from '../core/transport';
import { TransportError } from '../jsonrpc/errors';
import type { InboundFrame, JsonRpcBatch, JsonRpcMessage, RequestId } from '../jsonrpc/types';
import type { TracedNetwork } from '../trace/instrumentation';
import { reconnectDelay, ReconnectingError, type ReconnectPolicy } from './reconnect-policy';

/** One step of a reconnection, as the client reports it (events and trace). */
export type ReconnectStep =
  /** The connection was lost (or an attempt failed): attempt `attempt` starts after `delayMs`. */
  | { readonly type: 'reconnecting'; readonly attempt: number; readonly delayMs: number; readonly reason: string }
  /** Attempt `attempt` is making its transport and redoing the handshake or the probe. */
  | { readonly type: 'reopening'; readonly attempt: number }
  /** Attempt `attempt` succeeded: the client is connected again. */
  | { readonly type: 'reconnected'; readonly attempt: number }
  /** Attempt `attempt` failed; `final` when it was the last one the policy allows (the client then closes). */
  | { readonly type: 'reconnectFailed'; readonly attempt: number; readonly error: Error; readonly final: boolean };

/** What the link needs of its client. */
export interface LinkHost {
  readonly clock: Clock;
  /**
   * Redoes the handshake (or the era probe) over `transport`, which nobody reads yet, within `timeoutMs`;
   * rejects when the server cannot be used (another revision, no answer).
   */
  reopen(transport: Transport, timeoutMs: number): Promise<void>;
  report(step: ReconnectStep): void;
  /** The transport behind the link ended: what the old server asked of the client is void. */
  lost(reason: string): void;
  /** The link carries on over a new transport (after the `reconnected` report). */
  reconnected(): void;
}

/** A message sent or held that the link settles itself: a request until its response, a held notification until sent. */
interface Awaited {
  readonly method: string | undefined;
  resolve(): void;
  reject(error: Error): void;
}

interface Held {
  readonly message: JsonRpcMessage;
  readonly options: TransportSendOptions | undefined;
  /** A held notification's send; a held request's is in `awaiting`. */
  readonly sent?: Awaited;
}

/** Notifications held while reconnecting, at most (requests are bounded by the connection's `maxPendingRequests`). */
const MAX_HELD_NOTIFICATIONS = 1_000;

export class ReconnectingLink implements Transport {
  readonly messages: Observable<InboundFrame>;
  readonly eraKey: string | undefined;
  private current: Transport;
  /** The transport of the attempt under way, until it is adopted or closed. */
  private attempting: Transport | undefined;
  private inner: Subscription | undefined;
  private sink: Subscriber<InboundFrame> | undefined;
  private armed = false;
  private phase: 'open' | 'reconnecting' | 'closed' = 'open';
  /** Requests sent (or held) and not yet answered, by id: their `send()` settles with their answer. */
  private readonly awaiting = new Map<RequestId, Awaited>();
  private held: Held[] = [];
  private heldNotifications = 0;
  private version: string | undefined;
  private backoffTimer: unknown;
  private wake: ((go: boolean) => void) | undefined;
  /** Transports being closed: `close()` resolves once they are. */
  private readonly retiring = new Set<Promise<void>>();
  private closing: Promise<void> | undefined;

  constructor(
    first: Transport,
    private readonly policy: ReconnectPolicy,
    private readonly host: LinkHost,
  ) {
    this.current = first;
    this.eraKey = first.eraKey;
    this.messages = new Observable<InboundFrame>((subscriber) => {
      this.sink = subscriber;
      this.follow();
      return () => {
        if (this.sink !== subscriber) return;
        this.sink = undefined;
        this.unfollow();
      };
    });
  }

  get sessionId(): string | undefined {
    return this.current.sessionId;
  }

  get network(): TracedNetwork | undefined {
    return this.current.network;
  }

  /** True between losing a transport and carrying on over a new one. */
  get reconnecting(): boolean {
    return this.phase === 'reconnecting';
  }

  /** The first connect succeeded: from now on a lost transport is reconnected. */
  arm(): void {
    this.armed = true;
  }

  start(): Promise<void> {
    return this.current.start?.() ?? Promise.resolve();
  }

  setProtocolVersion(version: string): void {
    this.version = version;
    this.current.setProtocolVersion?.(version);
  }

  send(message: JsonRpcMessage | JsonRpcBatch, options?: TransportSendOptions): Promise<void> {
    if (this.phase === 'closed') return Promise.reject(new TransportError('The transport is closed'));
    // A batch (our answers to a batch the server sent) goes as it is: its requests are not tracked.
    if (isBatch(message)) return this.current.send(message, options);
    if (this.phase === 'reconnecting') return this.hold(message, options);
    const cancelled = cancelledRequestId(message);
    if (cancelled !== undefined) this.settle(cancelled);
    return this.forward(message, options);
  }

  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.phase = 'closed';
    this.stopBackoff();
    // The connection fails its own requests as it closes: what the link still holds just ends.
    for (const [id] of this.awaiting) this.settle(id);
    for (const entry of this.held) entry.sent?.resolve();
    this.held = [];
    const closes = [this.current.close(), ...this.retiring];
    if (this.attempting) closes.push(this.attempting.close());
    this.closing = Promise.all(closes.map((closed) => closed.catch(() => undefined))).then(() => undefined);
    return this.closing;
  }

  // ---- the transport behind the link --------------------------------------------------------------

  private follow(): void {
    const transport = this.current;
    const inner = transport.messages.subscribe({
      next: (frame) => this.deliver(frame),
      error: (error: unknown) => this.ended(transport, error),
      complete: () => this.ended(transport, undefined),
    });
    if (this.current === transport && !inner.closed) this.inner = inner;
  }

  private unfollow(): void {
    const inner = this.inner;
    this.inner = undefined;
    inner?.unsubscribe();
  }

  private deliver(frame: InboundFrame): void {
    if (this.awaiting.size > 0) {
      if (Array.isArray(frame)) for (const item of frame) this.settle(responseIdOf(item));
      else this.settle(responseIdOf(frame));
    }
    this.sink?.next(frame);
  }

  private ended(transport: Transport, error: unknown): void {
    if (transport !== this.current) return;
    this.inner = undefined;
    if (!this.armed || this.phase === 'closed') {
      if (error === undefined) this.sink?.complete();
      else this.sink?.error(error);
      return;
    }
    if (this.phase !== 'open') return;
    const reason = error === undefined ? 'the transport closed' : `the transport failed: ${messageOf(error)}`;
    this.phase = 'reconnecting';
    this.retire(transport);
    for (const [id, request] of this.awaiting) {
      this.awaiting.delete(id);
      request.reject(
        new ReconnectingError(
          `The connection to the server was lost (${reason}) while ${request.method ?? 'a request'} was in flight: it is not sent again`,
        ),
      );
    }
    this.host.lost(reason);
    void this.reconnect(reason);
  }

  // ---- reconnecting ---------------------------------------------------------------------------------

  private async reconnect(reason: string): Promise<void> {
    const { policy, host } = this;
    let lastError: Error | undefined;
    for (let attempt = 1; attempt <= policy.maxAttempts; attempt++) {
      const delayMs = reconnectDelay(policy, attempt);
      host.report({ type: 'reconnecting', attempt, delayMs, reason });
      if (!(await this.backoff(delayMs))) return;
      host.report({ type: 'reopening', attempt });
      try {
        const transport = await this.reopen();
        if (this.phase === 'closed') return;
        return this.resume(transport, attempt);
      } catch (error) {
        if (this.phase === 'closed') return;
        lastError = error instanceof Error ? error : new Error(String(error));
        host.report({ type: 'reconnectFailed', attempt, error: lastError, final: attempt >= policy.maxAttempts });
        reason = `attempt ${attempt} failed: ${lastError.message}`;
      }
    }
    this.giveUp(lastError);
  }

  /** Resolves true after `delayMs`, false when the link closed meanwhile. */
  private backoff(delayMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.backoffTimer = this.host.clock.setTimeout(() => {
        this.backoffTimer = this.wake = undefined;
        resolve(true);
      }, delayMs);
    });
  }

  private stopBackoff(): void {
    if (this.backoffTimer !== undefined) this.host.clock.clearTimeout(this.backoffTimer);
    const wake = this.wake;
    this.backoffTimer = this.wake = undefined;
    wake?.(false);
  }

  /** One attempt's transport, made and reopened; closed again when that fails. */
  private async reopen(): Promise<Transport> {
    const transport = await this.policy.transport();
    if (this.phase === 'closed') {
      this.retire(transport);
      return transport;
    }
    this.attempting = transport;
    try {
      await this.host.reopen(transport, this.policy.attemptTimeoutMs);
      return transport;
    } catch (error) {
      this.retire(transport);
      throw error;
    } finally {
      this.attempting = undefined;
    }
  }

  private resume(transport: Transport, attempt: number): void {
    this.current = transport;
    if (this.version !== undefined) transport.setProtocolVersion?.(this.version);
    this.phase = 'open';
    if (this.sink) this.follow();
    // A transport that ended as it was followed has started the next reconnection: what is held waits for it.
    if (this.phase !== 'open') return;
    const held = this.held;
    this.held = [];
    this.heldNotifications = 0;
    this.host.report({ type: 'reconnected', attempt });
    for (const entry of held) {
      const sent = this.forward(entry.message, entry.options);
      if (entry.sent) sent.then(entry.sent.resolve, entry.sent.reject);
      else sent.catch(() => undefined); // a held request's send is settled through `awaiting`
    }
    this.host.reconnected();
  }

  private giveUp(lastError: Error | undefined): void {
    this.phase = 'closed';
    const attempts = this.policy.maxAttempts;
    const error = new TransportError(
      `Gave up reconnecting after ${attempts} attempt${attempts === 1 ? '' : 's'}: ${lastError?.message ?? 'no attempt was made'}`,
      { cause: lastError },
    );
    for (const [id, request] of this.awaiting) {
      this.awaiting.delete(id);
      request.reject(error);
    }
    for (const entry of this.held) entry.sent?.reject(error);
    this.held = [];
    this.sink?.error(error);
  }

  // ---- sending ----------------------------------------------------------------------------------------

  /**
   * Sends over the current transport. A request's `send()` settles with its answer, or fails when its
   * transport is lost first; a held request already waits in `awaiting`, where its first `send()` settles.
   */
  private forward(message: JsonRpcMessage, options: TransportSendOptions | undefined): Promise<void> {
    const sent = this.current.send(message, options);
    const id = requestIdOf(message);
    if (id === undefined) return sent;
    let request = this.awaiting.get(id);
    let answered: Promise<void> | undefined;
    if (!request) {
      const method = (message as { method: string }).method;
      answered = new Promise<void>((resolve, reject) => (request = { method, resolve, reject }));
      this.awaiting.set(id, request!);
    }
    sent.then(undefined, (error: unknown) => {
      if (this.awaiting.get(id) !== request) return;
      this.awaiting.delete(id);
      request!.reject(error instanceof Error ? error : new TransportError(String(error)));
    });
    return answered ?? sent;
  }

  /** A message sent while reconnecting: held until the link is back, or refused at once (`whileReconnecting: 'fail'`). */
  private hold(message: JsonRpcMessage, options: TransportSendOptions | undefined): Promise<void> {
    const method = (message as { method?: unknown }).method;
    // An answer to the server that asked is pointless: that server is gone.
    if (typeof method !== 'string') return Promise.resolve();
    const cancelled = cancelledRequestId(message);
    if (cancelled !== undefined) {
      // A held request given up on (its timeout, its signal) is dropped before it is ever sent.
      const before = this.held.length;
      this.held = this.held.filter((entry) => requestIdOf(entry.message) !== cancelled);
      this.settle(cancelled);
      if (this.held.length < before) return Promise.resolve();
    }
    if (this.policy.whileReconnecting === 'fail') {
      return Promise.reject(
        new ReconnectingError(
          `Cannot send ${method}: the client is reconnecting to the server (reconnect.whileReconnecting is 'fail')`,
        ),
      );
    }
    const id = requestIdOf(message);
    if (id === undefined && this.heldNotifications >= MAX_HELD_NOTIFICATIONS) {
      return Promise.reject(
        new ReconnectingError(
          `Cannot send ${method}: ${MAX_HELD_NOTIFICATIONS} notifications already wait for the reconnection`,
        ),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const awaited: Awaited = { method, resolve, reject };
      if (id !== undefined) {
        this.awaiting.set(id, awaited);
        this.held.push({ message, options });
      } else {
        this.heldNotifications++;
        this.held.push({ message, options, sent: awaited });
      }
    });
  }

  /** Request `id` is answered or given up on: its `send()` resolves. */
  private settle(id: RequestId | undefined): void {
    if (id === undefined) return;
    const request = this.awaiting.get(id);
    if (!request) return;
    this.awaiting.delete(id);
    request.resolve();
  }

  private retire(transport: Transport): void {
    const closing = transport.close().catch(() => undefined);
    this.retiring.add(closing);
    void closing.then(() => this.retiring.delete(closing));
  }
}

function isBatch(message: JsonRpcMessage | JsonRpcBatch): message is JsonRpcBatch {
  return Array.isArray(message);
}

function requestIdOf(message: JsonRpcMessage): RequestId | undefined {
  const { id, method } = message as { id?: RequestId; method?: unknown };
  return typeof method === 'string' && id !== undefined && id !== null ? id : undefined;
}

function responseIdOf(frame: unknown): RequestId | undefined {
  if (typeof frame !== 'object' || frame === null || 'method' in frame) return undefined;
  const id = (frame as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

function cancelledRequestId(message: JsonRpcMessage): RequestId | undefined {
  const { method, params } = message as { method?: unknown; params?: { requestId?: RequestId } };
  return method === 'notifications/cancelled' ? params?.requestId : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
