import { Client, type ClientOptions } from '../../lib/client/client';
import type { Hub } from '../../lib/compose/hub';
import { createMemoryPair } from '../../transports/memory';
import { cleanups } from './cleanups';
import { validateEmitted } from './pair';

/** Our client connected to the hub in memory (closed after the test); what both sides emit is schema-checked. */
export async function connectToHub(hub: Hub, options: ClientOptions = {}, name = 'downstream'): Promise<Client> {
  const [clientSide, hubSide] = createMemoryPair();
  validateEmitted(hub.connect(hubSide));
  const client = new Client({ name, version: '1.0.0' }, options);
  validateEmitted(client);
  cleanups.push(() => client.close());
  return client.connect(clientSide);
}
