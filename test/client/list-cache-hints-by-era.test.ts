/**
 * Cache hints (`ttlMs`, `cacheScope`) belong to the 2026-07-28 revision: a client of that revision reuses a
 * listing for its `ttlMs` at most, while a handshake-era listing is kept until the list changes, whatever its
 * result carries (lib/client/client-era.ts, `listing`). The handshake-era server is the official SDK v1 one
 * whose `tools/list` answers with `ttlMs: 0` (as a server written for both revisions may); the stateless one
 * is our `Server`, whose default hint is `ttlMs: 0`.
 */
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server as SdkServer } from '@modelcontextprotocol/sdk/server/index.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { fromSdkTransport } from '../../transports/sdk-adapter';
import { cleanups } from '../helpers/cleanups';
import { serverWith, tool } from '../helpers/fixtures';
import { connectPair } from '../helpers/pair';
import { eventually } from '../helpers/wait';

describe('a tool list cache', () => {
  it('keeps a handshake-era listing until the list changes, even one that says ttlMs: 0', async () => {
    let listings = 0;
    const server = new SdkServer({ name: 'hinting', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => {
      listings++;
      return { tools: [{ name: 'echo', inputSchema: { type: 'object' as const } }], ttlMs: 0 };
    });
    const [ourSide, sdkSide] = InMemoryTransport.createLinkedPair();
    await server.connect(sdkSide);
    cleanups.push(() => server.close());
    const client = new Client({ name: 'hints-client', version: '1.0.0' }, { era: 'handshake' });
    cleanups.push(() => client.close());
    await client.connect(fromSdkTransport(ourSide));

    expect((await client.toolList.get()).map((listed) => listed.name)).toEqual(['echo']);
    expect((await client.toolList.get()).map((listed) => listed.name)).toEqual(['echo']);
    expect(listings).toBe(1);
  });

  it('lists again in the stateless revision once the listing’s ttlMs (0) has passed', async () => {
    const { client, serverConnection } = await connectPair(serverWith([tool('echo')]), {
      era: 'modern',
      eraCache: false,
      listChanges: 'off',
    });
    cleanups.push(() => client.close());
    let listings = 0;
    serverConnection.trace$.subscribe((event) => {
      if (event.direction === 'in' && event.method === 'tools/list') listings++;
    });

    expect((await client.toolList.get()).map((listed) => listed.name)).toEqual(['echo']);
    expect((await client.toolList.get()).map((listed) => listed.name)).toEqual(['echo']);
    await eventually(() => listings === 2, 'the server to receive the second tools/list');
  });
});
