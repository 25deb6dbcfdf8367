/**
 * The workings of `StreamableHttpClientTransport` (see its module comment for the behaviour): the host of
 * the session's lifecycle actor (`machines/http-client-session.ts`), which decides every lifecycle question,
 * and of the exchanges, streams, renewal and fallback that do the I/O. Per message it reads the actor's
 * state and session id and nothing more: no message is an event of the machine.
 */
import type { IncomingMessage } from 'node:http';
import { Subject } from 'rxjs';
import { createActor, type Actor } from 'xstate';
import { defaultRuntime, type Runtime } from '../../lib/core/runtime';
import { encodeFrame } from '../../lib/jsonrpc/codec';
import { TransportError } from '../../lib/jsonrpc/errors';
import type { InboundFrame, JsonRpcBatch, JsonRpcMessage, JsonRpcRequest, RequestId } from '../../lib/jsonrpc/types';
import type { TransportSendOptions } from '../../lib/core/transport';
import {
  httpClientSessionMachine,
  type HttpClientSessionEnding,
  type HttpClientSessionEvent,
  type HttpClientSessionHost,
  type HttpClientSessionState,
} from '../../machines/http-client-session';
import { InboundQueue } from '../inbound-queue';
import type { HttpClientEvent } from './client-events';
import {
  MAX_AUTHORIZATION_RETRIES,
  requestIdsOf,
  RequestExchange,
  type ExchangeHost,
  type OpeningHost,
  type SentPost,
} from './client-exchange';
import { cancelledRequestOf, isInitializedNotification, isInitializeRequest } from './client-protocol';
import {
  describeHttpFailure,
  discardResponse,
  withAuthorization,
  HttpPeer,
  type HttpExchange,
  type HttpRequestSpec,
  type HeaderList,
  type HttpClientOptions,
} from './client-request';
import { classifyStreamOpening, openingFailure, type ReconnectPolicy, type StreamOpening } from './client-sse-stream';
import { connectLegacyFallback } from './legacy-fallback';
import type { LegacySseClientTransport } from './legacy-sse-client';
import { modernRequestHeaders } from './client-modern';
import { isRefusal, renewedAuthorization, sendAuthorizedRequest } from './client-authorization';
import { SessionHeaders } from './client-session-headers';
import { SendOrder } from './send-order';
import { replayHandshake, type RenewalHost } from './session-renewal';
import { StandaloneStream, type StandaloneHost } from './standalone-stream';

export interface StreamableHttpClientOptions extends HttpClientOptions {
  /** Default true: use the legacy HTTP+SSE transport when the initialize POST gets 400, 404 or 405. */
  readonly fallback?: boolean;
  /** Reconnection of SSE streams: delays (the server's `retry:` wins) and attempts in a row. */
  readonly reconnect?: ReconnectPolicy;
  /** Default true: open the GET stream after initialization when the server offers it (405 = not offered). */
  readonly standaloneStream?: boolean;
  /**
   * Default true: a 404 for our session starts a new one transparently (`session-renewed`); false: the
   * transport ends (`messages` completes).
   */
  readonly renewSession?: boolean;
  /**
   * The actor system the session's lifecycle actor joins (visible to its inspection); its clock times the
   * DELETE on close. Default: the process-wide runtime.
   */
  readonly runtime?: Runtime;
}

/** Renewals in a row without a message getting through in between before we give up. */
const MAX_RENEWALS_IN_A_ROW = 3;
/** How long `close()` waits for the DELETE of the session. */
const DELETE_TIMEOUT_MS = 5000;
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;
/** The own headers of every POST (the session and revision headers come first). */

export class StreamableClientSession
  implements HttpClientSessionHost, ExchangeHost, OpeningHost, StandaloneHost, RenewalHost
{
  readonly inbound = new InboundQueue('Streamable HTTP');
  readonly eventSubject = new Subject<HttpClientEvent>();
  readonly peer: HttpPeer;
  readonly policy: ReconnectPolicy;
  readonly closed: Promise<void>;
  private readonly abort = new AbortController();
  private readonly actor: Actor<typeof httpClientSessionMachine>;
  private readonly order = new SendOrder();
  /** The exchanges in flight, by the ids of their requests: a cancel finishes its request's exchange. */
  private readonly exchanges = new Map<RequestId, RequestExchange>();
  private readonly headerLists: SessionHeaders;
  /** The authorization's stored tokens were read (before the first request; no await on the messages after). */
  private preparing: Promise<void> | undefined;
  private authorizationPrepared = false;
  /** Exchanges that got through (2xx), for the machine's count of renewals in a row. */
  private through = 0;
  private renewals = 0;
  /** While `renewing`: settles when the renewal does (what messages sent meanwhile wait for). */
  private renewal: { promise: Promise<void>; resolve(): void; reject(error: TransportError): void } | undefined;
  /** Why sends are refused once the session ended. */
  private endError: TransportError | undefined;
  private legacy: LegacySseClientTransport | undefined;
  private standalone: StandaloneStream | undefined;
  private deleting: AbortController | undefined;
  private resolveClosed!: () => void;

  constructor(
    url: string | URL,
    private readonly options: StreamableHttpClientOptions,
  ) {
    this.peer = new HttpPeer(url, options);
    this.headerLists = new SessionHeaders(this.peer.target, options.headers, options.authorization);
    this.policy = options.reconnect ?? {};
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    this.actor = createActor(httpClientSessionMachine, {
      input: {
        host: this,
        renewSession: options.renewSession !== false,
        fallback: options.fallback !== false,
        maxRenewalsInARow: MAX_RENEWALS_IN_A_ROW,
        closeTimeoutMs: DELETE_TIMEOUT_MS,
      },
      parent: (options.runtime ?? defaultRuntime()).root,
    }).start();
  }

  get state(): HttpClientSessionState {
    return this.actor.getSnapshot().value as HttpClientSessionState;
  }

  get sessionId(): string | undefined {
    return this.actor.getSnapshot().context.sessionId;
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }

  get maxMessageBytes(): number {
    return this.peer.maxMessageBytes;
  }

  setProtocolVersion(version: string): void {
    this.headerLists.protocolVersion = version;
    this.legacy?.setProtocolVersion(version);
  }

  send(message: JsonRpcMessage | JsonRpcBatch, options?: TransportSendOptions): Promise<void> {
    const refusal = this.refusalIn(this.state);
    if (refusal) return Promise.reject(refusal);
    let body: string;
    try {
      body = encodeFrame(message);
    } catch (error) {
      return Promise.reject(new TransportError('Cannot encode the message as JSON', { cause: error }));
    }
    const modern = modernRequestHeaders(this.peer.target, this.options.headers, message, options?.headers);
    if (this.order.tryEnter()) return this.deliverMessage(message, body, modern);
    return this.order.turn().then(() => this.deliverMessage(message, body, modern));
  }

  close(): Promise<void> {
    this.tell({ type: 'close' });
    return this.closed;
  }

  // ---- sending -----------------------------------------------------------------------------------

  /** Why nothing may be sent in `state`, if so. */
  private refusalIn(state: HttpClientSessionState): TransportError | undefined {
    if (state === 'closing' || state === 'closed') return new TransportError('The Streamable HTTP transport is closed');
    if (state === 'ended') return this.endError;
    return undefined;
  }

  /** Delivers a message once it holds the turn; the turn passes on once the message is handed over. */
  private async deliverMessage(
    message: JsonRpcMessage | JsonRpcBatch,
    body: string,
    modernHeaders: HeaderList | undefined,
  ): Promise<void> {
    let state = this.state;
    if (state === 'renewing') {
      await this.renewal!.promise.catch(() => undefined);
      state = this.state;
    }
    if (state === 'legacy') {
      this.order.leave();
      return this.legacy!.send(message);
    }
    const refusal = this.refusalIn(state);
    if (refusal) {
      this.order.leave();
      throw refusal;
    }
    const authorization = this.options.authorization;
    if (!this.authorizationPrepared && authorization?.prepare) {
      await (this.preparing ??= authorization.prepare());
      this.authorizationPrepared = true;
    }
    const ids = requestIdsOf(message);
    if (ids.length === 0) return this.deliverNotice(message, body);
    let opening = false;
    if (isInitializeRequest(message)) {
      this.tell({ type: 'initialize.sent', request: message });
      opening = state === 'opening' && this.sessionId === undefined;
    }
    const exchange = new RequestExchange(this, message, ids, body, opening ? this : undefined, modernHeaders);
    for (const id of ids) this.exchanges.set(id, exchange);
    return exchange.run();
  }

  private async deliverNotice(message: JsonRpcMessage | JsonRpcBatch, body: string): Promise<void> {
    const cancelled = cancelledRequestOf(message);
    if (cancelled !== undefined) {
      const exchange = this.exchanges.get(cancelled);
      exchange?.finish(cancelled);
      // A modern request is on no session: there is nobody to tell; it is finished on our side.
      if (exchange?.modernHeaders !== undefined) return this.order.leave();
    }
    try {
      await this.postNotice(body, true);
    } finally {
      this.order.leave();
    }
    if (isInitializedNotification(message)) this.tell({ type: 'initialized' });
  }

  /** POSTs a notification or response; resolves on 2xx. `renew`: a 404 for our session renews it and retries. */
  async postNotice(body: string, renew = false): Promise<void> {
    let authorizations = 0;
    for (let retried = !renew; ; retried = true) {
      const sent = this.post(body, false);
      const { exchange, session } = sent;
      const response = await exchange.response;
      const status = response.statusCode ?? 0;
      if (
        isRefusal(status) &&
        authorizations++ < MAX_AUTHORIZATION_RETRIES &&
        (await this.authorizeAgain(response, sent))
      )
        continue;
      if (status >= 200 && status < 300) {
        discardResponse(response);
        if (renew) this.through++;
        return;
      }
      if (status === 404 && session !== undefined && !retried) {
        discardResponse(response);
        await this.sessionLost(session);
        continue;
      }
      throw new TransportError((await describeHttpFailure(response, `POST ${this.peer.url.href}`)).message);
    }
  }

  post(body: string, initialize: boolean, modernHeaders?: HeaderList): SentPost {
    if (modernHeaders !== undefined) {
      const own = new AbortController();
      const authorization = this.options.authorization?.authorization();
      const exchange = this.request({
        method: 'POST',
        target: this.peer.target,
        headers: withAuthorization(modernHeaders, authorization),
        body,
        signal: AbortSignal.any([this.abort.signal, own.signal]),
      });
      return { exchange, session: undefined, abort: () => own.abort(), authorization };
    }
    // An initialize starts a session: it names none, and announces its revision in its body only.
    const session = initialize ? undefined : this.sessionId;
    const exchange = this.request({
      method: 'POST',
      target: this.peer.target,
      headers: initialize ? this.headerLists.opening() : this.headerLists.post(session),
      body,
      signal: this.abort.signal,
    });
    return { exchange, session, authorization: this.options.authorization?.authorization() };
  }

  /** Sends a request with what the authorization adds to each (a DPoP proof), if anything. */
  private request(spec: HttpRequestSpec): HttpExchange {
    return sendAuthorizedRequest(spec, this.options.authorization, this.peer.url);
  }

  authorizeAgain(response: IncomingMessage, sent: Pick<SentPost, 'authorization'>): Promise<boolean> {
    return renewedAuthorization(this.options.authorization, this.peer.url, response, sent.authorization);
  }

  // ---- what exchanges and streams ask (ExchangeHost, OpeningHost, StandaloneHost) -----------------

  deliver(frame: InboundFrame): void {
    this.inbound.push(frame);
  }

  gotThrough(): void {
    this.through++;
  }

  handedOver(): void {
    this.order.leave();
  }

  forget(exchange: RequestExchange): void {
    for (const id of exchange.ids) if (this.exchanges.get(id) === exchange) this.exchanges.delete(id);
  }

  report(event: HttpClientEvent): void {
    const state = this.state;
    if (state !== 'closing' && state !== 'closed') this.eventSubject.next(event);
  }

  /** The server answered 404 for `session`: resolves once a new one is ready; rejects if there will be none. */
  sessionLost(session: string): Promise<void> {
    this.tell({ type: 'session.lost', sessionId: session });
    if (this.state === 'renewing') return this.renewal!.promise;
    const refusal = this.refusalIn(this.state);
    return refusal ? Promise.reject(refusal) : Promise.resolve();
  }

  /** GETs a stream to resume, on the session current once any renewal is done. */
  async openStream(lastEventId: string | undefined): Promise<StreamOpening> {
    if (this.state === 'renewing') await this.renewal!.promise.catch(() => undefined);
    return this.openStreamOn(lastEventId, this.sessionId);
  }

  async openStreamOn(lastEventId: string | undefined, session: string | undefined): Promise<StreamOpening> {
    const what = `GET ${this.peer.url.href}`;
    try {
      for (let authorizations = 0; ; authorizations++) {
        const authorization = this.options.authorization?.authorization();
        const response = await this.request({
          method: 'GET',
          target: this.peer.target,
          headers: this.headerLists.of(session, { accept: 'text/event-stream', 'last-event-id': lastEventId }),
          signal: this.abort.signal,
        }).response;
        if (
          isRefusal(response.statusCode) &&
          authorizations < MAX_AUTHORIZATION_RETRIES &&
          (await this.authorizeAgain(response, { authorization }))
        ) {
          continue;
        }
        return classifyStreamOpening(response, session !== undefined, what);
      }
    } catch (error) {
      return openingFailure(error);
    }
  }

  opened(response: IncomingMessage): void {
    this.adoptSession(response);
  }

  adoptSession(response: IncomingMessage): void {
    const id = response.headers['mcp-session-id'];
    if (typeof id === 'string' && VISIBLE_ASCII.test(id)) this.tell({ type: 'session.issued', sessionId: id });
  }

  refused(exchange: RequestExchange, response: IncomingMessage): Promise<void> | undefined {
    this.tell({ type: 'initialize.refused', status: response.statusCode ?? 0 });
    return this.state === 'fallingBack' ? this.fallBack(exchange, response) : undefined;
  }

  /** Continues over HTTP+SSE on the same URL, resending the refused `initialize` there. */
  private async fallBack(exchange: RequestExchange, response: IncomingMessage): Promise<void> {
    let legacy: LegacySseClientTransport;
    try {
      legacy = await connectLegacyFallback(this.peer, this.options, response, exchange.describe());
    } catch (error) {
      this.tell({ type: 'legacy.failed' });
      // The status is the refused POST's: what the server said to the request the caller made.
      return exchange.failPending((error as Error).message, response.statusCode ?? 0);
    }
    if (this.state !== 'fallingBack') {
      await legacy.close();
      return exchange.failPending('The Streamable HTTP transport is closed');
    }
    this.legacy = legacy;
    const version = this.headerLists.protocolVersion;
    if (version !== undefined) legacy.setProtocolVersion(version);
    legacy.messages.subscribe({
      next: (frame) => this.inbound.push(frame),
      error: (error: unknown) =>
        this.inbound.fail(error instanceof TransportError ? error : new TransportError(String(error))),
      complete: () => this.inbound.complete(),
    });
    this.report({ type: 'fallback', to: 'legacy-sse', status: response.statusCode ?? 0 });
    this.tell({ type: 'legacy.ready' });
    exchange.handOver(); // the messages waiting go to the legacy transport, after this one
    return legacy.send(exchange.message);
  }

  // ---- what the machine asks (HttpClientSessionHost) ---------------------------------------------

  exchangesThrough(): number {
    return this.through;
  }

  listen(sessionId: string | undefined): void {
    this.standalone?.stop();
    this.standalone = undefined;
    if (this.options.standaloneStream === false) return;
    this.standalone = new StandaloneStream(this, sessionId);
    this.standalone.start();
  }

  renew(initialize: unknown): void {
    this.standalone?.stop();
    let resolve!: () => void;
    let reject!: (error: TransportError) => void;
    const promise = new Promise<void>((settle, fail) => ((resolve = settle), (reject = fail)));
    promise.catch(() => undefined); // a renewal nobody waited for may fail unobserved
    this.renewal = { promise, resolve, reject };
    const replayId = `switchboard-renewal-${++this.renewals}`;
    replayHandshake(this, initialize as JsonRpcRequest, replayId, this.headerLists.protocolVersion).then(
      () => this.tell({ type: 'renewal.done' }),
      (error: unknown) => this.tell({ type: 'renewal.failed', error }),
    );
  }

  renewed(previousSessionId: string | undefined, sessionId: string | undefined): void {
    this.report({ type: 'session-renewed', previousSessionId: previousSessionId ?? '', sessionId: sessionId ?? '' });
    this.settleRenewal();
  }

  end(ending: HttpClientSessionEnding): void {
    this.endError = endingError(ending);
    this.abort.abort();
    this.settleRenewal(this.endError);
    if (ending.reason === 'session-ended') this.inbound.complete();
    else this.inbound.fail(this.endError);
  }

  release(deleteSession: boolean): void {
    this.abort.abort();
    this.settleRenewal(new TransportError('The Streamable HTTP transport is closed'));
    const session = deleteSession ? this.sessionId : undefined;
    void (async () => {
      await this.legacy?.close();
      if (session !== undefined) await this.deleteSession(session);
      this.tell({ type: 'released' });
    })();
  }

  finish(): void {
    this.deleting?.abort();
    this.inbound.complete();
    this.eventSubject.complete();
    this.peer.release();
    this.resolveClosed();
  }

  /** DELETE for the session; whatever the answer (405 included), the session is ours no more. */
  private async deleteSession(session: string): Promise<void> {
    this.deleting = new AbortController();
    try {
      const response = await this.request({
        method: 'DELETE',
        target: this.peer.target,
        headers: this.headerLists.of(session, {}),
        signal: this.deleting.signal,
      }).response;
      discardResponse(response);
    } catch {
      // unreachable, or closing gave up waiting: nothing more to do
    }
  }

  private settleRenewal(error?: TransportError): void {
    const renewal = this.renewal;
    this.renewal = undefined;
    if (error) renewal?.reject(error);
    else renewal?.resolve();
  }

  /** Sends the machine an event, unless it is done. */
  private tell(event: HttpClientSessionEvent): void {
    if (this.actor.getSnapshot().status === 'active') this.actor.send(event);
  }
}

function endingError(ending: HttpClientSessionEnding): TransportError {
  switch (ending.reason) {
    case 'session-ended':
      return new TransportError('The Streamable HTTP transport has ended: the server ended the session (HTTP 404)');
    case 'renewals-exhausted':
      return new TransportError(
        `The server ended the session (HTTP 404) and a new one could not be started: the server ended ${ending.renewals} new sessions in a row`,
      );
    case 'renewal-failed':
      return new TransportError(
        `The server ended the session (HTTP 404) and a new one could not be started: ${(ending.error as Error)?.message ?? String(ending.error)}`,
        { cause: ending.error },
      );
  }
}
