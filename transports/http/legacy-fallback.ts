/**
 * The fallback of the Streamable HTTP client to the HTTP+SSE transport of 2024-11-05, for servers that
 * refuse the opening `initialize` POST (400, 404, 405): the same URL is tried as an HTTP+SSE endpoint
 * (GET, expecting its `endpoint` event). The transport then hands every message to it.
 *
 * `LegacyFallback` is what the exchange carrying the opening `initialize` is given: a 2xx answer names the
 * session; an error status goes to the lifecycle machine, which decides whether to fall back (`fallingBack`).
 */
import type { IncomingMessage } from 'node:http';
import { TransportError } from '../../lib/jsonrpc/errors';
import type { HttpClientSessionEvent, HttpClientSessionState } from '../../machines/http-client-session';
import type { InboundQueue } from '../inbound-queue';
import type { HttpClientEvent } from './client-events';
import type { OpeningHost, RequestExchange } from './client-exchange';
import { describeHttpFailure, type HttpClientOptions, type HttpPeer } from './client-request';
import { LegacySseClientTransport } from './legacy-sse-client';

/** What the fallback reads of the session's lifecycle and tells it (`SessionLifecycle`). */
export interface FallbackLifecycle {
  readonly state: HttpClientSessionState;
  tell(event: HttpClientSessionEvent): void;
  adoptSession(response: IncomingMessage): void;
}

export class LegacyFallback implements OpeningHost {
  /** Once the fallback took over (`legacy`): every message goes to it. */
  transport: LegacySseClientTransport | undefined;

  constructor(
    private readonly peer: HttpPeer,
    private readonly options: HttpClientOptions,
    private readonly lifecycle: FallbackLifecycle,
    private readonly inbound: InboundQueue,
    /** The revision negotiated so far. */
    private readonly negotiated: { readonly protocolVersion: string | undefined },
    private readonly report: (event: HttpClientEvent) => void,
  ) {}

  opened(response: IncomingMessage): void {
    this.lifecycle.adoptSession(response);
  }

  refused(exchange: RequestExchange, response: IncomingMessage): Promise<void> | undefined {
    this.lifecycle.tell({ type: 'initialize.refused', status: response.statusCode ?? 0 });
    return this.lifecycle.state === 'fallingBack' ? this.takeOver(exchange, response) : undefined;
  }

  setProtocolVersion(version: string): void {
    this.transport?.setProtocolVersion(version);
  }

  /** Continues over HTTP+SSE on the same URL, resending the refused `initialize` there. */
  private async takeOver(exchange: RequestExchange, response: IncomingMessage): Promise<void> {
    let legacy: LegacySseClientTransport;
    try {
      legacy = await connectLegacyFallback(this.peer, this.options, response, exchange.describe());
    } catch (error) {
      this.lifecycle.tell({ type: 'legacy.failed' });
      // The status is the refused POST's: what the server said to the request the caller made.
      return exchange.failPending((error as Error).message, response.statusCode ?? 0);
    }
    if (this.lifecycle.state !== 'fallingBack') {
      await legacy.close();
      return exchange.failPending('The Streamable HTTP transport is closed');
    }
    this.transport = legacy;
    const version = this.negotiated.protocolVersion;
    if (version !== undefined) legacy.setProtocolVersion(version);
    legacy.messages.subscribe({
      next: (frame) => this.inbound.push(frame),
      error: (error: unknown) =>
        this.inbound.fail(error instanceof TransportError ? error : new TransportError(String(error))),
      complete: () => this.inbound.complete(),
    });
    this.report({ type: 'fallback', to: 'legacy-sse', status: response.statusCode ?? 0 });
    this.lifecycle.tell({ type: 'legacy.ready' });
    exchange.handOver(); // the messages waiting go to the legacy transport, after this one
    return legacy.send(exchange.message);
  }
}

/**
 * Connects a legacy transport on the URL whose `initialize` POST got `refusal`; rejects with a
 * `TransportError` naming both failures when the URL is no HTTP+SSE endpoint either.
 */
async function connectLegacyFallback(
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
