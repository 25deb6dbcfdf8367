/**
 * What a server-side handler gets: a `RequestContext` whose `connection` is the narrow `ServerHost`, not
 * the `ServerConnection` class, and a completer's context. The catalogs (tools, resources, prompts,
 * completion) type their handlers with these, so none of them imports `server.ts` (which imports them)
 * or another catalog for a type.
 */
import type { ConnectionState } from '../../machines/connection';
import type { RequestContext, RequestHost } from '../core/request-context';
import type {
  ClientCapabilities,
  Completion,
  Implementation,
  LoggingLevel,
  ServerCapabilities,
} from '../protocol/types';

/**
 * What every request a client sends the server has, in both eras, as its handlers see it: who asked, what
 * the client declared and what the server declared. On a handshake-era session these are the session's; a
 * stateless request carries them in its `_meta`.
 */
export interface ServerRequestHost extends RequestHost {
  readonly role: 'server';
  /** The client's name and version (its `initialize`, or the request's `_meta`). */
  readonly clientInfo: Implementation | undefined;
  readonly clientCapabilities: ClientCapabilities | undefined;
  /** The capabilities the server declared (answered `initialize` with, or the definition's). */
  readonly capabilities: ServerCapabilities;
  /** The minimum level of `notifications/message` the client asked for (`logging/setLevel`, or the request's `_meta`). */
  readonly logLevel: LoggingLevel | undefined;
}

/** A request of a handshake-era session (`ServerConnection`): the session's lifecycle and its requests both ways. */
export interface ServerSessionHost extends ServerRequestHost {
  readonly era: 'handshake';
  readonly state: ConnectionState;
  /** Requests to the client awaiting their answer, and the client's requests being handled. */
  readonly pendingRequestCount: number;
  readonly activeHandlerCount: number;
}

/** A stateless (2026-07-28) request: only its envelope, nothing of a session. */
export interface StatelessRequestHost extends ServerRequestHost {
  readonly era: 'modern';
}

/** The host of a server-side request, by era: `context.connection.era` tells which (and narrows the type). */
export type ServerHost = ServerSessionHost | StatelessRequestHost;

/** The lists a client can read (`listed` names which). */
export type ListName = 'tools' | 'resources' | 'resourceTemplates' | 'prompts';

/** The context of a request a client sent to the server. */
export type ServerContext = RequestContext<ServerHost>;

export interface CompletionContext {
  /** Values the user already chose for the other arguments (2025-06-18 and later; empty before). */
  readonly arguments: Readonly<Record<string, string>>;
  readonly request: ServerContext;
}

/**
 * Suggests values for one argument of a prompt or one variable of a resource template, given what the
 * user typed so far. Returning more than 100 values is fine: the rest is reported with `hasMore`.
 */
export type Completer = (
  value: string,
  context: CompletionContext,
) => readonly string[] | Completion | Promise<readonly string[] | Completion>;
