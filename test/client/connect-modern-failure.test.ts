/**
 * A stateless connect whose transport ends as the connection attaches it (after the era probe, which
 * subscribed first) fails `connect()` with the reason, rather than resolving with a client already closed.
 */
import { Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { ConnectionClosedError } from '../../lib/jsonrpc/errors';
import type { InboundFrame } from '../../lib/jsonrpc/types';
import type { Transport } from '../../lib/core/transport';
import { Server } from '../../lib/server/server';
import { defineServer } from '../../lib/server/definition';
import { createMemoryPair } from '../../transports/memory';
import { cleanups } from '../helpers/cleanups';

/** `transport`, whose `messages` refuse every subscription after the first (as a one-shot stream would). */
function subscribableOnce(transport: Transport): Transport {
  let subscriptions = 0;
  const messages = new Observable<InboundFrame>((subscriber) => {
    if (++subscriptions > 1) {
      subscriber.error(new Error('this stream has been subscribed to before'));
      return;
    }
    return transport.messages.subscribe(subscriber);
  });
  return { messages, send: (message) => transport.send(message), close: () => transport.close() };
}

describe('a stateless connect', () => {
  it('fails with the reason when the transport ends as it is attached', async () => {
    const server = new Server(defineServer({ name: 's', version: '1', tools: [] }));
    const [clientSide, serverSide] = createMemoryPair();
    server.connect(serverSide);
    const client = new Client({ name: 'c', version: '1' }, { era: 'modern' });
    cleanups.push(
      () => client.close(),
      () => server.close(),
    );
    const failure = await client.connect(subscribableOnce(clientSide)).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(failure).toBeInstanceOf(ConnectionClosedError);
    expect(failure!.message).toMatch(/closed as it connected: .*subscribed to before/);
    expect(client.state).toBe('closed');
  });
});
