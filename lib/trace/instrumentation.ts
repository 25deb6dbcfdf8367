/**
 * The vendor-neutral request instrumentation port: a span per request, in either direction. The trace
 * tap (`trace$`) only watches; spans must also act (write a `traceparent` into the `_meta` of what we send,
 * run a handler inside its span's context), so they hook into the request paths instead. A runtime with no
 * instrumentation pays one property read per request. `mcp-switchboard/trace/otel` implements it.
 */
import type { JsonObject, RequestId } from '../jsonrpc/types';
import type { Progress } from '../protocol/types';
import type { Redactor } from './redact';

export interface TracedRequest {
  readonly connection: string;
  readonly role: 'client' | 'server';
  readonly upstream: string | undefined;
  readonly protocolVersion: string | undefined;
  readonly method: string;
  readonly id: RequestId;
  /** As sent or received (read-only); an inbound request's `_meta` may carry a `traceparent`. */
  readonly params: JsonObject | undefined;
  /** From the connection's clock. */
  readonly time: number;
  /** Outbound only: the span of the inbound request this one is made for, when known. */
  readonly parent: RequestSpan | undefined;
  /** The runtime's redactor, for instrumentation that records payloads. */
  readonly redact: Redactor | undefined;
  /** The transport-level session (a handshake-era Streamable HTTP `Mcp-Session-Id`); stateless requests have none. */
  readonly sessionId?: string;
  /** What the connection's transport runs over, when it says. */
  readonly network?: TracedNetwork;
}

/** A connection's network, in the OpenTelemetry conventions' terms. */
export interface TracedNetwork {
  /** `pipe` for stdio, `tcp` for HTTP and WebSocket, `unix` for a socket file. */
  readonly transport?: 'pipe' | 'tcp' | 'quic' | 'unix';
  /** Lowercase: `http`, `websocket`. */
  readonly protocolName?: string;
  /** Of `protocolName`, as the conventions write it: `1.1`, `2`. */
  readonly protocolVersion?: string;
  /**
   * The peer: the server's address seen from a client (on spans and metrics), the client's seen from a server
   * (on spans only: a client's address and port would make a metric series per connection).
   */
  readonly peerAddress?: string;
  /** With `peerAddress` only. */
  readonly peerPort?: number;
}

/** How a request ended: its result, or the error (`McpError`, a JSON-RPC error object, or a local error). */
export type RequestOutcome =
  { readonly kind: 'result'; readonly result: unknown } | { readonly kind: 'error'; readonly error: unknown };

export interface RequestSpan {
  /** Outbound only: entries to add to the request's `_meta` (W3C `traceparent`, `tracestate`). */
  readonly meta?: Readonly<Record<string, string>>;
  /** The span's W3C trace id (32 lowercase hex), for the request's trace events. */
  readonly traceId?: string;
  /** The span's W3C span id (16 lowercase hex). */
  readonly spanId?: string;
  /** Inbound only: runs the handler with this span as the current context. */
  run?<T>(fn: () => T): T;
  progress(progress: Progress, time: number): void;
  /** Called once per request; a second call is ignored. */
  end(outcome: RequestOutcome, time: number): void;
}

export interface RequestInstrumentation {
  /** A request we are about to send; the span it returns may add `_meta` entries. */
  startOutbound(request: TracedRequest): RequestSpan | undefined;
  /** A request we are about to handle (or refuse). */
  startInbound(request: TracedRequest): RequestSpan | undefined;
  /** A connection's session began (its handshake succeeded, or its era was settled as stateless). */
  startSession?(session: TracedSession): SessionTiming | undefined;
}

/** A connection whose session began, with what its requests' `TracedRequest` would carry. */
export interface TracedSession {
  readonly connection: string;
  readonly role: 'client' | 'server';
  readonly upstream: string | undefined;
  readonly protocolVersion: string | undefined;
  readonly sessionId?: string;
  readonly network?: TracedNetwork;
  /** From the connection's clock. */
  readonly time: number;
}

/** What a session's instrumentation is told when it ends. */
export interface SessionTiming {
  /**
   * The connection closed: `failure` is the error it quit with (a transport error, a failed handshake, an
   * internal error), undefined for a close by either side. Called once; a second call is ignored.
   */
  end(failure: Error | undefined, time: number): void;
}

/** `params` with `entries` added to its `_meta` (a copy: messages are shared by reference). */
export function withMetaEntries(
  params: JsonObject | undefined,
  entries: Readonly<Record<string, unknown>>,
): JsonObject {
  const meta = params?._meta as JsonObject | undefined;
  return { ...params, _meta: { ...meta, ...entries } };
}
