/**
 * The client side of the deprecated HTTP+SSE transport (MCP 2024-11-05). The transport GETs the SSE
 * endpoint and keeps the stream open; the server's first event, `endpoint`, names the URL to POST every
 * message to (it must be on the same origin: a cross-origin endpoint is refused). Everything the server
 * sends, responses included, arrives as `message` events on that one stream.
 *
 * - Connects lazily: on the first `send()`, on subscribing to `messages`, or on `connect()`.
 * - `send()` resolves once the server accepted the POST (2xx, normally 202); any other status rejects it
 *   with a `TransportError` naming the status and the server's message. POSTs go one at a time, so the
 *   server receives messages in the order they were sent.
 * - The stream ending completes `messages`; the stream breaking (or failing to open) errors it with a
 *   `TransportError`. There is no resumption in this transport: a new connection is a new session.
 */
import type { IncomingMessage } from 'node:http';
import { defer, type Observable } from 'rxjs';
import { decodeFrame, encodeFrame } from '../../lib/jsonrpc/codec';
import { TransportError } from '../../lib/jsonrpc/errors';
import type { InboundFrame, JsonRpcBatch, JsonRpcMessage } from '../../lib/jsonrpc/types';
import type { TracedNetwork } from '../../lib/trace/instrumentation';
import { InboundQueue } from '../inbound-queue';
import type { Transport } from '../transport';
import {
  contentTypeOf,
  describeHttpFailure,
  discardResponse,
  headerList,
  HttpPeer,
  httpTarget,
  type HeaderList,
  type HttpClientOptions,
  type HttpRequestSpec,
  type HttpTarget,
} from './client-request';
import {
  isRefusal,
  MAX_AUTHORIZATION_RETRIES,
  renewedAuthorization,
  sendAuthorizedRequest,
} from './client-authorization';
import { readSseResponse } from './client-sse-stream';

export class LegacySseClientTransport implements Transport {
  readonly messages: Observable<InboundFrame>;
  private readonly peer: HttpPeer;
  private readonly inbound = new InboundQueue('HTTP+SSE');
  private readonly abort = new AbortController();
  /** Resolves with where POSTs go, once the server named it. */
  private connecting: Promise<HttpTarget> | undefined;
  private protocolVersion: string | undefined;
  /** Resolves once the previous POST was answered: keeps messages in order. */
  private order: Promise<void> = Promise.resolve();
  private closing: Promise<void> | undefined;
  /** Why the event stream is over, once it is: later sends are refused with it. */
  private streamEnded: string | undefined;

  /** `url` is the SSE endpoint (the GET). */
  constructor(
    url: string | URL,
    private readonly options: HttpClientOptions = {},
  ) {
    this.peer = new HttpPeer(url, options);
    this.messages = defer(() => {
      this.connect().catch(() => undefined); // a failure errors `messages`
      return this.inbound.messages;
    });
  }

  /** Opens the event stream (once) and resolves with the POST endpoint when the server names it. */
  connect(): Promise<void> {
    return this.endpoint().then(() => undefined);
  }

  /** The server's address and port, over HTTP/1.1. */
  get network(): TracedNetwork {
    return this.peer.network;
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  send(message: JsonRpcMessage | JsonRpcBatch): Promise<void> {
    if (this.closing) return Promise.reject(new TransportError('The HTTP+SSE transport is closed'));
    let body: string;
    try {
      body = encodeFrame(message);
    } catch (error) {
      return Promise.reject(new TransportError('Cannot encode the message as JSON', { cause: error }));
    }
    const turn = this.order.then(() => this.post(body));
    this.order = turn.then(
      () => undefined,
      () => undefined,
    );
    return turn;
  }

  /** Ends the event stream; `messages` completes. Idempotent. */
  close(): Promise<void> {
    return (this.closing ??= this.shutdown());
  }

  private async shutdown(): Promise<void> {
    this.abort.abort();
    this.inbound.complete();
    this.peer.release();
  }

  private endpoint(): Promise<HttpTarget> {
    if (this.closing) return Promise.reject(new TransportError('The HTTP+SSE transport is closed'));
    return (this.connecting ??= this.open());
  }

  private headers(target: HttpTarget, own: Record<string, string | undefined>): HeaderList {
    const authorization = this.options.authorization;
    // Only with an authorization configured: otherwise an `Authorization` among the extra headers stands.
    const token = authorization && { authorization: authorization.authorization() };
    return headerList(target, this.options.headers, { ...token, ...own, 'mcp-protocol-version': this.protocolVersion });
  }

  /** A request, sent again (a bounded number of times) when the authorization renewed itself after a 401/403. */
  private async authorizedRequest(spec: HttpRequestSpec, headers: () => HeaderList): Promise<IncomingMessage> {
    const authorization = this.options.authorization;
    for (let renewals = 0; ; renewals++) {
      const sent = authorization?.authorization();
      const response = await sendAuthorizedRequest({ ...spec, headers: headers() }, authorization, spec.target.url)
        .response;
      if (
        !isRefusal(response.statusCode) ||
        renewals >= MAX_AUTHORIZATION_RETRIES ||
        !(await renewedAuthorization(authorization, spec.target.url, response, sent))
      ) {
        return response;
      }
    }
  }

  private async post(body: string): Promise<void> {
    const target = await this.endpoint();
    if (this.closing) throw new TransportError('The HTTP+SSE transport is closed');
    if (this.streamEnded) throw new TransportError(`Cannot send: ${this.streamEnded}`);
    const response = await this.authorizedRequest(
      { method: 'POST', target, headers: [], body, signal: this.abort.signal },
      () => this.headers(target, { 'content-type': 'application/json' }),
    );
    const status = response.statusCode ?? 0;
    if (status >= 200 && status < 300) return discardResponse(response);
    const failure = await describeHttpFailure(response, `POST ${target.url.href}`);
    throw new TransportError(failure.message);
  }

  /** GETs the event stream; resolves with the endpoint; then keeps reading in the background. */
  private async open(): Promise<HttpTarget> {
    const what = `GET ${this.peer.url.href}`;
    try {
      const response = await this.authorizedRequest(
        { method: 'GET', target: this.peer.target, headers: [], signal: this.abort.signal },
        () => this.headers(this.peer.target, { accept: 'text/event-stream' }),
      );
      const status = response.statusCode ?? 0;
      if (status < 200 || status >= 300) throw new TransportError((await describeHttpFailure(response, what)).message);
      if (contentTypeOf(response) !== 'text/event-stream') {
        discardResponse(response);
        throw new TransportError(`${what}: expected text/event-stream, got ${contentTypeOf(response) || 'nothing'}`);
      }
      return await this.readStream(response, what);
    } catch (error) {
      const failure =
        error instanceof TransportError
          ? error
          : new TransportError(`${what} failed: ${String(error)}`, { cause: error });
      this.inbound.fail(failure);
      throw failure;
    }
  }

  /** Resolves with the endpoint once announced; delivers `message` events to `messages` after it. */
  private readStream(response: IncomingMessage, what: string): Promise<HttpTarget> {
    return new Promise((resolve, reject) => {
      let endpoint: HttpTarget | undefined;
      const reading = readSseResponse(
        response,
        (event) => {
          if (event.event === 'endpoint') {
            if (endpoint) return;
            const resolved = this.resolveEndpoint(event.data, what);
            if (resolved instanceof TransportError) {
              reject(resolved);
              return 'stop';
            }
            endpoint = httpTarget(resolved, this.peer.agent);
            resolve(endpoint);
          } else if ((event.event === undefined || event.event === 'message') && endpoint && event.data !== '') {
            this.inbound.push(decodeFrame(event.data, this.peer.maxMessageBytes));
          }
        },
        this.peer.maxMessageBytes + 1024,
      );
      void reading.then((ending) => {
        this.streamEnded =
          ending.kind === 'broken' ? `the event stream broke: ${ending.error}` : 'the event stream ended';
        if (!endpoint) {
          reject(new TransportError(`${what}: the stream ended before the server sent its endpoint event`));
        } else if (ending.kind === 'broken' && !this.closing) {
          this.inbound.fail(new TransportError(`${what}: the event stream broke: ${ending.error}`));
        } else {
          this.inbound.complete();
        }
      });
    });
  }

  private resolveEndpoint(data: string, what: string): URL | TransportError {
    let target: URL;
    try {
      target = new URL(data.trim(), this.peer.url);
    } catch {
      return new TransportError(`${what}: the endpoint event does not hold a URL: ${JSON.stringify(data)}`);
    }
    if (target.origin !== this.peer.url.origin) {
      return new TransportError(
        `${what}: refusing the endpoint ${target.href}: it is not on the origin of the SSE URL (${this.peer.url.origin})`,
      );
    }
    return target;
  }
}
