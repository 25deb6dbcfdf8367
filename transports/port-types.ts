/**
 * The `Transport` port and the JSON-RPC message types that every transport's public signatures name. Each
 * transport entry re-exports them (`export type * from './port-types'`), so a subpath stands alone; the list
 * is written once, here.
 */
export type { Transport, TransportSendOptions } from './transport';
export type {
  InboundFrame,
  JsonObject,
  JsonRpcBatch,
  JsonRpcErrorObject,
  JsonRpcErrorResponse,
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
  JsonRpcResultResponse,
  RequestId,
  UnreadableFrame,
} from '../lib/jsonrpc/types';
