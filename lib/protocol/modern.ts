/**
 * The stateless revision, MCP 2026-07-28: its version names and the reserved `_meta` keys of the per-request
 * envelope (which methods it keeps, adds and removes: the method table, lib/protocol/method-table.ts; its
 * error codes: `ErrorCode`). Kept apart
 * from `versions.ts` so that `initialize` never negotiates a modern revision and `server/discover` never
 * advertises a handshake-era one.
 */

/** Stateless revisions we serve, newest first. */
export const MODERN_PROTOCOL_VERSIONS = ['2026-07-28'] as const;

export type ModernProtocolVersion = (typeof MODERN_PROTOCOL_VERSIONS)[number];

/** The first stateless revision: date-named revisions from this one on carry the `_meta` envelope. */
export const FIRST_MODERN_PROTOCOL_VERSION: ModernProtocolVersion = '2026-07-28';

/** The reserved keys of a request's `params._meta` (schema `RequestMetaObject`). */
export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  progressToken: 'progressToken',
  /** Result `_meta`: the server's identity (replaces `InitializeResult.serverInfo`). */
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  /** Notification `_meta`: the `subscriptions/listen` stream a notification belongs to. */
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;

const DATE_NAMED = /^\d{4}-\d{2}-\d{2}$/;

/**
 * True when a version name (an `MCP-Protocol-Version` header) names a stateless revision, supported or not:
 * a date from 2026-07-28 on. Other strings are not taken as modern: a request without an envelope and with
 * a garbage header stays handshake-era traffic, refused as it always was.
 */
export function namesModernRevision(version: string): boolean {
  return version >= FIRST_MODERN_PROTOCOL_VERSION && DATE_NAMED.test(version);
}
