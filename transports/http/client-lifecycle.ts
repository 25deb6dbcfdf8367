/**
 * The lifecycle of one Streamable HTTP client session as the rest of the transport sees it: the actor of
 * `machines/http-client-session.ts` (which decides every lifecycle question), the state and the session id
 * read from it, the events told to it, and why sends are refused once the session ended or closes. The
 * session id is adopted here from the answer that names it.
 */
import type { IncomingMessage } from 'node:http';
import { createActor, type Actor } from 'xstate';
import type { Runtime } from '../../lib/core/runtime';
import { TransportError } from '../../lib/jsonrpc/errors';
import {
  httpClientSessionMachine,
  type HttpClientSessionEnding,
  type HttpClientSessionEvent,
  type HttpClientSessionHost,
  type HttpClientSessionState,
} from '../../machines/http-client-session';

/** Renewals in a row without a message getting through in between before we give up. */
const MAX_RENEWALS_IN_A_ROW = 3;
/** How long `close()` waits for the DELETE of the session. */
const DELETE_TIMEOUT_MS = 5000;
const VISIBLE_ASCII = /^[\x21-\x7e]+$/;

/** The lifecycle's part of the transport options. */
export interface LifecycleOptions {
  readonly renewSession: boolean;
  readonly fallback: boolean;
  readonly runtime: Runtime;
}

export class SessionLifecycle {
  private readonly actor: Actor<typeof httpClientSessionMachine>;
  /** Why sends are refused once the session ended. */
  private endError: TransportError | undefined;

  constructor(host: HttpClientSessionHost, options: LifecycleOptions) {
    this.actor = createActor(httpClientSessionMachine, {
      input: {
        host,
        renewSession: options.renewSession,
        fallback: options.fallback,
        maxRenewalsInARow: MAX_RENEWALS_IN_A_ROW,
        closeTimeoutMs: DELETE_TIMEOUT_MS,
      },
      parent: options.runtime.root,
    }).start();
  }

  get state(): HttpClientSessionState {
    return this.actor.getSnapshot().value as HttpClientSessionState;
  }

  /** The session the server issued (the current one after a renewal); undefined before, without one, or while renewing. */
  get sessionId(): string | undefined {
    return this.actor.getSnapshot().context.sessionId;
  }

  /** Sends the machine an event, unless it is done. */
  tell(event: HttpClientSessionEvent): void {
    if (this.actor.getSnapshot().status === 'active') this.actor.send(event);
  }

  /** Why nothing may be sent in `state`, if so. */
  refusalIn(state: HttpClientSessionState): TransportError | undefined {
    if (state === 'closing' || state === 'closed') return new TransportError('The Streamable HTTP transport is closed');
    if (state === 'ended') return this.endError;
    return undefined;
  }

  /** The session ended for good: the error sends are refused with from now on. */
  ended(ending: HttpClientSessionEnding): TransportError {
    return (this.endError = endingError(ending));
  }

  /** An `initialize` answer came: the session it names, if it names a valid one, is ours from now on. */
  adoptSession(response: IncomingMessage): void {
    const id = response.headers['mcp-session-id'];
    if (typeof id === 'string' && VISIBLE_ASCII.test(id)) this.tell({ type: 'session.issued', sessionId: id });
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
