/**
 * `mcp-switchboard/protocol`: the low-level pieces under `Client` and `Server`, for those who build their own
 * peer, transport, proxy or test harness: the JSON-RPC codec and message classifier, the protocol revisions,
 * the method table of both eras, the gate, the era classifier of inbound messages, the request envelope of
 * 2026-07-28, and the lifecycle machines. Runtime-neutral. These follow the protocol and the runtime's
 * internals more closely than the root entry does, so a minor version may change them (each change shows in
 * api/protocol.api.md and the changelog); the root entry's names are the stable ones.
 */

// The JSON-RPC codec and classifier.
export { decodeFrame, DEFAULT_MAX_DEPTH, DEFAULT_MAX_MESSAGE_BYTES, encodeFrame } from '../jsonrpc/codec';
export {
  classifyMessage,
  describeInvalid,
  isRequestId,
  type InvalidMessage,
  type MessageKind,
} from '../jsonrpc/classify';
export { toWireError } from '../jsonrpc/errors';
// The JSON-RPC message types, all of them.
export type * from '../jsonrpc/types';

// Protocol revisions and capabilities.
export { HTTP_DEFAULT_PROTOCOL_VERSION, isAtLeast, isSupportedVersion, negotiateVersion } from './versions';
export { SUPPORTED_PROTOCOL_VERSIONS, type ProtocolVersion } from './versions';
export {
  FIRST_MODERN_PROTOCOL_VERSION,
  META,
  MODERN_PROTOCOL_VERSIONS,
  namesModernRevision,
  type ModernProtocolVersion,
} from './modern';
export { describeCapability, hasCapability, type CapabilityPath } from './capabilities';

// The method table of both eras, and the list changes.
export {
  HANDSHAKE_METHODS,
  METHOD_TABLE,
  methodSpec,
  methodsOf,
  STATELESS_METHODS,
  type Direction,
  type EraMethods,
  type MethodRow,
  type MethodSpec,
  type ProtocolEra,
  type Removal,
  type Revision,
  type Role,
} from './methods';
export { LIST_CHANGES, listChangeOf, type ChangeableList, type ListChange, type ListChangedKind } from './list-changes';

// The gate: what may flow through a connection in its state, for its role and revision.
export {
  ALLOWED,
  batchRefusal,
  DROPPED,
  inboundVerdict,
  outboundVerdict,
  type Allowed,
  type Dropped,
  type GateView,
  type InboundRefusal,
  type InboundVerdict,
  type MethodRemovedRefusal,
  type OutboundKind,
  type OutboundRefusal,
  type OutboundVerdict,
} from './gate';

// The era classifier of inbound messages, and the 2026-07-28 request envelope.
export {
  classifyInbound,
  DEFAULT_ERA_POLICY,
  errorResponseOf,
  type EraPolicy,
  type EraVerdict as InboundEraVerdict,
  type InboundMessage,
  type HandshakeReason,
  type HandshakeVerdict,
  type ModernNotificationVerdict,
  type ModernRequestVerdict,
  type RejectVerdict,
} from './era';
export type { HeaderSource } from './header-value';
export { isEnvelopeIssue, readRequestEnvelope, type EnvelopeIssue, type RequestEnvelope } from './envelope';
export { LOGGING_LEVELS, type ClientCapabilities, type Icon, type Implementation, type LoggingLevel } from './types';

// The lifecycle machines (XState): a connection's, and a hub's upstream supervision.
export {
  CONNECTION_TRANSITIONS,
  connectionLifecycle,
  type ConnectionEvent,
  type ConnectionLifecycleHost,
  type ConnectionData,
  type ConnectionSnapshot,
  type ConnectionState,
  type Negotiated,
  type QuitReason,
} from '../../machines/connection';
export {
  upstreamMachine,
  type RestartPolicy,
  type StopReason,
  type SupervisionPolicy,
  type SupervisedUpstream,
  type UpstreamContext,
  type UpstreamEvent,
  type UpstreamInput,
} from '../../machines/upstream';
