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

/** The server's side of one client connection, as its request handlers see it. `ServerConnection` implements it. */
export interface ServerHost extends RequestHost {
  readonly role: 'server';
  readonly state: ConnectionState;
  /** Requests to the client awaiting their answer, and the client's requests being handled. */
  readonly pendingRequestCount: number;
  readonly activeHandlerCount: number;
  /** What the client declared in `initialize` (undefined before). */
  readonly clientInfo: Implementation | undefined;
  readonly clientCapabilities: ClientCapabilities | undefined;
  /** The capabilities the server answered `initialize` with (the definition's, until then). */
  readonly capabilities: ServerCapabilities;
  /** The minimum level of `notifications/message` the client asked for (`logging/setLevel`). */
  logLevel: LoggingLevel | undefined;
}

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
