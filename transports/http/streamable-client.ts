/**
 * The client side of the Streamable HTTP transport (MCP 2025-03-26 and later), with the fallback to the
 * HTTP+SSE transport of 2024-11-05.
 *
 * - Every message is its own POST (`Accept: application/json, text/event-stream`), carrying
 *   `MCP-Session-Id` once the server issued one and `MCP-Protocol-Version` once negotiated. A POST starts
 *   only after the previous one was handed over (a request's body written, a notification's or response's
 *   status back; the opening `initialize`'s answer, which names the session), so the server receives
 *   messages in the order they were sent. (POSTs travel on different connections, so a notification could
 *   in theory overtake the request written just before it.)
 * - `send()` of a notification or response resolves once the server accepted it (2xx). `send()` of a
 *   request settles with its exchange: it resolves once the answer was delivered on `messages` (or the
 *   request was finished on our side), and rejects with a `TransportError` when the exchange failed without
 *   the server's answer (not written, a lost stream that cannot be resumed, a body we cannot read, an HTTP
 *   error status): that is how the request fails, promptly, with a local error. An HTTP error status whose
 *   body is a JSON-RPC error answers the request with that error, as the server sent it.
 * - A request's answer is a JSON body or an SSE stream. A stream that ends (or breaks) before the response
 *   is resumed with GET + `Last-Event-ID` after the server's `retry:` delay, backing off on failures. A
 *   finished request's stream is never resumed: answered, or cancelled or timed out by our side (the
 *   transport sees the `notifications/cancelled` go out).
 * - After `notifications/initialized` is accepted, the standalone GET stream is opened when the server
 *   offers it (405 = not offered) and reopened when it ends, resuming after its last event id. The messages
 *   sent meanwhile wait for the server's answer to that GET (at most 1 s): a server drops the requests it
 *   sends on a stream not open yet (the official SDK's for a request given no `relatedRequestId`).
 * - A 404 for our session means the server ended it. By default (`renewSession`) the transport starts a
 *   new session transparently: it replays the remembered `initialize` (with an id of its own, its answer
 *   swallowed) and `notifications/initialized`, then retries the message that failed and reopens the
 *   standalone stream; `events` reports `session-renewed`. A renewal that fails errors `messages` with a
 *   `TransportError` (the transport is unusable). With `renewSession: false` the transport ends instead:
 *   `messages` completes, as when the peer of a socket closes it.
 * - The first `initialize` answered 400, 404 or 405 (and `fallback` not false): the transport GETs the same
 *   URL expecting an HTTP+SSE `endpoint` event and continues over `LegacySseClientTransport`.
 * - A request whose `params._meta` claims a protocol version is a stateless-revision (2026-07-28) request
 *   (`client-modern.ts`): its POST names no session and carries `MCP-Protocol-Version` (the claimed one),
 *   `Mcp-Method`, `Mcp-Name` and the headers `send()` was given; an error status never starts the fallback,
 *   and its JSON-RPC error body answers the request. Cancelling one posts nothing. A transport that carries
 *   only modern requests never opens a session, a GET stream or sends a DELETE.
 * - `close()` is idempotent: it aborts open streams and POSTs, sends DELETE for the session (405 and any
 *   failure ignored; given up after 5 s on the runtime's clock), completes `messages` and `events`, and
 *   destroys the agent if it created it.
 *
 * The lifecycle (opening, active, renewing, falling back, legacy, ended, closing) is decided by the actor of
 * `machines/http-client-session.ts`, which joins the runtime's actor system; the I/O is in
 * `client-session.ts` and the modules it names.
 */
import type { Observable } from 'rxjs';
import type { InboundFrame, JsonRpcBatch, JsonRpcMessage } from '../../lib/jsonrpc/types';
import type { TracedNetwork } from '../../lib/trace/instrumentation';
import type { HttpClientSessionState } from '../../machines/http-client-session';
import type { Transport, TransportSendOptions } from '../transport';
import type { HttpClientEvent } from './client-events';
import { StreamableClientSession, type StreamableHttpClientOptions } from './client-session';

export type { HttpClientEvent } from './client-events';
export type { HttpClientOptions } from './client-request';
export type { StreamableHttpClientOptions } from './client-session';

export class StreamableHttpClientTransport implements Transport {
  readonly messages: Observable<InboundFrame>;
  /** What the transport did on its own: renewals, the fallback, reconnections, streams given up. */
  readonly events: Observable<HttpClientEvent>;
  private readonly session: StreamableClientSession;

  constructor(url: string | URL, options: StreamableHttpClientOptions = {}) {
    this.session = new StreamableClientSession(url, options);
    this.messages = this.session.inbound.messages;
    this.events = this.session.eventSubject.asObservable();
  }

  /** The endpoint (origin and path) this transport reaches: the client's era verdicts are kept by it. */
  get eraKey(): string {
    const url = this.session.peer.url;
    return `${url.protocol}${url.host}${url.pathname}`;
  }

  /** The session the server issued (the current one after a renewal); undefined before or without one. */
  get sessionId(): string | undefined {
    return this.session.sessionId;
  }

  /** The server's address and port, over HTTP/1.1. */
  get network(): TracedNetwork {
    return this.session.peer.network;
  }

  /** Where the session's lifecycle is. */
  get state(): HttpClientSessionState {
    return this.session.state;
  }

  setProtocolVersion(version: string): void {
    this.session.setProtocolVersion(version);
  }

  /** `options.headers`: extra headers for this message's POST (a modern `tools/call`'s `Mcp-Param-*`). */
  send(message: JsonRpcMessage | JsonRpcBatch, options?: TransportSendOptions): Promise<void> {
    return this.session.send(message, options);
  }

  close(): Promise<void> {
    return this.session.close();
  }
}
