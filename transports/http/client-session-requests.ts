/**
 * The HTTP requests of one Streamable HTTP client session, each with the session's headers
 * (`client-session-headers.ts`) and its authorization: the POST of a message (on the current session, or
 * on none for an `initialize` or a modern request), the GET of a stream, and the DELETE of the session.
 * Every request is aborted with the session's signal. It is what exchanges and streams are given to reach
 * the server (`ExchangeChannel`).
 */
import type { IncomingMessage } from 'node:http';
import { MAX_AUTHORIZATION_RETRIES, isRefusal, type SessionAuthorization } from './client-authorization';
import type { HttpClientEvent } from './client-events';
import type { ExchangeChannel } from './client-exchange';
import { postModernRequest } from './client-modern';
import type { SentPost } from './client-post';
import { discardResponse, type HeaderList, type HttpPeer } from './client-request';
import type { SessionHeaders } from './client-session-headers';
import { classifyStreamOpening, openingFailure, type ReconnectPolicy, type StreamOpening } from './client-sse-stream';

/** The session the requests go on. */
export interface CurrentSession {
  /** Undefined: none yet, or being renewed. */
  readonly sessionId: string | undefined;
}

/** What a GET resuming a stream waits for. */
export interface PendingRenewal {
  /** While the session is being renewed: settles when the renewal does; undefined otherwise. */
  renewing(): Promise<void> | undefined;
}

export class SessionRequests implements ExchangeChannel {
  constructor(
    private readonly peer: HttpPeer,
    private readonly headers: SessionHeaders,
    private readonly authorization: SessionAuthorization,
    private readonly session: CurrentSession,
    private readonly renewal: PendingRenewal,
    readonly policy: ReconnectPolicy,
    /** Aborted when the transport closes or ends. */
    readonly signal: AbortSignal,
    readonly report: (event: HttpClientEvent) => void,
  ) {}

  get url(): URL {
    return this.peer.url;
  }

  get maxMessageBytes(): number {
    return this.peer.maxMessageBytes;
  }

  post(body: string, initialize: boolean, modernHeaders?: HeaderList): SentPost {
    if (modernHeaders !== undefined) {
      return postModernRequest(this.authorization, this.peer.target, this.signal, modernHeaders, body);
    }
    // An initialize starts a session: it names none, and announces its revision in its body only.
    const session = initialize ? undefined : this.session.sessionId;
    const exchange = this.authorization.send({
      method: 'POST',
      target: this.peer.target,
      headers: initialize ? this.headers.opening() : this.headers.post(session),
      body,
      signal: this.signal,
    });
    return { exchange, session, authorization: this.authorization.current() };
  }

  authorizeAgain(response: IncomingMessage, sent: Pick<SentPost, 'authorization'>): Promise<boolean> {
    return this.authorization.again(response, sent.authorization);
  }

  async openStream(lastEventId: string | undefined, opening: boolean): Promise<StreamOpening> {
    // The stream of a renewal's initialize must not wait for the renewal: that waits for its answer.
    const renewing = opening ? undefined : this.renewal.renewing();
    if (renewing) await renewing;
    return this.openStreamOn(lastEventId, this.session.sessionId);
  }

  /** GETs the stream of `session` (or of no session), resuming after `lastEventId` when given. */
  async openStreamOn(lastEventId: string | undefined, session: string | undefined): Promise<StreamOpening> {
    const what = `GET ${this.peer.url.href}`;
    try {
      for (let authorizations = 0; ; authorizations++) {
        const authorization = this.authorization.current();
        const response = await this.authorization.send({
          method: 'GET',
          target: this.peer.target,
          headers: this.headers.of(session, { accept: 'text/event-stream', 'last-event-id': lastEventId }),
          signal: this.signal,
        }).response;
        if (
          isRefusal(response.statusCode) &&
          authorizations < MAX_AUTHORIZATION_RETRIES &&
          (await this.authorization.again(response, authorization))
        ) {
          continue;
        }
        return classifyStreamOpening(response, session !== undefined, what);
      }
    } catch (error) {
      return openingFailure(error);
    }
  }

  /** DELETE for `session`; whatever the answer (405 included), the session is ours no more. */
  async deleteSession(session: string, signal: AbortSignal): Promise<void> {
    try {
      const response = await this.authorization.send({
        method: 'DELETE',
        target: this.peer.target,
        headers: this.headers.of(session, {}),
        signal,
      }).response;
      discardResponse(response);
    } catch {
      // unreachable, or closing gave up waiting: nothing more to do
    }
  }
}
