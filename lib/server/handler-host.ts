/**
 * The host the server's request handlers run on, in each era: a handshake-era session (`ServerConnection`)
 * or one stateless request (`ModernRequest`). Apart from the handlers (handlers.ts) so that what they
 * delegate to (the tasks) can name it without importing them.
 */
import type { ClientCapabilities, Implementation, InitializeResult, LoggingLevel } from '../protocol/types';
import type { ProtocolVersion } from '../protocol/versions';
import type { ListName, ServerHost, ServerSessionHost } from './context';
import type { ServerDefinition } from './definition';
import type { SubscriptionHub } from './subscriptions';
import type { TaskService } from './tasks/task-service';

/** What the handlers of both eras need of their host besides what every request has: the definition and list reads. */
export interface ServedDefinition {
  /** The server's definition when the request arrived (it may change while a session lives). */
  readonly definition: ServerDefinition;
  /** A list was read (the hub hears of it through the connection's `listed` event). */
  listed(list: ListName): void;
  /** The server's tasks, when it serves any (a tool with `execution.taskSupport`). */
  readonly tasks?: TaskService;
}

/** The host the handlers of both eras run on. */
export type ServerHandlersHost = ServerHost & ServedDefinition;

/** What the handshake era's own handlers need: the handshake, the session's log level and resource subscriptions. */
export interface SessionHandlersHost extends ServedDefinition, ServerSessionHost {
  readonly subscriptions: SubscriptionHub;
  acceptInitialize(
    protocolVersion: ProtocolVersion,
    capabilities: ClientCapabilities,
    clientInfo: Implementation,
  ): InitializeResult;
  setLogLevel(level: LoggingLevel): void;
}
