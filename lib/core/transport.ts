import type { Observable } from 'rxjs';
import type { InboundFrame, JsonRpcBatch, JsonRpcMessage, RequestId } from '../jsonrpc/types';
import type { TracedNetwork } from '../trace/instrumentation';

export interface TransportSendOptions {
  /** The inbound request this message belongs to: HTTP transports send it on that request's stream. */
  readonly relatedRequestId?: RequestId;
  /**
   * Extra HTTP headers for this message's POST (a modern `tools/call` carries the `Mcp-Param-*` headers of
   * its tool); transports without headers ignore them.
   */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Fail at once (a `TransportError`) when no stream the client reads can carry the message now, rather than
   * hold it until the client opens one (Streamable HTTP's standalone stream). Transports of one stream ignore it.
   */
  readonly failWithoutStream?: boolean;
}

/**
 * The one interface every transport implements (bytes <-> JSON-RPC messages).
 *
 * - `messages` carries inbound frames, in order, to one subscriber (the connection). A frame the transport
 *   could not decode arrives as a `UnreadableFrame` value. The stream completes when the transport closes and
 *   errors with a `TransportError` when it fails: failures are values, never thrown exceptions.
 * - `send()` resolves once the message is handed to the underlying channel, honouring its backpressure
 *   (stdio `drain`, HTTP stream writes), and rejects with a `TransportError` once the transport is closed. A transport whose
 *   requests are exchanges (Streamable HTTP) settles a request's `send()` with its exchange: rejecting it
 *   with a `TransportError` is how a request whose exchange failed fails locally.
 * - `close()` is idempotent.
 */
export interface Transport {
  readonly messages: Observable<InboundFrame>;
  send(message: JsonRpcMessage | JsonRpcBatch, options?: TransportSendOptions): Promise<void>;
  close(): Promise<void>;
  /** Starts the transport (spawns a child, opens a socket); `Connection` calls it once, right after subscribing to `messages`. */
  start?(): Promise<void>;
  /** Told the negotiated revision once initialization succeeds (HTTP puts it in a header). */
  setProtocolVersion?(version: string): void;
  /**
   * Ends the stream carrying the messages of inbound request `relatedRequestId` while the request goes on,
   * where the transport has such streams (Streamable HTTP: the client resumes with GET + Last-Event-ID).
   * Resolves false when that request's stream cannot be resumed.
   */
  closeStream?(relatedRequestId: RequestId): Promise<boolean>;
  /** The transport-level session, when there is one (Streamable HTTP). */
  readonly sessionId?: string;
  /**
   * What the transport runs over, in the OpenTelemetry conventions' terms (`pipe` for stdio; `tcp`, `http`
   * and the peer's address for HTTP): read when a span or a session starts, with an instrumentation only.
   */
  readonly network?: TracedNetwork;
  /**
   * Names the server this transport reaches, for the client's era verdict cache (lib/client/era-cache.ts):
   * the origin and path of an HTTP endpoint, the command line of a stdio child. Transports that leave it
   * out (in-process links, sockets, adapters) are not probed by default.
   */
  readonly eraKey?: string;
}
