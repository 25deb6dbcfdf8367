/**
 * The standalone GET stream of a Streamable HTTP client session: opened on the session each time it becomes
 * active (when wanted: `standaloneStream`), stopped when the session is renewed or the transport stops.
 * Following one stream (reopening it, resuming after its last event id, a 404 telling the session is gone)
 * is `standalone-stream.ts`.
 *
 * Until the server answered the stream's first GET (`opening()`), the session's messages wait: a server
 * sends its requests that belong to no POST on this stream, and one that finds it not open yet drops them
 * (the official SDK does, without an event store). Sent at once, the request after the handshake could
 * reach the server first (the GET goes on a new connection) and its elicitation be lost.
 */
import type { InboundFrame } from '../../lib/jsonrpc/types';
import type { InboundQueue } from '../inbound-queue';
import type { SessionLost } from './client-post';
import type { SessionRequests } from './client-session-requests';
import type { ReconnectPolicy, StreamOpening } from './client-sse-stream';
import type { HttpClientEvent } from './client-events';
import { StandaloneStream, type StandaloneHost } from './standalone-stream';

/**
 * How long the messages wait for the answer to the stream's first GET: a server may hold the head of its
 * stream until it has an event to send, and the requests must go all the same.
 */
const STANDALONE_OPENING_WAIT_MS = 1000;

/** The first GET of a stream, until the server answered it, it failed, the wait ran out or the stream stopped. */
class FirstGet {
  readonly answered: Promise<void>;
  private settle!: () => void;
  private readonly timer: ReturnType<typeof setTimeout>;

  constructor(
    /** The session the stream listens on. */
    readonly session: string | undefined,
    ranOut: () => void,
  ) {
    this.answered = new Promise((resolve) => (this.settle = resolve));
    this.timer = setTimeout(ranOut, STANDALONE_OPENING_WAIT_MS);
    this.timer.unref();
  }

  done(): void {
    clearTimeout(this.timer);
    this.settle();
  }
}

export class StandaloneListening implements StandaloneHost {
  private stream: StandaloneStream | undefined;
  private firstGet: FirstGet | undefined;

  constructor(
    private readonly requests: SessionRequests,
    private readonly inbound: InboundQueue,
    /** What a 404 for the stream's session calls. */
    readonly sessionLost: SessionLost,
    /** False: never open a stream. */
    private readonly wanted: boolean,
  ) {}

  get policy(): ReconnectPolicy {
    return this.requests.policy;
  }

  get signal(): AbortSignal {
    return this.requests.signal;
  }

  get maxMessageBytes(): number {
    return this.requests.maxMessageBytes;
  }

  /** Listens on `sessionId` from now on (the stream of the previous session stops). */
  listen(sessionId: string | undefined): void {
    this.stop();
    if (!this.wanted || this.requests.signal.aborted) return;
    this.firstGet = new FirstGet(sessionId, () => this.openingOver());
    this.stream = new StandaloneStream(this, sessionId);
    this.stream.start();
  }

  stop(): void {
    this.stream?.stop();
    this.stream = undefined;
    this.openingOver();
  }

  /**
   * While the server has not answered the stream's first GET (at most `STANDALONE_OPENING_WAIT_MS`): what
   * settles when it did. Undefined otherwise, so the messages after it do not wait a turn.
   */
  opening(): Promise<void> | undefined {
    return this.firstGet?.answered;
  }

  async openStreamOn(lastEventId: string | undefined, session: string | undefined): Promise<StreamOpening> {
    try {
      return await this.requests.openStreamOn(lastEventId, session);
    } finally {
      // A stopped stream of the previous session may still be opening: only the current one's counts.
      if (this.firstGet?.session === session) this.openingOver();
    }
  }

  deliver(frame: InboundFrame): void {
    this.inbound.push(frame);
  }

  report(event: HttpClientEvent): void {
    this.requests.report(event);
  }

  private openingOver(): void {
    this.firstGet?.done();
    this.firstGet = undefined;
  }
}
