/**
 * The lifecycle of one Streamable HTTP session: handshake -> active -> closing -> closed, with the reason it
 * ended as output. It hears only rare events: the handshake's outcome, DELETE, eviction (the session table
 * needs the room), the connection closing, the server shutting down, and its own idle check. Requests never reach it: the session counts its open HTTP
 * responses in a plain counter, and the machine's one timer (on the actor system's clock) asks, when it
 * fires, how long the session has been idle. Idle for the whole timeout, it expires; otherwise the check is
 * re-armed for the earliest moment the session could expire. Per-message routing stays in plain records in
 * `transports/http/http-session.ts`.
 */
import { assign, setup } from 'xstate';

/** Why a session ended: the machine's output. */
export type HttpSessionEndReason =
  /** The client sent DELETE. */
  | 'deleted'
  /** No open request or stream for the idle timeout. */
  | 'expired'
  /** Idle, and evicted to make room: the session table was full, or its client was over its quota. */
  | 'evicted'
  /** The MCP connection closed (the server closed it, or it failed). */
  | 'connection-closed'
  /** The HTTP handler was closed. */
  | 'server-closed'
  /** `initialize` was answered with an error, or its POST ended before the answer. */
  | 'handshake-failed';

/** What the machine asks of its session. The machine decides; the host keeps the counts and does the I/O. */
export interface HttpSessionHost {
  /** How long the session has had no open HTTP response, in ms of the actor system's clock; 0 while one is open. */
  idleForMs(): number;
  /** Entered `closing`: end every stream, answer open POSTs, end the connection, then send `released`. */
  release(reason: HttpSessionEndReason): void;
  /** Entered `closed`: forget the session (later requests naming it get 404). */
  finish(reason: HttpSessionEndReason): void;
}

export interface HttpSessionInput {
  readonly host: HttpSessionHost;
  /** How long the session may stay idle (no open HTTP response) before it expires; `Infinity`: never. */
  readonly idleTimeoutMs: number;
}

export type HttpSessionEvent =
  | { type: 'handshake.done' }
  | { type: 'handshake.failed' }
  | { type: 'delete' }
  /** The session table needs the room; the host sends it only while the session is idle. */
  | { type: 'evict' }
  | { type: 'connection.closed' }
  | { type: 'server.close' }
  /** The host finished releasing the session. */
  | { type: 'released' };

export type HttpSessionState = 'handshake' | 'active' | 'closing' | 'closed';

interface HttpSessionContext {
  readonly host: HttpSessionHost;
  readonly idleTimeoutMs: number;
  readonly reason?: HttpSessionEndReason;
}

/** The longest delay a Node timer takes (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

const end = (reason: HttpSessionEndReason) => ({
  target: '#httpSession.closing',
  actions: { type: 'recordReason' as const, params: reason },
});

/** Ways out of every live state. */
const ENDINGS = {
  delete: end('deleted'),
  evict: end('evicted'),
  'connection.closed': end('connection-closed'),
  'server.close': end('server-closed'),
};

/**
 * `handshake` lasts until `initialize` is answered; no idle check runs there. `active` runs the idle check:
 * a session that has been idle for the whole timeout when it fires expires, any other re-enters `active`,
 * which arms the check again for the rest of the timeout. `closing` waits for the host's `released`.
 */
export const httpSessionMachine = setup({
  types: {
    context: {} as HttpSessionContext,
    events: {} as HttpSessionEvent,
    input: {} as HttpSessionInput,
    output: {} as HttpSessionEndReason,
  },
  actions: {
    recordReason: assign({ reason: (_, reason: HttpSessionEndReason) => reason }),
    release: ({ context }) => context.host.release(context.reason!),
    finish: ({ context }) => context.host.finish(context.reason!),
  },
  guards: {
    idleTooLong: ({ context }) => context.host.idleForMs() >= context.idleTimeoutMs,
  },
  delays: {
    idleCheck: ({ context }) => Math.min(MAX_TIMER_MS, Math.max(1, context.idleTimeoutMs - context.host.idleForMs())),
  },
}).createMachine({
  id: 'httpSession',
  context: ({ input }) => ({ host: input.host, idleTimeoutMs: input.idleTimeoutMs }),
  initial: 'handshake',
  states: {
    handshake: {
      on: { 'handshake.done': 'active', 'handshake.failed': end('handshake-failed'), ...ENDINGS },
    },
    active: {
      after: {
        idleCheck: [
          { guard: 'idleTooLong', ...end('expired') },
          { target: 'active', reenter: true },
        ],
      },
      on: ENDINGS,
    },
    closing: {
      entry: 'release',
      on: { released: 'closed' },
    },
    closed: {
      type: 'final',
      entry: 'finish',
    },
  },
  output: ({ context }) => context.reason!,
});
