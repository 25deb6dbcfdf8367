import type { ServerRequest } from './server-port';

/** Who a request counts against in the per-client quotas: the remote address (the authenticated subject later). */
export type ClientKey = (request: ServerRequest) => string;

export const remoteAddressKey: ClientKey = (request) => request.socket.remoteAddress ?? 'unknown';
