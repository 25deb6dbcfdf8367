/**
 * `'legacy'`, the handshake era's old name, is still accepted by the client's `era` option and read as
 * `'handshake'` at once (lib/client/era-choice.ts): the client connects with `initialize` and no probe, and
 * every output names the era `'handshake'` (`connectedEra`, the handler's `ctx.era` and `ctx.connection.era`).
 * Over a memory pair, which names no `eraKey`: an era the client did not read as the handshake era would
 * probe, and find the stateless revision this server also speaks.
 */
import { describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client';
import { eraChoiceOf, type EraOption } from '../../lib/client/era-choice';
import { defineServer } from '../../lib/server/definition';
import { Server } from '../../lib/server/server';
import { createMemoryPair } from '../../transports/memory';
import { cleanups } from '../helpers/cleanups';
import { json, jsonOf } from '../helpers/content';

async function connected(era: EraOption) {
  const server = new Server(
    defineServer({
      name: 'era-alias',
      version: '1.0.0',
      tools: [
        {
          name: 'era',
          inputSchema: { type: 'object' },
          handler: (_args, ctx) => json({ era: ctx.era, connection: ctx.connection.era }),
        },
      ],
    }),
  );
  cleanups.push(() => server.close());
  const [clientSide, serverSide] = createMemoryPair();
  const connection = server.connect(serverSide);
  const received: string[] = [];
  connection.trace$.subscribe((event) => {
    if (event.direction === 'in' && event.kind === 'request' && event.method !== undefined) received.push(event.method);
  });
  const client = new Client({ name: 'era-alias-client', version: '1.0.0' }, { era, eraCache: false });
  cleanups.push(() => client.close());
  await client.connect(clientSide);
  return { client, received };
}

describe("the client's era option", () => {
  it.each([
    ['handshake', 'handshake', 'initialize'],
    ['legacy', 'handshake', 'initialize'],
    ['modern', 'modern', 'server/discover'],
  ] as const)('era: %s connects in the %s era and says so everywhere', async (era, spoken, first) => {
    const { client, received } = await connected(era);
    expect(client.connectedEra).toBe(spoken);
    expect(jsonOf(await client.callTool('era'))).toEqual({ era: spoken, connection: spoken });
    expect(received[0]).toBe(first);
  });
});

describe('eraChoiceOf', () => {
  it("reads 'legacy' as 'handshake' and keeps the era choices", () => {
    expect(['legacy', 'handshake', 'auto', 'modern'].map(eraChoiceOf)).toEqual([
      'handshake',
      'handshake',
      'auto',
      'modern',
    ]);
  });

  it('names no era for anything else', () => {
    expect(['Legacy', 'stateless', '', undefined, 1].map(eraChoiceOf)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });
});
