/**
 * Renewing a session the server ended (404): the handshake is replayed on a new session. The remembered
 * `initialize` goes again under an id of the transport's own, and its answer is checked, not delivered (the
 * connection saw the first one): it must accept and keep the negotiated revision. Then
 * `notifications/initialized` goes on the new session. What the handshake is lives in `client-protocol.ts`.
 */
import type { IncomingMessage } from 'node:http';
import { encodeFrame } from '../../lib/jsonrpc/codec';
import { TransportError } from '../../lib/jsonrpc/errors';
import { clipText } from '../../lib/jsonrpc/excerpt';
import type { InboundFrame, JsonRpcRequest } from '../../lib/jsonrpc/types';
import { isResponse, RequestExchange, type ExchangeHost } from './client-exchange';
import { INITIALIZED_NOTIFICATION, negotiatedVersionOf, replayedInitialize } from './client-protocol';

/** What a renewal needs of its transport. */
export interface RenewalHost extends Pick<
  ExchangeHost,
  'peer' | 'policy' | 'signal' | 'post' | 'authorizeAgain' | 'openStream' | 'report'
> {
  /** The answer to the replayed `initialize` came: it names the new session. */
  adoptSession(response: IncomingMessage): void;
  /** POSTs a notification on the new session; resolves on 2xx. */
  postNotice(body: string): Promise<void>;
}

/** Replays the handshake; rejects with a `TransportError` saying why when a new session could not be set up. */
export async function replayHandshake(
  host: RenewalHost,
  remembered: JsonRpcRequest,
  replayId: string,
  protocolVersion: string | undefined,
): Promise<void> {
  const request = replayedInitialize(remembered, replayId);
  let answer: Record<string, any> | undefined;
  const exchange = new RequestExchange(
    {
      peer: host.peer,
      policy: host.policy,
      signal: host.signal,
      post: (body, initialize) => host.post(body, initialize),
      authorizeAgain: (response, sent) => host.authorizeAgain(response, sent),
      openStream: (lastEventId) => host.openStream(lastEventId),
      report: (event) => host.report(event),
      sessionLost: () => Promise.reject(new TransportError('the new session was ended at once')),
      deliver: (frame: InboundFrame) => {
        if (!Array.isArray(frame) && isResponse(frame) && frame.id === replayId) answer = frame;
      },
      gotThrough: () => undefined,
      handedOver: () => undefined,
      forget: () => undefined,
    },
    request,
    [replayId],
    encodeFrame(request),
    { opened: (response) => host.adoptSession(response), refused: () => undefined },
  );
  await exchange.run();
  const what = `${exchange.describe()}, renewing the session`;
  if (!answer) throw new TransportError(`${what}: the answer holds no response for the request`);
  if (answer.error) throw new TransportError(`${what}: the server refused: ${clipText(answer.error.message, 500)}`);
  const version = negotiatedVersionOf(answer.result);
  if (protocolVersion !== undefined && version !== protocolVersion) {
    throw new TransportError(`${what}: the server now answers protocol version ${version}, not ${protocolVersion}`);
  }
  await host.postNotice(encodeFrame(INITIALIZED_NOTIFICATION));
}
