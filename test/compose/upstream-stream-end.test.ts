/**
 * An upstream that dies while the hub subscribes to its client's streams, in both eras of the upstream: its
 * client's `notifications$` errors (lib/client/stream-end.ts), and the hub handles that as it handles the
 * upstream's death (lib/compose/session.ts): no unhandled RxJS error, no subscription left on the dead
 * client, a restart, and a downstream resource subscriber that goes on hearing updates from the new session.
 */
import { config } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Client } from '../../lib/client/client';
import { Hub } from '../../lib/compose/hub';
import { ConnectionClosedError } from '../../lib/jsonrpc/errors';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { createMemoryPair, type MemoryTransport } from '../../transports/memory';
import { cleanups } from '../helpers/cleanups';
import { recordingLogger } from '../helpers/fixtures';
import { connectToHub } from '../helpers/hub';
import { eventually, within } from '../helpers/wait';

const ERAS = ['handshake', 'modern'] as const;
const URI = 'notes://index';

/** What RxJS reports as unhandled (an error nobody subscribed to hear): it would be thrown as uncaught. */
let unhandled: unknown[] = [];
const reportedBefore = config.onUnhandledError;
beforeEach(() => {
  unhandled = [];
  config.onUnhandledError = (error) => void unhandled.push(error);
});
afterEach(() => {
  config.onUnhandledError = reportedBefore;
});

/** A hub with one upstream on a new memory pair per start; `kill()` closes the current server side. */
async function hubWithUpstream(era: (typeof ERAS)[number]) {
  const server = new Server(
    defineServer({ name: 'up', version: '1', resources: [{ uri: URI, name: 'index', read: () => 'the index' }] }),
  );
  cleanups.push(() => server.close());
  const serverSides: MemoryTransport[] = [];
  const upstreamClients: Client[] = [];
  const logger = recordingLogger();
  const hub = new Hub({
    logger,
    listChangedDebounceMs: 1,
    onUpstreamClient: (_name, client) => void upstreamClients.push(client),
    upstreams: [
      {
        name: 'up',
        era,
        supervision: { initialDelayMs: 1, maxDelayMs: 2 },
        source: {
          kind: 'transport',
          open: () => {
            const [clientSide, serverSide] = createMemoryPair();
            server.connect(serverSide);
            serverSides.push(serverSide);
            return clientSide;
          },
        },
      },
    ],
  });
  cleanups.push(() => hub.close());
  await hub.start();
  return { hub, server, upstreamClients, logger, kill: () => serverSides.at(-1)!.close() };
}

describe.each(ERAS)('a hub whose upstream (%s era) dies with a subscriber attached', (era) => {
  it('handles the error of its stream as the death, restarts it, and keeps the downstream subscriber', async () => {
    const { hub, server, upstreamClients, logger, kill } = await hubWithUpstream(era);
    const downstream = await connectToHub(hub);
    const updates: string[] = [];
    let ended: unknown;
    downstream.subscribeResource(URI).subscribe({
      next: (update) => void updates.push(update.uri),
      error: (error) => void (ended = error),
      complete: () => void (ended = 'completed'),
    });
    // The hub subscribes upstream on its own time: no event says when (so touched until heard).
    const heard = async (count: number) =>
      eventually(() => {
        server.resourceUpdated(URI);
        return updates.length >= count;
      }, `update ${count}`);
    await heard(1);

    const dying = upstreamClients[0]!;
    const death = new Promise<unknown>((resolve) => dying.notifications$.subscribe({ error: resolve }));
    const upstream = hub.upstream('up')!;
    await kill();
    const error = await within(death, 'the upstream client’s stream to error');
    expect(error).toBeInstanceOf(ConnectionClosedError);
    expect((error as ConnectionClosedError).quitReason?.kind).toBe('transport-closed');

    await eventually(() => upstreamClients.length === 2 && upstream.status.state === 'ready', 'the restart');
    await heard(updates.length + 1);
    expect(ended).toBeUndefined();
    expect(downstream.state).not.toBe('closed');
    // Nothing of the hub's is left subscribed to the dead client (a subscriber there keeps a need).
    expect(dying.listChangeNeeds).toBe(0);
    // RxJS reports an unhandled error on a later turn of the event loop: let one pass.
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(unhandled).toEqual([]);
    expect(logger.lines.filter((line) => line.startsWith('error:'))).toEqual([]);
  });
});
