/**
 * The `Transport` port and the JSON-RPC message types that every transport's public signatures name. Each
 * transport entry re-exports them (`export type * from './port-types'`), so a subpath stands alone.
 */
export type { Transport, TransportSendOptions } from './transport';
export type { TracedNetwork } from '../lib/trace/instrumentation';
export type * from '../lib/jsonrpc/types';
