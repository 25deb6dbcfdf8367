/**
 * A client with a reconnect policy whose stdio server is killed with SIGKILL: the policy's factory starts a
 * new child, the client redoes the handshake (or the probe) with it and subscribes again, in both eras, and
 * no child outlives `close()`.
 */
import { describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { StdioClientTransport } from '../../transports/stdio';
import { cleanups } from '../helpers/cleanups';
import { deferred } from '../helpers/fixtures';
import { isAlive } from '../helpers/processes';
import { within } from '../helpers/wait';
import { reconnectServerTransport, SLOW_START_MS } from '../helpers/reconnect-fixture';

const ERAS = ['handshake', 'modern'] as const;

/** A client in `era`, connected to the reconnect fixture as a child; its policy starts a new child per attempt. */
async function reconnectingStdioClient(era: (typeof ERAS)[number]) {
  const children: StdioClientTransport[] = [];
  const spawn = () => {
    const transport = reconnectServerTransport();
    children.push(transport);
    return transport;
  };
  const client = new Client(
    { name: 'c', version: '1' },
    {
      era,
      eraCache: false,
      eraProbeTimeout: SLOW_START_MS,
      reconnect: { transport: spawn, initialDelayMs: 10, jitter: 0, attemptTimeoutMs: SLOW_START_MS },
    },
  );
  cleanups.push(() => client.close());
  await client.connect(spawn());
  expect(client.connectedEra).toBe(era);
  return { client, children };
}

describe.each(ERAS)(
  'a reconnecting client of a stdio server killed with SIGKILL (%s era)',
  (era) => {
    it('starts a new child, subscribes again, and leaves no child behind after close()', async () => {
      const { client, children } = await reconnectingStdioClient(era);
      const firstPid = (await client.callTool('whoami')).content[0];

      let updates = 0;
      let arrived = deferred();
      let ended: unknown;
      client.subscribeResource('notes://index').subscribe({
        next: () => {
          updates++;
          arrived.resolve();
          arrived = deferred();
        },
        error: (error) => (ended = error),
        complete: () => (ended = 'completed'),
      });
      let update = arrived.promise;
      await client.callTool('touch');
      await within(update, 'the first update');

      const reconnected = new Promise((resolve) => client.events.once('reconnected', resolve));
      process.kill(children[0]!.pid!, 'SIGKILL');
      await within(reconnected, 'the reconnection', SLOW_START_MS);
      await within(children[0]!.exited, 'the killed child to be reaped');
      expect(children).toHaveLength(2);
      expect((await client.callTool('whoami')).content[0]).not.toEqual(firstPid);

      update = arrived.promise;
      // The subscription is made again as the client reconnects; a touch answered after it is heard.
      await client.callTool('touch');
      await within(update, 'the update from the new child');
      expect(updates).toBe(2);
      expect(ended).toBeUndefined();

      await client.close();
      expect(ended).toBe('completed');
      for (const child of children) expect(isAlive(child.pid!)).toBe(false);
    });

    it('reconnects again after a second kill, each time with a new child', async () => {
      const { client, children } = await reconnectingStdioClient(era);
      for (let kill = 0; kill < 2; kill++) {
        const reconnected = new Promise((resolve) => client.events.once('reconnected', resolve));
        process.kill(children.at(-1)!.pid!, 'SIGKILL');
        expect(await within(reconnected, 'the reconnection', SLOW_START_MS)).toEqual({ attempt: 1 });
      }
      expect(children).toHaveLength(3);
      expect((await client.listResources()).map((resource) => resource.uri)).toEqual(['notes://index']);
      await client.close();
      for (const child of children) expect(isAlive(child.pid!)).toBe(false);
    });
  },
  3 * SLOW_START_MS,
);
