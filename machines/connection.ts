import { assign, setup } from 'xstate';

/** Why a connection ended: the machine's output. */
export interface QuitReason {
  readonly kind: 'local-close' | 'transport-closed' | 'transport-error' | 'handshake-failed';
  readonly message: string;
  readonly error?: Error;
}

/** What the peer told us during initialization. */
export interface Negotiated {
  readonly protocolVersion: string;
  readonly peerCapabilities: Readonly<Record<string, unknown>>;
  readonly peerInfo: Readonly<Record<string, unknown>>;
  readonly instructions?: string;
}

/** The side effects the machine asks of its connection. The machine decides; the host does the I/O. */
export interface ConnectionHost {
  /** Entered `closing`: reject pending requests, abort handlers, close the transport, then send `transport.closed`. */
  beginClose(reason: QuitReason): void;
  /** Entered `closed`: settle everything that is left and report the quit reason. */
  finishClose(reason: QuitReason): void;
}

export type ConnectionEvent =
  | { type: 'initialize.start' }
  | ({ type: 'initialize.done' } & Negotiated)
  | { type: 'close'; reason: QuitReason }
  | { type: 'transport.closed'; reason: QuitReason };

export interface ConnectionContext {
  readonly host: ConnectionHost;
  readonly negotiated?: Negotiated;
  readonly quitReason?: QuitReason;
}

export type ConnectionState = 'uninitialized' | 'initializing' | 'ready' | 'closing' | 'closed';

/**
 * The lifecycle of one MCP connection, for both roles:
 * uninitialized -> initializing -> ready -> closing -> closed.
 *
 * The client enters `initializing` when it sends `initialize` and `ready` on the response; the server
 * enters `initializing` when `initialize` arrives and `ready` as it answers (so a first request racing
 * `notifications/initialized` is served). A transport that ends skips `closing`. Per-message checks read
 * the current state; no message causes a transition, which keeps the machine off the hot path.
 */
export const connectionMachine = setup({
  types: {
    context: {} as ConnectionContext,
    events: {} as ConnectionEvent,
    input: {} as { host: ConnectionHost },
    output: {} as QuitReason,
  },
  actions: {
    setQuitReason: assign({
      quitReason: ({ context, event }) => context.quitReason ?? ('reason' in event ? event.reason : undefined),
    }),
    beginClose: ({ context }) => context.host.beginClose(quitReasonOf(context)),
    finishClose: ({ context }) => context.host.finishClose(quitReasonOf(context)),
  },
}).createMachine({
  id: 'connection',
  initial: 'uninitialized',
  context: ({ input }) => ({ host: input.host }),
  on: {
    'transport.closed': { target: '.closed', actions: 'setQuitReason' },
  },
  states: {
    uninitialized: {
      on: {
        'initialize.start': 'initializing',
        close: { target: 'closing', actions: 'setQuitReason' },
      },
    },
    initializing: {
      on: {
        'initialize.done': {
          target: 'ready',
          actions: assign({
            negotiated: ({ event }) => ({
              protocolVersion: event.protocolVersion,
              peerCapabilities: event.peerCapabilities,
              peerInfo: event.peerInfo,
              ...(event.instructions !== undefined && { instructions: event.instructions }),
            }),
          }),
        },
        close: { target: 'closing', actions: 'setQuitReason' },
      },
    },
    ready: {
      on: {
        close: { target: 'closing', actions: 'setQuitReason' },
      },
    },
    closing: {
      entry: 'beginClose',
    },
    closed: {
      type: 'final',
      entry: 'finishClose',
    },
  },
  output: ({ context }) => quitReasonOf(context),
});

function quitReasonOf(context: ConnectionContext): QuitReason {
  return context.quitReason ?? { kind: 'transport-closed', message: 'The transport closed' };
}
