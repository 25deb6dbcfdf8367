/**
 * What `trace check` reports: the findings a CI job fails on, their rules (what `--allow` names), and the
 * allow list that excuses some of them.
 */
import type { RequestId } from '../../jsonrpc/types';

/**
 * `unanswered`: a request never answered, by the end of the trace or before its connection closed.
 * `timeout`: a request its sender gave up on after its timeout. `late-answer`: an answer that came after its
 * request timed out or was cancelled. `invalid-frame`: a message that is not JSON-RPC. `unknown-id`: a
 * response to an id no request has. `duplicate-id`: a request reusing the id of one still in flight.
 * `era-violation`: a message the connection's protocol era does not allow (or not from that side).
 * `error`: a JSON-RPC error response (`error:<code>` in an allow list names one code), a request that got no
 * JSON-RPC answer (an error event without a message: HTTP status, timeout), or a client's era probe that
 * failed (a probe that falls back to the handshake is no finding). `slow`: an answer slower than
 * `--max-latency`.
 */
export const FINDING_RULES = [
  'unanswered',
  'timeout',
  'late-answer',
  'invalid-frame',
  'unknown-id',
  'duplicate-id',
  'era-violation',
  'error',
  'slow',
] as const;
export type FindingRule = (typeof FINDING_RULES)[number];

export interface Finding {
  readonly rule: FindingRule;
  readonly connection: string;
  /** The connection's name or upstream, when the trace gave one. */
  readonly name?: string;
  readonly method?: string;
  readonly id?: RequestId;
  /** When it was seen (for `unanswered`: when the request was sent or received). */
  readonly time: number;
  /** What happened, in a sentence. */
  readonly detail: string;
  /** `error`: the JSON-RPC error code. */
  readonly code?: number;
}

/** Rules excused whole, and error codes excused one by one (`error:-32601`). */
export interface AllowList {
  readonly rules: ReadonlySet<FindingRule>;
  readonly errorCodes: ReadonlySet<number>;
}

export const NOTHING_ALLOWED: AllowList = { rules: new Set(), errorCodes: new Set() };

export function isAllowed(finding: Finding, allow: AllowList): boolean {
  if (allow.rules.has(finding.rule)) return true;
  return finding.rule === 'error' && finding.code !== undefined && allow.errorCodes.has(finding.code);
}

/** An `--allow` entry: a rule, or `error:<code>`; a message saying what is wrong otherwise. */
export function parseAllowEntry(text: string): { rule: FindingRule } | { errorCode: number } | { problem: string } {
  const code = /^error:(-?\d+)$/.exec(text);
  if (code) return { errorCode: Number(code[1]) };
  if ((FINDING_RULES as readonly string[]).includes(text)) return { rule: text as FindingRule };
  return { problem: `"${text}" is not a rule: use ${FINDING_RULES.join(', ')}, or error:<code> (error:-32601)` };
}
