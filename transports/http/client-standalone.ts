/**
 * The standalone GET stream of a Streamable HTTP client session: opened on the session each time it becomes
 * active (when wanted: `standaloneStream`), stopped when the session is renewed or the transport stops.
 * Following one stream (reopening it, resuming after its last event id, a 404 telling the session is gone)
 * is `standalone-stream.ts`.
 */
import type { InboundFrame } from '../../lib/jsonrpc/types';
import type { InboundQueue } from '../inbound-queue';
import type { SessionLost } from './client-post';
import type { SessionRequests } from './client-session-requests';
import type { ReconnectPolicy, StreamOpening } from './client-sse-stream';
import type { HttpClientEvent } from './client-events';
import { StandaloneStream, type StandaloneHost } from './standalone-stream';

export class StandaloneListening implements StandaloneHost {
  private stream: StandaloneStream | undefined;

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
    if (!this.wanted) return;
    this.stream = new StandaloneStream(this, sessionId);
    this.stream.start();
  }

  stop(): void {
    this.stream?.stop();
    this.stream = undefined;
  }

  openStreamOn(lastEventId: string | undefined, session: string | undefined): Promise<StreamOpening> {
    return this.requests.openStreamOn(lastEventId, session);
  }

  deliver(frame: InboundFrame): void {
    this.inbound.push(frame);
  }

  report(event: HttpClientEvent): void {
    this.requests.report(event);
  }
}
