/**
 * The request exchanges of one Streamable HTTP client session in flight, by the ids of their requests: each
 * started when its message holds the send turn, handing the turn on once it is handed over, and forgotten
 * once over; a cancel finishes its request's exchange. Their answers go to the inbound messages, and a 404
 * for the session they carried to the renewal.
 */
import type { InboundFrame, JsonRpcBatch, JsonRpcMessage, RequestId } from '../../lib/jsonrpc/types';
import type { InboundQueue } from '../inbound-queue';
import { RequestExchange, type ExchangeChannel, type ExchangeListener, type OpeningHost } from './client-exchange';
import type { SessionLost } from './client-post';
import type { HeaderList } from './client-request';
import type { SendOrder } from './send-order';

export class ExchangesInFlight implements ExchangeListener {
  private readonly exchanges = new Map<RequestId, RequestExchange>();

  constructor(
    private readonly channel: ExchangeChannel,
    private readonly inbound: InboundQueue,
    private readonly order: SendOrder,
    readonly sessionLost: SessionLost,
    /** Counts the exchanges that got through (the renewal's count of renewals in a row). */
    readonly gotThrough: () => void,
  ) {}

  /**
   * Sends `message` (holding the send turn) and settles with its exchange (`RequestExchange.run`). `opening`:
   * it carries the opening `initialize`; `modernHeaders`: it is a modern request, on no session.
   */
  run(
    message: JsonRpcMessage | JsonRpcBatch,
    ids: readonly RequestId[],
    body: string,
    opening: OpeningHost | undefined,
    modernHeaders: HeaderList | undefined,
  ): Promise<void> {
    const exchange = new RequestExchange(this.channel, this, message, ids, body, opening, modernHeaders);
    for (const id of ids) this.exchanges.set(id, exchange);
    return exchange.run();
  }

  /** Request `id` was finished on our side (cancelled): its exchange stops waiting for it. */
  finish(id: RequestId): RequestExchange | undefined {
    const exchange = this.exchanges.get(id);
    exchange?.finish(id);
    return exchange;
  }

  deliver(frame: InboundFrame): void {
    this.inbound.push(frame);
  }

  handedOver(): void {
    this.order.leave();
  }

  forget(exchange: RequestExchange): void {
    for (const id of exchange.ids) if (this.exchanges.get(id) === exchange) this.exchanges.delete(id);
  }
}
