/**
 * What a network transport tells the tracing about its network (`Transport.network`), in the OpenTelemetry
 * conventions' terms: `tcp`, the protocol (`http`, `websocket`) and its version, and the peer's address and port.
 */
import type { TracedNetwork } from '../../lib/trace/instrumentation';

/** The peer a client reaches at `url`: its host (an IPv6 literal without brackets) and port (the scheme's default). */
export function urlPeer(url: URL): Pick<TracedNetwork, 'peerAddress' | 'peerPort'> {
  const secure = url.protocol === 'https:' || url.protocol === 'wss:';
  const port = url.port === '' ? (secure ? 443 : 80) : Number(url.port);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return { peerAddress: host, peerPort: port };
}

/** What a server reads of the request that opened a session (or carried a stateless request). */
export interface PeerRequest {
  readonly socket: { readonly remoteAddress?: string; readonly remotePort?: number };
  readonly httpVersion?: string;
}

/** The client's address and port as the server's socket sees them, when the runtime tells them. */
export function socketPeer(request: PeerRequest): Pick<TracedNetwork, 'peerAddress' | 'peerPort'> {
  const { remoteAddress, remotePort } = request.socket;
  return {
    ...(remoteAddress !== undefined && { peerAddress: remoteAddress }),
    ...(remoteAddress !== undefined && remotePort !== undefined && { peerPort: remotePort }),
  };
}

/** A client reaching `url` over `node:http`/`node:https` (HTTP/1.1). */
export function httpClientNetwork(url: URL): TracedNetwork {
  return { transport: 'tcp', protocolName: 'http', protocolVersion: '1.1', ...urlPeer(url) };
}

/** A server's session (or stateless request) opened by `request`. */
export function httpServerNetwork(request: PeerRequest): TracedNetwork {
  return {
    transport: 'tcp',
    protocolName: 'http',
    ...(request.httpVersion !== undefined && { protocolVersion: httpVersionName(request.httpVersion) }),
    ...socketPeer(request),
  };
}

/** Node's `2.0` is the conventions' `2`; `1.1` stays. */
const httpVersionName = (version: string) => (version === '2.0' ? '2' : version);
