/**
 * One POST of the Streamable HTTP client, from sending it to its final answer: sent again when the
 * authorization was renewed after a 401 or 403, and once more on a new session when the server answered
 * 404 for the session it carried (the session was renewed meanwhile). What the session gives a POST is
 * `PostChannel`; a request's POST goes on in `client-exchange.ts`, a notification's ends in `postNotice`.
 */
import type { IncomingMessage } from 'node:http';
import { TransportError } from '../../lib/jsonrpc/errors';
import { isRefusal, MAX_AUTHORIZATION_RETRIES } from './client-authorization';
import { describeHttpFailure, discardResponse, type HeaderList, type HttpExchange } from './client-request';

/** A POST on its way, and the session it carried. */
export interface SentPost {
  readonly exchange: HttpExchange;
  readonly session: string | undefined;
  /** A modern POST's own abort: closing its response is how the revision cancels a request over HTTP. */
  readonly abort?: () => void;
  /** The `Authorization` header it carried (undefined: none). */
  readonly authorization?: string;
}

/** What a POST needs of its session. */
export interface PostChannel {
  readonly url: URL;
  /**
   * POSTs `body` on the current session (an `initialize` on none, without the revision header); a modern
   * request (`modernHeaders` given) on none, with those headers.
   */
  post(body: string, initialize: boolean, modernHeaders?: HeaderList): SentPost;
  /**
   * The server refused `sent` with 401 or 403: true when the authorization was renewed and the message may be
   * sent again (the response was then discarded); false when it must fail (the response is left to read).
   */
  authorizeAgain(response: IncomingMessage, sent: SentPost): Promise<boolean>;
}

/**
 * What renews a session the server answered 404 for: resolves once a new session is ready, rejects with a
 * `TransportError` when there will be none (`SessionRenewal.lost`).
 */
export type SessionLost = (session: string) => Promise<void>;

/** What a POST came to: its final answer and the POST that got it, or why no answer came. */
export type PostOutcome =
  | { readonly answered: true; readonly response: IncomingMessage; readonly sent: SentPost }
  /** Never written, or the connection failed (a `TransportError`, as the request reported it). */
  | { readonly answered: false; readonly error: unknown };

/**
 * Follows `first` until its answer is final (see the module comment), sending `again()` each time the POST
 * must go again; `renew` undefined: a 404 is final. A failed renewal rejects.
 */
export async function postUntilFinal(
  channel: PostChannel,
  first: SentPost,
  again: () => SentPost,
  renew: SessionLost | undefined,
): Promise<PostOutcome> {
  let sent = first;
  let authorizations = 0;
  for (let renewed = renew === undefined; ; sent = again()) {
    let response: IncomingMessage;
    try {
      response = await sent.exchange.response;
    } catch (error) {
      return { answered: false, error };
    }
    const status = response.statusCode ?? 0;
    if (
      isRefusal(status) &&
      authorizations < MAX_AUTHORIZATION_RETRIES &&
      (await channel.authorizeAgain(response, sent))
    ) {
      authorizations++;
    } else if (status === 404 && sent.session !== undefined && !renewed) {
      discardResponse(response);
      await renew!(sent.session);
      renewed = true;
    } else {
      return { answered: true, response, sent };
    }
  }
}

/**
 * POSTs a notification or a response on the current session; resolves on 2xx, rejects with a
 * `TransportError` otherwise. `renew` given: a 404 for the session renews it and the POST goes again.
 */
export async function postNotice(channel: PostChannel, body: string, renew?: SessionLost): Promise<void> {
  const post = () => channel.post(body, false);
  const outcome = await postUntilFinal(channel, post(), post, renew);
  if (!outcome.answered) throw outcome.error;
  const { response } = outcome;
  const status = response.statusCode ?? 0;
  if (status >= 200 && status < 300) return discardResponse(response);
  throw new TransportError((await describeHttpFailure(response, `POST ${channel.url.href}`)).message);
}
