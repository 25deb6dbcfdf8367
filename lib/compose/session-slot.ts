/**
 * The session of one upstream, opened and closed when its supervision machine says so: at most one attempt
 * at a time, the session that is open, and the close still under way. Closing abandons an attempt: what it
 * opened is closed, and its outcome is never reported (so a late success cannot revive a stopped upstream).
 */
import { BehaviorSubject, type Observable } from 'rxjs';
import type { UpstreamSession } from './session';

export interface AttemptOutcome {
  /** The attempt succeeded: `session` is the open one now. */
  opened(session: UpstreamSession): void;
  failed(error: Error): void;
}

export class SessionSlot {
  private readonly sessions = new BehaviorSubject<UpstreamSession | undefined>(undefined);
  /** Aborts the attempt under way (closing what it opened so far). */
  private attempt: AbortController | undefined;
  /**
   * Every attempt and close not over yet: an abandoned attempt may still be closing what it opened (a child
   * on its shutdown ladder) while the next one runs, and a stop must wait for both.
   */
  private readonly unsettled = new Set<Promise<void>>();

  /** The open session, if any. */
  get current(): UpstreamSession | undefined {
    return this.sessions.value;
  }

  /** The open session (or undefined), then each change. Completes with `dispose`. */
  get sessions$(): Observable<UpstreamSession | undefined> {
    return this.sessions.asObservable();
  }

  /** Starts an attempt with `open`, which must close what it opened when its signal aborts. */
  open(open: (signal: AbortSignal) => Promise<UpstreamSession>, outcome: AttemptOutcome): void {
    this.attempt?.abort();
    const attempt = (this.attempt = new AbortController());
    this.track(
      open(attempt.signal).then(
        async (session) => {
          if (attempt.signal.aborted) return session.close();
          this.attempt = undefined;
          this.sessions.next(session);
          outcome.opened(session);
        },
        (error: Error) => {
          if (!attempt.signal.aborted) outcome.failed(error);
        },
      ),
    );
  }

  /** Abandons the attempt under way and closes the open session (idempotent). */
  close(): void {
    this.attempt?.abort();
    this.attempt = undefined;
    const session = this.sessions.value;
    if (!session) return;
    this.sessions.next(undefined);
    this.track(session.close());
  }

  /** Resolves once every close, and every attempt (with its cleanup), begun so far is over. */
  async settled(): Promise<void> {
    await Promise.all(this.unsettled);
  }

  dispose(): void {
    this.sessions.complete();
  }

  private track(work: Promise<void>): void {
    this.unsettled.add(work);
    const forget = () => this.unsettled.delete(work);
    work.then(forget, forget);
  }
}
