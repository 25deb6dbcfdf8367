/**
 * How a trace tells a timeout from another cancel: the requester's `notifications/cancelled` says why. Ours
 * sends `TIMEOUT_CANCEL_REASON`; other peers word it their own way ("Request timed out", "timeout").
 */
export const TIMEOUT_CANCEL_REASON = 'The request timed out';

/** Whether a cancel's `reason` says its request timed out. */
export function isTimeoutReason(reason: unknown): boolean {
  return typeof reason === 'string' && /timed out|timeout/i.test(reason);
}
