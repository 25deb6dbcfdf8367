/**
 * The router: one connection's observer of its transport's frames. One switch on the structural kind of
 * each frame: responses settle outbound requests, requests pass the gate (lib/protocol/gate.ts) to the
 * role's handler table, notifications go to the built-in ones (cancel, progress) and then to the connection.
 */
import type { Observer } from 'rxjs';
import { classifyMessage, describeInvalid } from '../jsonrpc/classify';
import {
  UnreadableFrame,
  type InboundFrame,
  type JsonRpcErrorResponse,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type JsonRpcResultResponse,
  type RequestId,
} from '../jsonrpc/types';
import { ALLOWED, batchRefusal, DROPPED, inboundVerdict, methodNotFound, type GateView } from '../protocol/gate';
import type { CancelledParams } from '../protocol/types';
import { BatchReply } from './batch';
import type { ConnectionTrace } from './connection-trace';
import type { InboundHost, InboundRequests, RequestHandler } from './inbound-requests';
import type { OutboundRequests } from './outbound-requests';

/** What the router needs of its connection. */
export interface RouterHost extends InboundHost, GateView {
  /** The transport's stream ended; `error` is set when it failed. */
  transportEnded(error: unknown): void;
  /** A notification from the peer; `builtIn` when it was cancel or progress, which the router acted on. */
  notified(message: JsonRpcNotification, builtIn: boolean): void;
  /** The role's handler of inbound `method`; asked per request, so a role may build its table on first use. */
  handlerFor(method: string): RequestHandler<any> | undefined;
  /** The peer's requests being handled (made when the first one arrives: a client may never get one). */
  readonly inbound: InboundRequests;
  /** True when the role served or refused the request itself, before the gate (a modern request). */
  takeRequest(message: JsonRpcRequest, inBatch: boolean): boolean;
}

export class Router implements Observer<InboundFrame> {
  constructor(
    private readonly host: RouterHost,
    private readonly outbound: OutboundRequests,
    private readonly tracing: ConnectionTrace,
  ) {}

  /**
   * Routes one inbound frame. Never throws: whatever throws while handling it (a bug, an input no check
   * foresaw) closes this connection with an `internal-error` quit reason, and nothing else.
   */
  next(frame: InboundFrame): void {
    if (this.host.state === 'closed') return;
    try {
      if (frame instanceof UnreadableFrame) {
        if (frame.response) this.outbound.settleBroken(frame, frame.id, frame.message);
        else this.refuse(frame, frame.id, frame.code, frame.message, undefined);
      } else {
        this.route(frame, undefined);
      }
    } catch (error) {
      this.host.failInternally(error);
    }
  }

  error(error: unknown): void {
    this.host.transportEnded(error);
  }

  complete(): void {
    this.host.transportEnded(undefined);
  }

  private get requests(): InboundRequests {
    return this.host.inbound;
  }

  private route(message: unknown, batch: BatchReply | undefined): void {
    switch (classifyMessage(message)) {
      case 'request':
        return this.onRequest(message as JsonRpcRequest, batch);
      case 'notification':
        return this.onNotificationMessage(message as JsonRpcNotification);
      case 'result':
        return this.outbound.settle(message as JsonRpcResultResponse, undefined);
      case 'error':
        return this.outbound.settle(undefined, message as JsonRpcErrorResponse);
      case 'batch':
        return batch ? this.refuseInvalid(message, batch) : this.onBatch(message as unknown[]);
      default:
        return this.refuseInvalid(message, batch);
    }
  }

  private onRequest(message: JsonRpcRequest, batch: BatchReply | undefined): void {
    const method = message.method;
    this.tracing.message('request', 'in', message, method, message.id);
    if (this.host.takeRequest(message, batch !== undefined)) return;
    const handler = this.host.handlerFor(method);
    const verdict = handler ? inboundVerdict(this.host, message, batch !== undefined) : methodNotFound(method);
    if (verdict === ALLOWED) this.requests.serve(message, handler!, batch);
    else if (verdict !== DROPPED && verdict.kind === 'refuse')
      this.requests.refuse(message, verdict.code, verdict.message, batch);
  }

  private onBatch(elements: unknown[]): void {
    this.tracing.message('batch', 'in', elements);
    const refusal = batchRefusal(this.host, elements.length);
    if (refusal) return this.requests.sendError(undefined, refusal.code, refusal.message, undefined);
    const outbound = this.outbound;
    const reply = new BatchReply((responses) =>
      outbound.send(responses).catch((error) => this.host.logger.debug('Could not send a response', error)),
    );
    for (const element of elements) this.route(element, reply);
    reply.seal();
  }

  private refuseInvalid(message: unknown, batch: BatchReply | undefined): void {
    const invalid = describeInvalid(message);
    // A method-less message naming a request of ours in flight is likelier a broken response than a broken request.
    const answersOurs =
      invalid.id !== undefined &&
      (message as { method?: unknown }).method === undefined &&
      this.outbound.has(invalid.id);
    if (invalid.response || answersOurs) this.outbound.settleBroken(message, invalid.id, invalid.message);
    else this.refuse(message, invalid.id, invalid.code, invalid.message, batch);
  }

  private refuse(
    message: unknown,
    id: RequestId | undefined,
    code: number,
    why: string,
    batch: BatchReply | undefined,
  ): void {
    this.tracing.message('invalid', 'in', message, undefined, id, why);
    this.requests.sendError(id, code, why, batch);
  }

  private onNotificationMessage(message: JsonRpcNotification): void {
    this.tracing.message('notification', 'in', message, message.method);
    let builtIn = true;
    if (message.method === 'notifications/cancelled')
      this.requests.cancel(message.params as CancelledParams | undefined);
    else if (message.method === 'notifications/progress') this.outbound.progress(message);
    else builtIn = false;
    this.host.notified(message, builtIn);
  }
}
