/**
 * The standalone GET stream of one session: the server's requests and notifications that belong to no
 * POST. Opened when the session becomes active (405: not offered), reopened when it ends (resuming after
 * its last event id), and stopped when the session it was opened for is replaced or the transport stops.
 * A 404 for its session tells the transport the session is gone; the stream of the next session (if the
 * transport renews it) is a new `StandaloneStream`.
 */
import type { InboundFrame } from '../../lib/jsonrpc/types';
import type { HttpClientEvent } from './client-events';
import { frameOf } from './client-exchange';
import {
  followSseStream,
  Interruption,
  type FollowedStream,
  type ReconnectPolicy,
  type StreamOpening,
} from './client-sse-stream';
import type { SseEvent } from './sse';

export interface StandaloneHost {
  readonly policy: ReconnectPolicy;
  readonly signal: AbortSignal;
  readonly maxMessageBytes: number;
  /** GETs the stream on `session`, resuming after `lastEventId` when given. */
  openStreamOn(lastEventId: string | undefined, session: string | undefined): Promise<StreamOpening>;
  deliver(frame: InboundFrame): void;
  report(event: HttpClientEvent): void;
  /** The server answered 404 for `session`. */
  sessionLost(session: string): Promise<void>;
}

export class StandaloneStream implements FollowedStream {
  readonly kind = 'standalone';
  readonly interruption = new Interruption();
  private stopped = false;

  constructor(
    private readonly host: StandaloneHost,
    /** The session this stream listens on. */
    private readonly session: string | undefined,
  ) {}

  get policy(): ReconnectPolicy {
    return this.host.policy;
  }

  get signal(): AbortSignal {
    return this.host.signal;
  }

  get maxLineLength(): number {
    return this.host.maxMessageBytes + 1024;
  }

  start(): void {
    void this.run();
  }

  /** Stops following the stream (its session was replaced). */
  stop(): void {
    this.stopped = true;
    this.interruption.interrupt();
  }

  private async run(): Promise<void> {
    const outcome = await followSseStream(this);
    if (outcome.kind === 'session-gone' && this.session !== undefined) {
      await this.host.sessionLost(this.session).catch(() => undefined); // the transport ends or fails itself
    } else if (outcome.kind === 'lost') {
      this.host.report({ type: 'stream-lost', stream: 'standalone', error: outcome.error });
    }
  }

  open(lastEventId: string | undefined): Promise<StreamOpening> {
    return this.host.openStreamOn(lastEventId, this.session);
  }

  onEvent(event: SseEvent): void {
    const frame = frameOf(event, this.host.maxMessageBytes);
    if (frame) this.host.deliver(frame);
  }

  isDone(): boolean {
    return this.stopped;
  }

  onReconnecting(attempt: number, delayMs: number, lastEventId: string | undefined): void {
    this.host.report({ type: 'reconnecting', stream: 'standalone', attempt, delayMs, lastEventId });
  }
}
