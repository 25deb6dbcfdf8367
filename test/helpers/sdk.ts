/** Scaffolding shared by the interop tests against the official SDK. */
import { afterEach } from 'vitest';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Client, type ClientOptions } from '../../lib/client/client';
import { fromSdkTransport } from '../../transports/sdk-adapter';
import { validateEmitted } from './pair';

/** Closed after each test, last registered first, whatever happened in it. */
export const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  const pending = cleanups.splice(0).reverse();
  for (const cleanup of pending) await cleanup().catch(() => undefined);
});

/**
 * Our client connected in memory to an SDK server, everything it emits schema-checked; both are closed
 * after the test.
 */
export async function connectOurClient(mcp: McpServer, options: ClientOptions): Promise<Client> {
  const [ourSide, sdkSide] = InMemoryTransport.createLinkedPair();
  await mcp.connect(sdkSide);
  const client = new Client({ name: 'switchboard-client', version: '1.0.0' }, options);
  validateEmitted(client);
  cleanups.push(
    () => mcp.close(),
    () => client.close(),
  );
  await client.connect(fromSdkTransport(ourSide));
  return client;
}
