/**
 * How a client's subscriptions end when a real stdio server dies, in both eras, without a reconnect policy:
 * they error with a `ConnectionClosedError` carrying the quit reason (never complete), and complete only
 * when the client is closed with `close()`.
 */
import { describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { ConnectionClosedError } from '../../lib/jsonrpc/errors';
import { cleanups } from '../helpers/cleanups';
import { isAlive } from '../helpers/processes';
import { within } from '../helpers/wait';
import { follow } from '../helpers/follow';
import { reconnectServerTransport, SLOW_START_MS } from '../helpers/reconnect-fixture';

const ERAS = ['handshake', 'modern'] as const;

/** A client connected in `era` to the reconnect fixture, run as a child. */
async function stdioClient(era: (typeof ERAS)[number]) {
  const transport = reconnectServerTransport();
  const client = await new Client(
    { name: 'c', version: '1' },
    { era, eraCache: false, eraProbeTimeout: SLOW_START_MS },
  ).connect(transport);
  cleanups.push(() => client.close());
  expect(client.connectedEra).toBe(era);
  return { client, transport };
}

describe.each(ERAS)(
  'subscriptions of a client whose stdio server dies (%s era)',
  (era) => {
    it('a resource subscription errors with a ConnectionClosedError when the child is killed', async () => {
      const { client, transport } = await stdioClient(era);
      const updates = follow(client.subscribeResource('notes://index'));
      await client.callTool('touch');
      expect((await within(updates.first, 'the first update')).uri).toBe('notes://index');
      process.kill(transport.pid!, 'SIGKILL');
      const error = await within(updates.ended, 'the subscription to end');
      expect(error).toBeInstanceOf(ConnectionClosedError);
      expect((error as ConnectionClosedError).quitReason?.kind).not.toBe('local-close');
      expect((error as Error).message).toContain('notes://index');
      await within(transport.exited, 'the child to exit');
      expect(isAlive(transport.pid!)).toBe(false);
    });

    it('a resource subscription completes when the client is closed, and the child ends', async () => {
      const { client, transport } = await stdioClient(era);
      const updates = follow(client.subscribeResource('notes://index'));
      await client.callTool('touch');
      await within(updates.first, 'the first update');
      await client.close();
      expect(await within(updates.ended, 'the subscription to end')).toBe('completed');
      expect(isAlive(transport.pid!)).toBe(false);
    });
  },
  3 * SLOW_START_MS,
);

describe(
  'a listen stream of a client whose stdio server dies (modern era)',
  () => {
    it('errors with a ConnectionClosedError when the child is killed', async () => {
      const { client, transport } = await stdioClient('modern');
      const stream = follow(client.listen({ resourceSubscriptions: ['notes://index'] }));
      await within(stream.first, 'the acknowledgement');
      process.kill(transport.pid!, 'SIGKILL');
      const error = await within(stream.ended, 'the stream to end');
      expect(error).toBeInstanceOf(ConnectionClosedError);
      expect((error as ConnectionClosedError).quitReason?.kind).not.toBe('local-close');
    });
  },
  3 * SLOW_START_MS,
);
