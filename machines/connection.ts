import type { ActorLogic, ActorScope, Snapshot } from 'xstate';

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

/**
 * What the lifecycle calls on the connection that runs it (the lifecycle decides, the connection does the
 * I/O). Each call runs after the new state is in place.
 */
export interface ConnectionLifecycleHost {
  /** Entered `closing`: reject pending requests, abort handlers, close the transport, then send `transport.closed`. */
  beginClose(reason: QuitReason): void;
  /** Entered `closed`: settle everything that is left and report the quit reason. */
  finishClose(reason: QuitReason): void;
  /** The state changed (after the entry effects above): the connection traces it. */
  lifecycleChanged(from: ConnectionState, to: ConnectionState, quitReason: QuitReason | undefined): void;
}

export type ConnectionEvent =
  /** Client: `initialize` is being sent. */
  | { type: 'initialize.start' }
  /** Client: the server's answer to `initialize` was accepted. */
  | ({ type: 'initialize.done' } & Negotiated)
  /** Server: `initialize` arrived and is answered (the server's whole handshake is this one step). */
  | ({ type: 'initialize.accepted' } & Negotiated)
  /**
   * The connection speaks the stateless revision (2026-07-28): no handshake. Client: `server/discover` was
   * answered (what it said is the negotiated record). Server: the first request carried the modern envelope;
   * each request brings its own version and capabilities, so nothing is negotiated.
   */
  | { type: 'era.modern'; negotiated?: Negotiated }
  | { type: 'close'; reason: QuitReason }
  /** The transport ended; also sent by the lifecycle itself `CLOSE_TIMEOUT_MS` after entering `closing`. */
  | { type: 'transport.closed'; reason: QuitReason };

export type ConnectionState = 'uninitialized' | 'initializing' | 'ready' | 'modern' | 'closing' | 'closed';

/**
 * The whole lifecycle of one MCP connection, both roles: state -> event -> next state. An event not
 * listed for a state is ignored there. A transport that ends skips `closing`; `closed` is final.
 *
 * The client goes `uninitialized -> initializing` when it sends `initialize` and `-> ready` on the answer;
 * the server goes `uninitialized -> ready` in one step as it answers `initialize` (so a first request
 * racing `notifications/initialized` is served). Per-message checks read the state (lib/protocol/gate.ts);
 * no message causes a transition, which keeps the lifecycle off the hot path.
 *
 * The stateless era (2026-07-28) is one more state: `uninitialized` is also "not yet classified", and
 * `era.modern` moves it to `modern`, where no handshake exists and requests carry their own envelope. The
 * classifier (lib/protocol/era.ts) decides which event to send; a refused probe sends none, so a
 * connection is never latched modern by a request it rejected.
 */
export const CONNECTION_TRANSITIONS: {
  readonly [S in ConnectionState]: { readonly [E in ConnectionEvent['type']]?: ConnectionState };
} = {
  uninitialized: {
    'initialize.start': 'initializing',
    'initialize.accepted': 'ready',
    'era.modern': 'modern',
    close: 'closing',
    'transport.closed': 'closed',
  },
  initializing: { 'initialize.done': 'ready', close: 'closing', 'transport.closed': 'closed' },
  ready: { close: 'closing', 'transport.closed': 'closed' },
  modern: { close: 'closing', 'transport.closed': 'closed' },
  closing: { 'transport.closed': 'closed' },
  closed: {},
};

export const INITIAL_STATE: ConnectionState = 'uninitialized';

/**
 * How long `closing` waits for the transport to close before the connection counts as closed (and
 * `Client.close()` stops waiting for it): the lifecycle schedules a `transport.closed` on its runtime's
 * clock when it enters `closing`. The stdio client's shutdown ladder, with its defaults (2 s after stdin
 * EOF, 2 s after SIGTERM, then SIGKILL), ends the child well within it.
 */
export const CLOSE_TIMEOUT_MS = 5_000;

/** Per-connection data the lifecycle carries next to its state. */
export interface ConnectionData {
  readonly host: ConnectionLifecycleHost;
  readonly negotiated?: Negotiated;
  /** The first reason given for ending (a local close stays the reason when the transport then ends). */
  readonly quitReason?: QuitReason;
}

export type ConnectionSnapshot = Snapshot<QuitReason> & {
  readonly value: ConnectionState;
  readonly data: ConnectionData;
};

const TRANSPORT_CLOSED: QuitReason = { kind: 'transport-closed', message: 'The transport closed' };
/** The id of the close give-up among the actor's scheduled events (XState cancels it when the actor stops). */
const GIVE_UP = 'close.giveUp';

function quitReasonOf(data: ConnectionData): QuitReason {
  return data.quitReason ?? TRANSPORT_CLOSED;
}

/** The data after a step taken for `event`. */
function nextData(data: ConnectionData, event: ConnectionEvent): ConnectionData {
  switch (event.type) {
    case 'initialize.done':
    case 'initialize.accepted': {
      const { protocolVersion, peerCapabilities, peerInfo, instructions } = event;
      const negotiated: Negotiated =
        instructions === undefined
          ? { protocolVersion, peerCapabilities, peerInfo }
          : { protocolVersion, peerCapabilities, peerInfo, instructions };
      return { host: data.host, negotiated };
    }
    case 'era.modern':
      return event.negotiated ? { host: data.host, negotiated: event.negotiated } : data;
    case 'close':
    case 'transport.closed':
      return data.quitReason ? data : { ...data, quitReason: event.reason };
    default:
      return data;
  }
}

type Scope = ActorScope<ConnectionSnapshot, ConnectionEvent>;

/** The effects of entering `to`: run by XState after the snapshot is in place, in this order. */
function enter(from: ConnectionState, to: ConnectionState, data: ConnectionData, scope: Scope): void {
  const host = data.host;
  if (to === 'closing') {
    const reason = quitReasonOf(data);
    const giveUp: ConnectionEvent = { type: 'transport.closed', reason };
    scope.system.scheduler.schedule(scope.self, scope.self, giveUp, CLOSE_TIMEOUT_MS, GIVE_UP);
    host.beginClose(reason);
  } else if (to === 'closed') {
    host.finishClose(quitReasonOf(data));
  }
  host.lifecycleChanged(from, to, data.quitReason);
}

/**
 * The connection lifecycle as XState actor logic: `CONNECTION_TRANSITIONS` plus `enter`, nothing else.
 * Its actors are real actors (children of their runtime's root, visible to inspection, `done` once
 * closed, with the quit reason as output), at the cost of a table lookup per event.
 */
export const connectionLifecycle: ActorLogic<ConnectionSnapshot, ConnectionEvent, { host: ConnectionLifecycleHost }> & {
  readonly id: 'connection';
} = {
  id: 'connection',
  config: CONNECTION_TRANSITIONS,
  getInitialSnapshot: (_scope, input) => ({
    status: 'active',
    output: undefined,
    error: undefined,
    value: INITIAL_STATE,
    data: { host: input.host },
  }),
  transition: (snapshot, event, scope) => {
    if (snapshot.status !== 'active') return snapshot;
    const from = snapshot.value;
    const to = CONNECTION_TRANSITIONS[from][event.type];
    if (to === undefined) return snapshot;
    const data = nextData(snapshot.data, event);
    scope.defer(() => enter(from, to, data, scope));
    return to === 'closed'
      ? { status: 'done', output: quitReasonOf(data), error: undefined, value: to, data }
      : { status: 'active', output: undefined, error: undefined, value: to, data };
  },
  getPersistedSnapshot: (snapshot) => snapshot,
};
