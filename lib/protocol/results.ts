/**
 * The inbound side of a request: its result is checked against the method's result rule for the
 * negotiated revision before the caller sees it. Both roles hand the correlation core the check of each
 * outbound request (`Connection.resultCheck`), which runs it in the step that settles the request.
 */
import { ResultValidationError } from '../jsonrpc/errors';
import type { JsonObject } from '../jsonrpc/types';
import { resultRules } from './result-rules';
import { isSupportedVersion, LATEST_PROTOCOL_VERSION, type ProtocolVersion } from './versions';

/** The problem with a result, or undefined when it is fine (the correlation core's `ResultCheck`). */
export type ResultCheck = (result: JsonObject) => ResultValidationError | undefined;

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

/** Checks by revision, then method: built once per revision, with its rules. */
const checks = new Map<ProtocolVersion, Map<string, ResultCheck>>();

function checksOf(version: ProtocolVersion): Map<string, ResultCheck> {
  const rules = resultRules(version);
  const table = new Map<string, ResultCheck>();
  for (const method of Object.keys(rules)) {
    const rule = rules[method]!;
    table.set(method, (result) => (rule(result) === undefined ? undefined : resultProblem(method, result, version)));
  }
  checks.set(version, table);
  return table;
}

/** The result checks of `version`, by method; extension methods have none. A connection may keep them once ready. */
export function resultChecks(version: string | undefined): ReadonlyMap<string, ResultCheck> {
  const revision = revisionOf(version);
  return checks.get(revision) ?? checksOf(revision);
}
