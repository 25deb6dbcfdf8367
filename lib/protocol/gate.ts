/**
 * The gate: what may flow through a connection in its lifecycle state, for its role, at the negotiated
 * revision, given both sides' capabilities. Pure functions over a small view; the connection turns a
 * refusal into an error reply (inbound) or a rejected promise (outbound).
 *
 * A verdict that lets the message through is the shared `ALLOWED` constant (nothing is allocated on the
 * hot path); only a refusal is built.
 */
import type { ConnectionState } from '../../machines/connection';
import { isParamsObject } from '../jsonrpc/classify';
import { ErrorCode, methodRemovedMessage } from '../jsonrpc/errors';
import { clipText } from '../jsonrpc/excerpt';
import type { JsonRpcRequest } from '../jsonrpc/types';
import { describeCapability, hasCapability } from './capabilities';
import {
  HANDSHAKE_METHODS,
  maySend,
  STATELESS_METHODS,
  type EraMethods,
  type MethodSpec,
  type Removal,
  type Role,
} from './methods';
import { isAtLeast } from './versions';

/** What the gate reads of a connection. A connection is its own view: passing it allocates nothing. */
export interface GateView {
  readonly state: ConnectionState;
  readonly role: Role;
  /** The negotiated revision, once there is one. */
  readonly protocolVersion: string | undefined;
  /** The capabilities this side declared. */
  readonly capabilities: Readonly<Record<string, unknown>>;
  /** What the peer declared, once initialized. */
  readonly peerCapabilities: Readonly<Record<string, unknown>> | undefined;
}

export interface Allowed {
  readonly kind: 'allow';
}

/** Inbound: ignore the request (the connection is closing), no reply. */
export interface Dropped {
  readonly kind: 'drop';
}

/** Inbound: answer the request with this JSON-RPC error. */
export interface InboundRefusal {
  readonly kind: 'refuse';
  readonly code: number;
  readonly message: string;
}

/**
 * Outbound: the send fails locally. `closed`: the connection is closing or closed; `not-ready`: the
 * lifecycle does not allow it yet; `unsupported`: the method, its direction, the revision or a capability
 * rules it out; `removed`: the peer's revision removed the method (`MethodRemovedRefusal`).
 */
export interface OutboundRefusal {
  readonly kind: 'refuse';
  readonly reason: 'closed' | 'not-ready' | 'unsupported';
  readonly message: string;
}

/** Outbound: the connection's revision removed the method; `removal` says in which revision, and what replaced it. */
export interface MethodRemovedRefusal {
  readonly kind: 'refuse';
  readonly reason: 'removed';
  readonly message: string;
  readonly removal: Removal;
}

export type InboundVerdict = Allowed | Dropped | InboundRefusal;
export type OutboundVerdict = Allowed | OutboundRefusal | MethodRemovedRefusal;

export const ALLOWED: Allowed = Object.freeze({ kind: 'allow' });
export const DROPPED: Dropped = Object.freeze({ kind: 'drop' });

export type OutboundKind = 'request' | 'notification';

export function peerRole(role: Role): Role {
  return role === 'client' ? 'server' : 'client';
}

/** The column of the table a connection in `state` reads: a stateless connection's, else the handshake era's. */
export function methodsIn(state: ConnectionState): EraMethods {
  return state === 'modern' ? STATELESS_METHODS : HANDSHAKE_METHODS;
}

/** May the peer's request be served now? (Whether a handler exists is the connection's question, asked first.) */
export function inboundVerdict(view: GateView, message: JsonRpcRequest, inBatch: boolean): InboundVerdict {
  const method = message.method;
  const state = view.state;
  const methods = methodsIn(state);
  const spec = methods.specs[method];
  if (spec) {
    if (spec.kind !== 'request' || spec.inputRequest || !maySend(spec, peerRole(view.role)))
      return methodNotFound(method);
  } else {
    const removal = methods.removed[method];
    if (removal) return methodNotFound(method, removal);
  }
  if (state === 'closing' || state === 'closed') return DROPPED;
  if (method === 'initialize') {
    if (state !== 'uninitialized')
      return refuseIn(ErrorCode.InvalidRequest, 'initialize was already received: it may be sent once per connection');
    if (inBatch) return refuseIn(ErrorCode.InvalidRequest, 'initialize must not be part of a JSON-RPC batch');
  } else if (method !== 'ping' && state !== 'ready' && state !== 'modern') {
    return refuseIn(
      ErrorCode.InvalidRequest,
      `${method} received before initialization completed: send initialize first`,
    );
  }
  // A modern server connection negotiated nothing: each request's own revision is checked by the
  // classifier (lib/protocol/era.ts) before the request reaches its handler.
  const version = view.protocolVersion;
  if (spec && version !== undefined && (state === 'ready' || state === 'modern')) {
    if (!isAtLeast(version, spec.since)) {
      return refuseIn(
        ErrorCode.MethodNotFound,
        `Method not found: ${method} (it needs protocol version ${spec.since})`,
      );
    }
    if (gatedOut(spec, version, view.capabilities)) {
      return refuseIn(
        ErrorCode.MethodNotFound,
        `Method not found: ${method} (this ${view.role} did not declare the ${describeCapability(spec.capability!)} capability)`,
      );
    }
  }
  if (!isParamsObject(message.params))
    return refuseIn(ErrorCode.InvalidParams, `Invalid params: "params" must be an object`);
  return ALLOWED;
}

/** The refusal for a request this side does not serve (no handler, the method goes the other way, or was removed). */
export function methodNotFound(method: string, removal?: Removal): InboundRefusal {
  const why = removal ? ` (removed in ${removal.revision}: ${removal.replacement})` : '';
  return refuseIn(ErrorCode.MethodNotFound, `Method not found: ${clipText(method)}${why}`);
}

/** May this side send `method` (as a `kind`) now? Extension methods (not in the method table) pass once ready. */
export function outboundVerdict(view: GateView, method: string, kind: OutboundKind): OutboundVerdict {
  const state = view.state;
  if (state === 'closing' || state === 'closed')
    return refuseOut('closed', `Cannot send ${method}: the connection is ${state}`);
  const role = view.role;
  const methods = methodsIn(state);
  const spec = methods.specs[method];
  if (spec) {
    if (spec.kind !== kind) return refuseOut('unsupported', `${method} is a ${spec.kind}, not a ${kind}`);
    if (!maySend(spec, role)) return refuseOut('unsupported', `A ${role} cannot send ${method}`);
    if (spec.inputRequest) {
      return refuseOut('unsupported', `${method} travels only inside an input_required result in this revision`);
    }
  } else {
    const removal = methods.removed[method];
    if (removal) return refuseRemoved(method, removal);
  }
  if (state !== 'ready' && state !== 'modern') {
    return mayPrecedeReady(method, role, state)
      ? ALLOWED
      : refuseOut('not-ready', `Cannot send ${method} before initialization completes (state: ${state})`);
  }
  const version = view.protocolVersion;
  if (!spec || version === undefined) return ALLOWED;
  if (!isAtLeast(version, spec.since)) {
    return refuseOut(
      'unsupported',
      `${method} needs protocol version ${spec.since} or later; ${version} was negotiated`,
    );
  }
  const senderGated = spec.capabilityOf === 'sender';
  if (gatedOut(spec, version, senderGated ? view.capabilities : view.peerCapabilities)) {
    const capability = describeCapability(spec.capability!);
    return refuseOut(
      'unsupported',
      senderGated
        ? `Cannot send ${method}: this ${role} did not declare the ${capability} capability`
        : `The ${peerRole(role)} did not declare the ${capability} capability, so ${method} cannot be used`,
    );
  }
  return ALLOWED;
}

/** Why a JSON-RPC batch may not be served, or undefined: batches exist in revision 2025-03-26 only. */
export function batchRefusal(view: GateView, length: number): InboundRefusal | undefined {
  if (length === 0) return refuseIn(ErrorCode.InvalidRequest, 'Invalid Request: an empty batch');
  if (view.protocolVersion !== '2025-03-26') {
    return refuseIn(
      ErrorCode.InvalidRequest,
      'Invalid Request: JSON-RPC batches are only allowed with protocol version 2025-03-26',
    );
  }
  return undefined;
}

/** Whether `spec`'s capability gate (checked against `capabilities`) keeps it out at `version`. */
function gatedOut(
  spec: MethodSpec,
  version: string | undefined,
  capabilities: Readonly<Record<string, unknown>> | undefined,
): boolean {
  if (!spec.capability) return false;
  if (spec.capabilitySince && version !== undefined && !isAtLeast(version, spec.capabilitySince)) return false;
  return !hasCapability(capabilities, spec.capability);
}

/** Before `ready` only the handshake, ping, logging, and cancel/progress for those may flow. */
function mayPrecedeReady(method: string, role: Role, state: ConnectionState): boolean {
  switch (method) {
    case 'ping':
    case 'notifications/cancelled':
    case 'notifications/progress':
      return true;
    case 'initialize':
      return role === 'client' && state === 'initializing';
    case 'notifications/message':
      return role === 'server';
    default:
      return false;
  }
}

function refuseIn(code: number, message: string): InboundRefusal {
  return { kind: 'refuse', code, message };
}

function refuseOut(reason: OutboundRefusal['reason'], message: string): OutboundRefusal {
  return { kind: 'refuse', reason, message };
}

function refuseRemoved(method: string, removal: Removal): MethodRemovedRefusal {
  const message = methodRemovedMessage(method, removal.revision, removal.replacement);
  return { kind: 'refuse', reason: 'removed', message, removal };
}
