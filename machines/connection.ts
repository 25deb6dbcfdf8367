import { setup } from 'xstate';
import { lifecycleLogic, type LifecycleSnapshot } from './lifecycle';

/**
 * Why a connection ended: the lifecycle's output. `internal-error`: something threw while the connection
 * handled what its peer sent (a bug, or input no check foresaw); only that connection is closed.
 */
export interface QuitReason {
  readonly kind: 'local-close' | 'transport-closed' | 'transport-error' | 'handshake-failed' | 'internal-error';
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

/** The side effects the lifecycle asks of its connection. The machine decides; the host does the I/O. */
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

export type ConnectionState = 'uninitialized' | 'initializing' | 'ready' | 'closing' | 'closed';

/**
 * The lifecycle of one MCP connection, for both roles:
 * uninitialized -> initializing -> ready -> closing -> closed.
 *
 * The client enters `initializing` when it sends `initialize` and `ready` on the response; the server
 * enters `initializing` when `initialize` arrives and `ready` as it answers (so a first request racing
 * `notifications/initialized` is served). A transport that ends skips `closing`. Per-message checks
 * read the current state; no message causes a transition, which keeps the machine off the hot path.
 */
export const connectionMachine = setup({
  types: { events: {} as ConnectionEvent },
  actions: { beginClose: () => {}, finishClose: () => {} },
}).createMachine({
  id: 'connection',
  initial: 'uninitialized',
  on: {
    'transport.closed': '.closed',
  },
  states: {
    uninitialized: {
      on: { 'initialize.start': 'initializing', close: 'closing' },
    },
    initializing: {
      on: { 'initialize.done': 'ready', close: 'closing' },
    },
    ready: {
      on: { close: 'closing' },
    },
    closing: {
      entry: 'beginClose',
    },
    closed: {
      type: 'final',
      entry: 'finishClose',
    },
  },
});

/** Per-connection data the lifecycle carries next to its state. */
export interface ConnectionData {
  readonly host: ConnectionHost;
  readonly negotiated?: Negotiated;
  /** The first reason given for ending (a local close stays the reason when the transport then ends). */
  readonly quitReason?: QuitReason;
}

export type ConnectionSnapshot = LifecycleSnapshot<ConnectionState, ConnectionData, QuitReason>;

const TRANSPORT_CLOSED: QuitReason = { kind: 'transport-closed', message: 'The transport closed' };

function quitReasonOf(data: ConnectionData): QuitReason {
  return data.quitReason ?? TRANSPORT_CLOSED;
}

/** The connection machine as actor logic (see `lifecycleLogic`). Its output is the quit reason. */
export const connectionLifecycle = lifecycleLogic<
  ConnectionState,
  ConnectionEvent,
  ConnectionData,
  { host: ConnectionHost },
  QuitReason
>({
  machine: connectionMachine,
  data: ({ host }) => ({ host }),
  reduce: (data, event) => {
    switch (event.type) {
      case 'initialize.done': {
        const { protocolVersion, peerCapabilities, peerInfo, instructions } = event;
        const negotiated: Negotiated =
          instructions === undefined
            ? { protocolVersion, peerCapabilities, peerInfo }
            : { protocolVersion, peerCapabilities, peerInfo, instructions };
        return { host: data.host, negotiated };
      }
      case 'close':
      case 'transport.closed':
        return data.quitReason ? data : { ...data, quitReason: event.reason };
      default:
        return data;
    }
  },
  actions: {
    beginClose: (data) => data.host.beginClose(quitReasonOf(data)),
    finishClose: (data) => data.host.finishClose(quitReasonOf(data)),
  },
  output: quitReasonOf,
});
