/**
 * The seam between an HTTP transport and whatever serves stateless (2026-07-28) requests without a
 * connection: the transport classifies a POST (lib/protocol/era.ts), hands its request over with an
 * `ExchangeReply` (the POST's response, its way back to the requester), and the server answers through that
 * reply alone. On a duplex connection (stdio, WebSocket, in memory) such requests are the connection's,
 * served and answered like any other (lib/core/inbound-requests.ts).
 */
import type { EraPolicy, ModernNotificationVerdict, ModernRequestVerdict } from '../protocol/era';
import type { HeaderSource } from '../protocol/header-value';
import type { JsonRpcNotification, JsonRpcResponse } from '../jsonrpc/types';
import type { TracedNetwork } from '../trace/instrumentation';

export interface ExchangeReply {
  /**
   * A notification for the requester on this request's stream (progress, log messages, listen events),
   * before the answer. Resolves once handed to the transport; rejects when the stream is gone.
   */
  notify(message: JsonRpcNotification): Promise<void>;
  /** The answer. Nothing is sent after it; a second answer is ignored. */
  answer(message: JsonRpcResponse): Promise<void>;
  /**
   * Calls `hook` once when the requester goes away before the answer (HTTP: the response stream closed;
   * stdio: `notifications/cancelled` or the end of the stream); at once when it already has. The request is
   * cancelled then.
   */
  onAbort(hook: (reason: Error) => void): void;
  /** What the exchange runs over, for the request's span (read only with an instrumentation). */
  readonly network?: TracedNetwork;
}

/** What serves modern requests (`Server` does); transports reach it through this seam only. */
export interface ModernServer {
  /** Which revisions and methods the server serves: the classifier's policy. */
  readonly eraPolicy: EraPolicy;
  /**
   * @internal Serves one modern request; every outcome, errors included, goes through `reply`. `headers`
   * (HTTP) are checked against what the request names (a tool's `Mcp-Param-*` headers).
   */
  serveModern(request: ModernRequestVerdict, reply: ExchangeReply, headers?: HeaderSource): void;
  /**
   * @internal A modern notification that came on its own (an HTTP POST answered 202): nothing acts on it, but the
   * trace shows it arrived.
   */
  noteModernNotification?(notification: ModernNotificationVerdict): void;
}
