/**
 * The method table's per-era lookups (the table is lib/protocol/method-table.ts), built once at load: the
 * gate, the era classifier, the server and the client read them on every message's path, so each is a
 * frozen null-prototype object (a lookup allocates nothing, and `constructor` is no method).
 */
import { hasCapability } from './capabilities';
import { METHOD_TABLE, type MethodSpec, type ProtocolEra, type Removal } from './method-table';

export {
  METHOD_TABLE,
  type Direction,
  type MethodRow,
  type MethodSpec,
  type ProtocolEra,
  type Removal,
  type Revision,
} from './method-table';

export type Role = 'client' | 'server';

/** One era's column of the table, indexed. */
export interface EraMethods {
  readonly era: ProtocolEra;
  /** The era's MCP methods by name. Extension methods are not in it: the gate lets them pass once ready. */
  readonly specs: Readonly<Record<string, MethodSpec>>;
  /** The methods this era removed, with what replaced them (none in the handshake era). */
  readonly removed: Readonly<Record<string, Removal>>;
  /** The era's JSON-RPC requests a client may send (not those carried in results). */
  readonly clientRequests: Readonly<Record<string, MethodSpec>>;
  /**
   * Extension methods in this era: ours (not MCP), declared under `capabilities.experimental`, and the MCP
   * extensions' (the stateless era's tasks), declared under `capabilities.extensions`.
   */
  readonly extensions: Readonly<Record<string, MethodSpec>>;
}

/** Whether `spec` is a JSON-RPC request a client sends (not an input request carried in a result). */
function isClientRequest(spec: MethodSpec): boolean {
  return spec.kind === 'request' && spec.direction !== 'toClient' && spec.inputRequest !== true;
}

function eraMethods(era: ProtocolEra): EraMethods {
  const specs = Object.create(null) as Record<string, MethodSpec>;
  const removed = Object.create(null) as Record<string, Removal>;
  const clientRequests = Object.create(null) as Record<string, MethodSpec>;
  const extensions = Object.create(null) as Record<string, MethodSpec>;
  for (const row of METHOD_TABLE) {
    const spec = row[era];
    if (era === 'stateless' && row.removed) removed[row.method] = row.removed;
    if (era === 'stateless' && row.extensionColumn) extensions[row.method] = row.extensionColumn;
    if (!spec) continue;
    if (row.extension) extensions[row.method] = spec;
    else {
      specs[row.method] = spec;
      if (isClientRequest(spec)) clientRequests[row.method] = spec;
    }
  }
  return Object.freeze({
    era,
    specs: Object.freeze(specs),
    removed: Object.freeze(removed),
    clientRequests: Object.freeze(clientRequests),
    extensions: Object.freeze(extensions),
  });
}

/** The handshake era's column (2024-11-05 to 2025-11-25). */
export const HANDSHAKE_METHODS: EraMethods = eraMethods('handshake');

/** The stateless era's column (2026-07-28). */
export const STATELESS_METHODS: EraMethods = eraMethods('stateless');

export function methodsOf(era: ProtocolEra): EraMethods {
  return era === 'stateless' ? STATELESS_METHODS : HANDSHAKE_METHODS;
}

/** `method`'s column in `era` (the handshake era by default); undefined for extension and unknown methods. */
export function methodSpec(method: string, era: ProtocolEra = 'handshake'): MethodSpec | undefined {
  return methodsOf(era).specs[method];
}

/** Whether a party in `role` may send this method at all. */
export function maySend(spec: MethodSpec, role: Role): boolean {
  return spec.direction === 'both' || spec.direction === (role === 'client' ? 'toServer' : 'toClient');
}

/**
 * Whether `capabilities` declare the method: its capability, or any of `declaredByAny`; a method with
 * neither is always declared. The stateless era serves exactly the requests its server declares.
 */
export function declares(spec: MethodSpec, capabilities: object | undefined): boolean {
  const any = spec.declaredByAny;
  if (any !== undefined) return any.some((path) => hasCapability(capabilities, path));
  return spec.capability === undefined || hasCapability(capabilities, spec.capability);
}
