/**
 * The inbound side of a request: its result is checked against the method's result rule for the
 * negotiated revision before the caller sees it. Both roles hand the correlation core the check of each
 * outbound request (`Connection.resultCheck`), which runs it in the step that settles the request.
 */
import { isPlainObject } from '../jsonrpc/classify';
import { ResultValidationError } from '../jsonrpc/errors';
import type { JsonObject } from '../jsonrpc/types';
import { STATELESS_METHODS } from './methods';
import { namesModernRevision } from './modern';
import { resultRules } from './result-rules';
import { problem, type Rule } from './rules';
import { isSupportedVersion, LATEST_PROTOCOL_VERSION, type ProtocolVersion } from './versions';

/** The problem with a result, or undefined when it is fine (the correlation core's `ResultValidator`). */
export type ResultValidator = (result: JsonObject) => ResultValidationError | undefined;

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
const checks = new Map<ProtocolVersion, Map<string, ResultValidator>>();

function checksOf(version: ProtocolVersion): Map<string, ResultValidator> {
  const rules = resultRules(version);
  const table = new Map<string, ResultValidator>();
  for (const method of Object.keys(rules)) {
    const rule = rules[method]!;
    table.set(method, (result) => (rule(result) === undefined ? undefined : resultProblem(method, result, version)));
  }
  checks.set(version, table);
  return table;
}

/** The result checks of `version`, by method; extension methods have none. A connection may keep them once ready. */
export function resultChecks(version: string | undefined): ReadonlyMap<string, ResultValidator> {
  if (version !== undefined && namesModernRevision(version)) return (modernTable ??= modernChecks());
  const revision = revisionOf(version);
  return checks.get(revision) ?? checksOf(revision);
}

// ---- the stateless revision (2026-07-28) ---------------------------------------------------------------

/**
 * 2026-07-28 kept the result shapes of 2025-11-25 and added members every result may carry: `resultType`
 * (absent means `complete`; an unknown value is invalid), and the cache hints `ttlMs` and `cacheScope` on
 * discover, lists and reads. An `input_required` result (allowed on tools/call, prompts/get and
 * resources/read) is checked for its own shape: the method's rule does not apply to it.
 */
const MODERN_BASE: ProtocolVersion = '2025-11-25';
const CACHE_SCOPES: ReadonlySet<unknown> = new Set(['public', 'private']);

let modernTable: Map<string, ResultValidator> | undefined;

function modernRule(method: string, base: Rule | undefined): Rule {
  return (result) => {
    if (!isPlainObject(result)) return problem('must be an object');
    const type = result.resultType;
    if (type === 'input_required') {
      if (STATELESS_METHODS.specs[method]?.mayRequireInput !== true)
        return { path: 'resultType', message: `"input_required" is not allowed for ${method}` };
      return inputRequiredProblem(result);
    }
    if (type === 'task') {
      if (method !== 'tools/call') return { path: 'resultType', message: `"task" is not allowed for ${method}` };
      return createdTaskProblem(result);
    }
    if (type !== undefined && type !== 'complete')
      return { path: 'resultType', message: 'must be "complete", "input_required" or "task"' };
    return cacheHintProblem(result) ?? base?.(result);
  };
}

function cacheHintProblem(result: Record<string, unknown>): ReturnType<Rule> {
  const ttl = result.ttlMs;
  if (ttl !== undefined && !(typeof ttl === 'number' && Number.isInteger(ttl) && ttl >= 0))
    return { path: 'ttlMs', message: 'must be a non-negative integer' };
  if (result.cacheScope !== undefined && !CACHE_SCOPES.has(result.cacheScope))
    return { path: 'cacheScope', message: 'must be "public" or "private"' };
  return undefined;
}

/** The tasks extension's `CreateTaskResult` (a `tools/call` the server made a task): the task, nothing of its end. */
function createdTaskProblem(result: Record<string, unknown>): ReturnType<Rule> {
  for (const key of ['taskId', 'status', 'createdAt', 'lastUpdatedAt']) {
    if (typeof result[key] !== 'string') return { path: key, message: 'must be a string' };
  }
  const ttl = result.ttlMs;
  if (ttl !== null && !(typeof ttl === 'number' && Number.isInteger(ttl) && ttl > 0))
    return { path: 'ttlMs', message: 'must be null or a positive integer' };
  const poll = result.pollIntervalMs;
  if (poll !== undefined && !(typeof poll === 'number' && Number.isInteger(poll) && poll > 0))
    return { path: 'pollIntervalMs', message: 'must be a positive integer' };
  return undefined;
}

function inputRequiredProblem(result: Record<string, unknown>): ReturnType<Rule> {
  const { inputRequests, requestState } = result;
  if (inputRequests === undefined && requestState === undefined)
    return problem('an input_required result must carry inputRequests or requestState');
  if (inputRequests !== undefined && !isPlainObject(inputRequests))
    return { path: 'inputRequests', message: 'must be an object' };
  if (requestState !== undefined && typeof requestState !== 'string')
    return { path: 'requestState', message: 'must be a string' };
  return undefined;
}

const discoverRule: Rule = (result) => {
  if (!isPlainObject(result)) return problem('must be an object');
  const versions = result.supportedVersions;
  if (!Array.isArray(versions) || !versions.every((version) => typeof version === 'string'))
    return { path: 'supportedVersions', message: 'must be an array of strings' };
  if (!isPlainObject(result.capabilities)) return { path: 'capabilities', message: 'must be an object' };
  return undefined;
};

function modernChecks(): Map<string, ResultValidator> {
  const rules: Record<string, Rule> = { ...resultRules(MODERN_BASE), 'server/discover': discoverRule };
  const table = new Map<string, ResultValidator>();
  for (const method of Object.keys(rules)) {
    const rule = modernRule(method, rules[method]);
    table.set(method, (result) => {
      const found = rule(result);
      if (!found) return undefined;
      const where = found.path === '' ? 'the result' : found.path;
      return new ResultValidationError(`${method} result: ${where} ${found.message}`, method, found.path);
    });
  }
  return table;
}
