import type { IncomingMessage } from 'node:http';

/** Who a request counts against in the per-client quotas: the remote address (the authenticated subject later). */
export type ClientKey = (request: IncomingMessage) => string;

export const remoteAddressKey: ClientKey = (request) => request.socket.remoteAddress ?? 'unknown';
