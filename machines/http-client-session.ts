/**
 * The lifecycle of the client side of one Streamable HTTP connection (`transports/http/streamable-client.ts`
 * is its host): opening -> active <-> renewing, or opening -> fallingBack -> legacy (the server speaks only
 * the HTTP+SSE transport of 2024-11-05); a session the server ends (404) and that is not renewed -> ended;
 * `close` -> closing -> closed from anywhere.
 *
 * It hears only rare events: the handshake's steps, a session lost, a renewal's outcome, the fallback's
 * outcome, `close`. Requests never reach it: the host counts the exchanges that got through in a plain
 * counter, and the machine reads it only when a session is lost (renewals in a row with nothing getting
 * through in between are given up after `maxRenewalsInARow`). The machine holds what the lifecycle needs
 * to know: the session id the server issued, the `initialize` request to replay when renewing, and the
 * renewal count; the host reads the state and the session id on each send, and does all the I/O.
 *
 * Closing gives up waiting for the host (its DELETE) after `closeTimeoutMs` on the actor system's clock.
 */
import { assign, not, setup } from 'xstate';

export type HttpClientSessionState =
  /** Until `notifications/initialized` got through: the session (if any) is being set up. */
  | 'opening'
  /** The opening `initialize` was refused with 400, 404 or 405: trying HTTP+SSE on the same URL. */
  | 'fallingBack'
  /** The handshake is done: messages go to the session; the standalone stream listens. */
  | 'active'
  /** The server ended the session (404): replaying the handshake on a new one; messages wait. */
  | 'renewing'
  /** Every message goes over the legacy HTTP+SSE transport. */
  | 'legacy'
  /** The session is over and will not be renewed; only `close` is left. */
  | 'ended'
  | 'closing'
  | 'closed';

/** Why the transport ended before `close()`. */
export type HttpClientSessionEnding =
  /** The server ended the session and renewing is off, or impossible (the handshake never completed). */
  | { readonly reason: 'session-ended' }
  /** A renewal failed with `error`. */
  | { readonly reason: 'renewal-failed'; readonly error: unknown }
  /** The server ended `maxRenewalsInARow` new sessions in a row with nothing getting through. */
  | { readonly reason: 'renewals-exhausted'; readonly renewals: number };

/** What the machine asks of its transport. The machine decides; the host keeps the count and does the I/O. */
export interface HttpClientSessionHost {
  /** Exchanges that got through so far (2xx): a plain counter the host bumps; read when a session is lost. */
  exchangesThrough(): number;
  /** Entered `active`: open the standalone GET stream on `sessionId` (when offered and wanted). */
  listen(sessionId: string | undefined): void;
  /** Entered `renewing`: replay `initialize` (then send `session.issued`, `renewal.done` or `renewal.failed`). */
  renew(initialize: unknown): void;
  /** A renewal succeeded: report it. */
  renewed(previousSessionId: string | undefined, sessionId: string | undefined): void;
  /** Entered `ended`: stop every stream, complete (or fail) the inbound messages. */
  end(ending: HttpClientSessionEnding): void;
  /** `close`: stop every stream and POST, DELETE the session when `deleteSession`, then send `released`. */
  release(deleteSession: boolean): void;
  /** Entered `closed` (released, or gave up waiting): drop what is left, complete the streams. */
  finish(): void;
}

export interface HttpClientSessionInput {
  readonly host: HttpClientSessionHost;
  /** A 404 for the session starts a new one (false: the transport ends). */
  readonly renewSession: boolean;
  /** A refused opening `initialize` tries HTTP+SSE. */
  readonly fallback: boolean;
  readonly maxRenewalsInARow: number;
  /** How long closing waits for the host's `released` (its DELETE). */
  readonly closeTimeoutMs: number;
}

export type HttpClientSessionEvent =
  /** Our `initialize` went out (remembered for renewals). */
  | { type: 'initialize.sent'; request: unknown }
  /** An `initialize` answer named the session (the opening one, or a renewal's). */
  | { type: 'session.issued'; sessionId: string }
  /** The opening `initialize` got this HTTP error status. */
  | { type: 'initialize.refused'; status: number }
  /** `notifications/initialized` got through. */
  | { type: 'initialized' }
  /** A request carrying `sessionId` got 404. */
  | { type: 'session.lost'; sessionId: string }
  | { type: 'renewal.done' }
  | { type: 'renewal.failed'; error: unknown }
  | { type: 'legacy.ready' }
  | { type: 'legacy.failed' }
  | { type: 'close' }
  /** The host finished releasing (its DELETE answered or failed). */
  | { type: 'released' };

interface HttpClientSessionContext extends HttpClientSessionInput {
  readonly sessionId?: string;
  /** The session a renewal replaces. */
  readonly previousSessionId?: string;
  readonly initialize?: unknown;
  readonly renewalsInARow: number;
  /** `exchangesThrough()` when the last renewal began. */
  readonly throughAtRenewal: number;
  readonly ending?: HttpClientSessionEnding;
}

/** The statuses of a refused opening `initialize` that mean "try the legacy HTTP+SSE transport". */
const FALLBACK_STATUSES: ReadonlySet<number> = new Set([400, 404, 405]);

const endWith = (ending: HttpClientSessionEnding) => ({
  target: '#httpClientSession.ended',
  actions: { type: 'recordEnding' as const, params: ending },
});

/** `close` from a state where the session may be alive (a DELETE is due) or not. */
const closeFrom = (live: boolean) => ({
  close: { target: '#httpClientSession.closing', actions: { type: 'release' as const, params: { live } } },
});

export const httpClientSessionMachine = setup({
  types: {
    context: {} as HttpClientSessionContext,
    events: {} as HttpClientSessionEvent,
    input: {} as HttpClientSessionInput,
    output: {} as HttpClientSessionEnding | { readonly reason: 'closed' },
  },
  actions: {
    rememberInitialize: assign({
      initialize: ({ event }) => (event as Extract<HttpClientSessionEvent, { type: 'initialize.sent' }>).request,
    }),
    adoptSession: assign({
      sessionId: ({ event }) => (event as Extract<HttpClientSessionEvent, { type: 'session.issued' }>).sessionId,
    }),
    countRenewal: assign(({ context }) => {
      const through = context.host.exchangesThrough();
      return {
        renewalsInARow: (through === context.throughAtRenewal ? context.renewalsInARow : 0) + 1,
        throughAtRenewal: through,
        previousSessionId: context.sessionId,
        sessionId: undefined,
      };
    }),
    recordEnding: assign({ ending: (_, ending: HttpClientSessionEnding) => ending }),
    recordRenewalFailure: assign({
      ending: ({ event }) => ({
        reason: 'renewal-failed' as const,
        error: (event as Extract<HttpClientSessionEvent, { type: 'renewal.failed' }>).error,
      }),
    }),
    listen: ({ context }) => context.host.listen(context.sessionId),
    renew: ({ context }) => context.host.renew(context.initialize),
    reportRenewal: ({ context }) => context.host.renewed(context.previousSessionId, context.sessionId),
    end: ({ context }) => context.host.end(context.ending!),
    release: ({ context }, params: { live: boolean }) => context.host.release(params.live),
    finish: ({ context }) => context.host.finish(),
  },
  guards: {
    currentSession: ({ context, event }) =>
      (event as Extract<HttpClientSessionEvent, { type: 'session.lost' }>).sessionId === context.sessionId,
    mayFallBack: ({ context, event }) =>
      context.fallback &&
      FALLBACK_STATUSES.has((event as Extract<HttpClientSessionEvent, { type: 'initialize.refused' }>).status),
    renewable: ({ context }) => context.renewSession && context.initialize !== undefined,
    renewalsExhausted: ({ context }) =>
      context.host.exchangesThrough() === context.throughAtRenewal &&
      context.renewalsInARow >= context.maxRenewalsInARow,
  },
  delays: {
    closeTimeout: ({ context }) => context.closeTimeoutMs,
  },
}).createMachine({
  id: 'httpClientSession',
  context: ({ input }) => ({ ...input, renewalsInARow: 0, throughAtRenewal: -1 }),
  initial: 'opening',
  states: {
    opening: {
      on: {
        'initialize.sent': { actions: 'rememberInitialize' },
        'session.issued': { actions: 'adoptSession' },
        'initialize.refused': { guard: 'mayFallBack', target: 'fallingBack' },
        initialized: 'active',
        // Before the handshake completed there is nothing to replay.
        'session.lost': { guard: 'currentSession', ...endWith({ reason: 'session-ended' }) },
        ...closeFrom(true),
      },
    },
    fallingBack: {
      on: { 'legacy.ready': 'legacy', 'legacy.failed': 'opening', ...closeFrom(false) },
    },
    legacy: {
      on: closeFrom(false),
    },
    active: {
      entry: 'listen',
      on: {
        'session.lost': [
          { guard: not('currentSession') }, // renewed already: the sender retries on the new one
          { guard: not('renewable'), ...endWith({ reason: 'session-ended' }) },
          {
            guard: 'renewalsExhausted',
            target: 'ended',
            actions: assign({
              ending: ({ context }) => ({ reason: 'renewals-exhausted' as const, renewals: context.renewalsInARow }),
            }),
          },
          { target: 'renewing', actions: 'countRenewal' },
        ],
        ...closeFrom(true),
      },
    },
    renewing: {
      entry: 'renew',
      on: {
        'session.issued': { actions: 'adoptSession' },
        'renewal.done': { target: 'active', actions: 'reportRenewal' },
        'renewal.failed': { target: 'ended', actions: 'recordRenewalFailure' },
        ...closeFrom(true),
      },
    },
    ended: {
      entry: 'end',
      on: closeFrom(false),
    },
    closing: {
      on: { released: 'closed' },
      after: { closeTimeout: 'closed' },
    },
    closed: {
      type: 'final',
      entry: 'finish',
    },
  },
  output: ({ context }) => context.ending ?? { reason: 'closed' as const },
});
