import { excerpt } from './excerpt';

/**
 * Two families of errors:
 * - `McpError` is a JSON-RPC error that crossed (or will cross) the wire: it has a numeric `code`.
 * - `SwitchboardError` subclasses are local outcomes that never came from the peer: a timeout, a cancel,
 *   a closed connection, a transport failure, a capability the peer did not declare.
 * A cancel is never reported as a timeout, and neither is ever reported as an `McpError`.
 */

export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** Implementation-defined; the TypeScript SDK uses it for request timeouts. We only read it. */
  RequestTimeout: -32001,
  ResourceNotFound: -32002,
  UrlElicitationRequired: -32042,
  /** 2026-07-28: an HTTP header disagrees with the body, or a required one is missing or malformed (HTTP 400). */
  HeaderMismatch: -32020,
  /** 2026-07-28: serving the request needs a client capability its envelope did not declare (HTTP 400). */
  MissingRequiredClientCapability: -32021,
  /** 2026-07-28: the envelope names a revision we do not serve; `data` is `{ supported, requested }` (HTTP 400). */
  UnsupportedProtocolVersion: -32022,
} as const;

/** A JSON-RPC error, received from the peer or raised by a handler to be sent to it. */
export class McpError extends Error {
  override readonly name: string = 'McpError';

  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

  /** The wire form of this error. */
  toJSON(): { code: number; message: string; data?: unknown } {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }
}

/** -32602: the request's params are not what its method takes; `message` says what (after "Invalid params: "). */
export function invalidParams(message: string, data?: unknown): McpError {
  return new McpError(ErrorCode.InvalidParams, `Invalid params: ${message}`, data);
}

/**
 * An error response relayed unchanged from another peer. A tool handler that throws one answers
 * `tools/call` with this JSON-RPC error instead of an `isError` result: how a hub passes on its
 * upstreams' protocol errors (an unknown tool, invalid params) exactly as they were sent.
 */
export class RelayedError extends McpError {
  override readonly name = 'RelayedError';

  static of(error: McpError): RelayedError {
    return error instanceof RelayedError ? error : new RelayedError(error.code, error.message, error.data);
  }
}

export type LocalErrorCode =
  | 'REQUEST_TIMEOUT'
  | 'REQUEST_CANCELLED'
  | 'CONNECTION_CLOSED'
  | 'TRANSPORT_ERROR'
  | 'CAPABILITY_NOT_SUPPORTED'
  | 'METHOD_REMOVED'
  | 'NOT_READY'
  | 'LIMIT_EXCEEDED'
  | 'UNSUPPORTED_PROTOCOL_VERSION'
  | 'RESULT_VALIDATION'
  | 'PROTOCOL_VIOLATION'
  | 'AUTHORIZATION_FAILED'
  | 'LOGIN_REQUIRED'
  | 'INVALID_TOKEN'
  | 'TOKEN_CHECK_UNAVAILABLE'
  | 'INVALID_DPOP_PROOF'
  | 'LOCK_TIMEOUT'
  | 'CATALOG_CONFLICT'
  | 'INVALID_CONFIG'
  | 'INPUT_REQUEST_FAILED'
  | 'TASK_REF_REFUSED';

/** Base of every local (never on the wire) error. `code` is a stable string to switch on. */
export abstract class SwitchboardError extends Error {
  abstract readonly code: LocalErrorCode;
}

export class RequestTimeoutError extends SwitchboardError {
  override readonly name = 'RequestTimeoutError';
  readonly code = 'REQUEST_TIMEOUT';

  constructor(
    readonly method: string,
    /** `idle`: no response or progress within `timeout`; `total`: `maxTotalTimeout` ran out. */
    readonly limit: 'idle' | 'total',
    readonly budgetMs: number,
    readonly elapsedMs: number,
  ) {
    super(
      limit === 'idle'
        ? `${method} timed out: no response within ${budgetMs} ms`
        : `${method} timed out: exceeded the maximum total time of ${budgetMs} ms`,
    );
  }
}

export class RequestCancelledError extends SwitchboardError {
  override readonly name = 'RequestCancelledError';
  readonly code = 'REQUEST_CANCELLED';

  constructor(
    readonly method: string,
    /** The AbortSignal's reason, kept locally: it is never sent to the peer. */
    readonly reason?: unknown,
  ) {
    super(`${method} was cancelled`);
  }
}

/** Why a connection ended, as its lifecycle reports it (`local-close`, `transport-closed`, `transport-error`, ...). */
export interface ClosedConnectionReason {
  readonly kind: string;
  readonly message: string;
}

export class ConnectionClosedError extends SwitchboardError {
  override readonly name = 'ConnectionClosedError';
  readonly code = 'CONNECTION_CLOSED';
  /** The connection's quit reason, when the error reports a connection that has ended. */
  readonly quitReason: ClosedConnectionReason | undefined;

  constructor(message = 'Connection closed', options?: { cause?: unknown; quitReason?: ClosedConnectionReason }) {
    super(message, options);
    this.quitReason = options?.quitReason;
  }
}

export class TransportError extends SwitchboardError {
  override readonly name = 'TransportError';
  readonly code = 'TRANSPORT_ERROR';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Raised locally when we would call a method the peer did not declare, or one our role may not send. */
export class CapabilityNotSupportedError extends SwitchboardError {
  override readonly name = 'CapabilityNotSupportedError';
  readonly code = 'CAPABILITY_NOT_SUPPORTED';

  constructor(
    readonly method: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Raised locally when we would send a request or notification that the peer's protocol revision removed
 * (`ping` or `logging/setLevel` to a 2026-07-28 server): nothing is sent. `replacement` says what replaced it.
 */
export class MethodRemovedError extends SwitchboardError {
  override readonly name = 'MethodRemovedError';
  readonly code = 'METHOD_REMOVED';

  constructor(
    readonly method: string,
    /** The revision that removed the method (the connection's). */
    readonly revision: string,
    readonly replacement: string,
  ) {
    super(methodRemovedMessage(method, revision, replacement));
  }
}

/** The text of a `MethodRemovedError` (also the gate's refusal). */
export function methodRemovedMessage(method: string, revision: string, replacement: string): string {
  return `Cannot send ${method}: protocol revision ${revision} removed it (${replacement})`;
}

/** Raised locally when a message may not flow in the connection's current lifecycle state. */
export class NotReadyError extends SwitchboardError {
  override readonly name = 'NotReadyError';
  readonly code = 'NOT_READY';
}

/** Raised locally when a bound would be exceeded (too many requests in flight). */
export class LimitExceededError extends SwitchboardError {
  override readonly name = 'LimitExceededError';
  readonly code = 'LIMIT_EXCEEDED';
}

export class UnsupportedProtocolVersionError extends SwitchboardError {
  override readonly name = 'UnsupportedProtocolVersionError';
  readonly code = 'UNSUPPORTED_PROTOCOL_VERSION';

  constructor(
    readonly offered: unknown,
    readonly supported: readonly string[],
  ) {
    super(
      `The server answered protocol version ${excerpt(offered)}, which this client does not support ` +
        `(supported: ${supported.join(', ')})`,
    );
  }
}

/**
 * A JSON-RPC error response received from the peer. A handler that lets one escape does not relay it: a
 * tool's becomes an `isError` result like any failure (throw `RelayedError.of(error)` to relay it).
 */
export class PeerError extends McpError {
  override readonly name: string = 'PeerError';

  static of(error: McpError): PeerError {
    return error instanceof PeerError ? error : new PeerError(error.code, error.message, error.data);
  }
}

/**
 * A result from the peer that breaks the result schema of its method, or what the peer promised (a tool's
 * `outputSchema`). `method` and `path` (a JSON pointer into the result) say where, when known.
 */
export class ResultValidationError extends SwitchboardError {
  override readonly name = 'ResultValidationError';
  readonly code = 'RESULT_VALIDATION';

  constructor(
    message: string,
    readonly method?: string,
    readonly path?: string,
  ) {
    super(message);
  }
}

/** The peer broke the protocol in a way we cannot work with (for example a malformed initialize result). */
export class ProtocolViolationError extends SwitchboardError {
  override readonly name = 'ProtocolViolationError';
  readonly code = 'PROTOCOL_VIOLATION';
}

/** Turns anything a handler threw into the error object we put on the wire. */
export function toWireError(error: unknown): { code: number; message: string; data?: unknown } {
  if (error instanceof McpError) return error.toJSON();
  const message = error instanceof Error ? error.message : String(error);
  return { code: ErrorCode.InternalError, message: message || 'Internal error' };
}
