/**
 * The inbound side of a request: its result is checked against the method's result rule for the
 * negotiated revision before the caller sees it, and an error response becomes a `PeerError`. Both roles
 * route their outbound requests through `checkedResponse`.
 */
import { McpError, PeerError, ResultValidationError } from '../jsonrpc/errors';
import type { JsonObject } from '../jsonrpc/types';
import { resultRules } from './result-rules';
import { isSupportedVersion, LATEST_PROTOCOL_VERSION, type ProtocolVersion } from './versions';

export type Acceptor = (result: JsonObject) => JsonObject;

function revisionOf(version: string | undefined): ProtocolVersion {
  return isSupportedVersion(version) ? version : LATEST_PROTOCOL_VERSION;
}

/** The problem with `result` as an answer to `method` in `version`, or undefined when it is fine (or `method` is unknown). */
export function resultProblem(
  method: string,
  result: unknown,
  version: string = LATEST_PROTOCOL_VERSION,
): ResultValidationError | undefined {
  const found = resultRules(revisionOf(version))[method]?.(result);
  if (!found) return undefined;
  const where = found.path === '' ? 'the result' : found.path;
  return new ResultValidationError(`${method} result: ${where} ${found.message}`, method, found.path);
}

export function passThrough(result: JsonObject): JsonObject {
  return result;
}

/** Fulfilment handlers by revision, then method: built once per revision, with its rules. */
const acceptors = new Map<ProtocolVersion, Map<string, Acceptor>>();

function acceptorsOf(version: ProtocolVersion): Map<string, Acceptor> {
  const rules = resultRules(version);
  const table = new Map<string, Acceptor>();
  for (const method of Object.keys(rules)) {
    const rule = rules[method]!;
    table.set(method, (result) => {
      if (rule(result) === undefined) return result;
      throw resultProblem(method, result, version);
    });
  }
  acceptors.set(version, table);
  return table;
}

/** The fulfilment handlers of `version`, by method (see `resultAcceptor`); a connection may keep them once ready. */
export function resultAcceptors(version: string | undefined): ReadonlyMap<string, Acceptor> {
  const revision = revisionOf(version);
  return acceptors.get(revision) ?? acceptorsOf(revision);
}

/**
 * A fulfilment handler that returns a valid result of `method` in `version` (the negotiated revision)
 * and throws `ResultValidationError` for a broken one; extension methods' results pass as they are.
 */
export function resultAcceptor(method: string, version: string | undefined): Acceptor {
  return resultAcceptors(version).get(method) ?? passThrough;
}

/** A rejection handler: an error response (an `McpError` as the correlation core makes it) becomes a `PeerError`. */
export function rethrowAsPeerError(error: unknown): never {
  throw error instanceof McpError && error.constructor === McpError ? PeerError.of(error) : error;
}

/**
 * `pending` (the promise of a request for `method`) with its result checked for `version`: a result that
 * breaks the method's rule rejects with `ResultValidationError` naming the member at fault; an error
 * response rejects with `PeerError`.
 */
export function checkedResponse(
  method: string,
  version: string | undefined,
  pending: Promise<JsonObject>,
): Promise<JsonObject> {
  return pending.then(resultAcceptor(method, version), rethrowAsPeerError);
}

/** `pending` with its result as it came; an error response still rejects with `PeerError`. */
export function uncheckedResponse(pending: Promise<JsonObject>): Promise<JsonObject> {
  return pending.then(undefined, rethrowAsPeerError);
}
