/**
 * Renewing a session the server ended (a 404 for it), all in one place. Whoever meets the 404 (a request's
 * POST, a notification's, the standalone stream) calls `lost(session)` and waits: the lifecycle machine
 * decides whether to renew (`machines/http-client-session.ts`: not when renewing is off, the handshake never
 * completed, or renewals keep failing in a row), and if so calls `begin`, which replays the handshake on a
 * new session: the remembered `initialize` goes again under an id of the transport's own, and its answer is
 * checked, not delivered (the connection saw the first one): it must accept and keep the negotiated
 * revision. Then `notifications/initialized` goes on the new session. The machine ends the renewal with
 * `done` (the waiters send again on the new session) or, when it failed or the transport closes, `abandon`
 * (the waiters fail). What the handshake is lives in `client-protocol.ts`.
 */
import type { IncomingMessage } from 'node:http';
import { encodeFrame } from '../../lib/jsonrpc/codec';
import { TransportError } from '../../lib/jsonrpc/errors';
import { clipText } from '../../lib/jsonrpc/excerpt';
import type { InboundFrame, JsonRpcRequest } from '../../lib/jsonrpc/types';
import type { HttpClientSessionEvent, HttpClientSessionState } from '../../machines/http-client-session';
import type { HttpClientEvent } from './client-events';
import { isResponse, RequestExchange, type ExchangeChannel } from './client-exchange';
import { postNotice } from './client-post';
import { INITIALIZED_NOTIFICATION, negotiatedVersionOf, replayedInitialize } from './client-protocol';

/** What a renewal reads of the session's lifecycle and tells it (`SessionLifecycle`). */
export interface RenewalLifecycle {
  readonly state: HttpClientSessionState;
  tell(event: HttpClientSessionEvent): void;
  refusalIn(state: HttpClientSessionState): TransportError | undefined;
  adoptSession(response: IncomingMessage): void;
}

const ignore = () => undefined;

export class SessionRenewal {
  /** Exchanges that got through (2xx): the machine counts renewals in a row with none in between. */
  through = 0;
  private renewals = 0;
  /** While `renewing`: settles when the renewal does. */
  private renewal: { promise: Promise<void>; resolve(): void; reject(error: TransportError): void } | undefined;

  constructor(
    private readonly lifecycle: RenewalLifecycle,
    private readonly report: (event: HttpClientEvent) => void,
  ) {}

  /** A message got through (2xx). */
  gotThrough(): void {
    this.through++;
  }

  /** The server answered 404 for `session`: resolves once a new one is ready; rejects if there will be none. */
  readonly lost = (session: string): Promise<void> => {
    this.lifecycle.tell({ type: 'session.lost', sessionId: session });
    const state = this.lifecycle.state;
    if (state === 'renewing') return this.renewal!.promise;
    const refusal = this.lifecycle.refusalIn(state);
    return refusal ? Promise.reject(refusal) : Promise.resolve();
  };

  /** While renewing: settles (never rejects) when the renewal does; undefined otherwise. */
  renewing(): Promise<void> | undefined {
    return this.lifecycle.state === 'renewing' ? this.renewal!.promise.catch(ignore) : undefined;
  }

  /**
   * The machine entered `renewing`: replays the handshake through `channel` and tells the machine how it
   * went. `protocolVersion` is the revision the first handshake settled on.
   */
  begin(initialize: JsonRpcRequest, channel: ExchangeChannel, protocolVersion: string | undefined): void {
    let resolve!: () => void;
    let reject!: (error: TransportError) => void;
    const promise = new Promise<void>((settle, fail) => ((resolve = settle), (reject = fail)));
    promise.catch(ignore); // a renewal nobody waited for may fail unobserved
    this.renewal = { promise, resolve, reject };
    const replayId = `switchboard-renewal-${++this.renewals}`;
    this.replayHandshake(channel, initialize, replayId, protocolVersion).then(
      () => this.lifecycle.tell({ type: 'renewal.done' }),
      (error: unknown) => this.lifecycle.tell({ type: 'renewal.failed', error }),
    );
  }

  /** The machine is back in `active` on the new session: the waiters go on. */
  done(previousSessionId: string | undefined, sessionId: string | undefined): void {
    this.report({ type: 'session-renewed', previousSessionId: previousSessionId ?? '', sessionId: sessionId ?? '' });
    this.settle();
  }

  /** There will be no new session (the renewal failed, the transport ended or closes): the waiters fail. */
  abandon(error: TransportError): void {
    this.settle(error);
  }

  private settle(error?: TransportError): void {
    const renewal = this.renewal;
    this.renewal = undefined;
    if (error) renewal?.reject(error);
    else renewal?.resolve();
  }

  /** Replays the handshake; rejects with a `TransportError` saying why when a new session could not be set up. */
  private async replayHandshake(
    channel: ExchangeChannel,
    remembered: JsonRpcRequest,
    replayId: string,
    protocolVersion: string | undefined,
  ): Promise<void> {
    const request = replayedInitialize(remembered, replayId);
    let answer: Record<string, any> | undefined;
    const exchange = new RequestExchange(
      channel,
      {
        sessionLost: undefined, // an initialize carries no session
        deliver: (frame: InboundFrame) => {
          if (!Array.isArray(frame) && isResponse(frame) && frame.id === replayId) answer = frame;
        },
        gotThrough: ignore,
        handedOver: ignore,
        forget: ignore,
      },
      request,
      [replayId],
      encodeFrame(request),
      { opened: (response) => this.lifecycle.adoptSession(response), refused: ignore },
    );
    await exchange.run();
    const what = `${exchange.describe()}, renewing the session`;
    if (!answer) throw new TransportError(`${what}: the answer holds no response for the request`);
    if (answer.error) throw new TransportError(`${what}: the server refused: ${clipText(answer.error.message, 500)}`);
    const version = negotiatedVersionOf(answer.result);
    if (protocolVersion !== undefined && version !== protocolVersion) {
      throw new TransportError(`${what}: the server now answers protocol version ${version}, not ${protocolVersion}`);
    }
    await postNotice(channel, encodeFrame(INITIALIZED_NOTIFICATION));
  }
}
