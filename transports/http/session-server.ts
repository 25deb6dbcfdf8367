/**
 * What the HTTP server transports need of the MCP server they serve: a connection over each session's
 * transport, and a way to close it. `Server` (and the compose `Hub`) satisfy it as they are, so the
 * transports never import the server layer above them.
 */
import type { ScopeRequirements } from '../../lib/auth/server/scopes';
import type { ModernServer } from '../../lib/core/exchange';
import type { Transport } from '../transport';
import type { HttpServerOptions } from './http-listener';

/** The connection serving one session, as its endpoint sees it: the endpoint only ever closes it. */
export interface SessionConnection {
  close(): Promise<unknown>;
}

/**
 * Serves the sessions of an HTTP endpoint: each one's transport gets a connection of its own. A server that
 * also serves the stateless revision (2026-07-28) has the `ModernServer` members: then requests carrying the
 * modern envelope are served one by one, without a session; otherwise they are refused as before.
 */
export interface SessionServer extends Partial<ModernServer> {
  connect(transport: Transport, options?: HttpServerOptions['connectionOptions']): SessionConnection;
  /**
   * What each tool, resource and prompt requires of a caller's token (a `Server`'s definition): read by an
   * endpoint with `auth` to refuse a call with 403 `insufficient_scope` before it reaches the server.
   */
  readonly definition?: ScopeRequirements;
}
