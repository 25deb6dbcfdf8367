/**
 * The handshake's result check, and what a reconnection attempt redoes over its new transport, in the era the first `connect` found (the
 * verdict is kept, never probed again from scratch): the handshake (`initialize`, then
 * `notifications/initialized`) or the stateless revision's `server/discover`. Both are one exchange over a
 * transport nobody reads yet (`probeOnce`), so the connection, which carries on over the new transport, sees
 * none of it but its trace: the exchange, and the rediscovery's verdict (`era-probe probing → modern`, or
 * `failed`). A server that comes back speaking another revision is refused: the connection's negotiated
 * revision does not change.
 */
import type { Clock } from '../core/clock';
import type { ConnectionTrace } from '../core/connection-trace';
import type { Transport } from '../core/transport';
import { McpError, ProtocolViolationError, TransportError, UnsupportedProtocolVersionError } from '../jsonrpc/errors';
import type { JsonObject } from '../jsonrpc/types';
import type { InitializeResult } from '../protocol/types';
import { isSupportedVersion, type ProtocolVersion } from '../protocol/versions';
import {
  channelOf,
  classifyProbe,
  discoverRequest,
  probeOnce,
  traceProbeVerdict,
  type ProbeOutcome,
} from './era-probe';
import { requestEnvelope } from './modern-request-stamp';

let reopenCount = 0;

/**
 * `initialize` with `params` over `transport`; `check` vets the result and names its revision, which must be
 * `version`, the one the connection negotiated. Then `notifications/initialized`.
 */
export async function redoHandshake(
  transport: Transport,
  params: JsonObject,
  version: string,
  check: (result: unknown) => string,
  timeoutMs: number,
  clock: Clock,
  trace?: ConnectionTrace,
): Promise<void> {
  const request = {
    jsonrpc: '2.0',
    id: `switchboard-reconnect-${++reopenCount}`,
    method: 'initialize',
    params,
  } as const;
  const outcome = await probeOnce(transport, request, timeoutMs, clock, trace);
  if (outcome.kind !== 'result') throw failure('initialize', outcome);
  const answered = check(outcome.result);
  if (answered !== version) {
    throw new ProtocolViolationError(
      `The server came back with revision ${answered}, where the connection negotiated ${version}: create a new client to use it`,
    );
  }
  transport.setProtocolVersion?.(version);
  await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

/**
 * `server/discover` at `version` over `transport`, from the client `who` (its envelope's capabilities and
 * info): the server must still speak that stateless revision.
 */
export async function redoDiscovery(
  transport: Transport,
  version: string,
  who: { readonly capabilities: object; readonly clientInfo: JsonObject },
  timeoutMs: number,
  clock: Clock,
  trace?: ConnectionTrace,
): Promise<void> {
  const request = discoverRequest(requestEnvelope(version, who.capabilities as JsonObject, who.clientInfo));
  const outcome = await probeOnce(transport, request, timeoutMs, clock, trace);
  const verdict = classifyProbe(outcome, [version], channelOf(transport.eraKey));
  if (verdict.kind === 'modern') return traceProbeVerdict(trace, 'probing', 'modern', `still revision ${version}`);
  const error = verdict.kind === 'error' ? verdict.error : noLongerModern(version, verdict);
  traceProbeVerdict(trace, 'probing', 'failed', error.message);
  throw error;
}

function noLongerModern(version: string, verdict: { reason: string } | { version: string }): Error {
  const why = 'reason' in verdict ? verdict.reason : `it asks for revision ${verdict.version}`;
  return new ProtocolViolationError(`The server no longer speaks the stateless revision ${version}: ${why}`);
}

/** The revision of an `initialize` result, checked (the first handshake's check, and each reconnection's). */
export function checkInitializeResult(result: InitializeResult, accepted: readonly ProtocolVersion[]): ProtocolVersion {
  if (!isSupportedVersion(result?.protocolVersion, accepted)) {
    throw new UnsupportedProtocolVersionError(result?.protocolVersion, accepted);
  }
  if (typeof result.capabilities !== 'object' || result.capabilities === null) {
    throw new ProtocolViolationError('The initialize result has no "capabilities" object');
  }
  if (typeof result.serverInfo?.name !== 'string') {
    throw new ProtocolViolationError('The initialize result has no "serverInfo" with a "name"');
  }
  return result.protocolVersion as ProtocolVersion;
}

/** Why an exchange of a reopen got no result. */
function failure(method: string, outcome: Exclude<ProbeOutcome, { kind: 'result' }>): Error {
  switch (outcome.kind) {
    case 'rpc-error':
      return new McpError(outcome.code, `${method} was refused: ${outcome.message}`, outcome.data);
    case 'timeout':
      return new TransportError(`The server did not answer ${method} within ${outcome.afterMs} ms`);
    case 'http-error':
    case 'failed':
      return outcome.error;
    case 'closed':
      return new TransportError(`The transport ended before ${method} was answered`, { cause: outcome.error });
  }
}
