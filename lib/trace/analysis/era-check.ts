/** Whether a message belongs to its connection's protocol era, read from lib/protocol's method table. */
import { maySend, methodsOf, type ProtocolEra, type Role } from '../../protocol/methods';

/** The era a connection's lifecycle says it speaks: `modern` is the stateless era, `ready` the handshake's. */
export function eraOfState(state: string | undefined): ProtocolEra | undefined {
  if (state === 'modern') return 'stateless';
  if (state === 'initializing' || state === 'ready') return 'handshake';
  return undefined;
}

/**
 * What is wrong with `sender` sending `method` as a `kind` in `era`, or undefined when nothing is (methods
 * no era knows are left to the receiver, which answers them -32601).
 */
export function eraViolation(
  era: ProtocolEra,
  method: string,
  kind: 'request' | 'notification',
  sender: Role,
): string | undefined {
  const methods = methodsOf(era);
  const spec = methods.specs[method] ?? methods.extensions[method];
  const label = era === 'stateless' ? 'the 2026-07-28 (stateless) era' : 'the handshake era';
  if (!spec) {
    const removed = methods.removed[method];
    if (removed) return `${method} does not exist in ${label}: ${removed.replacement}`;
    const other = methodsOf(era === 'stateless' ? 'handshake' : 'stateless');
    if (other.specs[method]) return `${method} does not exist in ${label}`;
    return undefined;
  }
  if (spec.kind !== kind) return `${method} is a ${spec.kind} in ${label}, sent as a ${kind}`;
  if (!maySend(spec, sender)) return `a ${sender} may not send ${method} in ${label}`;
  if (spec.inputRequest) return `${method} travels only inside an input_required result in ${label}`;
  return undefined;
}
