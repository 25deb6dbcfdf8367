/**
 * The workings of `StreamableHttpClientTransport` (see its module comment for the behaviour), put together
 * from parts that each do one job and are given only what that job needs:
 *
 * - `client-lifecycle.ts`: the lifecycle actor (which decides every lifecycle question), the state and the
 *   session id; `client-session-headers.ts` and `client-authorization.ts`: what every request carries;
 * - `client-session-requests.ts`: the session's POST, GET and DELETE requests;
 * - `client-in-flight.ts` and `client-exchange.ts`: the requests' POSTs and their answers, and
 *   `client-post.ts`: one POST until its answer is final (notifications end there);
 * - `client-renewal.ts`: a session the server forgot (404) renewed; `client-standalone.ts`: the GET stream;
 * - `client-modern.ts`: the stateless revision's requests, on no session; `legacy-fallback.ts`: HTTP+SSE.
 *
 * This module keeps the messages in order (`send-order.ts`), hands each to the part that carries it, and
 * does what the machine asks when the transport ends or closes. Per message it reads the actor's state and
 * nothing more: no message is an event of the machine.
 */
import { Subject } from 'rxjs';
import { defaultRuntime, type Runtime } from '../../lib/core/runtime';
import { encodeFrame } from '../../lib/jsonrpc/codec';
import { TransportError } from '../../lib/jsonrpc/errors';
import type { JsonRpcBatch, JsonRpcMessage, JsonRpcRequest } from '../../lib/jsonrpc/types';
import type { TransportSendOptions } from '../../lib/core/transport';
import type {
  HttpClientSessionEnding,
  HttpClientSessionHost,
  HttpClientSessionState,
} from '../../machines/http-client-session';
import { InboundQueue } from '../inbound-queue';
import { SessionAuthorization } from './client-authorization';
import type { HttpClientEvent } from './client-events';
import { requestIdsOf } from './client-exchange';
import { ExchangesInFlight } from './client-in-flight';
import { SessionLifecycle } from './client-lifecycle';
import { modernRequestHeaders } from './client-modern';
import { postNotice } from './client-post';
import { cancelledRequestOf, isInitializedNotification, isInitializeRequest } from './client-protocol';
import { SessionRenewal } from './client-renewal';
import { HttpPeer, type HeaderList, type HttpClientOptions } from './client-request';
import { SessionHeaders } from './client-session-headers';
import { SessionRequests } from './client-session-requests';
import type { ReconnectPolicy } from './client-sse-stream';
import { StandaloneListening } from './client-standalone';
import { LegacyFallback } from './legacy-fallback';
import { SendOrder } from './send-order';

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

export class StreamableClientSession {
  readonly inbound = new InboundQueue('Streamable HTTP');
  readonly eventSubject = new Subject<HttpClientEvent>();
  readonly peer: HttpPeer;
  readonly closed: Promise<void>;
  private readonly abort = new AbortController();
  private readonly order = new SendOrder();
  private readonly lifecycle: SessionLifecycle;
  private readonly headers: SessionHeaders;
  private readonly authorization: SessionAuthorization;
  private readonly requests: SessionRequests;
  private readonly renewal: SessionRenewal;
  private readonly inFlight: ExchangesInFlight;
  private readonly listening: StandaloneListening;
  private readonly fallback: LegacyFallback;
  private deleting: AbortController | undefined;
  private resolveClosed!: () => void;

  constructor(
    url: string | URL,
    private readonly options: StreamableHttpClientOptions,
  ) {
    this.peer = new HttpPeer(url, options);
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
    const report = (event: HttpClientEvent) => this.report(event);
    this.lifecycle = new SessionLifecycle(this.machineHost(), {
      renewSession: options.renewSession !== false,
      fallback: options.fallback !== false,
      runtime: options.runtime ?? defaultRuntime(),
    });
    this.headers = new SessionHeaders(this.peer.target, options.headers, options.authorization);
    this.authorization = new SessionAuthorization(options.authorization, this.peer.url);
    this.renewal = new SessionRenewal(this.lifecycle, report);
    const policy = options.reconnect ?? {};
    this.requests = new SessionRequests(
      this.peer,
      this.headers,
      this.authorization,
      this.lifecycle,
      this.renewal,
      policy,
      this.abort.signal,
      report,
    );
    this.inFlight = new ExchangesInFlight(this.requests, this.inbound, this.order, this.sessionLost, () =>
      this.renewal.gotThrough(),
    );
    this.listening = new StandaloneListening(
      this.requests,
      this.inbound,
      this.renewal.lost,
      options.standaloneStream !== false,
    );
    this.fallback = new LegacyFallback(this.peer, options, this.lifecycle, this.inbound, this.headers, report);
  }

  get state(): HttpClientSessionState {
    return this.lifecycle.state;
  }

  get sessionId(): string | undefined {
    return this.lifecycle.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.headers.protocolVersion = version;
    this.fallback.setProtocolVersion(version);
  }

  send(message: JsonRpcMessage | JsonRpcBatch, options?: TransportSendOptions): Promise<void> {
    const refusal = this.lifecycle.refusalIn(this.state);
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
    this.lifecycle.tell({ type: 'close' });
    return this.closed;
  }

  /** Delivers a message once it holds the turn; the turn passes on once the message is handed over. */
  private async deliverMessage(
    message: JsonRpcMessage | JsonRpcBatch,
    body: string,
    modernHeaders: HeaderList | undefined,
  ): Promise<void> {
    let state = this.state;
    if (state === 'renewing') {
      await this.renewal.renewing();
      state = this.state;
    }
    const streamOpening = this.listening.opening();
    if (streamOpening) {
      await streamOpening;
      state = this.state;
    }
    if (state === 'legacy') {
      this.order.leave();
      return this.fallback.transport!.send(message);
    }
    const refusal = this.lifecycle.refusalIn(state);
    if (refusal) {
      this.order.leave();
      throw refusal;
    }
    const ready = this.authorization.ready();
    if (ready) await ready;
    const ids = requestIdsOf(message);
    if (ids.length === 0) return this.deliverNotice(message, body);
    let opening = false;
    if (isInitializeRequest(message)) {
      this.lifecycle.tell({ type: 'initialize.sent', request: message });
      opening = state === 'opening' && this.sessionId === undefined;
    }
    return this.inFlight.run(message, ids, body, opening ? this.fallback : undefined, modernHeaders);
  }

  private async deliverNotice(message: JsonRpcMessage | JsonRpcBatch, body: string): Promise<void> {
    const cancelled = cancelledRequestOf(message);
    if (cancelled !== undefined) {
      const exchange = this.inFlight.finish(cancelled);
      // A modern request is on no session: there is nobody to tell; it is finished on our side.
      if (exchange?.modernHeaders !== undefined) return this.order.leave();
    }
    try {
      await postNotice(this.requests, body, this.sessionLost);
      this.renewal.gotThrough();
    } finally {
      this.order.leave();
    }
    if (isInitializedNotification(message)) this.lifecycle.tell({ type: 'initialized' });
  }

  /**
   * A message met a 404 for `session`: it goes again once the session was renewed and the new session's
   * stream answered (as the first message of a session waits for it, `deliverMessage`).
   */
  private readonly sessionLost = async (session: string): Promise<void> => {
    await this.renewal.lost(session);
    await this.listening.opening();
  };

  private report(event: HttpClientEvent): void {
    const state = this.state;
    if (state !== 'closing' && state !== 'closed') this.eventSubject.next(event);
  }

  /** What the lifecycle machine asks of the transport: each step goes to the part that does it. */
  private machineHost(): HttpClientSessionHost {
    return {
      exchangesThrough: () => this.renewal.through,
      listen: (sessionId) => this.listening.listen(sessionId),
      renew: (initialize) => {
        this.listening.stop();
        this.renewal.begin(initialize as JsonRpcRequest, this.requests, this.headers.protocolVersion);
      },
      renewed: (previousSessionId, sessionId) => this.renewal.done(previousSessionId, sessionId),
      end: (ending) => this.end(ending),
      release: (deleteSession) => this.release(deleteSession),
      finish: () => this.finish(),
    };
  }

  /** Entered `ended`: every stream stops; the inbound messages complete (or fail). */
  private end(ending: HttpClientSessionEnding): void {
    const error = this.lifecycle.ended(ending);
    this.abort.abort();
    this.renewal.abandon(error);
    if (ending.reason === 'session-ended') this.inbound.complete();
    else this.inbound.fail(error);
  }

  /** `close`: every stream and POST stops; the session is deleted when `deleteSession`; then `released`. */
  private release(deleteSession: boolean): void {
    this.abort.abort();
    this.renewal.abandon(new TransportError('The Streamable HTTP transport is closed'));
    const session = deleteSession ? this.sessionId : undefined;
    void (async () => {
      await this.fallback.transport?.close();
      if (session !== undefined) {
        this.deleting = new AbortController();
        await this.requests.deleteSession(session, this.deleting.signal);
      }
      this.lifecycle.tell({ type: 'released' });
    })();
  }

  /** Entered `closed` (released, or gave up waiting): what is left is dropped, the streams complete. */
  private finish(): void {
    this.deleting?.abort();
    this.inbound.complete();
    this.eventSubject.complete();
    this.peer.release();
    this.resolveClosed();
  }
}
