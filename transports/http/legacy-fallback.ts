/**
 * The fallback of the Streamable HTTP client to the HTTP+SSE transport of 2024-11-05, for servers that
 * refuse the opening `initialize` POST (400, 404, 405): the same URL is tried as an HTTP+SSE endpoint
 * (GET, expecting its `endpoint` event). The transport then hands every message to it.
 */
import type { IncomingMessage } from 'node:http';
import { TransportError } from '../../lib/jsonrpc/errors';
import { describeHttpFailure, type HttpClientOptions, type HttpPeer } from './client-request';
import { LegacySseClientTransport } from './legacy-sse-client';

/**
 * Connects a legacy transport on the URL whose `initialize` POST got `refusal`; rejects with a
 * `TransportError` naming both failures when the URL is no HTTP+SSE endpoint either.
 */
export async function connectLegacyFallback(
  peer: HttpPeer,
  options: HttpClientOptions,
  refusal: IncomingMessage,
  what: string,
): Promise<LegacySseClientTransport> {
  const refused = await describeHttpFailure(refusal, what);
  const legacy = new LegacySseClientTransport(peer.url, {
    ...(options.headers && { headers: options.headers }),
    ...(options.authorization && { authorization: options.authorization }),
    agent: peer.agent,
    maxMessageBytes: peer.maxMessageBytes,
  });
  try {
    await legacy.connect();
    return legacy;
  } catch (error) {
    await legacy.close();
    throw new TransportError(
      `${refused.message}; falling back to the HTTP+SSE transport failed too: ${(error as Error).message}`,
      { cause: error },
    );
  }
}
