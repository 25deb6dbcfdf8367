/**
 * What an upstream asks of the hub's downstream clients: its sampling and elicitation requests, routed to
 * the client whose call is in flight on it (else to the hub's fallback, the only client), and the
 * completion notices of URL elicitations, routed to the client that was asked.
 */
import type { Logger } from '../core/logger';
import type { ClientContext } from '../client/features';
import { ErrorCode, McpError } from '../jsonrpc/errors';
import type { JsonObject, JsonRpcNotification } from '../jsonrpc/types';
import type { ServerConnection } from '../server/server';
import { relayedRequestParams } from './forwarded-meta';
import type { CallsInFlight } from './upstream-calls';
import type { DownstreamTarget } from './upstream-options';

/** URL elicitations remembered for routing their completion notice; the oldest are forgotten beyond it. */
const MAX_URL_ELICITATIONS = 1_000;

export interface RequestRouting {
  readonly upstream: string;
  readonly logger: Logger;
  readonly calls: CallsInFlight;
  /** Where a request goes when no call of this upstream is in flight. */
  fallbackTarget(method: string): DownstreamTarget | undefined;
}

export class UpstreamRequestRouter {
  private readonly urlElicitations = new Map<string, ServerConnection>();

  constructor(private readonly routing: RequestRouting) {}

  /** Sends `method` from the upstream (its request `upstreamContext`) to the downstream client it is for. */
  async route(method: string, params: JsonObject, upstreamContext: ClientContext): Promise<JsonObject> {
    const { upstream, fallbackTarget } = this.routing;
    const target = this.callerTarget(method) ?? fallbackTarget(method);
    if (!target) {
      throw new McpError(
        ErrorCode.InternalError,
        `The hub has no downstream client to send ${method} from ${upstream} to: no call of this upstream is in flight and several (or no) clients are connected`,
      );
    }
    // Its span continues the upstream's request (a child of the hub's span for it), not the downstream call.
    const result = await target.request(method, relayedRequestParams(params), {
      signal: upstreamContext.signal,
      timeout: 0,
      parentRequest: upstreamContext,
    });
    if (method === 'elicitation/create' && params.mode === 'url' && typeof params.elicitationId === 'string') {
      this.rememberUrlElicitation(params.elicitationId, target.connection);
    }
    return result;
  }

  /** A notification from the upstream: a URL elicitation's completion goes to the client that was asked. */
  notified(message: JsonRpcNotification): void {
    if (message.method !== 'notifications/elicitation/complete') return;
    const id = (message.params as { elicitationId?: unknown } | undefined)?.elicitationId;
    const connection = typeof id === 'string' ? this.urlElicitations.get(id) : undefined;
    if (!connection) return;
    this.urlElicitations.delete(id as string);
    if (connection.state !== 'ready') return;
    connection
      .notify(message.method, message.params)
      .catch((error) =>
        this.routing.logger.debug(`[${this.routing.upstream}] Could not forward ${message.method}`, error),
      );
  }

  private callerTarget(method: string): DownstreamTarget | undefined {
    const caller = this.routing.calls.callerOf(method, this.routing.upstream);
    if (!caller) return undefined;
    return {
      // The hub's definition is served by the hub's own Server only: every host is one of its connections.
      connection: caller.connection as ServerConnection,
      // Tied to the downstream call: cancelled with it, or when the upstream cancels its own request.
      request: (target, params, options) =>
        caller.request(target, params, { ...options, signal: AbortSignal.any([options.signal!, caller.signal]) }),
    };
  }

  private rememberUrlElicitation(id: string, connection: ServerConnection): void {
    this.urlElicitations.set(id, connection);
    if (this.urlElicitations.size > MAX_URL_ELICITATIONS) {
      this.urlElicitations.delete(this.urlElicitations.keys().next().value!);
    }
  }
}
