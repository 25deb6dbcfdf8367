/**
 * All the Streamable HTTP client transport knows of MCP's messages, in one place: the handshake (remembered
 * and replayed when the transport renews a session the server ended) and cancellation (a cancelled request
 * is finished: its stream is never resumed). Everything else it carries without looking inside.
 */
import type {
  JsonRpcBatch,
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  RequestId,
} from '../../lib/jsonrpc/types';

const INITIALIZE = 'initialize';
const INITIALIZED = 'notifications/initialized';
const CANCELLED = 'notifications/cancelled';

function methodOf(message: JsonRpcMessage | JsonRpcBatch): unknown {
  return Array.isArray(message) ? undefined : (message as { method?: unknown }).method;
}

/** The handshake's request (a single message: `initialize` is never batched). */
export function isInitializeRequest(message: JsonRpcMessage | JsonRpcBatch): message is JsonRpcRequest {
  return methodOf(message) === INITIALIZE && (message as { id?: unknown }).id !== undefined;
}

/** The notification that completes the handshake. */
export function isInitializedNotification(message: JsonRpcMessage | JsonRpcBatch): boolean {
  return methodOf(message) === INITIALIZED;
}

/** The request a `notifications/cancelled` finishes; undefined for any other message. */
export function cancelledRequestOf(message: JsonRpcMessage | JsonRpcBatch): RequestId | undefined {
  if (methodOf(message) !== CANCELLED) return undefined;
  const id = (message as JsonRpcNotification).params?.requestId;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/** The remembered `initialize`, sent again on a new session under an id of the transport's own. */
export function replayedInitialize(remembered: JsonRpcRequest, id: string): JsonRpcRequest {
  return { ...remembered, id };
}

/** The notification that completes a replayed handshake. */
export const INITIALIZED_NOTIFICATION: JsonRpcNotification = { jsonrpc: '2.0', method: INITIALIZED };

/** The protocol version an `initialize` result names. */
export function negotiatedVersionOf(result: unknown): unknown {
  return (result as { protocolVersion?: unknown } | undefined)?.protocolVersion;
}
