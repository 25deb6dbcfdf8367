/** JSON-RPC 2.0 envelopes as MCP uses them. */

export type RequestId = string | number;

export interface JsonObject {
  [key: string]: unknown;
}

export interface JsonRpcRequest {
  readonly jsonrpc: '2.0';
  readonly id: RequestId;
  readonly method: string;
  readonly params?: JsonObject;
}

export interface JsonRpcNotification {
  readonly jsonrpc: '2.0';
  readonly method: string;
  readonly params?: JsonObject;
}

export interface JsonRpcResultResponse {
  readonly jsonrpc: '2.0';
  readonly id: RequestId;
  readonly result: JsonObject;
}

export interface JsonRpcErrorObject {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

export interface JsonRpcErrorResponse {
  readonly jsonrpc: '2.0';
  /** Absent when the id of the offending request could not be read (MCP 2025-11-25). */
  readonly id?: RequestId;
  readonly error: JsonRpcErrorObject;
}

export type JsonRpcResponse = JsonRpcResultResponse | JsonRpcErrorResponse;

export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** A JSON-RPC batch: only the 2025-03-26 revision allows these. */
export type JsonRpcBatch = readonly JsonRpcMessage[];

/** What a transport may hand to a connection: one message, a batch, or a frame it could not decode. */
export type InboundFrame = JsonRpcMessage | JsonRpcBatch | UnreadableFrame;

/**
 * A frame the transport could not turn into a message (malformed, too large, nested too deep). Transports
 * emit it as a value so the connection can answer with an error and carry on.
 */
export class UnreadableFrame {
  constructor(
    readonly code: number,
    readonly message: string,
    /** The refused message's id, when it could be read (a message nested too deep still parses). */
    readonly id?: RequestId,
    /** The refused message looks like a response (no `method`, a `result` or `error`): it gets no reply. */
    readonly response = false,
  ) {}
}
