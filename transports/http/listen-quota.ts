/**
 * The per-client share of `subscriptions/listen` streams over Streamable HTTP. The server's own cap
 * (`maxListenStreams`) counts every stream, so one remote address could hold them all and leave every other
 * client without change notifications; this counts the streams of each client (see `clientKey`) and refuses
 * one more past `maxListenStreamsPerClient`, the way the session table refuses a client over its session quota.
 * A slot is held for as long as the listen request's response is open, and freed when it closes, however it
 * closes: the client hangs up, the server completes the stream, or the server refuses the listen itself.
 */
import type { ServerReply } from './server-port';
import { ErrorCode } from '../../lib/jsonrpc/errors';
import type { RequestId } from '../../lib/jsonrpc/types';
import { answerRefusal } from './modern-reply';

/**
 * The status of a refused listen: 429, as the session table answers a client over its own quota (the
 * client can listen again once it closes one of its streams). The JSON-RPC error carries the code the
 * server's global cap refuses with (-32603, `lib/server/listen.ts`), so a client handles both alike.
 */
export const LISTEN_REFUSAL_STATUS = 429;

export class ListenQuota {
  /** Open listen streams by client; a client holding none has no entry. */
  private readonly held = new Map<string, number>();

  constructor(readonly maxPerClient: number) {}

  /** Streams `client` holds now. */
  countOf(client: string): number {
    return this.held.get(client) ?? 0;
  }

  /**
   * Holds a slot of `client` until `response` closes and returns true; or, when `client` holds its limit
   * already, answers `response` with the refusal (echoing the request's `id`) and returns false.
   */
  admit(client: string, id: RequestId, response: ServerReply): boolean {
    // The requester is gone already: no stream will open, and no 'close' would come to free a slot.
    if (response.closed) return true;
    const count = this.countOf(client);
    if (count >= this.maxPerClient) {
      answerRefusal(response, LISTEN_REFUSAL_STATUS, {
        jsonrpc: '2.0',
        id,
        error: {
          code: ErrorCode.InternalError,
          message:
            `Too many subscriptions/listen streams are open for this client (limit ${this.maxPerClient} per client, ` +
            'maxListenStreamsPerClient); close one and listen again',
        },
      });
      return false;
    }
    this.held.set(client, count + 1);
    response.once('close', () => this.release(client));
    return true;
  }

  private release(client: string): void {
    const count = this.countOf(client) - 1;
    if (count > 0) this.held.set(client, count);
    else this.held.delete(client);
  }
}
