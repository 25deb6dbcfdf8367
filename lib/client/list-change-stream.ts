/**
 * How a client connected in the stateless revision (2026-07-28) hears that the server's lists changed: such
 * a server sends no notification outside a request's stream, so list changes come on one background
 * `subscriptions/listen` stream. It is open only while something needs it (a list cache, a subscriber of
 * `notifications$`): most clients never ask, and a server holds a bounded number of streams.
 *
 * A refused or failed stream is one log line and a state (`ListChangesStatus`), not an error per client.
 */
import type { Subscription } from 'rxjs';
import type { Logger } from '../core/logger';
import { ConnectionClosedError } from '../jsonrpc/errors';
import { listen, type ListenFilter, type ListenHost } from './listen';

/**
 * Whether the server's list changes reach `notifications$` and the list caches, and how or why not:
 * - `session`: the handshake era, where the server sends them on the session;
 * - `listening`: the `subscriptions/listen` stream is open;
 * - `idle`: nothing needs them yet, so no stream is open (it opens on the first need);
 * - `off`: the client was created with `listChanges: 'off'`;
 * - `undeclared`: the server declares no list that can change (no `listChanged` capability);
 * - `refused`: the server refused the stream (`reason` says why: a server holds a bounded number of them);
 * - `ended`: the stream ended (`reason`); it opens again when something needs it after everything released it;
 * - `disconnected`: not connected (yet, or any more).
 */
export type ListChangesState =
  'session' | 'listening' | 'idle' | 'off' | 'undeclared' | 'refused' | 'ended' | 'disconnected';

export interface ListChangesStatus {
  /** True when list changes are heard now (`session` or `listening`). */
  readonly heard: boolean;
  readonly state: ListChangesState;
  /** For `refused` and `ended`: what the server answered, or how the stream ended. */
  readonly reason?: string;
}

const STATUS: Readonly<Record<Exclude<ListChangesState, 'refused' | 'ended'>, ListChangesStatus>> = {
  session: { heard: true, state: 'session' },
  listening: { heard: true, state: 'listening' },
  idle: { heard: false, state: 'idle' },
  off: { heard: false, state: 'off' },
  undeclared: { heard: false, state: 'undeclared' },
  disconnected: { heard: false, state: 'disconnected' },
};

/** A status while no stream exists (shared objects: a status costs a client nothing). */
export function fixedListChangesStatus(state: Exclude<ListChangesState, 'refused' | 'ended'>): ListChangesStatus {
  return STATUS[state];
}

/** The list-change stream of one modern connection, open while its need count is above zero. */
export class ListChangeStream {
  private needs = 0;
  private subscription: Subscription | undefined;
  private current: ListChangesStatus = STATUS.idle;
  private stopped = false;

  constructor(
    private readonly host: ListenHost,
    private readonly filter: ListenFilter,
    private readonly logger: Logger,
  ) {}

  get status(): ListChangesStatus {
    return this.current;
  }

  /** One more need (`count` of them at once); the first opens the stream. */
  need(count = 1): void {
    this.needs += count;
    if (this.needs > 0 && this.subscription === undefined && !this.stopped && this.current.state !== 'refused') {
      this.open();
    }
  }

  /** One need fewer; the stream closes with the last one (a refusal is forgotten: the next need asks again). */
  release(): void {
    if (--this.needs > 0) return;
    this.needs = 0;
    this.close();
    if (!this.stopped) this.current = STATUS.idle;
  }

  /** The connection is closing: the stream is cancelled and never opens again. */
  stop(): void {
    this.stopped = true;
    this.close();
    this.current = STATUS.disconnected;
  }

  private open(): void {
    this.current = STATUS.listening;
    // The listen request settles on a later tick, so `opened` is assigned before its callbacks run.
    const opened = listen(this.host, this.filter).subscribe({
      error: (error: unknown) => this.failed(opened, error),
      complete: () => this.ended(opened, 'the server ended the stream'),
    });
    if (!opened.closed) this.subscription = opened;
  }

  private close(): void {
    const subscription = this.subscription;
    this.subscription = undefined;
    subscription?.unsubscribe();
  }

  private failed(stream: Subscription, error: unknown): void {
    // The connection ended on its own (the server went away): the close says so, not this stream.
    if (error instanceof ConnectionClosedError) return this.ended(stream, 'the connection closed');
    const reason = error instanceof Error ? error.message : String(error);
    if (this.subscription === stream) this.subscription = undefined;
    this.current = { heard: false, state: 'refused', reason };
    this.logger.warn(`List changes are not heard: the server refused subscriptions/listen (${reason})`);
  }

  private ended(stream: Subscription, reason: string): void {
    if (this.subscription === stream) this.subscription = undefined;
    if (this.stopped) return;
    this.current = { heard: false, state: 'ended', reason };
    this.logger.debug(`The list-change stream (subscriptions/listen) ended: ${reason}`);
  }
}
