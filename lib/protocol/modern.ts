/**
 * The stateless revision, MCP 2026-07-28: its version names, the reserved `_meta` keys of the per-request
 * envelope, and which methods it keeps, adds and removes (its error codes are in `ErrorCode`). Kept apart
 * from `versions.ts` so that `initialize` never negotiates a modern revision and `server/discover` never
 * advertises a legacy one.
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
 * a garbage header stays legacy traffic, refused as it always was.
 */
export function namesModernRevision(version: string): boolean {
  return version >= FIRST_MODERN_PROTOCOL_VERSION && DATE_NAMED.test(version);
}

/**
 * Methods of the handshake era that 2026-07-28 removed, with what replaced them (for the error message).
 * A modern request naming one is answered 404 / -32601 whatever the server handles on legacy sessions.
 */
export const REMOVED_METHODS: ReadonlyMap<string, string> = new Map([
  ['initialize', 'the revision has no handshake: every request carries its own _meta envelope (see server/discover)'],
  ['ping', 'the revision has no ping'],
  ['logging/setLevel', `set ${META.logLevel} in each request's _meta`],
  ['resources/subscribe', 'use subscriptions/listen'],
  ['resources/unsubscribe', 'close the subscriptions/listen stream'],
  ['tasks/result', 'tasks moved to the io.modelcontextprotocol/tasks extension'],
  ['tasks/list', 'tasks moved to the io.modelcontextprotocol/tasks extension'],
  ['notifications/initialized', 'the revision has no handshake'],
  ['notifications/roots/list_changed', 'roots are requested per call as input requests'],
  ['notifications/elicitation/complete', 'URL elicitations complete through a retried request'],
]);

/** The requests a client may send a 2026-07-28 server (schema `ClientRequest`). */
export const MODERN_CLIENT_REQUESTS: ReadonlySet<string> = new Set([
  'server/discover',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'subscriptions/listen',
  'prompts/list',
  'prompts/get',
  'completion/complete',
]);
