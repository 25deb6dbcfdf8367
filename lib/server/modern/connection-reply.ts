/**
 * The way back of a modern (2026-07-28) request on a duplex connection (stdio, WebSocket, in memory): the
 * connection's own transport, the answer and the notifications tagged with the request's id. The connection
 * keeps the replies of its requests in flight, so `notifications/cancelled` and its close reach them.
 */
import type { ExchangeReply } from '../../core/exchange';
import type { AnsweredRequest } from '../../core/connection';
import type { TransportSendOptions } from '../../core/transport';
import type { JsonRpcMessage, JsonRpcNotification, JsonRpcResponse, RequestId } from '../../jsonrpc/types';

/** What the reply uses of its connection. */
export interface ReplyChannel {
  /** Sends `message`; `answering` names the request a response answers (for its trace event). */
  send(message: JsonRpcMessage, options?: TransportSendOptions, answering?: AnsweredRequest): Promise<void>;
  /** The request is over (answered or aborted): the connection forgets it. */
  settled(id: RequestId): void;
}

/**
 * One per modern request on the connection; it is also the request's record for the trace (`AnsweredRequest`)
 * and the send options of its messages (`relatedRequestId`), so a request costs one object here.
 */
export class ConnectionExchangeReply implements ExchangeReply, AnsweredRequest, TransportSendOptions {
  readonly traced = true;
  readonly relatedRequestId: RequestId;
  private done = false;
  private abortHooks: ((reason: Error) => void)[] | undefined;
  private abortReason: Error | undefined;

  constructor(
    private readonly channel: ReplyChannel,
    readonly id: RequestId,
    readonly method: string,
    /** The clock's time when the request arrived. */
    readonly startedAt: number,
  ) {
    this.relatedRequestId = id;
  }

  notify(message: JsonRpcNotification): Promise<void> {
    if (this.done) return Promise.resolve();
    return this.channel.send(message, this);
  }

  answer(message: JsonRpcResponse): Promise<void> {
    if (this.done) return Promise.resolve();
    this.done = true;
    this.abortHooks = undefined;
    this.channel.settled(this.id);
    return this.channel.send(message, this, this);
  }

  onAbort(hook: (reason: Error) => void): void {
    if (this.abortReason) return hook(this.abortReason);
    if (this.done) return;
    (this.abortHooks ??= []).push(hook);
  }

  /** The requester cancelled, or the connection closed: no answer will be sent. */
  abort(reason: Error): void {
    if (this.done) return;
    this.done = true;
    this.abortReason = reason;
    this.channel.settled(this.id);
    const hooks = this.abortHooks;
    this.abortHooks = undefined;
    if (hooks) for (const hook of hooks) hook(reason);
  }
}
