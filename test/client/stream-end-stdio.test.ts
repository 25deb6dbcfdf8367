/**
 * The client's streams when a real stdio server is killed with SIGKILL, in both eras, without a reconnect
 * policy: `notifications$`, `logs$` and `toolList.changes$` error with a `ConnectionClosedError` carrying the
 * quit reason, as the resource subscriptions do (test/client/subscription-end.test.ts).
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

describe.each(ERAS)(
  'the streams of a client whose stdio server is killed (%s era)',
  (era) => {
    it('error with a ConnectionClosedError carrying the quit reason', async () => {
      const transport = reconnectServerTransport();
      const client = new Client({ name: 'c', version: '1' }, { era, eraCache: false, eraProbeTimeout: SLOW_START_MS });
      cleanups.push(() => client.close());
      await client.connect(transport);
      expect(client.connectedEra).toBe(era);
      const streams = {
        'The notification stream': follow(client.notifications$),
        'The log stream': follow(client.logs$),
        'The tools list stream': follow(client.toolList.changes$),
      };
      const tools = await within(streams['The tools list stream'].first, 'the tool list');
      expect(tools.map((tool) => tool.name)).toEqual(['touch', 'whoami']);
      process.kill(transport.pid!, 'SIGKILL');
      for (const [name, stream] of Object.entries(streams)) {
        const error = await within(stream.ended, name);
        expect(error).toBeInstanceOf(ConnectionClosedError);
        expect((error as ConnectionClosedError).quitReason?.kind).not.toBe('local-close');
        expect((error as Error).message).toMatch(new RegExp(`^${name} ended: the connection closed \\(.+\\)$`));
      }
      await within(transport.exited, 'the child to exit');
      expect(isAlive(transport.pid!)).toBe(false);
    });
  },
  3 * SLOW_START_MS,
);
